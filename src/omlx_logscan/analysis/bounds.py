"""Version bounds: how many faults each macOS (or oMLX) version had, and how few it could have.

The report behind oMLX issue 3706 argued "zero faults in 156 starts on the old OS, the first
one hours after the upgrade". This module builds that argument from the numbers: one row per
version with its exposure (starts, hours), its faults, and an exact one-sided Poisson upper
bound on the fault rate, so that "none seen" says how rare the fault must have been.
``output.versions`` puts the rows and the claim into words.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from omlx_logscan.analysis.results import Analysis, Incident, Session
from omlx_logscan.inputs.oshistory import OsHistory
from omlx_logscan.timeutil import seconds

CONFIDENCE = 0.95


UNKNOWN = "unknown"


class Grouping(StrEnum):
    os = "os"
    omlx = "omlx"
    both = "both"


# -- exact Poisson upper limit --------------------------------------------------------------------


def poisson_cdf(k: int, mean: float) -> float:
    """P(X ≤ k) for X ~ Poisson(mean), summed in log space so large k or mean neither overflow nor vanish."""
    if mean <= 0:
        return 1.0
    log_mean = math.log(mean)
    logs = [i * log_mean - mean - math.lgamma(i + 1) for i in range(k + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(value - top) for value in logs))


def poisson_upper(k: int, confidence: float = CONFIDENCE) -> float:
    """The exact one-sided upper limit on a Poisson mean after seeing ``k`` events: P(X ≤ k; μ) = 1 - confidence.

    Found by bisection (no scipy): the CDF falls monotonically in μ, is above the target at μ = k
    (the median of Poisson(k) is about k) and below it far enough out.
    """
    target = 1.0 - confidence
    low, high = float(k), 2.0 * k + 10.0
    while poisson_cdf(k, high) > target:
        low, high = high, 2.0 * high
    while high - low > 1e-12 * high:
        middle = (low + high) / 2
        if poisson_cdf(k, middle) > target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


# -- rows ------------------------------------------------------------------------------------------


@dataclass
class TimeBounds:
    """A duration the log gives exactly or only between two bounds (None: unbounded on that side)."""

    exact_s: float | None
    min_s: float | None
    max_s: float | None


@dataclass
class BoundsRow:
    """Exposure and faults of one version (or version pair)."""

    os_version: str | None
    omlx_version: str | None
    first: str | None
    last: str | None
    hours: float
    process_starts: int
    engine_starts: int | None  # None when the log level hides "Engine started"
    faults: dict[str, int]
    penalty_box_entries: int
    dead_hours: float
    first_fault: str | None
    after_first_start: TimeBounds
    os_installed: str | None
    first_fault_after_os_install_s: float | None
    outage_hours: dict[str, float] = field(default_factory=dict)  # by outage kind: the hours the log proves

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())

    def per_start(self) -> tuple[float | None, float | None]:
        """Rate and 95 % upper bound per process start (None without a start in the log)."""
        return rate(self.fault_count, self.process_starts)

    def per_hour(self) -> tuple[float | None, float | None]:
        return rate(self.fault_count, self.hours)

    def as_dict(self) -> dict[str, Any]:
        rate_start, upper_start = self.per_start()
        rate_hour, upper_hour = self.per_hour()
        return {
            "os_version": self.os_version,
            "omlx_version": self.omlx_version,
            "first": self.first,
            "last": self.last,
            "hours": round(self.hours, 3),
            "process_starts": self.process_starts,
            "engine_starts": self.engine_starts,
            "faults": self.faults,
            "penalty_box_entries": self.penalty_box_entries,
            "dead_hours": round(self.dead_hours, 3),
            "outage_hours": {kind: round(hours, 3) for kind, hours in self.outage_hours.items()},
            "first_fault": self.first_fault,
            "first_fault_after_first_start_s": self.after_first_start.exact_s,
            "first_fault_after_first_start_min_s": self.after_first_start.min_s,
            "first_fault_after_first_start_max_s": self.after_first_start.max_s,
            "os_installed": self.os_installed,
            "first_fault_after_os_install_s": self.first_fault_after_os_install_s,
            "faults_per_start": rate_start,
            "upper95_faults_per_start": upper_start,
            "faults_per_hour": rate_hour,
            "upper95_faults_per_hour": upper_hour,
        }


def rate(count: int, exposure: float) -> tuple[float | None, float | None]:
    """The observed rate of ``count`` over ``exposure`` and its exact one-sided 95 % upper bound
    (None, None without exposure): for one version's rows and for a fleet's pooled counts alike."""
    if exposure <= 0:
        return None, None
    return count / exposure, poisson_upper(count) / exposure


@dataclass
class Bounds:
    """The rows, how they were grouped, and the fault names the claim speaks of."""

    by: Grouping
    rows: list[BoundsRow]
    fault_names: list[str]
    history: OsHistory | None


def session_os_versions(sessions: list[Session], history: OsHistory) -> dict[int, str]:
    """Session index → the macOS version in force at its start (``unknown`` before the history begins).

    The start of a session whose banner is untimed is the first record after it, the latest it can
    be; an OS install reboots the Mac, so a process writing after an install started after it.
    """
    return {session.index: history.version_at(session.start) or UNKNOWN for session in sessions}


def _earliest_start(session: Session, history: OsHistory) -> str | None:
    """The earliest the session can have started: exact, or after the record before it and the OS install."""
    if session.start_exact:
        return session.start
    install = history.in_force(session.start)
    floors = [stamp for stamp in (session.start_after, install.time if install else None) if stamp]
    return max(floors, default=None)


def _after_first_start(session: Session, fault: Incident, history: OsHistory) -> TimeBounds:
    earliest_fault = fault.first.time or fault.first.prev_time
    latest_fault = fault.first.time or fault.first.next_time
    low = seconds(session.start, earliest_fault)
    high = seconds(_earliest_start(session, history), latest_fault)
    exact = low if session.start_exact and fault.first.time else None
    return TimeBounds(exact, low, high)


def _only(values: set[str]) -> str | None:
    """The one value a row's sessions share, or None when they differ."""
    return next(iter(values)) if len(values) == 1 else None


