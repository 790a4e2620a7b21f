"""The outage: any stretch in which oMLX did not serve, whatever caused it, as the log bounds it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from omlx_logscan.timeutil import seconds

WEDGE_AFTER_S = 600.0  # default --wedge-after: no request finished for this long while arrivals go on


# What kept oMLX from serving (the schemas' ``outage_kind``).
OutageKind = Literal["penalty_box", "wedge", "fatal_exit", "crash", "reboot", "retry_loop"]
OUTAGE_KINDS: tuple[OutageKind, ...] = get_args(OutageKind)


LEVEL_EVIDENCE_RECORDS = 200  # fewer records (a pasted excerpt) say nothing of the server's log level


# How much of the traffic a log level shows, which decides what a wedge can be: at DEBUG or TRACE the
# arrivals (a wedge is proven), at INFO only finished requests (a silence is a possible wedge), above
# that nothing (no wedge can be seen).
ARRIVALS_SHOWN = "arrivals"
COMPLETIONS_SHOWN = "completions"
TRAFFIC_HIDDEN = "hidden"


@dataclass(kw_only=True)
class Outage:
    """One outage of one lifetime: from ``start`` to ``end``. An end that is not exact lies after
    ``end_after`` and (when ``end`` is known) at or before ``end``; ``end`` None: not in the log."""

    kind: OutageKind
    session: int
    start: str | None
    start_exact: bool
    end: str | None
    end_exact: bool
    end_after: str | None
    certain: bool = True  # False: the log level cannot prove it (a possible wedge)
    evidence: list[tuple[str, int, str | None]] = field(default_factory=list)  # (source, line, time)
    hidden: list[str] = field(default_factory=list)  # ids of what the log cannot show about it
    reason: str | None = None  # a fatal exit's reason id; a retry loop's error text
    fault: int | None = None  # index into the faults: the one that caused it
    dead_window: int | None = None  # index into the dead windows (a penalty box)
    crash: int | None = None  # index into the crash evidence rows
    unfinished_requests: int | None = None  # a wedge's requests accepted and never finished
    repeats: int | None = None  # a retry loop's errors
    longest_gap_s: float | None = None  # a possible wedge: the longest gap between completions before it
    completions_before: int | None = None  # ... and how many completions that traffic had
    # The lifetime whose start ends it (None: none follows in the log); it ended, at a time the log may not give.
    next_session: int | None = None

    @property
    def rule(self) -> str:
        """The check rule it answers to: its kind, or ``possible_wedge`` for a wedge the log cannot prove."""
        return self.kind if self.certain else f"possible_{self.kind}"

    @property
    def open_at_end(self) -> bool:
        """It had not ended when the log did (no next start, or a wedge or penalty box still on)."""
        return self.end is None and self.next_session is None

    @property
    def proven_end(self) -> str | None:
        """The latest moment the log proves the outage lasted to."""
        return self.end if self.end_exact else self.end_after

    @property
    def at_least_s(self) -> float:
        """How long the log proves it lasted; totals add these. A start that is only a lower bound (a
        crash some time after the last record) proves nothing: it may have come just before the end."""
        return (seconds(self.start, self.proven_end) or 0.0) if self.start_exact else 0.0

    @property
    def at_most_s(self) -> float | None:
        """How long it can have lasted (None: the log ends first)."""
        return seconds(self.start, self.end)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "session": self.session,
            "start": self.start,
            "start_exact": self.start_exact,
            "end": self.end,
            "end_exact": self.end_exact,
            "end_after": self.end_after,
            "at_least_s": self.at_least_s,
            "at_most_s": self.at_most_s,
            "certain": self.certain,
            "evidence": [{"source": s, "line": n, "time": t} for s, n, t in self.evidence],
            "reason": self.reason,
            "fault": self.fault,
            "dead_window": self.dead_window,
            "crash": self.crash,
            "unfinished_requests": self.unfinished_requests,
            "repeats": self.repeats,
            "longest_gap_s": self.longest_gap_s,
            "completions_before": self.completions_before,
            "next_session": self.next_session,
        }


@dataclass
class Outages:
    """Every outage of a log, in time order, and what its level lets a wedge be."""

    items: list[Outage] = field(default_factory=list)
    traffic: str = ARRIVALS_SHOWN  # ARRIVALS_SHOWN, COMPLETIONS_SHOWN or TRAFFIC_HIDDEN
    excerpt: bool = False  # a pasted excerpt: it says nothing of what the server's log level hides
    wedge_after_s: float = WEDGE_AFTER_S

    def of_kind(self, *kinds: str) -> list[Outage]:
        return [o for o in self.items if o.kind in kinds]
