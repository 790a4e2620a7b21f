"""Overlays: times when something else was going on, and whether faults cluster inside them.

An overlay is a named set of intervals from ``--overlay NAME=FILE``. FILE is either a CSV of
``start,end`` local times or any other log: its timestamped lines mark activity, and each run
of lines with no gap longer than ``--overlay-gap`` becomes one interval.

The comparison counts the hours at risk (the log's span, less the dead-engine windows, when a
penalty-boxed engine cannot fault anew) inside and outside the overlay and the faults in each,
then tests the rate ratio exactly (see ``stats``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from omlx_logscan.analysis.model import Analysis
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
