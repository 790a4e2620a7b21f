"""The line grammar: what one line of oMLX log text (or of a paste of it) says.

``parse_line`` recognises every line format in the fact sheet and the ways people paste
them. It returns a ``Line`` whose ``form`` tells the record assembler what to do with it:
start a record, start a block (panic, crash report, faulthandler dump), or continue the
record before it.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from omlx_logscan.parsing.catalog import (
    ABORT_OPENING,
    ANE_DISPATCH_OPENING,
    APP_LOGGER,
    BANNER_BRANCH,
    GPU_CODE,
    GPU_MARKERS,
    GPU_RESOURCE_LIMIT,
    bare_openings,
)
from omlx_logscan.parsing.catalog_panics import HEADER_OPENING, PANIC_STRING
from omlx_logscan.parsing.messages import Known, known

LEVELS = ("TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


LEVEL_RANK = {name: rank for rank, name in enumerate(LEVELS)}


def shown_at(level: str | None, least: int) -> bool:
    """Whether a record at ``level`` passes a priority filter of rank ``least`` (journalctl's ``-p``):
    at that level or worse. One that states no level passes: its level is unknown, not low."""
    return level is None or LEVEL_RANK.get(level, len(LEVELS)) >= least


_LEVEL = r"(?P<level>TRACE|DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)"


_LOGGER = r"(?P<logger>[A-Za-z_][\w.]*)"


_RID = r"(?:\[(?P<rid>[^\]]*)\] - )?"


_DATE = r"(?P<date>\d{3,4}-\d\d-\d\d)"


_TIME = r"(?P<time>\d\d:\d\d:\d\d)(?:[,.](?P<frac>\d{1,6}))?"


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


_QUOTE = re.compile(r"^(?:>\s?)+")


_FENCE = re.compile(r"^```[A-Za-z]*")


_BULLET_CODE = re.compile(r"^\s*[-*] `(?P<body>.*?)`?\s*$")


# What a paste may wrap a whole line in: backticks, double quotes, a bullet (the line is its ``body``).
_WRAPPED = re.compile(
    r'^\s*(?:`+(?P<code>[^`]+)`+|"(?P<quoted>.+)"|(?:[-*•]|\d+\.)\s+`?(?P<bullet>[^`]+)`?)\s*[,;.]?\s*$'
)


# One or more elision marks where a paste cut a line's head.
_ELISION_MARKS = r"(?:(?:…|\.\.\.)\s*)+"


# A line whose head a paste cut, message only: ``… ... Memory pressure level: ok -> soft``.
_ELIDED_HEAD = re.compile(rf"^{_ELISION_MARKS}(?:-\s+)?(?P<msg>\S.*)$")


def _opening(tag: str) -> str:
    """A regex for the openings of the bare lines the catalog tags ``tag``."""
    return "|".join(re.escape(literal) for literal in bare_openings(tag))


# How the first lines of the blocks the system writes begin: a faulthandler dump and a kernel panic.
FAULTHANDLER_OPENING = "Fatal Python error: "
FAULTHANDLER_ABORT = "Aborted"  # the error CPython's faulthandler names for SIGABRT (its ``faulthandler.c``)


_PANIC_OPENING = r"panic\(cpu \d+ caller 0x[0-9a-fA-F]+\): "


PANIC = re.compile(rf"^{_PANIC_OPENING}(?P<panic>.*)$")  # the panic's own words are the group ``panic``


# How a macOS crash report begins: the banner over an ``.ips`` file's translation, or the first
# field of its header, the crashed process's name and pid (``Process:   Python [65813]``), where a
# paste begins at the header (Apple's reports put the ``Process`` field first).
_CRASH_REPORT_OPENING = r"(?:(?:-+\s*)?Translated Report \(Full Report Below\)|Process:\s+\S.*\[\d+\]\s*$)"


# Forms, most specific first. Each regex is anchored at the start of the cleaned line.
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx))
    for name, rx in (
        ("log", rf"^{_DATE}[ T]{_TIME} - {_LOGGER} - {_LEVEL} - {_RID}(?P<msg>.*)$"),
        ("app", rf"^{_DATE} {_TIME} (?P<logger>{re.escape(APP_LOGGER)}[\w.]*) {_LEVEL} (?P<msg>.*)$"),
        ("dated", rf"^{_DATE}[ T]{_TIME}(?:\s*[-—]\s*|\s+)(?:\.\.\.\s*)?(?P<msg>.*)$"),
        ("timeonly_log", rf"^{_TIME}\s*[-—]\s*{_LOGGER} - {_LEVEL} - {_RID}(?P<msg>.*)$"),
        ("timeonly", rf"^{_TIME}(?:\s*[-—]\s*|\s+)(?P<msg>.*)$"),
        ("uvicorn", r"^(?P<level>INFO|WARNING|ERROR|CRITICAL|DEBUG):\s{2,}(?P<msg>.*)$"),
        ("pydefault", rf"^{_LEVEL}:(?P<logger>[\w.]+):(?P<msg>.*)$"),
        ("nostamp_log", rf"^{_LOGGER} - {_LEVEL} - {_RID}(?P<msg>.*)$"),
        # The level first, as condensed pastes put it: ``ERROR  omlx.engine.dflash - DFlash start failed …``.
        ("level_first", rf"^{_LEVEL}\s+{_LOGGER} - {_RID}(?P<msg>.*)$"),
        # The head cut off where the level begins: ``… - DEBUG - [-] - Background snapshot write failed``.
        ("elided", rf"^{_ELISION_MARKS}\s*(?:-\s*)?(?:{_LOGGER} - )?{_LEVEL} - {_RID}(?P<msg>.*)$"),
        ("abort", rf"^(?P<msg>{ABORT_OPENING}.*)$"),
        ("faulthandler", rf"^(?P<msg>{re.escape(FAULTHANDLER_OPENING)}.*)$"),
        ("panic", rf"^(?P<msg>{_PANIC_OPENING}.*)$"),
        ("panic_header", rf"^(?P<msg>{HEADER_OPENING}.*)$"),
        ("crash_report", rf"^(?P<msg>{_CRASH_REPORT_OPENING}.*)$"),
        ("banner", rf"^(?P<msg>(?:{_opening('banner')}).*)$"),
        ("capture", rf"^(?P<msg>(?:{_opening('capture')}).*)$"),
    )
)


# Untimed lines that are the second line of something: part of the record before them.
_CONTINUATION = re.compile(
    r"^(?:\s|Traceback \(most recent call last\)|During handling|The above exception|"
    rf"[\w.]+(?:Error|Exception|Exit|Interrupt)\b|\(0000|Error Domain=|UserInfo=|{BANNER_BRANCH}|\"|\^)"
)


# Continuation lines that can also be where a paste begins (Python's and Apple's wording, not
# oMLX's): a traceback, one of its frames, an exception line, NSError text. Directly after a
# record they continue it; at the start of a paste or after a blank line they open a record.
_HEADLESS = re.compile(
    r"^(?:Traceback \(most recent call last\):"
    r'|\s+File "[^"]+", line \d+'
    r"|[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)(?::\s|$)"
    r'|"(?:Ignored|Caused|Insufficient|Impacting)\b'
    r'|"?\((?:0000000[0-9A-Fa-f]|000000[0-9A-Fa-f]{2}):)'
)


# A line of the JSON body of an Apple crash report (``.ips``: ``"key" : value``, with Apple's spaces
# around the colon), which a paste may carry apart from the report's translated header.
_REPORT_JSON = re.compile(r'^\s*"[A-Za-z_]\w*" : ')

# A rule of dashes or equals signs that reports and pastes put between their parts: no text.
_RULE = re.compile(r"^\s*(?:-{5,}|={5,})\s*$")


# NSError text anywhere in a line (searched only where its literal is, a search being slow).
_NSERROR = re.compile(r"\bError Domain=\w+ Code=-?\d+")


# A faulthandler thread stack: the second part of a dump, or a dump whose header was not pasted.
_THREAD_DUMP = re.compile(r"^(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):")


# The short form a paste may give a record: the logger's last part, padded, then the message
# (the longest logger of a padded column has one space: its message must be one oMLX writes).
_SHORT_LOG = re.compile(r"^(?P<logger>[a-z_][\w.]*\w)(?P<pad> +)- (?P<msg>\S.*)$")


# Chained tracebacks put a blank line around these: they do not end the traceback.
CHAIN = re.compile(r"^(?:During handling of the above exception|The above exception was the direct cause)")


BLOCK_FORMS = frozenset({"faulthandler", "thread_dump", "panic", "panic_header", "crash_report"})


def opens_panic(text: str) -> bool:
    """Whether a line of a panic report is its panic line: plain text, or inside an ``.ips`` body's JSON."""
    return PANIC.match(text) is not None or PANIC_STRING.search(text) is not None


# Forms of lines that carry no head of their own and still open a record where nothing is open.
HEADLESS_FORMS = frozenset({"headless", "thread_dump", "report_json"})


@dataclass(slots=True)
class Line:
    """One parsed line. ``date`` is None for time-only and untimed lines."""

    # a name from _FORMS; "headless", "thread_dump" or "report_json" (a continuation that can begin a paste),
    # "short_log", "snippet" (a line a paste quoted as code), "text" (no grammar matched) or "blank"
    form: str
    message: str
    date: str | None = None
    time: str | None = None
    frac: str | None = None
    logger: str | None = None
    level: str | None = None
    identity: Known | None = None  # the oMLX message a pasted shape was read as (its classification reuses it)

    @property
    def timestamp(self) -> str | None:
        """ISO 8601 local time, with the fraction when the line had one."""
        if self.date is None or self.time is None:
            return None
        stamp = f"{self.date}T{self.time}"
        return f"{stamp}.{self.frac}" if self.frac else stamp


def clean(text: str) -> str:
    """Strip what terminals and pastes add around a line: colour codes, quotes, fences, bullets."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    text = text.rstrip("\r\n")
    if text.startswith(">"):
        text = _QUOTE.sub("", text)
    if text.startswith("```"):
        text = _FENCE.sub("", text)
    if text.lstrip().startswith(("- `", "* `")):
        match = _BULLET_CODE.match(text)
        if match:
            text = match.group("body")
    return text


def _normal_level(level: str | None) -> str | None:
    if level == "WARN":
        return "WARNING"
    if level == "FATAL":
        return "CRITICAL"
    return level


def parse_line(raw: str) -> Line:
    """Classify one line; never raises."""
    text = clean(raw)
    if not text.strip():
        return Line("blank", "")
    # The rarer shapes are tested only where they can be, so a log line meets the forms first:
    # a crash report's JSON and an indented rule begin as continuations do (a quote, a space).
    if _CONTINUATION.match(text):
        if _REPORT_JSON.match(text):
            return Line("report_json", text.rstrip())
        if _RULE.match(text):
            return Line("blank", "")
        if text.startswith('"') and (quoted := _reshaped(text)) is not None and quoted.form not in _UNTOLD:
            return quoted  # a whole log line or oMLX message in double quotes
        return Line("headless" if _opens_headless(text) else "text", text.rstrip())
    for form, regex in _FORMS:
        match = regex.match(text)
        if match is None:
            continue
        groups = match.groupdict()
        date = groups.get("date")
        if date is not None and len(date) == 9:  # the year's first digit was cut off in a paste
            date = "2" + date
        time = groups.get("time")
        frac = groups.get("frac")
        if not _real_time(date, time):  # the shape of a time that is none (2026-13-45 99:99:99): unknown time
            date = time = frac = None
        return Line(
            form,
            groups["msg"].rstrip(),
            date=date,
            time=time,
            frac=frac,
            logger=groups.get("logger"),
            level=_normal_level(groups.get("level")),
        )
    if _RULE.match(text):  # no form begins with five dashes or equals signs
        return Line("blank", "")
    if _THREAD_DUMP.match(text):  # no form begins ``Thread 0x`` or ``Current thread 0x``
        return Line("thread_dump", text.rstrip())
    short = _SHORT_LOG.match(text)
    identity = known(short["msg"]) if short is not None else None
    if short is not None and (len(short["pad"]) > 1 or identity is not None):
        return Line("short_log", short["msg"].rstrip(), logger=short["logger"], identity=identity)
    if _opens_headless(text):
        return Line("headless", text.rstrip())
    if _is_snippet(raw):
        return Line("snippet", text.rstrip())
    return _reshaped(text) or Line("text", text.rstrip())


# Forms that tell nothing of a line a paste quoted: its quotes stay (NSError text begins with one).
_UNTOLD = frozenset({"text", "headless", "report_json"})


def _reshaped(text: str) -> Line | None:
    """A line no form reads in a shape people paste oMLX's lines in: wrapped in backticks, quotes or
    a bullet around a line the forms read or a message oMLX writes, or a message whose head the
    paste cut (``… msg``). Only lines no form read come here: routine records never do."""
    wrapped = _WRAPPED.match(text)
    if wrapped is not None:
        inner = next(part for part in wrapped.groups() if part is not None).strip()
        parsed = parse_line(inner)
        if parsed.form not in ("text", "blank"):
            return parsed
        identity = known(inner)
        if identity is not None:
            return Line("snippet", inner, identity=identity)
        return None
    elided = _ELIDED_HEAD.match(text) if text.startswith(("…", "...")) else None
    identity = known(elided["msg"]) if elided is not None else None
    if elided is not None and identity is not None:
        return Line("elided", elided["msg"].rstrip(), identity=identity)
    return None


def _opens_headless(text: str) -> bool:
    """Whether an untimed line can begin a record: a traceback or NSError part, the ANE dispatch's
    failure, or any text with a Metal error code or a ``[metal::malloc]`` limit (never left unparsed)."""
    return (
        _HEADLESS.match(text) is not None
        or text.startswith(ANE_DISPATCH_OPENING)  # its NSError follows on the next lines
        or ("Error Domain=" in text and _NSERROR.search(text) is not None)
        or (
            any(marker in text for marker in GPU_MARKERS)
            and (GPU_CODE.search(text) is not None or GPU_RESOURCE_LIMIT.search(text) is not None)
        )
    )


def _is_snippet(raw: str) -> bool:
    """Whether a paste marked the line as quoted code (a markdown bullet in backticks): log text."""
    text = _QUOTE.sub("", _ANSI.sub("", raw)).rstrip("\r\n")
    return text.lstrip().startswith(("- `", "* `")) and _BULLET_CODE.match(text) is not None


MAX_LINE_CHARS = 64 * 1024  # a longer line is parsed from its start, with a note of how much was cut


PLAUSIBLE_YEARS = range(1970, 2200)  # outside this a "timestamp" is corrupt data, and date arithmetic overflows


def _real_time(date: str | None, time: str | None) -> bool:
    try:
        if date is not None and datetime.date.fromisoformat(date).year not in PLAUSIBLE_YEARS:
            return False
        if time is not None:
            datetime.time.fromisoformat(time)
    except ValueError:
        return False
    return True


_NOT_TEXT = re.compile(r"[\x00-\x08\x0a-\x1f\ufffd]")  # control characters (not tab) and U+FFFD


def is_garbage(text: str) -> bool:
    """Lines that cannot be a log's continuation: control bytes or undecodable data."""
    if not _NOT_TEXT.search(text):
        return False
    bad = len(_NOT_TEXT.findall(text))
    return bad > 0 and bad * 10 >= len(text)
