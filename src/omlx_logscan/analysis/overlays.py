"""Overlays: times when something else was going on, and whether faults cluster inside them.

An overlay is a named set of intervals read from a file (``inputs.overlays``): either a CSV of
``start,end`` local times or any other log, whose timestamped lines mark activity, each run of
lines with no gap longer than the chosen gap becoming one interval.

The comparison counts the hours at risk (the log's span, less the dead-engine windows, when a
penalty-boxed engine cannot fault anew) inside and outside the overlay and the faults in each,
then tests the rate ratio exactly (see ``stats``). ``output.overlays`` puts the result into words.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from omlx_logscan.analysis.results import Analysis
from omlx_logscan.analysis.stats import RateRatio, rate_ratio
from omlx_logscan.inputs.overlays import Interval, Overlay, merge
from omlx_logscan.timeutil import parse, seconds


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
        """The numbers of the JSON ``overlays`` entry (the document adds the name of the test)."""
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
        }


def _finite(value: float) -> float | None:
    return None if value == float("inf") else round(value, 6)


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
