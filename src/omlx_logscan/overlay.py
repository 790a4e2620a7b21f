"""Overlays: times when something else was going on, and whether faults cluster inside them.

An overlay is a named set of intervals from ``--overlay NAME=FILE``. FILE is either a CSV of
``start,end`` local times or any other log: its timestamped lines mark activity, and each run
of lines with no gap longer than ``--overlay-gap`` becomes one interval.

The comparison counts the hours at risk (the log's span, less the dead-engine windows, when a
penalty-boxed engine cannot fault anew) inside and outside the overlay and the faults in each,
then tests the rate ratio exactly (see ``stats``).
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from dataclasses import dataclass
from datetime import datetime, tzinfo

from omlx_logscan.analysis import Analysis
from omlx_logscan.errors import LogscanError
from omlx_logscan.sources import read_chunks, resolve
from omlx_logscan.stats import RateRatio, rate_ratio
from omlx_logscan.timeutil import parse, seconds
from omlx_logscan.when import duration_seconds, zone

DEFAULT_GAP_S = 300.0
Interval = tuple[datetime, datetime]

# A timestamp near the start of a line of any log: oMLX's own, ISO with T or zone, logfmt's time=...
_STAMP = re.compile(
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


def parse_gap(text: str | None) -> float:
    """``--overlay-gap`` (``5m``, ``300s``, ``1h``) in seconds; the default when not given."""
    return DEFAULT_GAP_S if text is None else duration_seconds(text, "--overlay-gap")


def parse_overlays(specs: list[str] | None, gap: str | None = None, tz: str | None = None) -> list[Overlay]:
    """The overlays of the repeatable ``--overlay NAME=FILE`` option; ``tz`` is where zoned times are read."""
    gap_s = parse_gap(gap)
    zone_info = zone(tz)
    overlays: list[Overlay] = []
    for spec in specs or []:
        name, sep, path = spec.partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise LogscanError(f"--overlay {spec!r}: expected NAME=FILE (e.g. gpu=other-server.log)")
        if any(o.name == name for o in overlays):
            raise LogscanError(f"--overlay {spec!r}: the name {name!r} is given twice")
        overlays.append(_read_overlay(name, path, gap_s, zone_info))
    return overlays


def _read_overlay(name: str, path: str, gap_s: float, zone_info: tzinfo | None) -> Overlay:
    label = f"--overlay {name}={path}"
    chunks = (chunk.decode("utf-8") for source in resolve([path]) for chunk in read_chunks(source))
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


def _local(moment: datetime, zone_info: tzinfo | None) -> datetime:
    """A zoned time as the log would write it; naive times are already the log's local time."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(zone_info).replace(tzinfo=None)


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
        return _local(datetime.fromisoformat(cell.strip()), zone_info)
    except (ValueError, OverflowError):
        raise LogscanError(f"{label}: line {number}: {cell.strip()!r} is not an ISO time (2026-09-15 18:10)") from None


def _log_times(text: str, zone_info: tzinfo | None) -> list[datetime]:
    times: list[datetime] = []
    for line in text.splitlines():
        match = _STAMP.search(line, 0, _STAMP_REACH)
        if match is None:
            continue
        frac = (match["frac"] or "")[:6]
        stamp = f"{match['date']}T{match['time']}{'.' + frac.ljust(6, '0') if frac else ''}{match['zone'] or ''}"
        try:
            times.append(_local(datetime.fromisoformat(stamp), zone_info))
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


def subtract(intervals: list[Interval], holes: list[Interval]) -> list[Interval]:
    """Disjoint sorted ``intervals`` less the union of ``holes``."""
    out: list[Interval] = []
    merged_holes = merge(holes)
    for start, end in intervals:
        cursor = start
        for hole_start, hole_end in merged_holes:
            if hole_end <= cursor or hole_start >= end:
                continue
            if hole_start > cursor:
                out.append((cursor, hole_start))
            cursor = max(cursor, hole_end)
        if cursor < end:
            out.append((cursor, end))
    return out


def overlap_hours(a: list[Interval], b: list[Interval]) -> float:
    """Hours two sets of disjoint sorted intervals share."""
    total = 0.0
    i = j = 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if high > low:
            total += (high - low).total_seconds()
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total / 3600


def contains(intervals: tuple[Interval, ...] | list[Interval], moment: datetime) -> bool:
    return any(start <= moment <= end for start, end in intervals)


def dead_intervals(analysis: Analysis) -> list[Interval]:
    """The dead-engine windows, each to the last time it is known to have lasted."""
    out: list[Interval] = []
    for window in analysis.dead_windows:
        end = window.proven_end
        if window.start and end:
            out.append((parse(window.start), parse(end)))
    return out


