"""Record assembly: join the lines the scanner kept into records and blocks.

A record is a head line (a log line, a banner, an abort line, ...) and the untimed lines that
continue it: a traceback, a wrapped NSError, a user's wrapped paste. Kernel panics, crash
reports and faulthandler dumps are blocks: everything untimed up to the next real log line.
Every line ends up in a record, or is counted as blank or unparsed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta

from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.parsing.catalog import candidates
from omlx_logscan.parsing.grammar import BLOCK_FORMS, MAX_LINE_CHARS, Line, clean, is_garbage, parse_line

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
        *BLOCK_FORMS,
    }
)


@dataclass
class Record:
    """One record: where it starts, its parsed head and its continuation lines."""

    line: int
    head: Line
    extra: list[str] = field(default_factory=list)
    lines: int = 1
    stamp: str | None = None  # ISO time of the record, own or (time-only lines) dated from the log
    prev_stamp: str | None = None  # the nearest timestamp before it in the same source
    next_stamp: str | None = None  # the nearest timestamp after it

    @property
    def text(self) -> str:
        """Head message and continuation as one string, for patterns that wrap across lines."""
        if not self.extra:
            return self.head.message
        return " ".join([self.head.message, *(part.strip() for part in self.extra)])


@dataclass
class Assembly:
    records: list[Record] = field(default_factory=list)
    blank: int = 0
    unparsed: list[tuple[int, str]] = field(default_factory=list)


def _starts_catalog_message(text: str) -> bool:
    if not text[:1].isalpha():  # traceback frames, carets and wrapped values: never a catalog message
        return False
    return any(t.regex.match(text) for t in candidates(text) if t.literal in text)  # every match contains the literal


def assemble(kept: Iterable[KeptLine]) -> Assembly:
    """Records in file order; untimed records learn the nearest timestamps around them."""
    assembler = Assembler()
    assembler.feed(kept)
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
        self._clock: str | None = None  # the last time known, dated or derived: time-only lines are dated from it
        self._awaiting_next: list[Record] = []

    def take_final(self, everything: bool = False) -> list[Record]:
        """The records that can no longer change (with ``everything``, all: the input has ended),
        handed over once and no longer held here, so a big file's records are not all kept."""
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
            self._last_line = item.line
            parsed = parse_line(item.text)
            form = parsed.form
            current = self._current
            if form == "blank":
                if current is not None:
                    current.lines += 1
                    current.extra.append("")
                else:
                    out.blank += 1
                continue
            block = current.head.form if current is not None and current.head.form in BLOCK_FORMS else None
            in_block = block is not None
            opens = form != "text" and (not in_block or form in _BLOCK_ENDERS)
            if form == block == "crash_report":
                opens = False  # the second half of one crash report
            if form == "text" and not in_block and _starts_catalog_message(parsed.message):
                opens = True  # a bare catalog message pasted without its timestamp
            if not opens:
                if current is not None and not is_garbage(parsed.message):
                    current.lines += 1
                    current.extra.append(clean(item.text) if in_block else parsed.message)
                else:
                    out.unparsed.append((item.line, item.text))
                continue
            self._open(item.line, parsed)

    def _open(self, line: int, parsed: Line) -> None:
        record = _new_record(line, parsed, self._last_stamp, self._clock, self.out, self._awaiting_next)
        self._current = record
        self._clock = record.stamp or self._clock
        opened_at = len(self.out.records) - 1
        if parsed.date is not None:
            for waiting in self._awaiting_next:
                waiting.next_stamp = record.stamp
            self._awaiting_next.clear()
            self._last_stamp = record.stamp
            self.final = opened_at
        elif len(self._awaiting_next) == 1:  # the first record since the last dated one waits
            self.final = opened_at


def _new_record(
    line: int, parsed: Line, last_stamp: str | None, clock: str | None, out: Assembly, awaiting_next: list[Record]
) -> Record:
    record = Record(line, parsed, prev_stamp=last_stamp)
    own = parsed.timestamp
    if own is not None:
        record.stamp = own
        record.next_stamp = own
    else:
        if parsed.time is not None and clock is not None:  # time-only: the date of the log around it
            frac = f".{parsed.frac}" if parsed.frac else ""
            day = date.fromisoformat(clock[:10])
            if parsed.time < clock[11:19] and clock[11:13] >= "12" and parsed.time[:2] < "12":
                day += timedelta(days=1)  # past midnight (and past New Year) since the last time known
            record.stamp = f"{day.isoformat()}T{parsed.time}{frac}"
        awaiting_next.append(record)
    out.records.append(record)
    return record


def assemble_one(text: str, line: int) -> Record:
    """A single-line record (the dense request rows are single lines by construction)."""
    parsed = parse_line(text)
    return Record(line, parsed, stamp=parsed.timestamp, prev_stamp=parsed.timestamp, next_stamp=parsed.timestamp)
