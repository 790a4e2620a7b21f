"""The analyzer: sessions, fault incidents, dead-engine windows and stack signatures.

It reads the event stream once, in order, and answers the questions the report in oMLX
issue 3706 answered by hand: which process lifetimes there were, which GPU faults each
had and what became of the engine after each, when the engine was generation-dead, and
whether the faults share one stack.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import statistics
from dataclasses import dataclass, field
from typing import Any

from omlx_logscan.catalog import INCIDENT_KINDS
from omlx_logscan.events import Event, EventStream, cellar_version
from omlx_logscan.requestindex import RequestIndex
from omlx_logscan.timeutil import seconds

INCIDENT_GAP_S = 2.0  # gpu_error records closer than this are one fault
CRASH_WINDOW_S = 60.0  # a session ending this soon after a fault, without an orderly stop, crashed
REPEATS_STOPPED_MIN_S = 1800.0  # silence after the last repeat that says the dead process is gone
REPEATS_STOPPED_FACTOR = 4.0  # ... or this many median repeat intervals, if that is longer
CRASH_KINDS = frozenset({"process_exit", "faulthandler_dump", "kernel_panic", "crash_report"})
_ACTIVE_KINDS = frozenset(
    {
        "request_complete",
        "engine_start",
        "model_load",
        "gpu_error",
        "request_error",
        "memory_pressure",
        "warning",
        "error",
        "engine_stop",
        "model_unload",
    }
)


@dataclass
class Session:
    """One process lifetime."""

    index: int
    start: str | None
    start_exact: bool
    start_after: str | None = None
    start_in_log: bool = True
    start_inferred: bool = False  # no start line: a new fault after a dead window implies a new process
    end: str | None = None
    end_reason: str = "eof"
    omlx_version: str | None = None
    pid: int | None = None
    engine_starts: int | None = None  # None: the log level hides the INFO lines that show them
    requests_completed: int | None = None
    faults: int = 0
    source: str | None = None
    line: int | None = None
    events: list[Event] = field(default_factory=list, repr=False)

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
    kind: str = "other_gpu"
    outcome: str = "unknown"
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
        times = [ev.time for ev in self.records if ev.time]
        return times[-1] if times else self.time

    @property
    def code_names(self) -> list[str]:
        names: list[str] = []
        for ev in self.records:
            name = ev.fields.get("code_name")
            if name and (not names or names[-1] != name):
                names.append(name)
        return names

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


@dataclass
class DeadWindow:
    """From a penalty-box entry to the end of its process: the engine cannot generate."""

    session: int
    start: str | None
    last_failure: str | None
    end: str | None
    end_exact: bool
    end_after: str | None
    end_reason: str
    repeats: int
    intervals_s: list[float]
    requests_completed: int | None  # None: the log level hides finished requests
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


@dataclass
class Signature:
    """One distinct normalised stack and the faults that share it."""

    id: str
    frames: list[dict[str, Any]]
    exception: str | None
    call_site: str
    call_site_label: str
    innermost_code: str
    faults: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "faults": self.faults,
            "call_site": self.call_site,
            "call_site_label": self.call_site_label,
            "innermost_code": self.innermost_code,
            "exception": self.exception,
            "frames": self.frames,
        }


@dataclass
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


_MODULE_ROOTS = ("/site-packages/", "/dist-packages/")
_STDLIB = re.compile(r"/lib/python\d+(?:\.\d+)?/(?P<rest>.+)$")


def normal_module(path: str) -> str:
    """A traceback path without install prefix or version folders: ``omlx/scheduler.py``."""
    path = path.replace("\\", "/")
    for root in _MODULE_ROOTS:
        if root in path:
            return path.split(root)[-1]
    match = _STDLIB.search(path)
    if match:
        return match["rest"]
    cut = path.rfind("/omlx/")
    if cut >= 0:
        return path[cut + 1 :]
    return path.rsplit("/", 1)[-1].lstrip(".")


def _dotted(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".").removeprefix("omlx.")


def call_site(frames: list[dict[str, Any]], context: str) -> tuple[str, str]:
    """Which engine operation failed, as a short id and a phrase."""
    funcs = [f["func"] for f in frames]
    if "_sync_and_clear_cache" in funcs:
        index = funcs.index("_sync_and_clear_cache")
        caller = frames[index - 1] if index > 0 else None
        where = f"{_dotted(normal_module(frames[index]['path']))}._sync_and_clear_cache"
        if caller is not None:
            where += f" from {_dotted(normal_module(caller['path']))}.{caller['func']}"
        return "cache_clear", f"{where} = a cache-clear drain"
    if context == "ane_dispatch":
        return "ane_dispatch", "ANE input dispatch"
    if context == "prefill" or any("prefill" in f.lower() for f in funcs):
        return "prefill", "prefill"
    if any(("decode" in f.lower() or f in ("next_generated", "_next", "_step")) for f in funcs):
        return "decode", "decode step"
    return "unknown", "unknown (no traceback)" if not frames else "unknown"


def _signature_of(incident: Incident) -> tuple[str, Signature] | None:
    for event in incident.records:
        frames = event.fields.get("traceback")
        if not frames:
            continue
        normal = [
            {"module": normal_module(f["path"]), "line": f["line"], "func": f["func"], "code": f["code"]}
            for f in frames
        ]
        key = "|".join(f"{f['module']}:{f['line']}:{f['func']}" for f in normal)
        sig_id = hashlib.sha1(key.encode()).hexdigest()[:10]
        site, label = call_site(frames, incident.context)
        innermost = normal[-1]["code"] if normal else ""
        return sig_id, Signature(sig_id, normal, event.fields.get("exception"), site, label, innermost, 0)
    return None


def session_in_progress(event: Event) -> Session:
    """Session 1 when the log (or the watch) begins inside a running process: its start is not in view."""
    return Session(1, event.time or event.next_time, False, start_in_log=False, source=event.source, line=event.line)


def session_started_by(
    index: int, event: Event, *, inferred: bool = False, after: str | None = None, version: str | None = None
) -> Session:
    """The session an event begins: a process start, or (``inferred``) a fault a penalty-boxed process
    could not produce. An untimed or inferred start takes the first time after it and says it is not
    exact; an inferred one lies after ``after`` and keeps the previous process's ``version``."""
    exact = event.time is not None and not inferred
    return Session(
        index,
        event.time if exact else (event.next_time or event.time),
        exact,
        after if inferred else (None if exact else event.prev_time),
        start_inferred=inferred,
        omlx_version=event.fields.get("omlx_version") or version,
        pid=event.fields.get("pid"),
        source=event.source,
        line=event.line,
    )


