"""Reading overlays: a CSV of start,end times or another log, turned into intervals of activity."""

from __future__ import annotations

import csv
import io
import itertools
import re
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import NamedTuple

from omlx_logscan.errors import LogscanError
from omlx_logscan.inputs.sources import read_chunks, resolve
from omlx_logscan.timeutil import wall_clock

DEFAULT_GAP_S = 300.0


Interval = tuple[datetime, datetime]


# A timestamp near the start of a line of any log: oMLX's own, ISO with T or zone, logfmt's time=...
_ANY_LOG_TIMESTAMP = re.compile(
    r"(?P<date>\d{4}-\d\d-\d\d)[ T](?P<time>\d\d:\d\d:\d\d)(?:[.,](?P<frac>\d{1,9}))?"
    r"(?P<zone>Z|[+-]\d\d:?\d\d)?(?![\d:])"
)


_STAMP_REACH = 64  # characters from the line start in which a record's timestamp may stand


@dataclass(frozen=True)
class Overlay:
    """A named set of disjoint intervals in the log's local time, sorted."""

    name: str
    path: str
    intervals: tuple[Interval, ...]


class OverlaySpec(NamedTuple):
    """An overlay to read: the name it is reported under, the file that holds it, and what messages
    about it call it (the command line passes the option as the user wrote it)."""

    name: str
    path: str
    label: str


def parse_overlays(specs: list[OverlaySpec], gap_s: float = DEFAULT_GAP_S, tz: tzinfo | None = None) -> list[Overlay]:
    """Each overlay file read into intervals; a log's silences longer than ``gap_s`` split its runs,
    and zoned times become local times in ``tz`` (None: this machine's zone)."""
    return [_read_overlay(spec, gap_s, tz) for spec in specs]


def _read_overlay(spec: OverlaySpec, gap_s: float, zone_info: tzinfo | None) -> Overlay:
    name, path, label = spec
    read = (source for source in resolve([path]) if not source.skipped)
    chunks = (chunk.decode("utf-8") for source in read for chunk in read_chunks(source))
    head = next(chunks, "")
    first = next((line for line in head.splitlines() if line.strip() and not line.startswith("#")), "")
    is_csv = path.lower().removesuffix(".gz").endswith(".csv") or _looks_csv(first)
    if is_csv:
        intervals = _csv_intervals(head + "".join(chunks), label, zone_info)
    else:
        times = [t for text in itertools.chain([head], chunks) for t in _log_times(text, zone_info)]
        intervals = _activity_runs(sorted(times), gap_s)
    if not intervals:
        raise LogscanError(f"{label}: {'no start,end rows' if is_csv else 'no timestamped lines'}")
    return Overlay(name, path, tuple(merge(intervals)))


def _looks_csv(first: str) -> bool:
    """A header with start and end columns, or a first row of two ISO times (an oMLX ``,123`` is no time)."""
    cells = [cell.strip() for cell in first.split(",")]
    if {"start", "end"} <= {cell.lower() for cell in cells}:
        return True
    return len(cells) >= 2 and _is_time(cells[0]) and _is_time(cells[1])


def _csv_intervals(text: str, label: str, zone_info: tzinfo | None) -> list[Interval]:
    reader = csv.reader(io.StringIO(text))
    rows = [
        (reader.line_num, row)
        for row in reader
        if any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")
    ]
    columns = (0, 1)
    if rows and not _is_time(rows[0][1][0]):
        header = [cell.strip().lower() for cell in rows[0][1]]
        if "start" not in header or "end" not in header:
            raise LogscanError(f"{label}: the CSV needs start and end columns")
        columns = (header.index("start"), header.index("end"))
        rows = rows[1:]
    intervals: list[Interval] = []
    for number, row in rows:
        if len(row) <= max(columns):
            raise LogscanError(f"{label}: line {number} has no end time")
        start, end = (_csv_time(row[c], label, number, zone_info) for c in columns)
        if end < start:
            raise LogscanError(f"{label}: line {number} ends before it starts")
        intervals.append((start, end))
    return intervals


def _is_time(cell: str) -> bool:
    try:
        datetime.fromisoformat(cell.strip())
    except ValueError:
        return False
    return True


def _csv_time(cell: str, label: str, number: int, zone_info: tzinfo | None) -> datetime:
    try:
        return wall_clock(datetime.fromisoformat(cell.strip()), zone_info)
    except (ValueError, OverflowError):
        raise LogscanError(f"{label}: line {number}: {cell.strip()!r} is not an ISO time (2026-09-15 18:10)") from None


def _log_times(text: str, zone_info: tzinfo | None) -> list[datetime]:
    times: list[datetime] = []
    for line in text.splitlines():
        match = _ANY_LOG_TIMESTAMP.search(line, 0, _STAMP_REACH)
        if match is None:
            continue
        frac = (match["frac"] or "")[:6]
        stamp = f"{match['date']}T{match['time']}{'.' + frac.ljust(6, '0') if frac else ''}{match['zone'] or ''}"
        try:
            times.append(wall_clock(datetime.fromisoformat(stamp), zone_info))
        except (ValueError, OverflowError):  # e.g. month 13, or year 1 in another zone: no usable time
            continue
    return times


def _activity_runs(times: list[datetime], gap_s: float) -> list[Interval]:
    """One interval per run of activity with no silence longer than ``gap_s``."""
    runs: list[Interval] = []
    for moment in times:
        if runs and (moment - runs[-1][1]).total_seconds() <= gap_s:
            runs[-1] = (runs[-1][0], moment)
        else:
            runs.append((moment, moment))
    return runs


def merge(intervals: list[Interval]) -> list[Interval]:
    """The union of intervals as disjoint sorted intervals."""
    out: list[Interval] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
