"""The watcher's notices: fault, dead-engine and recovery alerts as records for people and machines."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from omlx_logscan.analysis.results import DeadWindow, Incident
from omlx_logscan.output.notices import dead_end_message, dead_message, fault_message

# What a notice tells: a fault; the engine dead (a penalty box, a wedge, a probe's proof) or back;
# a hook's run.
NoticeKind = Literal["fault", "dead", "wedge", "probe_dead", "dead_end", "command"]


@dataclass
class Notice:
    """An alert, a fault or a hook result: words for people and a row for machines."""

    kind: NoticeKind
    message: str
    data: dict[str, Any]
    detail: list[str] = field(default_factory=list)  # a hook's output lines


def fault_notice(incident: Incident, number: int) -> Notice:
    return Notice("fault", fault_message(incident, number), {"fault": incident.as_dict()})


def dead_notice(window: DeadWindow, entry: Incident, log: Path) -> Notice:
    event = entry.penalty_record
    data = {"window": window.as_dict(), "log": str(log), "event": event.as_dict()}
    return Notice("dead", dead_message(window, entry), data)


def dead_end_notice(window: DeadWindow, inferred: bool) -> Notice:
    data = {"window": window.as_dict(), "inferred_restart": inferred}
    return Notice("dead_end", dead_end_message(window, inferred), data)
