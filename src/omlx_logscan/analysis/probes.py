"""What generation probes prove: the running lifetime generation-dead, or its engine alive.

At INFO level the log cannot tell an idle server from a dead one, and a penalty box keeps
``/v1/models`` answering while no completion does (oMLX issues 2852, 2858). ``watch --probe`` asks
the server for one token where the log cannot tell, and each answer is an event of kind ``probe``
(fields ``outcome``: alive, error, hung or down; ``trigger``; ``latency_s``; ``status``). This module
turns those events into a proof, as the log's own evidence is turned into outages; the watch alerts
on it like on a penalty box or a wedge. Data only: ``output/probes.py`` says it in words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from omlx_logscan.analysis.results import Analysis
from omlx_logscan.parsing.event import Event

ALIVE = "alive"
ERROR = "error"
HUNG = "hung"  # /v1/models answered, the completion did not in time: generation-dead
DOWN = "down"  # nothing answered: the process is gone, which its log (or its absence) tells
ERRORS_FOR_DEAD = 2  # error answers in a row that prove generation-dead (one may be a client's mistake)


@dataclass
class ProbeProof:
    """The lifetime ``session`` is generation-dead since ``since`` (its first failing probe), as ``probes``
    (those failing since the last alive one) prove."""

    session: int
    since: str | None
    outcome: str  # hung, or error (repeated)
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
