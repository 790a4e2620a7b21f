"""Generate logscan's lexicon of oMLX messages from oMLX's git history.

    python tools/lexicon/generate.py --git-dir /path/to/omlx.git [--ref main] [--out FILE]

Walks ``--ref``'s first-parent chain (the code main actually held). A release is the commit that
bumps ``omlx/_version.py`` to its version (oMLX tags nothing; it bumps, then builds), so the tree
of each bump commit is that version's code; the tip's tree, when it goes on past the last bump, is
labelled ``<last version>+<tip hash>``. Every ``omlx/**/*.py`` file of those trees is parsed with
``ast`` once per distinct blob. An entry is one message template; its ``first`` and ``last`` are
the first and last versions holding it, in ``packaging`` order (``last`` is null when the tip
still holds it). Messages of later builds that the history lacks are added from ``NOTES`` below
(``source: "notes"``). A message written in a handler of exceptions (an ``except`` block, or a web
framework's ``exception_handler``) records the types it catches and what it does next (``handling``).

Standard library and ``packaging`` only, so it runs wherever the tests do.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import gzip
import hashlib
import io
import itertools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

GENERATOR_VERSION = 4
PACKAGE = "omlx"
VERSION_FILE = "omlx/_version.py"
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "src/omlx_logscan/data/lexicon.json.gz"
LICENCE = "Apache-2.0"
REPOSITORY = "https://github.com/jundot/omlx"

LEVELS = {
    "debug": "DEBUG",
    "info": "INFO",
    "warning": "WARNING",
    "warn": "WARNING",
    "error": "ERROR",
    "exception": "ERROR",
    "critical": "CRITICAL",
    "fatal": "CRITICAL",
}
LEVEL_NUMBERS = {5: "TRACE", 10: "DEBUG", 20: "INFO", 30: "WARNING", 40: "ERROR", 50: "CRITICAL"}
MAX_ALTERNATIVES = 8  # templates one call may write (``"a" if x else "b"``, concatenated)

# A placeholder's kind: what text it can stand for.
INT, FLOAT, ANY = "int", "float", "any"

LOG, RAISE, TEXT = "log", "raise", "text"

# A message oMLX builds for a client or an exception before it is sent or raised: a text assigned to
# a name like these (a variable or a call's keyword argument), or returned by a function whose name holds one.
_MESSAGE_NAME = re.compile(r"message|msg|detail|reason|error", re.IGNORECASE)
_MESSAGE_KEYWORDS = frozenset({"message", "msg", "detail"})  # not ``reason=``: a code (``prefill_preflight``)

# oMLX's deliberate exit (>= 0.4.2): ``fatal_exit(reason)`` logs ``<reason>; exiting process ...``.
FATAL_EXIT, FATAL_LOGGER = "fatal_exit", "omlx.utils.fatal"
FATAL_SUFFIX = "; exiting process so the supervisor can restart with a clean state"

_PERCENT = re.compile(r"%(?:\((\w+)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])")
_VERSION = re.compile(rb"""__version__\s*=\s*["']([^"']+)["']""")
_HOTFIX = re.compile(r"^(\d+(?:\.\d+)*)([a-z])$")  # 0.1.8b, 0.1.8c, 0.1.8d: hotfixes before 0.1.8.post4
_HTTP_STATUS = re.compile(r"HTTP_(\d{3})")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Template:
    """A message's literal parts around its placeholders (``len(literals) == len(kinds) + 1``)."""

    literals: tuple[str, ...]
    kinds: tuple[str, ...]

    def __add__(self, other: Template) -> Template:
        joined = (*self.literals[:-1], self.literals[-1] + other.literals[0], *other.literals[1:])
        return Template(joined, self.kinds + other.kinds)

    def text(self) -> str:
        parts = [self.literals[0]]
        for kind, literal in zip(self.kinds, self.literals[1:], strict=True):
            parts += ["{" + kind + "}", literal]
        return "".join(parts)


def literal(text: str) -> Template:
    return Template((text,), ())


def placeholder(kind: str = ANY) -> Template:
    return Template(("", ""), (kind,))


@dataclass(frozen=True)
class Site:
    """One place that writes a message: what it writes and where."""

    kind: str  # log, stdout, stderr, http, raise, text
    level: str | None
    logger: str | None
    status: int | None
    exception: str | None
    template: Template
    module: str
    function: str
    in_handler: bool
    called_at_import: bool = False  # its function is one its module's top level calls (see run_at_import)
    handler: Handling | None = None  # the handler it is written in: what it catches and does after it

    def key(self) -> str:
        """The entry's identity: the same text written the same way is one entry wherever it is."""
        parts = (self.kind, self.level, self.logger, self.status, self.exception, self.template.text())
        return hashlib.sha1(json.dumps(parts).encode()).hexdigest()[:10]


# ---------------------------------------------------------------- what a handler does after a message

