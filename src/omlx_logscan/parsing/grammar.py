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

from omlx_logscan.parsing.catalog import ABORT_OPENING, APP_LOGGER, BANNER_BRANCH, bare_openings

LEVELS = ("TRACE", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


LEVEL_RANK = {name: rank for rank, name in enumerate(LEVELS)}


_LEVEL = r"(?P<level>TRACE|DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)"


_LOGGER = r"(?P<logger>[A-Za-z_][\w.]*)"


_RID = r"(?:\[(?P<rid>[^\]]*)\] - )?"


_DATE = r"(?P<date>\d{3,4}-\d\d-\d\d)"


_TIME = r"(?P<time>\d\d:\d\d:\d\d)(?:[,.](?P<frac>\d{1,6}))?"


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


_QUOTE = re.compile(r"^(?:>\s?)+")


_FENCE = re.compile(r"^```[A-Za-z]*")


_BULLET_CODE = re.compile(r"^\s*[-*] `(?P<body>.*?)`?\s*$")


def _opening(tag: str) -> str:
    """A regex for the openings of the bare lines the catalog tags ``tag``."""
    return "|".join(re.escape(literal) for literal in bare_openings(tag))


# How the first lines of the blocks the system writes begin: a faulthandler dump and a kernel panic.
FAULTHANDLER_OPENING = "Fatal Python error: "


_PANIC_OPENING = r"panic\(cpu \d+ caller 0x[0-9a-fA-F]+\): "


PANIC = re.compile(rf"^{_PANIC_OPENING}(?P<panic>.*)$")  # the panic's own words are the group ``panic``


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
        ("abort", rf"^(?P<msg>{ABORT_OPENING}.*)$"),
        ("faulthandler", rf"^(?P<msg>{re.escape(FAULTHANDLER_OPENING)}.*)$"),
        ("panic", rf"^(?P<msg>{_PANIC_OPENING}.*)$"),
        ("crash_report", r"^(?P<msg>(?:-+\s*)?Translated Report \(Full Report Below\).*)$"),
        ("banner", rf"^(?P<msg>(?:{_opening('banner')}).*)$"),
        ("capture", rf"^(?P<msg>(?:{_opening('capture')}).*)$"),
    )
)


# Untimed lines that are the second line of something: never a record of their own.
_CONTINUATION = re.compile(
    r"^(?:\s|Traceback \(most recent call last\)|During handling|The above exception|"
    rf"[\w.]+(?:Error|Exception|Exit|Interrupt)\b|\(0000|Error Domain=|UserInfo=|{BANNER_BRANCH}|\"|\^)"
)


BLOCK_FORMS = frozenset({"faulthandler", "panic", "crash_report"})


@dataclass(slots=True)
class Line:
    """One parsed line. ``date`` is None for time-only and untimed lines."""

    form: str  # a name from _FORMS, or "text" (no grammar matched) or "blank"
    message: str
    date: str | None = None
    time: str | None = None
    frac: str | None = None
    logger: str | None = None
    level: str | None = None

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
    if not _CONTINUATION.match(text):
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
    return Line("text", text.rstrip())


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
