"""The lexicon: every message oMLX can write, read from its own source history.

``tools/lexicon/generate.py`` writes ``data/lexicon.json.gz`` from oMLX's git history
(its header names the commits and oMLX's licence). Each :class:`Entry` is one message template:
its literal parts and typed placeholders, who writes it (a logger and level, ``print``, an HTTP
error's detail, an exception's text), where, and the first and last oMLX version that has it; and,
when it is written in a handler of exceptions, the types that handler catches and what it does next
(``analysis/severity.py`` ranks the messages from that).

The file is read when :func:`lexicon` is first called, never on import, and an entry is made from
its row when first asked for. :meth:`Lexicon.match` finds the entries a message is an instance of
(a full record's among its logger's and level's calls first; else one regex tries every entry
that begins with the message's first word); :meth:`Lexicon.search` those inside a line, only where
the line holds an entry's rarest word and its longest literal (a literal test before any regex);
:meth:`Lexicon.version_range` turns the entries a log matched into the oMLX versions that could
have written it all.

A missing or unreadable lexicon is an internal error (:class:`LexiconBroken`), never a silent
fallback: without it every oMLX line would be foreign text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import chain
from pathlib import Path
from typing import Literal, get_args

from omlx_logscan.errors import EXIT_INTERNAL, LogscanError

PATH = Path(__file__).parents[1] / "data" / "lexicon.json.gz"

# The kinds of site that write a message.
LOG, STDOUT, STDERR, HTTP, RAISE, TEXT = "log", "stdout", "stderr", "http", "raise", "text"

# What a placeholder stands for: digits (``%d``, ``{n:d}``), a number (``%.1f``, ``{x:.2f}``), any text.
INT, FLOAT, ANY = "int", "float", "any"

_PLACEHOLDER_PATTERNS = {
    INT: r" *[-+]?\d[\d,_]*",
    FLOAT: r" *[-+]?(?:(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)%?",
    ANY: r".*?",
}

# The row layout the generator writes (its header repeats it; a different one is a different file).
# New fields go at the end, so a reader of the older ones by position keeps working.
_FIELDS = (
    "id", "kind", "level", "logger", "module", "function",
    "literals", "kinds", "in_handler", "first", "last", "source", "status", "exception",
    "catches", "handler_action", "answer_status",
)  # fmt: skip

# What the ``except`` block a message is written in does after it (``Entry.handler_action``).
HandlerAction = Literal["reraise", "answer", "exit", "carry_on"]
HANDLER_ACTIONS: tuple[HandlerAction, ...] = get_args(HandlerAction)

_PLACEHOLDER_REGEXES = {kind: re.compile(pattern) for kind, pattern in _PLACEHOLDER_PATTERNS.items() if kind != ANY}

_WORD = re.compile(r"\w+")
_PLACEHOLDER_MARK = "\x00"  # where a placeholder stands, joining the literals to find their words at once
_KEY_WORD = re.compile(r"(?<![\w\x00])\w+(?![\w\x00])")  # a whole word not touching a placeholder


class LexiconBroken(LogscanError):
    """The packaged lexicon is missing or cannot be read: the installation is broken."""

    exit_code = EXIT_INTERNAL


@dataclass(frozen=True, eq=False)  # one object per entry: the same entry is the same object, hashed by identity
class Entry:
    """One message template oMLX writes, and where and since when it writes it."""

    id: str  # stable across regenerations: a hash of how and what it writes
    # LOG, STDOUT, STDERR, HTTP (an HTTP error's detail), RAISE (an exception's text) or TEXT (a
    # message built for a client or an exception: assigned to a ``message``/``detail`` name, say)
    kind: str
    level: str | None  # a log record's level (DEBUG ... CRITICAL, TRACE); None for other kinds
    logger: str | None  # the logger's name (``omlx.scheduler``); None for other kinds
    module: str  # where it is written (empty for entries from notes)
    function: str
    literals: tuple[str, ...]  # the text around the placeholders: one more than placeholders
    placeholders: tuple[str, ...]  # INT, FLOAT or ANY
    in_handler: bool  # written in an ``except`` block (or by ``logger.exception``)
    first: str  # the first oMLX version that has it
    last: str | None  # the last one; None when the newest version still has it
    source: str  # "code" (read from the source) or "notes" (a later build the history lacks)
    status: int | None = None  # an HTTP error's status code, when the source states it
    exception: str | None = None  # the exception class (RAISE) or HTTPException
    # The ``except`` block it is written in: the exception types it catches, as the source writes
    # them (``queue.Full``; a bare ``except:`` is ``BaseException``), what it does after the message
    # (reraise, answer the client with an error, exit the process, or carry on), and its answer's
    # status when the source states it. Empty and None outside a handler; a ``fatal_exit`` reason's
    # action is ``exit`` wherever it is called.
    catches: tuple[str, ...] = ()
    handler_action: HandlerAction | None = None
    answer_status: int | None = None

    @property
    def template(self) -> str:
        """The message with its placeholders written ``{kind}``: ``Loaded model: {any}``."""
        parts = [self.literals[0]]
        for kind, text in zip(self.placeholders, self.literals[1:], strict=True):
            parts += ["{" + kind + "}", text]
        return "".join(parts)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)

    @cached_property
    def pattern(self) -> str:
        """Literals exactly, placeholders by their kind. A message of several lines (a traceback
        after it) is matched on its first line: the text up to the first line break."""
        parts = [re.escape(self.literals[0].split("\n", 1)[0])]
        ends = "\n" not in self.literals[0]
        for kind, text in zip(self.placeholders, self.literals[1:], strict=True):
            if not ends:
                break
            parts += [f"(?:{_PLACEHOLDER_PATTERNS[kind]})", re.escape(text.split("\n", 1)[0])]
            ends = "\n" not in text
        return "".join(parts) + (r"\s*\Z" if ends else "")

    @cached_property
    def pieces(self) -> tuple[str, ...]:
        """Its literals as far as a message's first line holds them."""
        return tuple(_first_line_literals(self.literals))

    def holds(self, text: str) -> bool:
        """Whether ``text`` holds every literal of this entry's first line (in any order): all a
        catalog row's match needs to tell which of its entries it is, far cheaper than their regexes."""
        return all(piece in text for piece in self.pieces)

    @cached_property
    def specificity(self) -> int:
        """How many letters and digits its literals hold: a template of a few letters around
        placeholders (``{any}: {any}``) says little about a text found inside a line of another program."""
        return sum(1 for text in self.pieces for char in text if char.isalnum())

    def agreement(self, text: str) -> tuple[int, bool]:
        """How a message of this entry may begin with ``text`` (a message a paste cut short, or
        shortened inside): how many characters of its literals ``text`` shows in order, and whether
        all of ``text`` is such a beginning. A placeholder takes the text up to the next literal."""
        position = shown = 0
        for index, literal in enumerate(self.pieces):
            if index:
                kind = self.placeholders[index - 1]
                if kind != ANY:
                    number = _PLACEHOLDER_REGEXES[kind].match(text, position)
                    if number is None:
                        return shown, position == len(text)
                    position = number.end()
                elif literal:
                    found = text.find(literal, position)
                    if (
                        found < 0
                    ):  # the text ends inside the placeholder (a name cut off), or with a part of the literal
                        length, found = _longest_opening(literal, text, position)
                        cut_name = not length and not any(char.isspace() for char in text[position:])
                        return shown + length, cut_name or (length > 0 and found + length == len(text))
                    position = found
            common = _common_opening(text, position, literal)
            shown += common
            if common < len(literal):
                return shown, position + common == len(text)
            position += common
        return shown, position == len(text) or not self.literals[-1] or "\n" in "".join(self.literals)

    def sample(self, filler: str = "x") -> str:
        """A message this entry could write: ``filler`` for text, ``1`` and ``1.5`` for numbers."""
        values = {INT: "1", FLOAT: "1.5", ANY: filler}
        parts = [self.literals[0]]
        for kind, text in zip(self.placeholders, self.literals[1:], strict=True):
            parts += [values[kind], text]
        return "".join(parts)