# What an ``except`` block does once its message is written: raises again (a bare ``raise`` or
# ``raise X``), answers the client with an error (an HTTPException, a response of status >= 400, an
# error built for the client or an error chunk of a stream), ends the process (``fatal_exit``,
# ``sys.exit``, ``os._exit``, ``SystemExit``), or carries on (returns, continues, falls through).
RERAISE, ANSWER, EXIT, CARRY_ON = "reraise", "answer", "exit", "carry_on"
_WORST_FIRST = (EXIT, ANSWER, RERAISE, CARRY_ON)
_EXIT_CALLS = frozenset({"fatal_exit", "sys.exit", "os._exit", "exit"})
_ERROR = re.compile(r"error", re.IGNORECASE)  # a stream's error chunk: ``error_data``, ``create_error_event(…)``
# A function that builds an error for the client: ``create_error_response``, ``_openai_error_body``.
_ERROR_BUILDER = re.compile(r"error.*(?:response|body|event|output)|(?:response|body|event|output).*error", re.I)


@dataclass(frozen=True)
class Handling:
    """The ``except`` block a message is written in: the exception types it catches (as written;
    a bare ``except:`` catches ``BaseException``), what it does after the message, and the HTTP
    status of its answer when the source states it."""

    catches: tuple[str, ...]
    action: str  # RERAISE, ANSWER, EXIT or CARRY_ON
    status: int | None = None


def either(one: Handling | None, other: Handling | None) -> Handling | None:
    """What one message written by two handlers may be followed by: the worse action, with the
    types both catch and the highest status stated for that action."""
    if one is None or other is None:
        return one or other
    action = min(one.action, other.action, key=_WORST_FIRST.index)
    statuses = [h.status for h in (one, other) if h.action == action and h.status is not None]
    catches = (*one.catches, *(name for name in other.catches if name not in one.catches))
    return Handling(catches, action, max(statuses) if statuses else None)


def caught_types(handler: ast.ExceptHandler) -> tuple[str, ...]:
    """The types an ``except`` names, each as written (``queue.Full``, ``Exception``)."""
    if handler.type is None:
        return ("BaseException",)
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return tuple(ast.unparse(node) for node in types)