def _row(runs: list[list[Session]], analysis: Analysis, os_of: dict[int, str], history: OsHistory) -> BoundsRow:
    sessions = [session for run in runs for session in run]
    indices = {session.index for session in sessions}
    faults = [fault for fault in analysis.faults if fault.session in indices]
    windows = [window for window in analysis.dead_windows if window.session in indices]
    first_session = sessions[0]
    os_version = _only({os_of[index] for index in indices})
    install = history.in_force(first_session.start) if os_version not in (None, UNKNOWN) else None
    first_fault = faults[0] if faults else None
    return BoundsRow(
        os_version=os_version,
        omlx_version=_only({session.omlx_version or UNKNOWN for session in sessions}),
        first=first_session.start,
        last=max((session.end for session in sessions if session.end), default=None),
        hours=sum(seconds(run[0].start, run[-1].end) or 0.0 for run in runs) / 3600,
        process_starts=sum(1 for session in sessions if session.start_in_log),
        engine_starts=(
            sum(session.engine_starts or 0 for session in sessions) if analysis.stream.shows("INFO") else None
        ),
        faults=dict(Counter(fault.kind for fault in faults)),
        penalty_box_entries=sum(1 for fault in faults if fault.outcome == "penalty_box"),
        dead_hours=sum(window.at_least_s for window in windows) / 3600,
        first_fault=first_fault.time if first_fault else None,
        after_first_start=(
            _after_first_start(first_session, first_fault, history) if first_fault else TimeBounds(None, None, None)
        ),
        os_installed=install.time if install else None,
        first_fault_after_os_install_s=seconds(install.time, first_fault.time) if install and first_fault else None,
        outage_hours=_outage_hours(analysis, indices),
    )


def _outage_hours(analysis: Analysis, sessions: set[int]) -> dict[str, float]:
    """The hours each kind of outage of these sessions lasted at least (a possible wedge apart)."""
    hours: dict[str, float] = {}
    for outage in analysis.outages.items:
        if outage.session in sessions:
            hours[outage.rule] = hours.get(outage.rule, 0.0) + outage.at_least_s / 3600
    return hours


def build_bounds(analysis: Analysis, history: OsHistory | None, by: Grouping = Grouping.os) -> Bounds:
    """One row per version (or version pair), in the order the versions first appear in the log.

    Hours are the log time the version covers: from the first start to the last sign of life of
    each unbroken run of its sessions, so versions that alternate do not count each other's time.
    """
    known = history or OsHistory([])
    os_of = session_os_versions(analysis.sessions, known)

    def key(session: Session) -> tuple[str, ...]:
        os_version, omlx_version = os_of[session.index], session.omlx_version or UNKNOWN
        if by is Grouping.os:
            return (os_version,)
        return (omlx_version,) if by is Grouping.omlx else (os_version, omlx_version)

    runs: dict[tuple[str, ...], list[list[Session]]] = {}
    for group, run in itertools.groupby(analysis.sessions, key=key):
        runs.setdefault(group, []).append(list(run))
    rows = [_row(group, analysis, os_of, known) for group in runs.values()]
    names: list[str] = []
    for fault in analysis.faults:
        for name in fault.code_names or [fault.kind]:
            if name not in names:
                names.append(name)
    return Bounds(by, rows, names, history)