def key_words(literals: Sequence[str]) -> list[str]:
    """The words every message of a template holds whole (in a literal, not touching a placeholder):
    what :class:`Lexicon` indexes its entry by."""
    return _KEY_WORD.findall(_PLACEHOLDER_MARK.join(literals).partition("\n")[0])  # the first line's literals


def _common_opening(text: str, start: int, literal: str) -> int:
    """How many characters of ``literal`` ``text`` shows from ``start``."""
    count = 0
    for char, expected in zip(text[start : start + len(literal)], literal, strict=False):
        if char != expected:
            break
        count += 1
    return count


def _longest_opening(literal: str, text: str, start: int) -> tuple[int, int]:
    """The longest opening of ``literal`` found in ``text`` from ``start``: its length and where (0, -1: none)."""
    low, high, where = 0, len(literal), -1
    while low < high:
        middle = (low + high + 1) // 2
        found = text.find(literal[:middle], start)
        if found < 0:
            high = middle - 1
        else:
            low, where = middle, found
    return low, where


# A text that shows this much of a message's literal wording in order is that message, though the
# paste changed it after that (``(current=…)`` where oMLX writes ``(reason=…, current=…)``).
_SHOWN_ENOUGH = 24
_SHOWN_WHOLE = 12  # and a text all of which may begin it must show this much of its wording