def handled_types(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    """The types a function handles for the web framework: ``@app.exception_handler(HTTPException)``
    makes it the handler of every HTTPException an endpoint raises (its return is the answer). None
    for any other function."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and _name(decorator.func) == "exception_handler" and decorator.args:
            return tuple(ast.unparse(node) for node in decorator.args)
    return None


def handling(catches: tuple[str, ...], body: list[ast.stmt], chain: Sequence[ast.stmt]) -> Handling:
    """What a handler of ``catches`` does once the statement ``chain[-1]`` has run: ``chain`` runs from
    a statement of the handler's ``body`` down to the statement holding the message, each inside the one before.
    Every path is followed to its end (a branch's ``raise``, the ``return`` after an ``if``); the
    worst end reachable is the handler's action (exit, then answer, reraise, carry on): a handler
    that may answer a 500 after a warning makes that warning the failure's record."""
    ends: set[_End] = set()
    bodies = [body, *(_body_holding(outer, inner) for outer, inner in itertools.pairwise(chain))]
    levels = list(zip(bodies, chain, strict=True))
    for depth, (level, statement) in reversed(list(enumerate(levels))):
        at = level.index(statement)
        found = _ends(level[at:] if depth == len(levels) - 1 else level[at + 1 :])  # from the message's own statement
        ends |= found - {None}
        if None not in found:
            break
    else:
        ends.add((CARRY_ON, None))  # off the end of the handler: the code after the ``try`` runs
    reached = [end for end in ends if end is not None]
    action = min((action for action, _ in reached), key=_WORST_FIRST.index)
    statuses = sorted({status for found, status in reached if found == action and status is not None})
    return Handling(catches, action, statuses[-1] if statuses else None)


def _body_holding(outer: ast.stmt, inner: ast.stmt) -> list[ast.stmt]:
    """The statement list of ``outer`` (a body, an ``else``, a handler, a case) that holds ``inner``."""
    for name in ("body", "orelse", "finalbody"):
        body = getattr(outer, name, None)
        if isinstance(body, list) and inner in body:
            return body
    for part in [*getattr(outer, "handlers", ()), *getattr(outer, "cases", ())]:
        if inner in part.body:
            return list(part.body)
    raise ValueError("the chain of statements is broken")


_End = tuple[str, int | None] | None  # an action and its status; None: the path falls through


def _ends(statements: Sequence[ast.stmt], in_loop: bool = False) -> set[_End]:
    """How the paths through ``statements`` end (None for those that fall off their end). Inside a
    loop a ``break`` or ``continue`` leaves the loop, not the handler: it falls through."""
    ends: set[_End] = set()
    for statement in statements:
        found = _statement_ends(statement, in_loop)
        ends |= found - {None}
        if None not in found:
            return ends
    return ends | {None}


def _statement_ends(statement: ast.stmt, in_loop: bool) -> set[_End]:
    if isinstance(statement, ast.Raise):
        return {_raised(statement.exc)}
    if isinstance(statement, ast.Return):
        return {_answered(statement.value) or (CARRY_ON, None)}
    if isinstance(statement, ast.Continue | ast.Break):
        return {None} if in_loop else {(CARRY_ON, None)}
    if isinstance(statement, ast.Expr):
        value = statement.value.value if isinstance(statement.value, ast.Await) else statement.value
        if isinstance(value, ast.Call) and _exits(value):
            return {(EXIT, None)}
        if isinstance(value, ast.Yield | ast.YieldFrom) and value.value is not None and _is_error(value.value):
            return {(ANSWER, None)}  # an error chunk of a stream: the client is told, the status is sent
        return {None}
    if isinstance(statement, ast.If):
        return _ends(statement.body, in_loop) | _ends(statement.orelse, in_loop)
    if isinstance(statement, ast.With | ast.AsyncWith):
        return _ends(statement.body, in_loop)
    if isinstance(statement, ast.For | ast.AsyncFor | ast.While):
        return _ends(statement.body, in_loop=True) | _ends(statement.orelse, in_loop) | {None}
    if isinstance(statement, ast.Try | ast.TryStar):
        tried = _ends([*statement.body, *statement.orelse], in_loop)
        for handler in statement.handlers:
            tried |= _ends(handler.body, in_loop)
        final = _ends(statement.finalbody, in_loop)
        return (final - {None}) | (tried if None in final else set())
    if isinstance(statement, ast.Match):
        return set().union(*(_ends(case.body, in_loop) for case in statement.cases)) | {None}
    return {None}


def _raised(exc: ast.expr | None) -> tuple[str, int | None]:
    """A ``raise``: an HTTPException answers (with its status), SystemExit ends the process."""
    call = exc if isinstance(exc, ast.Call) else None
    name = _name(call.func if call else exc) if exc is not None else None
    if call is not None and name is not None and name.endswith("HTTPException"):
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        return ANSWER, _status(keywords.get("status_code", call.args[0] if call.args else None))
    if name == "SystemExit" and not (call and call.args and _is_zero(call.args[0])):
        return EXIT, None
    return RERAISE, None


def _answered(value: ast.expr | None) -> tuple[str, int | None] | None:
    """A returned error for the client: a response of status >= 400 (a status not written as a
    number counts), or what a function named for an error builds."""
    if not isinstance(value, ast.Call):
        return None
    name = _name(value.func) or ""
    keywords = {k.arg: k.value for k in value.keywords if k.arg}
    if name.endswith("Response") and "status_code" in keywords:
        status = _status(keywords["status_code"])
        return (ANSWER, status) if status is None or status >= 400 else None
    return (ANSWER, None) if _ERROR_BUILDER.search(name) else None


def _is_error(node: ast.expr) -> bool:
    """A value that names an error: ``json.dumps(error_data)``, ``create_error_event(…)``."""
    return any(_ERROR.search(_name(sub) or "") for sub in ast.walk(node) if isinstance(sub, ast.expr))


def _exits(call: ast.Call) -> bool:
    named = ast.unparse(call.func) in _EXIT_CALLS or _name(call.func) == FATAL_EXIT
    return named and not (call.args and _is_zero(call.args[0]))


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


# ---------------------------------------------------------------- placeholders from format specs


def spec_kind(spec: str) -> str:
    """The kind of a ``format()`` spec's output: ``d``/``n`` int, ``e f g %`` float, else any."""
    if not spec:
        return ANY
    if spec[-1] in "dn":
        return INT
    if spec[-1] in "eEfFgG%":
        return FLOAT
    return ANY


def percent_kind(conversion: str) -> str:
    if conversion in "diu":
        return INT
    if conversion in "eEfFgG":
        return FLOAT
    return ANY


def percent_template(text: str) -> Template:
    """A ``%``-format string as a template (``%%`` is a literal percent sign)."""
    result = literal("")
    at = 0
    for match in _PERCENT.finditer(text):
        result += literal(text[at : match.start()])
        result += literal("%") if match[2] == "%" else placeholder(percent_kind(match[2]))
        at = match.end()
    return result + literal(text[at:])


def format_template(text: str) -> Template:
    """A ``str.format`` string as a template (``{{`` and ``}}`` are literal braces)."""
    result = literal("")
    try:
        fields = list(__import__("string").Formatter().parse(text))
    except ValueError:
        return literal(text)
    for text_part, name, spec, _conversion in fields:
        result += literal(text_part)
        if name is not None:
            result += placeholder(spec_kind(spec or ""))
    return result


# ---------------------------------------------------------------- messages from expressions


class Messages:
    """The templates an expression can produce, resolved within one function's assignments."""

    def __init__(self, function: ast.AST | None = None) -> None:
        self.function = function
        self._assignments: dict[str, ast.expr] | None = None

    @property
    def assignments(self) -> dict[str, ast.expr]:
        """The function's ``name = value`` assignments (the last wins), read when first needed."""
        if self._assignments is None:
            self._assignments = {
                target.id: sub.value
                for sub in (ast.walk(self.function) if self.function else ())
                if isinstance(sub, ast.Assign)
                for target in sub.targets
                if isinstance(target, ast.Name)
            }
        return self._assignments

    def of(self, node: ast.expr, args: Sequence[ast.expr] = (), percent: bool = False) -> list[Template]:
        """The templates ``node`` can be (``percent``: a logging call's message with ``args``)."""
        return self._of(node, percent and bool(args), depth=0)[:MAX_ALTERNATIVES]

    def _of(self, node: ast.expr, percent: bool, depth: int) -> list[Template]:
        if depth > 4:
            return [placeholder()]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [percent_template(node.value) if percent else literal(node.value)]
        if isinstance(node, ast.JoinedStr):
            return [self._fstring(node)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            lefts, rights = self._of(node.left, False, depth + 1), self._of(node.right, False, depth + 1)
            return [left + right for left in lefts for right in rights][:MAX_ALTERNATIVES]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_text(node.left):
            return [percent_template(t.literals[0]) for t in self._of(node.left, False, depth + 1) if not t.kinds]
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
        ):
            return [format_template(node.func.value.value)]
        if isinstance(node, ast.IfExp):
            return self._of(node.body, percent, depth + 1) + self._of(node.orelse, percent, depth + 1)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            found = [t for value in node.values for t in self._of(value, percent, depth + 1) if t.literals != ("", "")]
            return found or [placeholder()]
        if isinstance(node, ast.Name) and node.id in self.assignments:
            return self._of(self.assignments[node.id], percent, depth + 1)
        return [placeholder()]

    def _fstring(self, node: ast.JoinedStr) -> Template:
        result = literal("")
        for value in node.values:
            if isinstance(value, ast.Constant):
                result += literal(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                result += placeholder(_formatted_kind(value))
        return result


def _formatted_kind(value: ast.FormattedValue) -> str:
    """An f-string field's kind, from its format spec when the spec is fixed text."""
    spec = value.format_spec
    if value.conversion != -1 or spec is None:
        return ANY
    if not isinstance(spec, ast.JoinedStr) or not all(isinstance(v, ast.Constant) for v in spec.values):
        return ANY
    return spec_kind("".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant)))


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def plain(template: Template) -> Template:
    """The template without terminal colour codes (the banner's) and the blank lines it opens with:
    pasted text has none, and a message is matched from its first line of text."""
    literals = [_COLOUR.sub("", text) for text in template.literals]
    literals[0] = literals[0].lstrip("\n")
    return Template(tuple(literals), template.kinds)


def worth_keeping(template: Template) -> bool:
    """A template with no text of its own would match any text: it names nothing. Three letters
    or digits are enough (``%s %s -> 400: %s``), or a sign beyond ASCII (``%s %s → %d: %s``)."""
    text = "".join(template.literals)
    return len(re.findall(r"[A-Za-z0-9]", text)) >= 3 or any(ord(char) > 127 for char in text)


# ---------------------------------------------------------------- one module


def module_name(path: str) -> str:
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def _name(node: ast.expr) -> str | None:
    """The last name of ``a.b.c`` or ``c``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _logger_argument(call: ast.Call, module: str) -> str | None:
    """The logger name a ``logging.getLogger(...)`` call gives."""
    if not call.args:
        return "root"
    arg = call.args[0]
    if isinstance(arg, ast.Name) and arg.id == "__name__":
        return module
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return None


def _is_get_logger(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) == "getLogger"


def _resolve(module: str, level: int, target: str | None, is_package: bool) -> str:
    """The absolute module of ``from <dots><target> import ...`` inside ``module``."""
    if level == 0:
        return target or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    base = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*base, target] if target else base)


class ModuleScan(ast.NodeVisitor):
    """Every site of one module's source."""

    def __init__(self, module: str, is_package: bool) -> None:
        self.module = module
        self.is_package = is_package
        self.loggers: dict[str, str | None] = {}  # variable or attribute name -> logger name
        self.sites: list[Site] = []
        self.scope: list[str] = []
        self.statements: list[ast.stmt] = []  # the statements the visit is inside, outermost first
        # per function, the handlers the visit is inside (``except`` blocks, or the function itself
        # when it is an exception handler): what each catches, its body, how many statements held it,
        # whether it is an ``except`` block
        self.handlers: list[list[tuple[tuple[str, ...], list[ast.stmt], int, bool]]] = [[]]
        self.messages = [Messages()]
        self.aliases: list[dict[str, list[tuple[str, str | None]]]] = [{}]  # ``_log = logger.debug if … else …``
        self.exception_classes: set[str] = set()

    def scan(self, tree: ast.Module) -> list[Site]:
        for node in ast.walk(tree):
            self._note_logger(node)
            if isinstance(node, ast.ClassDef) and any(
                (_name(base) or "").endswith(("Error", "Exception")) or _name(base) in self.exception_classes
                for base in node.bases
            ):
                self.exception_classes.add(node.name)
        self.visit(tree)
        return self.sites

    def _note_logger(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign) and _is_get_logger(node.value):
            assert isinstance(node.value, ast.Call)
            for target in node.targets:
                name = _name(target)
                if name:
                    self.loggers[name] = _logger_argument(node.value, self.module)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(self.module, node.level, node.module, self.is_package)
            for alias in node.names:
                if "log" in alias.name.lower() and source.startswith(PACKAGE):
                    self.loggers.setdefault(alias.asname or alias.name, source)

    # scopes: the function a site is in, and whether it sits in an ``except`` body

    def visit(self, node: ast.AST) -> None:
        if not isinstance(node, ast.stmt):
            return super().visit(node)  # type: ignore[no-any-return]
        self.statements.append(node)
        super().visit(node)
        self.statements.pop()
        return None

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.append(node.name)
        handles = handled_types(node)
        self.handlers.append([(handles, node.body, len(self.statements), False)] if handles else [])
        self.messages.append(Messages(node))
        self.aliases.append({})
        self.generic_visit(node)
        self.aliases.pop()
        self.messages.pop()
        self.handlers.pop()
        self.scope.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.handlers[-1].append((caught_types(node), node.body, len(self.statements), True))
        self.generic_visit(node)
        self.handlers[-1].pop()

    def visit_Call(self, node: ast.Call) -> None:
        written = self._log_call(node) or self._print_call(node) or self._http_error(node) or self._exception_init(node)
        if not written:  # a message handed to an exception or a reply by name: ``Error(message=f"…")``
            for keyword in node.keywords:
                if keyword.arg in _MESSAGE_KEYWORDS:
                    self._text(keyword.value)
        if _name(node.func) == FATAL_EXIT and node.args:
            reasons = [t + literal(FATAL_SUFFIX) for t in self.messages[-1].of(node.args[0])]
            self._add(LOG, "CRITICAL", FATAL_LOGGER, None, None, reasons, in_handler=True, exits=True)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        methods = self._logger_methods(node.value)
        if methods:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.aliases[-1][target.id] = methods
        if any(_MESSAGE_NAME.search(_name(target) or "") for target in node.targets):
            self._text(node.value)
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and self.scope and _MESSAGE_NAME.search(self.scope[-1]):
            self._text(node.value)
        self.generic_visit(node)

    def _text(self, node: ast.expr) -> None:
        """A built message: only text written out here (not a name, which another site resolves)."""
        if isinstance(node, ast.JoinedStr | ast.BinOp) or _is_text(node):
            self._add(TEXT, None, None, None, None, self.messages[-1].of(node))

    def visit_Raise(self, node: ast.Raise) -> None:
        call = node.exc
        if isinstance(call, ast.Call) and call.args and _name(call.func) not in ("HTTPException", None):
            self._add("raise", None, None, None, _name(call.func), self.messages[-1].of(call.args[0]))
        self.generic_visit(node)

    # the kinds of site

    def _add(
        self,
        kind: str,
        level: str | None,
        logger: str | None,
        status: int | None,
        exception: str | None,
        templates: list[Template],
        in_handler: bool = False,
        exits: bool = False,
    ) -> None:
        function = ".".join(self.scope) or "<module>"
        handler = self._handling()
        if exits:  # ``fatal_exit`` logs its reason, then ends the process, in a handler or not
            handler = Handling(handler.catches if handler else (), EXIT)
        handled = in_handler or any(block for *_, block in self.handlers[-1])
        for template in map(plain, templates):
            if worth_keeping(template):
                where = (self.module, function, handled)
                self.sites.append(Site(kind, level, logger, status, exception, template, *where, handler=handler))

    def _handling(self) -> Handling | None:
        """The innermost handler of this function the visit is in, and what it does next."""
        if not self.handlers[-1]:
            return None
        catches, body, depth, _ = self.handlers[-1][-1]
        return handling(catches, body, self.statements[depth:])

    def _logger_of(self, receiver: ast.expr) -> tuple[bool, str | None]:
        """Whether a call's receiver is a logger, and its name (None when not known)."""
        if _is_get_logger(receiver):
            assert isinstance(receiver, ast.Call)
            return True, _logger_argument(receiver, self.module)
        name = _name(receiver)
        if name == "logging":
            return True, "root"
        if name in self.loggers:
            return True, self.loggers[name]
        if name is None or "log" not in name.lower():
            return False, None
        return True, self.module  # an unbound ``logger``: the module's own, by oMLX's habit

    def _logger_methods(self, node: ast.expr) -> list[tuple[str, str | None]] | None:
        """The levels and logger a name bound to ``node`` writes at: a logger's method, or either of two
        (``logger.debug if quiet else logger.warning``); None for anything else."""
        if isinstance(node, ast.IfExp):
            body, orelse = self._logger_methods(node.body), self._logger_methods(node.orelse)
            return body + orelse if body and orelse else None
        if isinstance(node, ast.Attribute) and node.attr in LEVELS:
            is_logger, logger = self._logger_of(node.value)
            return [(LEVELS[node.attr], logger)] if is_logger else None
        return None

    def _alias_call(self, node: ast.Call) -> bool:
        """A call through a name bound to a logger's method in this function (or the module)."""
        if not isinstance(node.func, ast.Name) or not node.args:
            return False
        methods = self.aliases[-1].get(node.func.id) or self.aliases[0].get(node.func.id)
        if not methods:
            return False
        templates = self.messages[-1].of(node.args[0], node.args[1:], percent=True)
        for level, logger in methods:
            self._add(LOG, level, logger, None, None, templates)
        return True

    def _log_call(self, node: ast.Call) -> bool:
        if self._alias_call(node):
            return True
        if not isinstance(node.func, ast.Attribute):
            return False
        method = node.func.attr
        if method not in LEVELS and method != "log":
            return False
        is_logger, logger = self._logger_of(node.func.value)
        if not is_logger:
            return False
        args = node.args
        if method == "log":
            if len(args) < 2:
                return False
            level = _level_of(args[0])
            args = args[1:]
        else:
            level = LEVELS[method]
        if not args:
            return False
        templates = self.messages[-1].of(args[0], args[1:], percent=True)
        self._add(LOG, level, logger, None, None, templates, in_handler=method == "exception")
        return True

    def _print_call(self, node: ast.Call) -> bool:
        if not (isinstance(node.func, ast.Name) and node.func.id == "print") or not node.args:
            return False
        stream = next((_name(k.value) for k in node.keywords if k.arg == "file"), "stdout")
        if stream not in ("stdout", "stderr"):
            return True  # a file of its own: not the process's output
        template = literal("")
        for index, arg in enumerate(node.args):
            template += literal(" " if index else "") + (self.messages[-1].of(arg)[0])
        self._add(stream, None, None, None, None, [template])
        return True

    def _http_error(self, node: ast.Call) -> bool:
        if _name(node.func) != "HTTPException":
            return False
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        status_node = keywords.get("status_code", node.args[0] if node.args else None)
        detail = keywords.get("detail", node.args[1] if len(node.args) > 1 else None)
        if detail is not None:
            self._add("http", None, None, _status(status_node), "HTTPException", self.messages[-1].of(detail))
        return True

    def _exception_init(self, node: ast.Call) -> bool:
        """``super().__init__(message)`` in an exception class: the message its instances carry."""
        inside = self.scope[-2] if len(self.scope) > 1 else None
        if (
            inside in self.exception_classes
            and self.scope[-1] == "__init__"
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__init__"
            and node.args
        ):
            self._add("raise", None, None, None, inside, self.messages[-1].of(node.args[0]))
            return True
        return False


def _level_of(node: ast.expr) -> str | None:
    name = _name(node)
    if name and name.upper() in LEVEL_NUMBERS.values():
        return name.upper()
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return LEVEL_NUMBERS.get(node.value)
    return None


def _status(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    match = _HTTP_STATUS.search(ast.unparse(node)) if node is not None else None
    return int(match[1]) if match else None


def scan_source(path: str, source: bytes) -> list[Site]:
    """Every message site of one file (none when it does not parse), each marked when its function
    runs as the module is imported."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    sites = ModuleScan(module_name(path), path.endswith("__init__.py")).scan(tree)
    at_import = run_at_import(tree)
    return [dataclasses.replace(site, called_at_import=True) if site.function in at_import else site for site in sites]


# ---------------------------------------------------------------- what runs at import


def run_at_import(tree: ast.Module) -> set[str]:
    """The functions of a module (``name``, ``Class.name``) that run when it is imported: those its
    top-level statements call (not under ``if __name__ == "__main__"``), then those these call in
    turn, by a plain name, ``Class.name``, or ``self.``/``cls.`` inside a class, within the module.
    Calls into other modules are not followed."""
    functions: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    functions[f"{node.name}.{member.name}"] = member
    top = [node for node in tree.body if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    pending = [name for node in top if not _is_main_guard(node) for name in _called(node, None)]
    reached: set[str] = set()
    while pending:
        name = pending.pop()
        if name in functions and name not in reached:
            reached.add(name)
            owner = name.split(".")[0] if "." in name else None
            pending += _called(functions[name], owner)
    return reached


def _called(node: ast.AST, owner: str | None) -> list[str]:
    """The names the calls inside ``node`` call: ``f``, ``A.f``; ``self.f`` and ``cls.f`` as ``owner.f``."""
    names = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        function = call.func
        if isinstance(function, ast.Name):
            names.append(function.id)
        elif isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
            receiver = function.value.id
            names.append(f"{owner if owner and receiver in ('self', 'cls') else receiver}.{function.attr}")
    return names


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__name__" in ast.unparse(node.test)


# ---------------------------------------------------------------- reading git


class Objects:
    """Objects of a git directory through one ``git cat-file --batch``, trees cached by id."""

    def __init__(self, git_dir: str) -> None:
        self.process = subprocess.Popen(
            ["git", "--git-dir", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.trees: dict[str, list[tuple[str, str]]] = {}

    def read(self, name: str) -> tuple[str, bytes] | None:
        """An object's id and content (``name`` may be ``<commit>:<path>``), None when missing."""
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(name.encode() + b"\n")
        self.process.stdin.flush()
        header = self.process.stdout.readline().split()
        if header[-1] == b"missing":
            return None
        data = self.process.stdout.read(int(header[2]))
        self.process.stdout.read(1)
        return header[0].decode(), data

    def python_files(self, tree: str, prefix: str) -> list[tuple[str, str]]:
        """``(path, blob id)`` of every ``.py`` file under a tree, recursively."""
        if tree not in self.trees:
            data = self.read(tree)[1]  # type: ignore[index]
            found: list[tuple[str, str]] = []
            at = 0
            while at < len(data):
                space, nul = data.index(b" ", at), data.index(b"\0", at)
                mode, name, oid = data[at:space], data[space + 1 : nul].decode(), data[nul + 1 : nul + 21].hex()
                at = nul + 21
                if mode == b"40000":
                    found += [(f"{name}/{path}", blob) for path, blob in self.python_files(oid, "")]
                elif name.endswith(".py"):
                    found.append((name, oid))
            self.trees[tree] = found
        return [(prefix + path, blob) for path, blob in self.trees[tree]]

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        self.process.wait()


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True).stdout


def version_key(version: str) -> Version:
    """``packaging``'s order (dev < rc < final < post); a bare letter after a release is a hotfix."""
    hotfix = _HOTFIX.match(version)
    return Version(f"{hotfix[1]}.post{ord(hotfix[2]) - ord('a')}" if hotfix else version)


@dataclass
class History:
    """What the history says: each label's sites, in order."""

    labels: list[str]  # release versions in order, then the label of the code after the last bump
    present: dict[str, set[str]] = field(default_factory=dict)  # entry key -> labels holding it
    sites: dict[str, Site] = field(default_factory=dict)  # entry key -> its newest site
    at_tip: set[str] = field(default_factory=set)
    first_commit: str = ""
    last_commit: str = ""
    commits: int = 0
    blobs: int = 0


def read_history(git_dir: str, ref: str) -> History:
    commits = git(git_dir, "rev-list", "--first-parent", "--reverse", ref).split()
    objects = Objects(git_dir)
    releases: dict[str, str] = {}  # version -> the commit that bumped to it (its release)
    for commit in commits:
        found = objects.read(f"{commit}:{VERSION_FILE}")
        match = _VERSION.search(found[1]) if found else None
        if match:
            releases.setdefault(match[1].decode(), commit)
    labels = sorted(releases, key=version_key)
    newest = max(releases, key=lambda version: commits.index(releases[version]))
    tip = newest if releases[newest] == commits[-1] else f"{newest}+{commits[-1][:8]}"  # code after the last bump
    snapshots = [*((label, releases[label]) for label in labels), (tip, commits[-1])]
    history = History(labels=list(dict.fromkeys([*labels, tip])))
    history.first_commit, history.last_commit, history.commits = commits[0], commits[-1], len(commits)
    held: dict[tuple[str, str], set[str]] = {}  # (path, blob) -> labels holding it
    for label, commit in snapshots:
        tree = objects.read(f"{commit}:{PACKAGE}")
        for file in objects.python_files(tree[0], f"{PACKAGE}/") if tree else ():
            held.setdefault(file, set()).add(label)
    for (path, blob), holding in held.items():
        found = objects.read(blob)
        for site in scan_source(path, found[1] if found else b""):
            key = site.key()
            if key not in history.sites or tip in holding:  # the newest site of an entry is kept
                if tip in holding and key in history.at_tip:  # another site writing it: what any handler does
                    site = dataclasses.replace(site, handler=either(history.sites[key].handler, site.handler))
                history.sites[key] = site
            history.present.setdefault(key, set()).update(holding)
            if tip in holding:
                history.at_tip.add(key)
    history.blobs = len(held)
    objects.close()
    return history


# ---------------------------------------------------------------- later builds, from notes

# Builds after the history, in order, and their messages (from /work/shared/omlx-messages.md and the
# pasted 0.6.4 log of oMLX issue 3399). The fix build is named by its commit, after 0.6.3rc2; the
# notes date the later fatal reasons "after 0.6.3", so they are given the first later release.
LATER_BUILDS = ("0.6.3rc2+5941f683", "0.6.4")


@dataclass(frozen=True)
class Note:
    kind: str
    first: str
    parts: tuple[str, ...]  # the literal parts around "any" placeholders
    level: str | None = None
    logger: str | None = None
    handler: Handling | None = None


def _fatal(first: str, *parts: str) -> Note:
    """A fatal exit's reason, as ``fatal_exit`` logs it (then ends the process)."""
    return Note(LOG, first, (*parts[:-1], parts[-1] + FATAL_SUFFIX), "CRITICAL", FATAL_LOGGER, Handling((), EXIT))


NOTES = (
    _fatal("0.6.3rc2+5941f683", "Metal GPU submissions disabled: ", ""),
    Note(RAISE, "0.6.4", ("ANE input pack command buffer failed; canceling this dispatch:", "")),
    _fatal("0.6.4", "Engine ", ": teardown exceeded 120s (", ")"),
    _fatal("0.6.4", "Engine ", ": teardown timed out after 60s (", "); no recent SSD persistence progress"),
    _fatal("0.6.4", "Engine ", ": teardown progress check failed"),
    _fatal("0.6.4", "Engine ", ": MLX teardown failed (", ")"),
    _fatal("0.6.4", "SSD cache writer survived engine teardown"),
    _fatal("0.6.4", "Engine ", ": final MLX reclaim failed: ", ""),
    _fatal("0.6.4", "Global MLX executor teardown timed out after 60s"),
    _fatal("0.6.4", "Global MLX executor teardown failed: ", ""),
)


# ---------------------------------------------------------------- writing


def entry_row(key: str, site: Site, first: str, last: str | None, source: str) -> list[object]:
    t, handler = site.template, site.handler
    return [
        key, site.kind, site.level, site.logger, site.module, site.function,
        list(t.literals), list(t.kinds), site.in_handler, first, last, source, site.status, site.exception,
        list(handler.catches) if handler else [], handler.action if handler else None,
        handler.status if handler else None,
    ]  # fmt: skip


# New fields go at the end, so a reader of the older ones by position keeps working.
ROW_FIELDS = [
    "id", "kind", "level", "logger", "module", "function",
    "literals", "kinds", "in_handler", "first", "last", "source", "status", "exception",
    "catches", "handler_action", "answer_status",
]  # fmt: skip


def lexicon(history: History, repository: str) -> dict[str, object]:
    order = {label: index for index, label in enumerate(history.labels)}
    rows = []
    for key in sorted(history.sites):
        held = sorted(history.present[key], key=order.__getitem__)
        last = None if key in history.at_tip else held[-1]
        rows.append(entry_row(key, history.sites[key], held[0], last, "code"))
    for note in NOTES:
        template = Template(note.parts, (ANY,) * (len(note.parts) - 1))
        written = (note.kind, note.level, note.logger, None, None, template, "", "", note.kind == LOG)
        site = Site(*written, handler=note.handler)
        rows.append(entry_row(site.key(), site, note.first, None, "notes"))
    ids = [row[0] for row in rows]
    if len(set(ids)) != len(ids):
        raise SystemExit("generate: two entries share an id")
    header = {
        "source": {
            "repository": repository,
            "ref": "first-parent history",
            "first_commit": history.first_commit,
            "last_commit": history.last_commit,
            "commits": history.commits,
            "notes": "later builds from oMLX's release notes and pasted logs (source: notes)",
        },
        "licence": f"oMLX is licensed {LICENCE}; the message texts here are taken from its source",
        "generator": f"tools/lexicon/generate.py {GENERATOR_VERSION}",
        "versions": [*history.labels, *LATER_BUILDS],
        "fields": ROW_FIELDS,
        # The entries whose writer (its newest site) is a function its module's top level calls: they
        # are written as the module is imported, as a process starts (or, for a module imported late, at
        # its first use), and may be written later too (the function is called from elsewhere as well).
        "called_at_import": sorted(key for key, site in history.sites.items() if site.called_at_import),
    }
    return {"header": header, "entries": rows}


def pack(data: dict[str, object]) -> bytes:
    """The lexicon file's bytes."""
    # ASCII (\uXXXX escapes): read back twice as fast as UTF-8, and no wider string while it is read
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=True).encode()
    # no file name and no time in the gzip header: the same history gives the same bytes
    raw = io.BytesIO()
    with gzip.GzipFile("", "wb", 9, raw, mtime=0) as packed:
        packed.write(text)
    return raw.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", default=os.environ.get("OMLX_GIT_DIR"), help="oMLX's git directory")
    parser.add_argument("--ref", default="HEAD", help="the history to read (its first-parent chain)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--repository", default=REPOSITORY)
    options = parser.parse_args(argv)
    if not options.git_dir:
        parser.error("give --git-dir or set OMLX_GIT_DIR")
    started = time.perf_counter()
    history = read_history(options.git_dir, options.ref)
    data = lexicon(history, options.repository)
    options.out.write_bytes(pack(data))
    entries = data["entries"]
    assert isinstance(entries, list)
    print(
        f"{len(entries)} entries from {history.commits} commits, {len(history.labels)} labels, "
        f"{history.blobs} files parsed, in {time.perf_counter() - started:.1f}s -> {options.out} "
        f"({options.out.stat().st_size} bytes)",
        file=sys.stderr,
    )
    return 0


def iter_rows(path: Path) -> Iterator[dict[str, object]]:
    """The rows of a written lexicon as dicts (for checking by hand)."""
    with gzip.open(path) as packed:
        data = json.load(packed)
    for row in data["entries"]:
        yield dict(zip(data["header"]["fields"], row, strict=True))


if __name__ == "__main__":
    raise SystemExit(main())
