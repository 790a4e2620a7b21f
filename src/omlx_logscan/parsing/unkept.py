"""The records the bulk scan does not hand over, at the edges of those it does.

The scan only counts routine records, yet the analysis must know when a process last wrote
anything: before a restart, at the end of the log, after a fault. Between two lines the grammar
sees, the scan saw only such records, so the line and time of the last one before each kept
line (and of the source's first and last lines) tell when each stretch of them began and ended.
Which lines are kept does not depend on where blocks begin, so neither do these.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from datetime import datetime

from omlx_logscan.parsing.dense import Dense
from omlx_logscan.parsing.grammar import PLAUSIBLE_YEARS

# The stamp of a timed oMLX record (the file format, the console format, the app's): date, time
# and fraction as groups. ASCII digits, as the scan's own timestamp test.
_OMLX_STAMP = re.compile(
    r"^([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[,.]([0-9]{1,6}))?(?: - | +)omlx"
)


# The records table of a source: the line and ISO time of records the scan did not hand over.
RECORD_SCHEMA = {"line": "I", "time": ""}


@dataclass(frozen=True, slots=True)
class Unkept:
    """A block's unkept timed oMLX records that touch what it keeps: the line before each kept line
    (``before_kept``: (n, time)), and the times of its first and last lines when those are unkept."""

    before_kept: list[tuple[int, str]]
    first: str | None
    last: str | None


def unkept_records(kept: list[tuple[int, str, str | None]], first: str | None, last: str | None, lines: int) -> Unkept:
    """The block's ``Unkept`` records, from its ``kept`` lines (n, text, the line before) and its
    ``first`` and ``last`` lines. Between two of them the grammar sees nothing, so the analysis
    knows when each stretch of unkept records began and ended, at one row per kept line at most.
    In Python: a polars call per block would cost more."""
    before: list[tuple[int, str]] = []
    after = 0  # the last kept line so far
    for n, _, text in kept:
        if n > after + 1 and (time := stamp_of_line(text)):
            before.append((n - 1, time))
        after = n
    first_kept = bool(kept) and kept[0][0] == 1
    return Unkept(before, None if first_kept else stamp_of_line(first), None if after == lines else stamp_of_line(last))


@dataclass
class UnkeptRecords:
    """A source's unkept records, gathered block by block. A block's first and last lines count only
    where they are the source's or touch a kept line: elsewhere they would depend on the block size."""

    rows: list[tuple[int, str]] = field(default_factory=list)
    pending: tuple[int, str] | None = None  # the last block's last line, if an unkept record

    def take(self, unkept: Unkept, base: int, lines: int, first_kept: bool) -> None:
        """One block's, after ``base`` lines of the source; ``first_kept``: its first line is kept."""
        if self.pending is not None and first_kept:
            self.rows.append(self.pending)  # the line before a kept line, in the block before
        if base == 0 and unkept.first is not None:
            self.rows.append((1, unkept.first))
        self.rows.extend((base + n, time) for n, time in unkept.before_kept)
        self.pending = (base + lines, unkept.last) if unkept.last is not None else None

    def table(self) -> Dense:
        """RECORD_SCHEMA rows, with the source's last line when it is an unkept record."""
        rows = [*self.rows, self.pending] if self.pending is not None else self.rows
        return Dense({"line": array("I", (line for line, _ in rows)), "time": [t for _, t in rows]})


def stamp_of_line(line: str | None) -> str | None:
    """The ISO time of a timed oMLX record's line, as the grammar reads it; None for any other line."""
    match = _OMLX_STAMP.match(line or "")
    if match is None:
        return None
    date, time, frac = match.groups()
    stamp = f"{date}T{time}.{frac}" if frac else f"{date}T{time}"
    try:  # a real date and time of day (2026-13-45 and 23:59:60 are none), in a plausible year
        return stamp if datetime.fromisoformat(stamp).year in PLAUSIBLE_YEARS else None
    except ValueError:
        return None