def _begins(shown: int, whole: bool) -> bool:
    return (whole and shown >= _SHOWN_WHOLE) or shown >= _SHOWN_ENOUGH


def _literals(row: Row) -> tuple[str, ...]:
    """A row's literals, or none when they are malformed (the entry, when made, says so)."""
    literals = row[_LITERALS]
    return literals if isinstance(literals, tuple) and all(map(_is_text, literals)) else ()


def _first_line_literals(literals: Sequence[str]) -> list[str]:
    """The literals up to the first line break: what a message's first line holds (a traceback or
    the lines of a message of several lines follow it)."""
    pieces = []
    for text in literals:
        head, newline, _ = text.partition("\n")
        pieces.append(head)
        if newline:
            break
    return pieces


@dataclass(frozen=True)
class VersionRange:
    """The oMLX versions that could have written a set of messages: ``min`` to ``max`` (inclusive);
    ``max`` None when the newest version the lexicon knows still writes all of them."""

    min: str
    max: str | None
    entries: int  # how many distinct entries the range rests on


_GROUPED = 4  # the messages of a first word after which its entries are tried by one regex

# An index's key of an entry: its opening, its longest literal (both on a message's first line), its id.
_Key = tuple[str, str, str]
Row = tuple[object, ...]  # an entry's fields as the file holds them (``_FIELDS``), checked when it is made
_WordIndex = tuple[dict[str, tuple[_Key, ...]], tuple[_Key, ...]]  # keys under their words; keys of no word


