"""The analysis results: process lifetimes, fault incidents, dead-engine windows, stack signatures."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from omlx_logscan.analysis.failures import Errors
from omlx_logscan.analysis.outage_model import Outages
from omlx_logscan.analysis.requests import RequestIndex
from omlx_logscan.parsing.catalog import PENALTY_BOX_CODE, FaultKind
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import FAULTHANDLER_ABORT
from omlx_logscan.parsing.kinds import CRASH_KINDS
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.timeutil import seconds

if TYPE_CHECKING:
    from omlx_logscan.analysis.trouble import Trouble

INCIDENT_GAP_S = 2.0  # gpu_error records closer than this are one fault

# What became of the engine after a fault (the schemas' ``outcome`` lists these, in this order).
Outcome = Literal["absorbed", "penalty_box", "crash", "fatal_exit", "unknown"]

# How a process lifetime ended: an orderly stop, a crash, a fatal exit for a clean restart, replaced with
# neither in view, or still running at the end of the log (the schemas' session ``end_reason``).
SessionEnd = Literal["shutdown", "crash", "fatal_exit", "restart", "eof"]

# Which engine operation failed, from a fault's stack or record (the schemas' ``call_site``; analysis.
# signatures.call_site finds it, output.phrases names it).
CallSite = Literal["cache_clear", "decode", "prefill", "ane_dispatch", "unknown"]

# What ended a dead window: the same words, for the window's process (the schemas' window ``end_reason``).
WindowEnd = Literal["restart", "crash", "fatal_exit", "shutdown", "eof"]


def shows_penalty_box(record: Event) -> bool:
    """Whether a gpu_error record is the driver ignoring the process's submissions (its penalty box)."""
    return record.fields.get("code_name") == PENALTY_BOX_CODE


@dataclass(kw_only=True)
class Session:
    """One process lifetime."""

    index: int
    start: str | None
    start_exact: bool
    start_after: str | None = None
    start_in_log: bool = True
    start_inferred: bool = False  # no start line: a new fault after a dead window implies a new process
    end: str | None = None
    end_reason: SessionEnd = "eof"
    omlx_version: str | None = None
    pid: int | None = None
    engine_starts: int | None = None  # None: the log level hides the INFO lines that show them
    requests_completed: int | None = None
    faults: int = 0
    source: str | None = None
    line: int | None = None
    events: list[Event] = field(default_factory=list, repr=False)
    # C++ runtime aborts written after its orderly stop (libstdc++'s ``terminate called without an
    # active exception`` as a stopped Linux process exits): the runtime's words, not crash evidence.
    exit_notes: list[Event] = field(default_factory=list, repr=False)

    def note_exit_aborts(self) -> None:
        """Moves the aborts written after a stopped session's last orderly-stop line (the C++ runtime's,
        and faulthandler's dump of the SIGABRT) from its events to its exit notes: it had stopped in
        order, so they do not say it crashed."""
        last = max(i for i, ev in enumerate(self.events) if ev.kind == "shutdown")
        after = self.events[last + 1 :]
        notes = [ev for ev in after if is_abort(ev)]
        if notes:
            self.exit_notes = notes
            self.events = self.events[: last + 1] + [ev for ev in after if ev not in notes]

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "start": self.start,
            "start_exact": self.start_exact,
            "start_after": self.start_after,
            "start_in_log": self.start_in_log,
            "start_inferred": self.start_inferred,
            "end": self.end,
            "end_reason": self.end_reason,
            "omlx_version": self.omlx_version,
            "pid": self.pid,
            "engine_starts": self.engine_starts,
            "requests_completed": self.requests_completed,
            "faults": self.faults,
            "source": self.source,
            "line": self.line,
        }


@dataclass
class Incident:
    """GPU error records of one session less than two seconds apart: one fault."""

    records: list[Event]
    session: int
    kind: FaultKind = "other_gpu"
    outcome: Outcome = "unknown"
    signature: str | None = None
    later_requests: int | None = None
    dead_window: int | None = None  # index of the dead window this incident opens

    @property
    def first(self) -> Event:
        return self.records[0]

    @property
    def time(self) -> str | None:
        return self.first.time or self.first.prev_time

    @property
    def last_time(self) -> str | None:
        return next((ev.time for ev in reversed(self.records) if ev.time), self.time)

    @property
    def last_time_of_day(self) -> str | None:
        """The time of day of its last time-only record whose date is unknown, for grouping such a paste."""
        return next((ev.time_of_day for ev in reversed(self.records) if ev.time is None and ev.time_of_day), None)

    @property
    def code_names(self) -> list[str]:
        names: list[str] = []
        for ev in self.records:
            name = ev.fields.get("code_name")
            if name and (not names or names[-1] != name):
                names.append(name)
        return names

    @property
    def penalty_record(self) -> Event:
        """The record that shows the penalty box (the first SubmissionsIgnored one), else the first:
        the record an alert points at and a hook is given."""
        return next((ev for ev in self.records if shows_penalty_box(ev)), self.first)

    @property
    def context(self) -> str:
        return str(self.first.fields.get("context", "other"))

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "time_exact": self.first.time is not None,
            "kind": self.kind,
            "session": self.session,
            "context": self.context,
            "signature": self.signature,
            "outcome": self.outcome,
            "codes": self.code_names,
            "records": len(self.records),
            "later_requests": self.later_requests,
            "source": self.first.source,
            "line": self.first.line,
            "message": self.first.message,
        }


