"""One item of the incident list (``analysis/incidents.py`` builds the list): kept apart so the
results can hold the list without importing its builder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omlx_logscan.analysis.severity import IncidentKind, Severity
from omlx_logscan.parsing.event import Event


@dataclass
class Trouble:
    """One item of the incident list: one kind and one message (a memory-pressure episode)."""

    kind: IncidentKind
    severity: Severity
    template: str
    example: Event
    count: int = 0  # requests for ``rejected`` and ``aborted``, faults and windows as such, else records
    records: list[Event] = field(default_factory=list)
    sessions: set[int] = field(default_factory=set)
    times: list[str] = field(default_factory=list)  # each counted one's time: first and last come from these
    # memory pressure: each episode's start, end (None: not in the log), worst level and figures
    episodes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def first(self) -> str | None:
        return min(self.times, default=None)

    @property
    def last(self) -> str | None:
        return max(self.times, default=None)

    def add(self, event: Event, session: int | None, counted: bool = True, when: str | None = None) -> None:
        """One more record; ``counted`` when it is a new one of what the item counts, at ``when`` (by
        default the time the record states)."""
        self.records.append(event)
        if session is not None:
            self.sessions.add(session)
        if counted:
            self.count += 1
            when = when or event.time or event.time_of_day
            if when:
                self.times.append(when)

    def as_dict(self) -> dict[str, Any]:
        example = self.example
        out = {
            "kind": self.kind,
            "severity": self.severity,
            "template": self.template,
            "count": self.count,
            "first": self.first,
            "last": self.last,
            "sessions": sorted(self.sessions),
            "example": {"source": example.source, "line": example.line, "message": example.message},
        }
        if self.kind == "memory_pressure":
            out["episodes"] = self.episodes
        return out