class Lexicon:
    """The entries, the order of oMLX's versions, and an index to find a message's entries. An entry
    is made from its row when first asked for: a run meets a few dozen of the thousands."""

    def __init__(self, header: dict[str, object], rows: Sequence[object], source: Path | None = None) -> None:
        self.header = header
        versions = header["versions"]
        if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
            raise ValueError("the header's versions are not a list of names")
        self.versions: tuple[str, ...] = tuple(versions)
        at_import = header.get("called_at_import", [])
        if not isinstance(at_import, list) or not all(isinstance(i, str) for i in at_import):
            raise ValueError("the header's called_at_import is not a list of ids")
        # The entries a function its module's top level calls writes (at import, maybe later too).
        self.called_at_import = frozenset(at_import)
        self._order = {version: index for index, version in enumerate(self.versions)}
        self._source = source
        # Each row as a tuple of tuples and atoms: the garbage collector stops tracking those, where it
        # would walk thousands of lists at every full collection of the run.
        self._rows: dict[str, Row] = {}
        shared: dict[object, object] = {}
        for row in rows:
            if not isinstance(row, list) or len(row) != len(_FIELDS) or not isinstance(row[0], str):
                raise ValueError(f"a row is malformed ({str(row)[:40]})")
            for index in _SHARED:  # most rows share these values (a kind, a logger, a version): held once
                row[index] = shared.setdefault(row[index], row[index])
            literals, kinds, catches = row[_LITERALS], row[_KINDS], row[_CATCHES]
            if isinstance(literals, list) and isinstance(kinds, list):
                row[_LITERALS], kinds = tuple(literals), tuple(kinds)
                row[_KINDS] = shared.setdefault(kinds, kinds)  # a few dozen sequences of placeholders
            if isinstance(catches, list) and all(map(_is_text, catches)):
                catches = tuple(catches)
                row[_CATCHES] = shared.setdefault(catches, catches)  # a few dozen sets of exception types
            self._rows[row[0]] = tuple(row)
        self._made: dict[str, Entry] = {}
        self._keyed: dict[str, _Key] = {}
        self._groups: dict[str, tuple[re.Pattern[str], tuple[str, ...]]] = {}  # see _beginning_with
        self._seen: dict[str, int] = {}  # messages of each first word matched before its group was compiled

    def order(self, version: str) -> int:
        """A version's place among those the lexicon knows (older first)."""
        try:
            return self._order[version]
        except KeyError:
            raise ValueError(f"version {version!r} is not in the lexicon's order") from None

    def entry(self, entry_id: str) -> Entry:
        made = self._made.get(entry_id)
        if made is None:
            try:
                made = _entry(self._rows[entry_id])
                self.order(made.first)
                if made.last is not None:
                    self.order(made.last)
            except (ValueError, TypeError) as exc:
                raise broken(self._source or PATH, str(exc)) from None
            self._made[entry_id] = made
        return made

    @cached_property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(map(self.entry, self._rows))

    def _key(self, entry_id: str) -> _Key:
        """An entry's key (its opening, its longest literal, its id: both on a message's first line),
        read from its row: an entry is made only when a text holds its word and those literals."""
        key = self._keyed.get(entry_id)
        if key is None:
            pieces = _first_line_literals(_literals(self._rows[entry_id])) or [""]
            key = self._keyed[entry_id] = (pieces[0], max(pieces, key=len), entry_id)
        return key

    def _word_index(self, ids: Iterable[str]) -> _WordIndex:
        """These entries each under its rarest whole word; those with none, which every text may match."""
        words = {entry_id: key_words(_literals(self._rows[entry_id])) for entry_id in ids}
        counts = Counter(chain.from_iterable(map(set, words.values())))
        rank = {word: (count, -len(word), word) for word, count in counts.items()}  # rarest, then longest
        index: dict[str, list[_Key]] = {}
        unindexed = []
        for entry_id, found in words.items():
            key = self._key(entry_id)
            if found:
                index.setdefault(min(found, key=rank.__getitem__), []).append(key)
            else:
                unindexed.append(key)
        return {word: tuple(group) for word, group in index.items()}, tuple(unindexed)

    @cached_property
    def _index(self) -> _WordIndex:
        return self._word_index(self._rows)

    @cached_property
    def _anchored(self) -> tuple[dict[str, tuple[str, ...]], _WordIndex]:
        """The ids of the entries whose message begins with a whole word, under that word (a message
        whole can only be theirs when it begins with it); the others by their words."""
        by_first: dict[str, list[str]] = {}
        others = []
        for entry_id, row in self._rows.items():
            literals = _literals(row)
            opening = literals[0].partition("\n")[0] if literals else ""
            first = _WORD.match(opening)
            if first is not None and (first.end() < len(opening) or row[_KINDS] == ()):
                by_first.setdefault(first[0], []).append(entry_id)
            else:
                others.append(entry_id)
        return {word: tuple(group) for word, group in by_first.items()}, self._word_index(others)

    def _keys(self, text: str, index: _WordIndex | None = None) -> list[_Key]:
        """The keys of the entries whose key word ``text`` holds: the only ones that can match it."""
        words, unindexed = index or self._index
        return [*(key for word in set(_WORD.findall(text)) for key in words.get(word, ())), *unindexed]

    def match(self, message: str, logger: str | None = None, level: str | None = None) -> tuple[Entry, ...]:
        """The entries ``message`` is an instance of, whole (a record's text after its head).

        Given the record's ``logger`` and ``level``, the log calls that agree with them; when none
        does, every entry the text matches (a call may log an exception's text or a detail whole)."""
        if logger is not None and level is not None:  # a full record: its writer's few calls first
            calls = self._by_writer.get((logger, level), ())
            found = self._matching(message, (i for opening, i in calls if message.startswith(opening)))
            if found:
                return found
        first = _WORD.match(message)
        keys = self._keys(message, self._anchored[1])
        others = self._matching(
            message, (i for opening, needle, i in keys if message.startswith(opening) and needle in message)
        )
        found = self._ordered([*(self._beginning_with(first[0], message) if first is not None else ()), *others])
        agreeing = tuple(
            entry
            for entry in found
            if entry.kind == LOG
            and (logger is None or entry.logger in (logger, None))
            and (level is None or entry.level in (level, None))
        )
        return agreeing if agreeing and (logger or level) else found

    def _beginning_with(self, word: str, message: str) -> list[Entry]:
        """The entries whose message begins with ``word`` that ``message`` is an instance of. The
        first messages of a word try the entries whose literals they hold, one by one; from the
        ``_GROUPED``-th on, one regex tries them all (each in a lookahead of its own): far cheaper
        a message, once compiled."""
        group = self._groups.get(word)
        if group is None:
            ids = self._anchored[0].get(word, ())
            self._seen[word] = seen = self._seen.get(word, 0) + 1
            if seen < _GROUPED:
                keys = map(self._key, ids)
                return list(
                    self._matching(
                        message, (i for opening, needle, i in keys if message.startswith(opening) and needle in message)
                    )
                )
            tries = "".join(f"(?:(?=({self.entry(entry_id).pattern}))|)" for entry_id in ids)
            group = self._groups[word] = (re.compile(tries), ids)
        regex, ids = group
        match = regex.match(message)
        assert match is not None  # every part may match nothing
        return [self.entry(entry_id) for entry_id, found in zip(ids, match.groups(), strict=True) if found is not None]

    def _matching(self, message: str, ids: Iterable[str]) -> tuple[Entry, ...]:
        return self._ordered(
            entry for entry in map(self.entry, ids) if entry.holds(message) and entry.regex.match(message)
        )

    def search(self, text: str) -> tuple[Entry, ...]:
        """The entries whose message appears anywhere in ``text`` (a line with an unknown head)."""
        found = map(self.entry, (i for _, needle, i in self._keys(text) if needle in text))
        return self._ordered(entry for entry in found if entry.regex.search(text))

    def beginning(self, text: str) -> tuple[Entry, ...]:
        """The entries a message of which may begin with ``text`` (a message cut short by a paste)."""
        first = _WORD.match(text)
        ids = self._anchored[0].get(first[0], ()) if first is not None else ()
        return self._ordered(e for e in map(self.entry, ids) if _begins(*e.agreement(text)))

    @cached_property
    def _by_writer(self) -> dict[tuple[object, object], tuple[tuple[str, str], ...]]:
        """The log calls under their logger and level, each as its opening and id: read from the rows,
        so a full record's look-up makes only the entries its opening agrees with."""
        index: dict[tuple[object, object], list[tuple[str, str]]] = {}
        for entry_id, row in self._rows.items():
            literals = _literals(row)
            if row[1] == LOG and literals:
                index.setdefault((row[3], row[2]), []).append((literals[0].partition("\n")[0], entry_id))
        return {writer: tuple(group) for writer, group in index.items()}

    def _ordered(self, entries: Iterable[Entry]) -> tuple[Entry, ...]:
        return tuple(sorted(set(entries), key=lambda entry: entry.id))

    def version_range(self, matches: Iterable[Sequence[Entry]]) -> VersionRange | None:
        """The versions that could have written every message, given the entries each one matched
        (any of a message's entries may be the one that wrote it). None when no message matched or
        no single version writes them all (a log that spans an upgrade, say)."""
        low, high = 0, len(self.versions) - 1
        seen: set[str] = set()
        for entries in matches:
            if not entries:
                continue
            seen.update(entry.id for entry in entries)
            low = max(low, min(self.order(entry.first) for entry in entries))
            lasts = [len(self.versions) - 1 if e.last is None else self.order(e.last) for e in entries]
            high = min(high, max(lasts))
        if not seen or low > high:
            return None
        newest = high == len(self.versions) - 1
        return VersionRange(self.versions[low], None if newest else self.versions[high], len(seen))