@dataclass(kw_only=True)
class DeadWindow:
    """From a penalty-box entry to the end of its process: the engine cannot generate."""

    session: int
    start: str | None
    last_failure: str | None
    end: str | None = None  # the builder sets the end from what ended the window
    end_exact: bool = False
    end_after: str | None = None
    end_reason: WindowEnd
    repeats: int
    intervals_s: list[float]
    requests_completed: int | None = None  # None: the log level hides finished requests
    log_end: str | None
    end_inferred: bool = False  # no start line: the failures stopped while the log went on

    @property
    def duration_s(self) -> float | None:
        """From entry to the next process start: an upper bound when that start is not exact."""
        return seconds(self.start, self.end)

    @property
    def proven_end(self) -> str | None:
        """The latest moment the log proves the engine was still dead (a lower bound on the end)."""
        if self.end is not None and self.end_exact:
            return self.end
        if self.end_reason == "eof":
            return max((t for t in (self.log_end, self.last_failure) if t), default=self.start)
        return max((t for t in (self.end_after, self.last_failure) if t), default=self.start)

    @property
    def at_least_s(self) -> float:
        """How long the log proves the engine was dead; every total of dead time adds these."""
        return seconds(self.start, self.proven_end) or 0.0

    def as_dict(self) -> dict[str, Any]:
        interval = None
        if self.intervals_s:
            interval = {
                "min_s": min(self.intervals_s),
                "median_s": statistics.median(self.intervals_s),
                "max_s": max(self.intervals_s),
            }
        return {
            "session": self.session,
            "start": self.start,
            "last_failure": self.last_failure,
            "end": self.end,
            "end_exact": self.end_exact,
            "end_after": self.end_after,
            "end_reason": self.end_reason,
            "duration_s": self.duration_s,
            "still_dead_at_end_of_log": self.end_reason == "eof",
            "dead_at_least_s": self.at_least_s,
            "end_inferred": self.end_inferred,
            "repeats": self.repeats,
            "repeat_interval": interval,
            "requests_completed": self.requests_completed,
        }


@dataclass(kw_only=True)
class Signature:
    """One distinct normalised stack and the faults that share it."""

    id: str
    frames: list[dict[str, Any]]
    exception: str | None
    call_site: CallSite  # output.phrases.call_site_label names it
    innermost_code: str
    faults: int


@dataclass(kw_only=True)
class Analysis:
    stream: EventStream
    sessions: list[Session]
    faults: list[Incident]
    repeats: list[Incident]
    dead_windows: list[DeadWindow]
    signatures: list[Signature]
    log_start: str | None
    log_end: str | None
    requests: RequestIndex  # finished requests by time, for counts over any window
    outages: Outages = field(default_factory=Outages)  # every outage of every kind (analysis/outages.py)
    errors: Errors = field(default_factory=Errors)  # failures other than GPU faults (analysis/failures.py)
    # Crash evidence with no time in or around it (faulthandler's crash.log beside a dated log): it is
    # in no session, and no session is made of it (``cannot_be_placed``).
    unplaced: list[Event] = field(default_factory=list)
    # Every kind of trouble, worst first (analysis/incidents.py).
    incidents: list[Trouble] = field(default_factory=list)

    def crash_evidence(self) -> list[Event]:
        """The stream's events that show a process or the Mac dying (CRASH_KINDS), less the aborts a
        session wrote after its orderly stop."""
        notes = {id(ev) for session in self.sessions for ev in session.exit_notes}
        return [ev for ev in self.stream.events if ev.kind in CRASH_KINDS and id(ev) not in notes]


def is_abort(event: Event) -> bool:
    """Whether ``event`` is a process's SIGABRT: the C++ runtime's abort line, or faulthandler's dump of it."""
    if event.kind == "faulthandler_dump":
        return bool(event.fields.get("error") == FAULTHANDLER_ABORT)
    return bool(event.kind == "process_exit" and event.fields.get("reason") == "abort")


def aborted_at_exit(event: Event) -> bool:
    """A faulthandler dump of a SIGABRT in which no thread has a Python frame: Python had stopped
    running (a crash while serving shows the event loop's and the engine's frames), so the process
    aborted as it exited, as the Linux runs abort after their orderly stop."""
    threads = event.fields.get("threads") or []
    return (
        event.kind == "faulthandler_dump"
        and is_abort(event)
        and bool(threads)
        and not any(thread.get("frames") for thread in threads)
    )


def cannot_be_placed(event: Event) -> bool:
    """Crash evidence with no time of its own nor any around it in its file (crash.log, which oMLX's
    faulthandler appends to, holds none): no session of a dated log can be said to have written it."""
    return (
        event.kind in CRASH_KINDS
        and event.time is None
        and event.prev_time is None
        and event.next_time is None
        and event.time_of_day is None
    )


REPEATS_STOPPED_MIN_S = 1800.0  # silence after the last repeat that says the dead process is gone
REPEATS_STOPPED_FACTOR = 4.0  # ... or this many median repeat intervals, if that is longer


def failures_stopped(intervals: list[float], last_failure: str | None, latest: str | None) -> bool:
    """``repeats_stopped`` for a window whose failures started ``intervals`` apart, the last at
    ``last_failure``, in a session whose latest event is at ``latest``."""
    if len(intervals) < 2 or last_failure is None:
        return False
    quiet = max(REPEATS_STOPPED_MIN_S, REPEATS_STOPPED_FACTOR * statistics.median(intervals))
    gap = seconds(last_failure, latest)
    return gap is not None and gap > quiet


def repeats_stopped(session: Session, intervals: list[float], failure_times: list[str]) -> bool:
    """The failures stopped repeating while the log went on: the process was restarted unseen.

    A penalty-boxed engine fails again at every step it tries (every few minutes in the
    report). When the log goes on far longer than that with no further failure, the process
    behind it was replaced even though the log level hid the new start.
    """
    latest = max((t for ev in session.events if (t := ev.time)), default=None)
    return failures_stopped(intervals, max(failure_times, default=None), latest)
