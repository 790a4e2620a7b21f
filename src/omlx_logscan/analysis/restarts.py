"""Processes that began unseen: where a lifetime's events show a new process with no start line.

Above INFO a new process writes no start line; its first lines still show it, by what the process
before it could not have written, or could not have written any more (``restart_evidence``).
"""

from __future__ import annotations

from omlx_logscan.analysis.results import INCIDENT_GAP_S, Session, shows_penalty_box
from omlx_logscan.parsing.catalog import FINAL_STOP_FUNCTION, LAST_STOP_FUNCTIONS, LOGGER_PREFIX
from omlx_logscan.parsing.event import Event, leaves_no_process
from omlx_logscan.parsing.kinds import AT_WORK_KINDS
from omlx_logscan.parsing.lexicon import lexicon
from omlx_logscan.timeutil import clock_seconds, seconds


def joins_incident(last_time: str | None, event: Event, last_time_of_day: str | None = None) -> bool:
    """Whether a gpu_error record belongs to the fault whose last record was at ``last_time``.

    Records less than INCIDENT_GAP_S apart are one fault; an untimed record (an abort on stderr)
    joins the fault before it when the record before it is that close or unknown. Time-only lines
    whose date is unknown are compared by their time of day (``last_time_of_day``: the fault's).
    """
    if event.time is None and last_time_of_day is not None and event.time_of_day is not None:
        return clock_seconds(last_time_of_day, event.time_of_day) < INCIDENT_GAP_S
    gap = seconds(last_time, event.time or event.prev_time)
    if gap is None:
        return event.time is None
    return 0 <= gap < INCIDENT_GAP_S


def _last_time(events: list[Event]) -> str | None:
    return next((event.time for event in reversed(events) if event.time), None)


def _shows_unseen_restart(record: Event) -> bool:
    """Whether a gpu_error record that begins a new incident, in a process the penalty box already
    holds, shows a new process: a penalty-boxed process fails only with SubmissionsIgnored, so
    anything else comes from one restarted unseen (its start line hidden by the log level)."""
    return not shows_penalty_box(record)


def restart_evidence(session: Session) -> tuple[int, str | None] | None:
    """The first event of a process that began unseen (at WARNING level its start is not in view), and
    the time after which it began: an event that a penalty-boxed process could not have produced (after
    the box's last failure: the lines between may be either process's), an oMLX record of a process at
    work after a line of the last stop step (``_at_work_after_stop``), or an event timed after a fatal exit
    or kernel panic, or a panic after one."""
    dead = False
    last_gpu: str | None = None
    last_failure: str | None = None  # the penalty box's last failure: only the boxed process writes one
    exited: str | None = None
    ended = False  # a fatal exit or kernel panic was seen: a later panic report is another boot's
    stopped = False  # a line of the last stop step was seen
    for index, event in enumerate(session.events):
        if (exited and event.time and event.time > exited) or (ended and event.kind == "kernel_panic"):
            return index, _last_time(session.events[:index])
        if stopped and _at_work_after_stop(event):
            return index, _last_time(session.events[:index])
        stopped = stopped or (event.kind == "shutdown" and _writer(event) == FINAL_STOP_FUNCTION)
        if leaves_no_process(event):
            ended, exited = True, event.time or event.prev_time
        if event.kind != "gpu_error":
            continue
        new_incident = last_gpu is None or not joins_incident(last_gpu, event)
        if dead and new_incident and _shows_unseen_restart(event):
            return index, last_failure or _last_time(session.events[:index])
        if shows_penalty_box(event):
            dead, last_failure = True, event.time or last_failure
        last_gpu = event.time or last_gpu
    return None


def _writer(event: Event) -> str | None:
    """The oMLX function that writes ``event``'s message (from the lexicon), if it is known."""
    return lexicon().entry(event.entry).function if event.entry is not None else None


def _at_work_after_stop(event: Event) -> bool:
    """Whether ``event``, after a line of a process's last stop step, shows the next process: an oMLX
    record, timed, of a process at work (AT_WORK_KINDS), not written by the stop's last steps
    (LAST_STOP_FUNCTIONS: a stop line that quotes the GPU fault it met is a gpu_error too)."""
    return (
        event.kind in AT_WORK_KINDS
        and event.time is not None
        and (event.logger or "").startswith(LOGGER_PREFIX)
        and _writer(event) not in LAST_STOP_FUNCTIONS
    )