def load(path: Path = PATH) -> Lexicon:
    """Read a lexicon file; any fault in it is :class:`LexiconBroken`."""
    import gzip
    import json

    try:
        data = json.loads(gzip.decompress(path.read_bytes()))
        header = data["header"]
        if tuple(header["fields"]) != _FIELDS:
            raise ValueError("its rows have another layout")
        return Lexicon(header, data["entries"], path)
    except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise broken(path, exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) from None


def broken(path: Path, reason: str) -> LexiconBroken:
    """The one error of a lexicon file that cannot be read, whenever the fault shows."""
    return LexiconBroken(f"the lexicon of oMLX messages {path} cannot be read ({reason}); reinstall")


_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": str, "kind": str, "level": (str, type(None)), "logger": (str, type(None)), "module": str,
    "function": str, "literals": tuple, "kinds": tuple, "in_handler": bool, "first": str,
    "last": (str, type(None)), "source": str, "status": (int, type(None)), "exception": (str, type(None)),
    "catches": tuple, "handler_action": (str, type(None)), "answer_status": (int, type(None)),
}  # fmt: skip


_ROW_TYPES = tuple(_TYPES[name] for name in _FIELDS)
_LITERALS, _KINDS = _FIELDS.index("literals"), _FIELDS.index("kinds")
_PLACEHOLDER_KINDS = frozenset(_PLACEHOLDER_PATTERNS)
_CATCHES = _FIELDS.index("catches")
_SHARED = tuple(
    _FIELDS.index(name)
    for name in _TYPES
    if name not in ("id", "literals", "kinds", "in_handler", "status", "catches", "answer_status")
)


