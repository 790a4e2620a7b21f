"""The records the bulk scan does not hand over, at the edges of those it does.

The scan only counts routine records, yet the analysis must know when a process last wrote
anything: before a restart, at the end of the log, after a fault. Between two lines the grammar
sees, the scan saw only such records, so the line and time of the last one before each kept
line (and of a block's first and last lines) tell when each stretch of them began and ended.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import polars as pl

from omlx_logscan.parsing.grammar import PLAUSIBLE_YEARS

# The stamp of a timed oMLX record (the file format, the console format, the app's): date, time
# and fraction as groups. ASCII digits, as the scan's own timestamp test.
_OMLX_STAMP = re.compile(
    r"^([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[,.]([0-9]{1,6}))?(?: - | +)omlx"
)


# The records table of a source: the line and ISO time of records the scan did not hand over.
RECORD_SCHEMA: dict[str, Any] = {"line": pl.UInt32, "time": pl.String}


def unkept_records(
    kept: list[tuple[int, str, str | None]], first: str | None, last: str | None, lines: int
) -> list[tuple[int, str]]:
    """(n, time) of the block's timed oMLX records that the grammar does not see, where they touch
    what it sees: the line before each ``kept`` line (n, text, the line before) when that one is
    not kept, and the block's ``first`` and ``last`` lines when not kept. Between two of them the
    grammar sees nothing, so the analysis knows when each stretch of unkept records began and
    ended, at one row per kept line at most. In Python: a polars call per block would cost more."""
    candidates: list[tuple[int, str | None]] = []
    after = 0  # the last kept line so far
    for n, _, before in kept:
        if n > after + 1:
            candidates.append((n - 1, before))
        after = n
    if after != lines:
        candidates.append((lines, last))
    if kept[0][0] > 2 if kept else lines > 1:  # line 1: not kept, nor the line before the first kept one
        candidates.insert(0, (1, first))
    return [(n, time) for n, text in candidates if (time := stamp_of_line(text))]


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
