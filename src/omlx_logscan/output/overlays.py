"""The words of an overlay correlation: hours at risk, the rate ratio and its p-value, the sentence."""

from __future__ import annotations

from omlx_logscan.analysis.overlays import OverlayCorrelation
from omlx_logscan.analysis.stats import RateRatio
from omlx_logscan.timeutil import human_duration

RATE_RATIO_TEST = "exact conditional binomial, two-sided"  # the test behind ``p_value``, named in the JSON


def overlay_sentence(overlay: OverlayCorrelation) -> str:
    """The finding in one line, e.g. "6 of 6 faults fell in the 9 h 18 min when gpu was active, …"; plain
    words in every format (the name is the user's label, given on the command line)."""
    total = overlay.faults_inside + overlay.faults_outside
    head = (
        f"{overlay.faults_inside} of {total} fault{'s' if total != 1 else ''} fell in the "
        f"{risk_hours(overlay.hours_inside)} when {overlay.name} was active, "
        f"{overlay.faults_outside} in {risk_hours(overlay.hours_outside)} without"
    )
    if overlay.hours_inside <= 0:
        return f"{overlay.name} covers none of the log's hours at risk: nothing to compare"
    if overlay.hours_outside <= 0:
        return f"{head}: the whole log lies inside {overlay.name}, nothing to compare"
    if overlay.ratio is None:
        return f"{head}: no faults, nothing to compare"
    return f"{head}; {rate_ratio_text(overlay.ratio)}"


def risk_hours(hours: float) -> str:
    """Hours at risk, in the one duration style: ``9 h 18 min``, ``87 d 12 h``."""
    return human_duration(hours * 3600)


def ratio_figure(value: float) -> str:
    """A rate ratio or its limit: three significant digits, whole numbers from 100 on."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def p_value_text(p_value: float) -> str:
    """``p < 0.001``, ``p = 0.004`` or ``p = 0.42``: as many digits as the size deserves."""
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3f}" if p_value < 0.1 else f"p = {p_value:.2f}"


def rate_ratio_text(ratio: RateRatio) -> str:
    """``rate ratio ≥ 265, p < 0.001`` or ``rate ratio 1.97 (95 % CI 0.858–4.28), p = 0.080``."""
    level = f"{ratio.level * 100:g} %"
    if ratio.lower_bound_only:
        return f"rate ratio ≥ {ratio_figure(ratio.low)} ({level} lower limit), {p_value_text(ratio.p_value)}"
    high = "∞" if ratio.high == float("inf") else ratio_figure(ratio.high)
    estimate, low = ratio_figure(ratio.estimate), ratio_figure(ratio.low)
    return f"rate ratio {estimate} ({level} CI {low}–{high}), {p_value_text(ratio.p_value)}"