def at_risk(analysis: Analysis) -> list[Interval]:
    """The log's span less its dead-engine windows: the time in which a new fault could occur."""
    if not analysis.log_start or not analysis.log_end:
        return []
    return subtract([(parse(analysis.log_start), parse(analysis.log_end))], dead_intervals(analysis))


@dataclass(frozen=True)
class OverlayCorrelation:
    """Faults and hours at risk inside and outside one overlay, and the exact rate comparison."""

    name: str
    hours_inside: float
    hours_outside: float
    hours_dead_excluded: float
    faults_inside: int
    faults_outside: int
    faults_untimed: int
    ratio: RateRatio | None

    def as_dict(self) -> dict[str, object]:
        ratio = self.ratio
        return {
            "name": self.name,
            "hours_inside": round(self.hours_inside, 3),
            "hours_outside": round(self.hours_outside, 3),
            "hours_dead_excluded": round(self.hours_dead_excluded, 3),
            "faults_inside": self.faults_inside,
            "faults_outside": self.faults_outside,
            "faults_untimed": self.faults_untimed,
            "rate_ratio": None if ratio is None else _finite(ratio.low if ratio.lower_bound_only else ratio.estimate),
            "rate_ratio_is_lower_bound": ratio is not None and ratio.lower_bound_only,
            "ci95": None if ratio is None else [_finite(ratio.low), _finite(ratio.high)],
            "p_value": None if ratio is None else ratio.p_value,
            "test": "exact conditional binomial, two-sided",
        }

    def sentence(self) -> str:
        """The finding in one line, e.g. "6 of 6 faults fell in the 9.3 h when `gpu` was active, …"."""
        total = self.faults_inside + self.faults_outside
        head = (
            f"{self.faults_inside} of {total} fault{'s' if total != 1 else ''} fell in the "
            f"{hours_text(self.hours_inside)} when `{self.name}` was active, "
            f"{self.faults_outside} in {hours_text(self.hours_outside)} without"
        )
        if self.hours_inside <= 0:
            return f"`{self.name}` covers none of the log's hours at risk: nothing to compare"
        if self.hours_outside <= 0:
            return f"{head}: the whole log lies inside `{self.name}`, nothing to compare"
        if self.ratio is None:
            return f"{head}: no faults, nothing to compare"
        return f"{head}; {ratio_text(self.ratio)}"


def _finite(value: float) -> float | None:
    return None if value == float("inf") else round(value, 6)


def hours_text(hours: float) -> str:
    """``9.3 h`` or ``2,100 h``: one decimal where it matters."""
    return f"{hours:,.1f} h" if hours < 100 else f"{hours:,.0f} h"


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def p_text(p_value: float) -> str:
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3f}" if p_value < 0.1 else f"p = {p_value:.2f}"


def ratio_text(ratio: RateRatio) -> str:
    """``rate ratio ≥ 265, p < 0.001`` or ``rate ratio 1.97 (95 % CI 0.858–4.28), p = 0.080``."""
    level = f"{ratio.level * 100:g} %"
    if ratio.lower_bound_only:
        return f"rate ratio ≥ {_number(ratio.low)} ({level} lower limit), {p_text(ratio.p_value)}"
    high = "∞" if ratio.high == float("inf") else _number(ratio.high)
    return f"rate ratio {_number(ratio.estimate)} ({level} CI {_number(ratio.low)}–{high}), {p_text(ratio.p_value)}"


def correlate(analysis: Analysis, overlays: list[Overlay]) -> list[OverlayCorrelation]:
    """Each overlay against the faults of the analysis."""
    risk = at_risk(analysis)
    total_hours = sum((end - start).total_seconds() for start, end in risk) / 3600
    span_hours = (seconds(analysis.log_start, analysis.log_end) or 0.0) / 3600
    times = [parse(t) for fault in analysis.faults if (t := fault.time)]
    untimed = len(analysis.faults) - len(times)
    out: list[OverlayCorrelation] = []
    for overlay in overlays:
        inside_hours = overlap_hours(risk, list(overlay.intervals))
        outside_hours = total_hours - inside_hours
        inside = sum(1 for moment in times if contains(overlay.intervals, moment))
        outside = len(times) - inside
        ratio = rate_ratio(inside, inside_hours, outside, outside_hours)
        out.append(
            OverlayCorrelation(
                overlay.name,
                inside_hours,
                outside_hours,
                span_hours - total_hours,
                inside,
                outside,
                untimed,
                ratio,
            )
        )
    return out
