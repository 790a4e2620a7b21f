"""Record assembly: join the lines the scanner kept into records and blocks.

A record is a head line (a log line, a banner, an abort line, ...) and the untimed lines that
continue it: a traceback, a wrapped NSError, a user's wrapped paste. Kernel panics, crash
reports and faulthandler dumps are blocks: everything untimed up to the next real log line.
Every line ends up in a record, or is counted as blank or unparsed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta

from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.parsing.catalog import may_be_fatal_exit
from omlx_logscan.parsing.catalog_evidence import EXCEPTION_TYPE, TRACEBACK
from omlx_logscan.parsing.catalog_lookup import candidates
from omlx_logscan.parsing.catalog_panics import DATE_TIME_OPENING
from omlx_logscan.parsing.grammar import (
    BLOCK_FORMS,
    CHAIN,
    HEADLESS_FORMS,
    MAX_LINE_CHARS,
    Line,
    clean,
    is_garbage,
    opens_panic,
    parse_line,
)
from omlx_logscan.parsing.messages import known
from omlx_logscan.timeutil import clock_seconds

# Head forms that end a block (a log line after a panic report is the log again).
_BLOCK_ENDERS = frozenset(
    {
        "log",
        "app",
        "dated",
        "timeonly_log",
        "banner",
        "capture",
        "uvicorn",
        "abort",
        "nostamp_log",
        "pydefault",
        "snippet",
        "level_first",
        "elided",
        *BLOCK_FORMS,
    }
)


def _opens_panic_report(parsed: Line, current: Record) -> bool:
    """Inside a block, whether a panic report's line opens a report: an ``.ips`` header always does
    (it is a report's first line); a ``Date/Time:`` line belongs to the crash or panic report it is in,
    unless that one has its own already; a panic line belongs to a header that has had none."""
    block = current.head.form
    lines = itertools.chain((current.head.message,), current.extra)  # not copied: a report can be long
    if parsed.form == "panic_header":
        if not parsed.message.startswith(DATE_TIME_OPENING):
            return True
        if block == "crash_report":
            return False
        return block not in ("panic", "panic_header") or any(
            line.lstrip().startswith(DATE_TIME_OPENING) for line in lines
        )
    if parsed.form == "panic":
        return any(opens_panic(line) for line in lines)
    return parsed.form in _BLOCK_ENDERS


# The blocks a faulthandler thread stack continues rather than opens.
_DUMP_FORMS = frozenset({"faulthandler", "thread_dump"})


# Lines whose level is not the oMLX log level (uvicorn's own), so they say nothing of it.
_LEVELLESS_FORMS = frozenset({"uvicorn", "banner", "capture", "abort"})


@dataclass
class Record:
    """One record: where it starts, its parsed head and its continuation lines."""

    line: int
    head: Line
    extra: list[str] = field(default_factory=list)
    lines: int = 1  # the lines it spans, blank ones among them
    blank: int = 0  # of those, the blank ones: the accounting counts them as blank, not as the record's
    dump: bool = False  # a faulthandler dump of the same death continues it (an abort's, a fatal exit's)
    stamp: str | None = None  # ISO time of the record, own or (time-only lines) dated from the log
    time_of_day: str | None = None  # HH:MM:SS.mmm of a time-only head line, whether or not it could be dated
    prev_stamp: str | None = None  # the nearest timestamp before it in the same source
    next_stamp: str | None = None  # the nearest timestamp after it
    dropped: int = 0  # continuation lines past the cap, counted in ``lines`` but not kept (``continue_with``)
    _scanned: int = 0  # of ``extra``, the lines ``holds_traceback`` has looked at
    _traceback: bool = False  # whether one of those was a traceback's

    @property
    def log_level(self) -> str | None:
        """The level the record shows oMLX's log was written at: its head's as written, unless the
        line's form is another writer's (uvicorn's, a banner, a capture's, an abort). A level the
        paste dropped and a known message gave back says nothing of what the log level kept."""
        return self.head.level if self.head.level and self.head.form not in _LEVELLESS_FORMS else None

    @property
    def block(self) -> str | None:
        """The form of block the record is (its head's, or a dump's once one continues it), or None."""
        form = self.head.form
        if form in BLOCK_FORMS:
            return form
        return "faulthandler" if self.dump else None

    @property
    def text(self) -> str:
        """Head message and continuation as one string, for patterns that wrap across lines."""
        if not self.extra:
            return self.head.message
        return " ".join([self.head.message, *(part.strip() for part in self.extra)])

    @property
    def continuation(self) -> str | None:
        """The lines after the head line, joined without the blank lines around them (a blank
        line between a record and the note under it is no part of either); None when there are none."""
        start = next((index for index, part in enumerate(self.extra) if part.strip()), len(self.extra))
        text = "\n".join(self.extra[start:]).rstrip()
        return text or None

    def holds_traceback(self) -> bool:
        """Whether the record carries a Python traceback (a blank line then ends it). Each line is
        looked at once, however often this is asked (after every blank line of a long record)."""
        if not self._traceback:
            self._scanned = min(self._scanned, len(self.extra))  # a restatement taken off may have shortened it
            lines = itertools.chain((self.head.message,) if not self._scanned else (), self.extra[self._scanned :])
            self._traceback = any(_TRACEBACK_LINE.match(part) for part in lines)
            self._scanned = len(self.extra)
        return self._traceback

    def continue_with(self, part: str) -> None:
        """One more continuation line. Past ``KEEP_HEAD + KEEP_TAIL`` lines, the middle ones are
        dropped and counted (``dropped``), a note in their place: the head says what failed, the tail
        holds the innermost frames, which decide the call site; memory and time stay bounded."""
        self.lines += 1
        self.extra.append(part)
        if len(self.extra) < KEEP_HEAD + 2 * KEEP_TAIL:
            return
        if not self.dropped:
            self.extra.insert(KEEP_HEAD, "")
        cut = len(self.extra) - KEEP_HEAD - 1 - KEEP_TAIL  # the lines between the note and the tail
        self._traceback = self.holds_traceback()  # decided before the lines go
        del self.extra[KEEP_HEAD + 1 : KEEP_HEAD + 1 + cut]
        self.dropped += cut
        self._scanned = len(self.extra)
        self.extra[KEEP_HEAD] = f"… [{self.dropped} continuation lines not kept] …"


# The continuation lines a record keeps: its first ones and its last ones (``Record.continue_with``).
KEEP_HEAD = 200
KEEP_TAIL = 300


_TRACEBACK_LINE = re.compile(rf"^(?:{TRACEBACK})")


@dataclass
class Assembly:
    records: list[Record] = field(default_factory=list)
    blank: int = 0
    unparsed: list[tuple[int, str]] = field(default_factory=list)


def _starts_catalog_message(text: str) -> bool:
    if not text[:1].isalnum():  # traceback frames, carets and wrapped punctuation: never a catalog message
        return False
    # every match contains the literal
    return any(t.regex.match(text) for t in candidates(text) if t.literal in text) or known(text) is not None


def assemble(kept: Iterable[KeptLine]) -> Assembly:
    """Records in file order; untimed records learn the nearest timestamps around them."""
    assembler = Assembler()
    assembler.feed(kept)
    assembler.end()
    return assembler.out


class Assembler:
    """Joins kept lines into records as they arrive, a block of a big file at a time.

    The records before ``final`` can no longer change: a record takes continuation lines until
    the next one opens, and an untimed record learns its next timestamp when a dated one opens.
    """

    def __init__(self) -> None:
        self.out = Assembly()
        self.final = 0
        self._current: Record | None = None
        self._last_line = 0
        self._last_stamp: str | None = None  # the last dated line: untimed records are placed after it
        # The last time known, dated or derived: time-only lines are dated from it. None after a
        # time-only line that could not be dated, until a line is dated again.
        self._clock: str | None = None
        self._awaiting_next: list[Record] = []
        self._after_blank = False  # the line before was blank: a headless line opens a record of its own
        self._ended = False  # a blank line ended the open traceback record: plain text no longer joins it
        self._orphans: list[tuple[int, str, str]] = []  # untimed text before any record: (line, raw, message)

    def take_final(self, everything: bool = False) -> list[Record]:
        """The records that can no longer change (with ``everything``, all: the input has ended),
        handed over once and no longer held here, so a big file's records are not all kept."""
        if everything:
            self.end()
        upto = len(self.out.records) if everything else self.final
        done, self.out.records = self.out.records[:upto], self.out.records[upto:]
        self.final -= upto
        return done

    def feed(self, kept: Iterable[KeptLine]) -> None:
        out = self.out
        for item in kept:
            if len(item.text) > MAX_LINE_CHARS:  # a runaway line: parse its start, say how much was cut
                cut = len(item.text) - MAX_LINE_CHARS
                item = KeptLine(item.line, f"{item.text[:MAX_LINE_CHARS]} … [{cut} more characters]")
            if item.line != self._last_line + 1:
                self._current = None  # routine records the scanner dropped lie between
                self._after_blank = self._ended = False
                self._drop_orphans()
            self._last_line = item.line
            parsed = parse_line(item.text)
            current = self._current
            if parsed.form == "blank":
                if current is not None:
                    current.blank += 1
                    current.continue_with("")
                    self._ended = self._ended or (current.block is None and current.holds_traceback())
                else:
                    out.blank += 1
                self._after_blank = True
                self._drop_orphans()
                continue
            opens = self._opens(parsed, current)
            self._after_blank = False
            if opens:
                self._adopt_orphans()
                self._open(item.line, parsed)
            elif current is not None and not self._ended and not is_garbage(parsed.message):
                current.continue_with(parsed.message if current.block is None else clean(item.text))
            elif current is None and not is_garbage(parsed.message):
                self._orphans.append((item.line, item.text, parsed.message))
            else:
                out.unparsed.append((item.line, item.text))

    def pause(self) -> None:
        """The writer went idle: the open record is complete, as a logger writes each record whole, so
        it is final, and a line that comes later opens a record of its own. Not while an untimed record
        waits for the next dated line (its place is not known yet)."""
        if not self._awaiting_next:
            self.final = len(self.out.records)
            self._current = None

    def end(self) -> None:
        """The input has ended: text left before any record is unparsed."""
        self._drop_orphans()

    def _drop_orphans(self) -> None:
        """Untimed text before any record that did not run into one: not log text, unparsed."""
        self.out.unparsed.extend((line, text) for line, text, _ in self._orphans)
        self._orphans.clear()

    def _adopt_orphans(self) -> None:
        """Untimed text that runs straight into a record's head line (no blank line between) and
        closes a bracket it never opened is the tail of a record the paste cut off: a record of its
        own, with no time."""
        if not self._orphans:
            return
        (line, _, message), *rest = self._orphans
        if not _closes_unopened(" ".join(part for _, _, part in self._orphans)):
            self._drop_orphans()  # whole sentences: a note of the paster's, not a cut record
            return
        self._orphans.clear()
        tail = self._open(line, Line("tail", message))
        for _, _, part in rest:
            tail.continue_with(part)

    def _opens(self, parsed: Line, current: Record | None) -> bool:
        """Whether ``parsed`` opens a record, or continues ``current`` (None: nothing is open)."""
        form = parsed.form
        block = current.block if current is not None else None
        if form == "thread_dump" and block in _DUMP_FORMS:
            return False  # the next thread of one dump
        if form in _DUMP_FORMS and block is None and current is not None and _dies(current):
            current.dump = True  # the dump of the death the record logged: one death, one record
            return False
        if form in HEADLESS_FORMS:
            if block is not None:
                return False
            if current is None or ((self._after_blank or self._ended) and not _chained(current)):
                return True
            self._ended = False  # directly after its record, or a chained traceback going on after a blank
            return False
        if form == "text":
            if block is None and _starts_catalog_message(parsed.message):
                return True  # a bare catalog message pasted without its timestamp
            if self._ended and CHAIN.match(parsed.message):
                self._ended = False
            return False
        if form == block == "crash_report":
            return False  # the second half of one crash report
        if current is not None and block is not None and (form == "panic_header" or block == "panic_header"):
            return _opens_panic_report(parsed, current)
        return block is None or form in _BLOCK_ENDERS

    def _open(self, line: int, parsed: Line) -> Record:
        self._ended = False
        restated, blank = self._take_restatement(parsed) if parsed.time is not None else (0, 0)
        record = _new_record(line, parsed, self._last_stamp, self._clock, self.out, self._awaiting_next)
        record.lines += restated
        record.blank += blank
        self._current = record
        if record.stamp is not None:
            self._clock = record.stamp
        elif parsed.time is not None:
            # A time-only line no date fits: the ones after it are dated from it or from nothing,
            # so until the next dated line none can be dated.
            self._clock = None
        opened_at = len(self.out.records) - 1
        if parsed.date is not None:
            for waiting in self._awaiting_next:
                waiting.next_stamp = record.stamp
            self._awaiting_next.clear()
            self._last_stamp = record.stamp
            self.final = opened_at
        elif len(self._awaiting_next) == 1:  # the first record since the last dated one waits
            self.final = opened_at
        return record

    def _take_restatement(self, parsed: Line) -> tuple[int, int]:
        """The untimed line just above a timed record that restates its exception (a paste's
        ``RuntimeError: X`` over the record that logged X): part of that record, no record of its own
        nor the tail of the one before. Taken from where it was; returns how many lines it was, and
        how many of them blank."""
        current = self._current
        if current is None or current.block is not None:
            return 0, 0
        if current.head.time is None and current.head.form == "headless" and not any(map(str.strip, current.extra)):
            if not _restates(current.head.message, parsed.message):
                return 0, 0
            self.out.records.pop()
            self._awaiting_next.remove(current)
            self.final = min(self.final, len(self.out.records))
            return current.lines, current.blank
        last = next((index for index in range(len(current.extra) - 1, -1, -1) if current.extra[index].strip()), None)
        if last is None or current.holds_traceback() or not _restates(current.extra[last], parsed.message):
            return 0, 0
        taken = len(current.extra) - last
        blank = taken - 1  # the restatement, then the blank lines under it
        del current.extra[last:]
        current.lines -= taken
        current.blank -= blank
        return taken, blank


def _dies(record: Record) -> bool:
    """Whether a record logs its process's death: an uncaught C++ abort (faulthandler then dumps
    for SIGABRT) or oMLX's fatal exit (which dumps every thread before it exits)."""
    return record.head.form == "abort" or may_be_fatal_exit(record.head.message)


# An exception line: its type, and its text (what a record restated by it holds).
_EXCEPTION = re.compile(rf"^\s*{EXCEPTION_TYPE}: (?P<text>\S.{{8,}})$")


def _restates(line: str, message: str) -> bool:
    """Whether ``line`` is an exception line whose text ``message`` holds."""
    match = _EXCEPTION.match(line)
    return match is not None and match["text"].strip() in message


def _new_record(
    line: int, parsed: Line, last_stamp: str | None, clock: str | None, out: Assembly, awaiting_next: list[Record]
) -> Record:
    record = Record(line, parsed, prev_stamp=last_stamp)
    own = parsed.timestamp
    if own is not None:
        record.stamp = own
        record.next_stamp = own
    else:
        if parsed.time is not None:
            record.time_of_day = f"{parsed.time}.{(parsed.frac or '').ljust(3, '0')[:3]}"
            record.stamp = _dated(parsed, clock)
        awaiting_next.append(record)
    out.records.append(record)
    return record


# A time of day earlier than the last time known is the next day only when the step forward
# across midnight is this short; a longer one could as well be a line from an earlier day.
MIDNIGHT_STEP_S = 6 * 3600


def _dated(parsed: Line, clock: str | None) -> str | None:
    """A time-only line dated from the last time known, or None when no date can be known: it
    goes back to earlier that day, or on past midnight by more than MIDNIGHT_STEP_S (a guess)."""
    if parsed.time is None or clock is None:
        return None
    day = date.fromisoformat(clock[:10])
    if parsed.time < clock[11:19]:
        if clock_seconds(clock[11:19], parsed.time) >= MIDNIGHT_STEP_S:
            return None
        day += timedelta(days=1)  # past midnight (and past New Year) since the last time known
    stamp = f"{day.isoformat()}T{parsed.time}"
    return f"{stamp}.{parsed.frac}" if parsed.frac else stamp


_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _closes_unopened(text: str) -> bool:
    """Whether ``text`` closes a bracket it did not open (its opening was cut off before it)."""
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in _CLOSERS:
            if depth == 0:
                return True
            depth -= 1
    return False


def _chained(record: Record) -> bool:
    """Whether the record's last line says another traceback follows (``During handling …``)."""
    last = next((part for part in reversed(record.extra) if part), record.head.message)
    return CHAIN.match(last) is not None


def assemble_one(text: str, line: int) -> Record:
    """A single-line record (the dense request rows are single lines by construction)."""
    parsed = parse_line(text)
    return Record(line, parsed, stamp=parsed.timestamp, prev_stamp=parsed.timestamp, next_stamp=parsed.timestamp)