class _Builder:
    def __init__(self, stream: EventStream) -> None:
        self.stream = stream
        self.requests = RequestIndex(stream)

    # -- sessions ---------------------------------------------------------------------------
    def sessions(self) -> list[Session]:
        sessions: list[Session] = []
        current: Session | None = None
        for event in self.stream.events:
            if event.kind == "process_start":
                current = session_started_by(len(sessions) + 1, event)
                sessions.append(current)
            elif current is None:
                current = session_in_progress(event)
                sessions.append(current)
            current.events.append(event)
        return sessions

    # -- incidents --------------------------------------------------------------------------
    @staticmethod
    def incidents(session: Session) -> list[Incident]:
        out: list[Incident] = []
        for event in session.events:
            if event.kind != "gpu_error":
                continue
            if out and joins_incident(out[-1].last_time, event):
                out[-1].records.append(event)
                continue
            first_name = event.fields.get("code_name")
            out.append(Incident([event], session.index, INCIDENT_KINDS.get(str(first_name), "other_gpu")))
        return out


def _with_process_before_first_start(sessions: list[Session], log_start: str | None) -> list[Session]:
    """Records older than the first start line belong to a process already running when the log begins.

    Its routine lines yield no events, yet it existed and ended (the new start says so): without
    it, a restart seen only as a new startup block would hide the process that went before.
    """
    if not sessions or not sessions[0].start_in_log or log_start is None:
        return sessions
    first = sessions[0]
    started = first.start_after or first.start
    if started is None or log_start >= started:
        return sessions
    earlier = Session(1, log_start, False, None, start_in_log=False, source=first.source)
    for number, session in enumerate(sessions, start=2):
        session.index = number
    return [earlier, *sessions]


def joins_incident(last_time: str | None, event: Event) -> bool:
    """Whether a gpu_error record belongs to the fault whose last record was at ``last_time``.

    Records less than INCIDENT_GAP_S apart are one fault; an untimed record (an abort on stderr)
    joins the fault before it when the record before it is that close or unknown.
    """
    gap = seconds(last_time, event.time or event.prev_time)
    if gap is None:
        return event.time is None
    return 0 <= gap < INCIDENT_GAP_S


