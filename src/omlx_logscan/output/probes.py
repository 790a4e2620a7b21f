"""The words for generation probes: a probe's line among the watch's events, and the alert a proof raises."""

from __future__ import annotations

from omlx_logscan.analysis.probes import ALIVE, HUNG, ProbeProof
from omlx_logscan.output.phrases import plural
from omlx_logscan.timeutil import human_time


def probe_message(trigger: str, outcome: str, latency_s: float | None, status: int | None, detail: str) -> str:
    """One probe: what it found and why it was sent."""
    took = f" in {latency_s:.2f} s" if latency_s is not None else ""
    found = {
        ALIVE: f"alive: one token{took}",
        HUNG: f"hung: /v1/models answered, no token{took}",
    }.get(outcome, f"{outcome}{f' (HTTP {status})' if status else ''}: {detail}")
    return f"generation probe ({trigger}): {found}"


def probe_dead_message(proof: ProbeProof) -> str:
    """The alert of a proof: the engine answers the API but generates nothing."""
    how = (
        "a completion of one token got no answer while /v1/models answered"
        if proof.outcome == HUNG
        else f"{plural(len(proof.probes), 'completion')} of one token failed"
    )
    return (
        f"ALERT engine generation-dead since {human_time(proof.since)} (session {proof.session}): {how}. "
        "Only a restart recovers it"
    )


def probes_phrase(outcomes: list[str]) -> str:
    """The probes a watch sent, for its summary line: ``3 probes (2 alive, 1 hung)``."""
    tally = ", ".join(f"{outcomes.count(o)} {o}" for o in dict.fromkeys(outcomes))
    return f"{plural(len(outcomes), 'probe')}" + (f" ({tally})" if tally else "")
