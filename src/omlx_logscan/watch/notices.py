"""What the watcher says: fault, dead-engine and recovery notices."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omlx_logscan.analysis.model import DeadWindow, Incident
from omlx_logscan.output.phrases import dead_for
from omlx_logscan.parsing.event import Event
from omlx_logscan.timeutil import human_time

# -- what the watcher says ----------------------------------------------------------------------


@dataclass
class Notice:
    """An alert, a fault or a hook result: words for people and a row for machines."""

    kind: str  # fault, dead, dead_end, command
    message: str
    data: dict[str, Any]
    detail: list[str] = field(default_factory=list)  # a hook's output lines


def penalty_event(incident: Incident) -> Event:
    """The record that shows the penalty box (the first SubmissionsIgnored one), else the first."""
    return next((ev for ev in incident.records if ev.fields.get("code_name") == "SubmissionsIgnored"), incident.first)


def fault_notice(incident: Incident, number: int) -> Notice:
    codes = " → ".join(incident.code_names) or incident.kind
    message = (
        f"GPU fault {number} in session {incident.session} at {human_time(incident.time)}: {codes} ({incident.context})"
    )
    consequence = {
        "penalty_box": "the driver's penalty box",
        "fatal_exit": "the process exits for a clean restart",
        "crash": "the process crashed",
    }.get(incident.outcome)
    if consequence:
        message += f"; {consequence}"
    return Notice("fault", message, {"fault": incident.as_dict()})


def dead_notice(window: DeadWindow, entry: Incident, log: Path) -> Notice:
    event = penalty_event(entry)
    message = (
        f"ALERT engine generation-dead since {human_time(window.start)}; {window.repeats} repeats "
        f"(session {window.session}, {os.path.basename(event.source)}:{event.line}). The GPU driver ignores "
        "this process's submissions: only a restart recovers it"
    )
    return Notice("dead", message, {"window": window.as_dict(), "log": str(log), "event": event.as_dict()})


def dead_end_notice(window: DeadWindow, inferred: bool) -> Notice:
    if inferred:
        how = f"a new kind of GPU fault at {human_time(window.end)} shows the process was restarted"
    elif window.end_reason == "restart":
        how = (
            f"a new process started at {human_time(window.end)}"
            if window.end_exact
            else f"a new process started after {human_time(window.end_after)}"
        )
    else:
        what = "exited for a restart (fatal exit)" if window.end_reason == "fatal_exit" else "crashed"
        when = f"at {human_time(window.end)}" if window.end else f"after {human_time(window.end_after)}"
        how = f"the process {what} {when}"
    message = (
        f"engine dead window of session {window.session} ended: {how}; {dead_for(window)}, {window.repeats} repeats"
    )
    return Notice("dead_end", message, {"window": window.as_dict(), "inferred_restart": inferred})
