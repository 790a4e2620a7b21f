"""The fleet's answer as data: rows per host, per version with pooled bounds, and after each OS upgrade."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omlx_logscan.analysis.bounds import rate


@dataclass
class Fleet:
    """Rows of each part of the answer, as JSON-ready dictionaries."""

    hosts: list[dict[str, Any]]
    versions: list[dict[str, Any]]
    upgrades: list[dict[str, Any]]


def pooled_bounds(faults: int, starts: int, hours: float) -> dict[str, float | None]:
    """Observed fault rates and their exact one-sided 95 % upper bounds, per start and per hour."""
    per_start, upper_per_start = rate(faults, starts)
    per_hour, upper_per_hour = rate(faults, hours)
    return {
        "faults_per_start": per_start,
        "upper95_faults_per_start": upper_per_start,
        "faults_per_hour": per_hour,
        "upper95_faults_per_hour": upper_per_hour,
    }
