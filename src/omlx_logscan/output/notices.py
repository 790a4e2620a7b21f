"""What ``logscan watch`` says: its notices (alerts, faults, hook results) and its summary lines.

Pure functions of the analysis results and the watcher's tallies, so the watch loop keeps only the
following and the hook running, and the words live with the other output.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from omlx_logscan.analysis.results import DeadWindow, Incident, Outcome
from omlx_logscan.output.phrases import dead_for, plural
from omlx_logscan.timeutil import human_duration, human_time

_CONSEQUENCES: dict[Outcome, str | None] = {  # every outcome: what a fault's own records say became of the engine
    "absorbed": None,
    "unknown": None,
    "penalty_box": "the driver's penalty box",
    "fatal_exit": "the process exits for a clean restart",
    "crash": "the process crashed",
}


def fault_message(incident: Incident, number: int) -> str:
    """A new fault: its codes and where it surfaced, and what its own records say became of the engine."""
    codes = " → ".join(incident.code_names) or incident.kind
    message = (
        f"GPU fault {number} in session {incident.session} at {human_time(incident.time)}: {codes} ({incident.context})"
    )
    consequence = _CONSEQUENCES[incident.outcome]
    return f"{message}; {consequence}" if consequence else message


def dead_message(window: DeadWindow, entry: Incident) -> str:
    """The alert: the engine is generation-dead, where the log shows it, and what recovers it."""
    record = entry.penalty_record
    return (
        f"ALERT engine generation-dead since {human_time(window.start)} (session {window.session}, "
        f"{os.path.basename(record.source)}:{record.line}); {plural(window.repeats, 'repeat')} so far. The GPU "
        "driver ignores this process's submissions: only a restart recovers it"
    )


def dead_end_message(window: DeadWindow, inferred: bool) -> str:
    """A dead window ended: what ended it (``inferred``: a new kind of fault showed a restart), how long."""
    if inferred:
        how = f"a new kind of GPU fault at {human_time(window.end)} shows the process was restarted"
    elif window.end_reason == "restart":
        how = (
            f"a new session started at {human_time(window.end)}"
            if window.end_exact
            else f"a new session started after {human_time(window.end_after)}"
        )
    else:
        what = {"fatal_exit": "exited for a restart (fatal exit)", "shutdown": "stopped in order"}.get(
            window.end_reason, "crashed"
        )
        when = f"at {human_time(window.end)}" if window.end else f"after {human_time(window.end_after)}"
        how = f"the process {what} {when}"
    repeats = plural(window.repeats, "repeat")
    return f"engine dead window of session {window.session} ended: {how}; {dead_for(window)}, {repeats}"


def hook_result_message(hook: str, exit_code: int, timed_out: bool, timeout: float) -> str:
    """A hook command ended: its exit code, or that it ran past ``timeout`` seconds and was killed."""
    if timed_out:
        return f"{hook} command timed out after {human_duration(timeout)} and was killed"
    return f"{hook} command exited {exit_code}"


def hook_start_failure_message(hook: str, error: OSError) -> str:
    """A hook command could not be started (no shell, no such directory, too many processes)."""
    return f"{hook} command could not start: {error}"


def counts_phrase(sessions: int, faults: int, windows: int) -> str:
    """The tallies both the end of a replay and the stop summary give."""
    return f"{plural(sessions, 'session')}, {plural(faults, 'GPU fault')}, {plural(windows, 'dead window')}"


def replayed_line(lines: int, counts: str, *, at_end: bool) -> str:
    """Said when the history is read: what it held, and whether the watch now follows or stops."""
    then = "stopping: the log is read to its end" if at_end else "now following"
    return f"replayed {plural(lines, 'line')}: {counts}; {then}"


def summary_line(
    elapsed_s: float,
    lines: int,
    events: int,
    counts: str,
    *,
    dead: DeadWindow | None,
    hook_runs: dict[str, int],
    hooks_running: int,
    unparsed: int,
) -> str:
    """The one line printed when watching stops: what was read and shown, what is still true, what ran."""
    parts = [
        f"logscan watch: stopped after {human_duration(elapsed_s)}: {plural(lines, 'line')}, "
        f"{plural(events, 'event')} shown",
        counts,
    ]
    if dead is not None:
        parts.append(f"engine dead since {human_time(dead.start)} ({plural(dead.repeats, 'repeat')})")
    if hook_runs:
        parts.append(", ".join(f"{hook} ran {n}x" for hook, n in sorted(hook_runs.items())))
    if hooks_running:
        parts.append(f"{plural(hooks_running, 'hook command')} still running, left to finish")
    if unparsed:
        parts.append(f"{plural(unparsed, 'unparsed line')}")
    return "; ".join(parts)


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
