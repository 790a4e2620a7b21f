"""What generation probes prove: the running lifetime generation-dead, or its engine alive.

At INFO level the log cannot tell an idle server from a dead one, and a penalty box keeps
``/v1/models`` answering while no completion does (oMLX issues 2852, 2858). ``watch --probe`` asks
the server for one token where the log cannot tell, and each answer is an event of kind ``probe``
(fields ``outcome``: alive, error, hung, down, needs_key or failed; ``trigger``; ``latency_s``;
``status``). This module
turns those events into a proof, as the log's own evidence is turned into outages; the watch alerts
on it like on a penalty box or a wedge. Data only: ``output/probes.py`` says it in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from omlx_logscan.analysis.results import Analysis
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.probes import ProbeFile, ProbeOutcome
from omlx_logscan.timeutil import parse

ALIVE: Final = "alive"
ERROR: Final = "error"  # oMLX itself answered the completion with an error (a 5xx, or an error after the keepalive)
HUNG: Final = "hung"  # /v1/models answered, the completion did not in time: generation-dead
DOWN: Final = "down"  # nothing answered: the process is gone, which its log (or its absence) tells
NEEDS_KEY: Final = "needs_key"  # 401 or 403: the server wants an API key (or another): nothing was asked of the engine
FAILED: Final = "failed"  # an answer that is no completion and no oMLX error (a redirect, a proxy's 5xx, not JSON)
ERRORS_FOR_DEAD = 2  # error answers in a row that prove generation-dead (one may be a client's mistake)


@dataclass
class ProbeProof:
    """The lifetime ``session`` is generation-dead since ``since`` (its first failing probe), as ``probes``
    (those failing since the last alive one) prove."""

    session: int
    since: str | None
    outcome: ProbeOutcome  # hung, or error (repeated)
    probes: list[Event]

    @property
    def last(self) -> Event:
        return self.probes[-1]


def generation_dead(analysis: Analysis | None, probes: Sequence[Event], running: int = 1) -> ProbeProof | None:
    """The running lifetime proven generation-dead by probes: after its start and after the last probe
    that got a token or the last request the log shows finished, a hung probe or ERRORS_FOR_DEAD error
    answers. With no lifetime read yet (a watch from a log's end), the process counts as running, as
    lifetime ``running``."""
    sessions = analysis.sessions if analysis is not None else []
    begins = (sessions[-1].start_after or sessions[-1].start) if sessions else None
    failing: list[Event] = []
    for probe in probes:
        if begins is not None and probe.time is not None and probe.time < begins:
            continue
        outcome = probe.fields.get("outcome")
        if outcome == ALIVE:
            failing = []
        elif outcome in (HUNG, ERROR):
            failing.append(probe)
    if not failing or (analysis is not None and analysis.requests.last_between(failing[0].time, None) is not None):
        return None  # a request finished since: the engine generates
    session = sessions[-1].index if sessions else running
    if any(probe.fields.get("outcome") == HUNG for probe in failing):
        return ProbeProof(session, failing[0].time, HUNG, failing)
    if len(failing) >= ERRORS_FOR_DEAD:
        return ProbeProof(session, failing[0].time, ERROR, failing)
    return None


# What a probe read back by ``timeline`` and ``report`` says of the outage it fell in (if any).
ProbeVerdict = Literal[
    "confirms", "clears", "proves", "contradicts", "unseen", "alive", "error", "down", "needs_key", "failed"
]
CONFIRMS: Final = "confirms"  # a possible wedge: no token, so the engine was dead, not idle
CLEARS: Final = "clears"  # a possible wedge: a token, so the server was idle
PROVES: Final = "proves"  # an outage the log shows (a penalty box, a wedge): no token either
CONTRADICTS: Final = "contradicts"  # an outage the log shows, yet a token came
UNSEEN: Final = "unseen"  # no outage in the log, yet the probes prove the engine generation-dead
# What a probe alone found, outside any outage (or one that proves nothing of it).
_ALONE: dict[object, ProbeVerdict] = {ALIVE: ALIVE, ERROR: ERROR, DOWN: DOWN, NEEDS_KEY: NEEDS_KEY, FAILED: FAILED}


@dataclass
class ProbeFinding:
    """One probe on the timeline: the lifetime it reached (None: before the log's first), the outage
    of that lifetime it fell in (an index into the analysis's outages) and what it says of it."""

    probe: Event
    session: int | None
    outage: int | None
    verdict: ProbeVerdict


def probe_findings(analysis: Analysis, probes: Sequence[Event]) -> list[ProbeFinding]:
    """Each probe, in time order, set against the log's lifetimes and outages. A probe proves the
    engine dead as the watch's alert does: hung, or the ERRORS_FOR_DEAD-th error in a row of one
    lifetime with no request finished between them."""
    findings: list[ProbeFinding] = []
    failing: list[Event] = []
    session: int | None = None
    for probe in sorted(probes, key=lambda event: event.sort_time):
        reached = _session_at(analysis, probe.time)
        outcome = probe.fields.get("outcome")
        finished = failing and analysis.requests.last_between(failing[0].time, probe.time) is not None
        if reached != session or outcome == ALIVE or finished:
            failing = []
        session = reached
        if outcome in (HUNG, ERROR):
            failing.append(probe)
        dead = outcome == HUNG or (outcome == ERROR and len(failing) >= ERRORS_FOR_DEAD)
        outage = _outage_at(analysis, session, probe.time)
        findings.append(ProbeFinding(probe, session, outage, _verdict(analysis, outage, outcome, dead)))
    return findings


def _session_at(analysis: Analysis, time: str | None) -> int | None:
    """The lifetime running at ``time``: the last one begun by then."""
    begun = [s for s in analysis.sessions if time is not None and (s.start_after or s.start or "") <= time]
    return begun[-1].index if begun else None


def _outage_at(analysis: Analysis, session: int | None, time: str | None) -> int | None:
    """The outage of ``session`` under way at ``time``, if any (one with no end lasts to the log's end
    and on: the log does not show it ended)."""
    for index, outage in enumerate(analysis.outages.items):
        if outage.session != session or time is None or outage.start is None or outage.start > time:
            continue
        if outage.end is None or time <= outage.end:
            return index
    return None


def _verdict(analysis: Analysis, outage: int | None, outcome: object, dead: bool) -> ProbeVerdict:
    if outage is None:
        return UNSEEN if dead else _ALONE[outcome]
    certain = analysis.outages.items[outage].certain
    if dead:
        return PROVES if certain else CONFIRMS
    if outcome == ALIVE:
        return CONTRADICTS if certain else CLEARS
    return _ALONE[outcome]


@dataclass
class ProbeEvidence:
    """The probes ``timeline`` and ``report`` read back (``--probes``, or watch's NDJSON as an input)."""

    files: list[ProbeFile]
    findings: list[ProbeFinding]


def probe_evidence(
    analysis: Analysis, files: list[ProbeFile], since: datetime | None = None, until: datetime | None = None
) -> ProbeEvidence:
    """The probes of ``files`` sent within the --since/--until window (naive local times), set against
    the analysis of that window."""
    probes = [
        probe
        for found in files
        for probe in found.probes
        if probe.time is not None
        and (since is None or parse(probe.time) >= since)
        and (until is None or parse(probe.time) <= until)
    ]
    return ProbeEvidence(files, probe_findings(analysis, probes))