def _split_after_dead(sessions: list[Session]) -> list[Session]:
    """A new (non-penalty) GPU fault after a penalty box means the process was restarted unseen."""
    out: list[Session] = []
    for session in sessions:
        pending = session
        while True:
            split_at = _restart_evidence(pending)
            if split_at is None:
                out.append(pending)
                break
            head_events, tail_events = pending.events[:split_at], pending.events[split_at:]
            pending.events = head_events
            out.append(pending)
            inferred = session_started_by(
                0, tail_events[0], inferred=True, after=_last_time(head_events), version=pending.omlx_version
            )
            inferred.events = tail_events
            pending = inferred
    for number, session in enumerate(out, start=1):
        session.index = number
    return out


def _last_time(events: list[Event]) -> str | None:
    for event in reversed(events):
        if event.time:
            return event.time
    return None


def _restart_evidence(session: Session) -> int | None:
    """Index of the first event that a penalty-boxed process could not have produced, if any."""
    dead = False
    last_gpu: str | None = None
    for index, event in enumerate(session.events):
        if event.kind != "gpu_error":
            continue
        name = event.fields.get("code_name")
        new_incident = last_gpu is None or not joins_incident(last_gpu, event)
        if dead and new_incident and name != "SubmissionsIgnored":
            return index
        if name == "SubmissionsIgnored":
            dead = True
        last_gpu = event.time or last_gpu
    return None


def analyze(stream: EventStream) -> Analysis:
    """Sessions, faults with outcomes, dead windows and signatures, from one event stream."""
    builder = _Builder(stream)
    log_start = min((s.first for s in stream.sources if s.first), default=None)
    log_end = max((s.last for s in stream.sources if s.last), default=None)
    sessions = _split_after_dead(_with_process_before_first_start(builder.sessions(), log_start))
    if sessions and sessions[0].start is None:
        sessions[0].start = log_start
    faults: list[Incident] = []
    repeats: list[Incident] = []
    windows: list[DeadWindow] = []
    for position, session in enumerate(sessions):
        following = sessions[position + 1] if position + 1 < len(sessions) else None
        _finish_session(session, following, stream, builder, log_end)
        window_incidents: list[Incident] = []
        for incident in builder.incidents(session):
            if window_incidents:  # already dead: a repeat of the window, not a new fault
                window_incidents.append(incident)
                repeats.append(incident)
                continue
            incident.outcome = _outcome(incident, session, following, builder)
            faults.append(incident)
            session.faults += 1
            if incident.outcome == "penalty_box":
                window_incidents.append(incident)
        if window_incidents:
            window_incidents[0].dead_window = len(windows)
            windows.append(_dead_window(session, following, window_incidents, builder, log_end))
    signatures = _signatures(faults)
    return Analysis(stream, sessions, faults, repeats, windows, signatures, log_start, log_end, builder.requests)


def _finish_session(
    session: Session, following: Session | None, stream: EventStream, builder: _Builder, log_end: str | None
) -> None:
    kinds = {ev.kind for ev in session.events}
    exits = [ev.fields.get("reason") for ev in session.events if ev.kind == "process_exit"]
    last_activity = _last_time(session.events)
    next_start = following.start_after or following.start if following else None
    window_end = next_start if following else log_end
    begins = session.start_after or session.start
    requests = builder.requests.count(begins, window_end, include_start=True)
    last_request = builder.requests.last_between(begins, window_end)
    session.end = max((t for t in (last_activity, last_request) if t), default=session.start)
    if stream.shows("INFO"):  # both are INFO lines: at WARNING level they are unknown, not zero
        session.requests_completed = requests
        session.engine_starts = sum(1 for ev in session.events if ev.kind == "engine_start")
    if session.omlx_version is None:
        session.omlx_version = next((v for ev in session.events if (v := cellar_version(ev))), None)
    if "fatal_exit" in exits:
        session.end_reason = "fatal_exit"
    elif exits or kinds & CRASH_KINDS:
        session.end_reason = "crash"
    elif "shutdown" in kinds and not _active_after_last_shutdown(session.events, builder, window_end):
        session.end_reason = "shutdown"
    elif following is None:
        session.end_reason = "eof"
    elif stream.shows("INFO"):
        session.end_reason = "crash"
    else:
        session.end_reason = "restart"


