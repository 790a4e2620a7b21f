"""The typed event: what one record means, with its kind-specific fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omlx_logscan.parsing.kinds import EventKind


@dataclass
class Event:
    """One typed event. ``time`` is ISO local time or None; ``fields`` are kind-specific."""

    kind: EventKind
    time: str | None
    source: str
    line: int
    level: str | None
    logger: str | None
    message: str
    fields: dict[str, Any] = field(default_factory=dict)
    lines: int = 1  # lines of the record it came from
    prev_time: str | None = None  # nearest timestamps around an untimed event, for ordering and bounds
    next_time: str | None = None
    source_index: int = 0
    time_of_day: str | None = None  # HH:MM:SS.mmm of a time-only line (its date inferred, or unknown: time None)
    entry: str | None = None  # the oMLX message it is: its entry in the lexicon of oMLX's messages
    template: str | None = None  # that message as oMLX's source writes it
    entries: tuple[str, ...] = ()  # every entry that could have written it (``entry`` is the likeliest)

    @property
    def sort_time(self) -> str:
        return self.time or self.prev_time or ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "time": self.time,
        }
        if self.time_of_day is not None:
            out["time_of_day"] = self.time_of_day
        out |= {
            "source": self.source,
            "line": self.line,
            "level": self.level,
            "logger": self.logger,
            "kind": self.kind,
            "message": self.message,
        }
        if self.kind == "record" or self.entry is not None:  # a record is known by its message alone
            out |= {"entry": self.entry, "template": self.template}
        out.update(self.fields)
        return out


def leaves_no_process(event: Event) -> bool:
    """Whether no process that wrote before ``event`` writes after it: a fatal exit (code 70, the
    supervisor starts a new one) or a kernel panic (the Mac restarts). A later record is a new process's."""
    return event.kind == "kernel_panic" or (event.kind == "process_exit" and event.fields.get("reason") == "fatal_exit")