def _entry(row: Row) -> Entry:
    """One row as an entry (the row's fields are the entry's, in order)."""
    if len(row) != len(_FIELDS) or not all(map(isinstance, row, _ROW_TYPES)):
        wrong = [name for name, value in zip(_FIELDS, row, strict=False) if not isinstance(value, _TYPES[name])]
        raise ValueError(f"entry {row[0] if row else '?'} is malformed ({', '.join(wrong) or 'its length'})")
    literals, kinds = row[_LITERALS], row[_KINDS]
    assert isinstance(literals, tuple) and isinstance(kinds, tuple)
    if len(literals) != len(kinds) + 1 or not set(kinds) <= _PLACEHOLDER_KINDS or not all(map(_is_text, literals)):
        raise ValueError(f"entry {row[0]} is malformed (its template)")
    catches, action = row[_CATCHES], row[_FIELDS.index("handler_action")]
    assert isinstance(catches, tuple)
    if not all(map(_is_text, catches)) or action not in (None, *HANDLER_ACTIONS):
        raise ValueError(f"entry {row[0]} is malformed (its handler)")
    return Entry(*row)  # type: ignore[arg-type]


def _is_text(value: object) -> bool:
    return isinstance(value, str)


@cache
def lexicon() -> Lexicon:
    """The packaged lexicon, read once when first needed."""
    return load()