def _active_after_last_shutdown(events: list[Event], builder: _Builder, window_end: str | None) -> bool:
    """Work after the last orderly-stop line: it was a model unload or the like, not the end."""
    last = max(i for i, ev in enumerate(events) if ev.kind == "shutdown")
    if any(ev.kind in ("request_complete", "engine_start", "gpu_error") for ev in events[last + 1 :]):
        return True
    return builder.requests.count(events[last].time, window_end, after=events[last]) > 0


def settled_outcome(incident: Incident) -> str | None:
    """The outcome an incident's own records decide, without looking at what came after it."""
    contexts = {ev.fields.get("context") for ev in incident.records}
    if "fatal_exit" in contexts:
        return "fatal_exit"
    if "uncaught_abort" in contexts:
        return "crash"
    if "SubmissionsIgnored" in incident.code_names:
        return "penalty_box"
    return None


def _outcome(incident: Incident, session: Session, following: Session | None, builder: _Builder) -> str:
    if settled := settled_outcome(incident):
        return settled
    after = incident.last_time
    later = any(ev.kind in _ACTIVE_KINDS and ev.time and after and ev.time > after for ev in session.events)
    later_requests = builder.requests.count(after, session.end if following else None, after=incident.records[-1])
    if following is not None and session.end_reason != "shutdown":
        next_start = following.start_after or following.start
        gap = seconds(after, next_start)
        if not later and later_requests == 0 and gap is not None and gap <= CRASH_WINDOW_S:
            return "crash"
    if later or later_requests:
        incident.later_requests = later_requests
        return "absorbed"
    if following is not None and session.end_reason == "shutdown":
        incident.later_requests = 0
        return "absorbed"
    return "unknown"


def _dead_window(
    session: Session,
    following: Session | None,
    incidents: list[Incident],
    builder: _Builder,
    log_end: str | None,
) -> DeadWindow:
    entry = incidents[0]
    failure_times = [t for inc in incidents for ev in inc.records if (t := ev.time)]
    starts = [t for inc in incidents if (t := inc.time)]
    intervals = [d for a, b in itertools.pairwise(starts) if (d := seconds(a, b)) is not None]
    exits = [ev.fields.get("reason") for ev in session.events if ev.kind == "process_exit"]
    if "fatal_exit" in exits:
        reason = "fatal_exit"
    elif exits or any(ev.kind == "faulthandler_dump" for ev in session.events):
        reason = "crash"
    elif following is not None or _repeats_stopped(session, intervals, failure_times):
        reason = "restart"
    else:
        reason = "eof"
    end = end_after = None
    end_exact = False
    if following is not None:
        end, end_exact = following.start, following.start_exact
        end_after = following.start_after
    elif reason in ("fatal_exit", "crash"):
        end, end_exact = session.end, True
    if following is None and reason == "restart":
        end_after = max(failure_times) if failure_times else entry.time
    inside_end = end if end is not None else log_end
    return DeadWindow(
        session.index,
        entry.time,
        max(failure_times) if failure_times else entry.time,
        end,
        end_exact,
        end_after,
        reason,
        len(incidents) - 1,
        intervals,
        builder.requests.count(entry.time, inside_end, include_start=True, after=entry.records[-1])
        if builder.stream.shows("INFO")
        else None,
        log_end,
        end_inferred=following is None and reason == "restart",
    )


def _repeats_stopped(session: Session, intervals: list[float], failure_times: list[str]) -> bool:
    """The failures stopped repeating while the log went on: the process was restarted unseen.

    A penalty-boxed engine fails again at every step it tries (every few minutes in the
    report). When the log goes on far longer than that with no further failure, the process
    behind it was replaced even though the log level hid the new start.
    """
    if len(intervals) < 2 or not failure_times:
        return False
    quiet = max(REPEATS_STOPPED_MIN_S, REPEATS_STOPPED_FACTOR * statistics.median(intervals))
    last = max(failure_times)
    return any(ev.time and (gap := seconds(last, ev.time)) is not None and gap > quiet for ev in session.events)


def _signatures(faults: list[Incident]) -> list[Signature]:
    found: dict[str, Signature] = {}
    for incident in faults:
        result = _signature_of(incident)
        if result is None:
            continue
        sig_id, signature = result
        incident.signature = sig_id
        found.setdefault(sig_id, signature).faults += 1
    return sorted(found.values(), key=lambda s: -s.faults)
