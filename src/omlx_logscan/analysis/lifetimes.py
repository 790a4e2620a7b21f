"""The analyzer: sessions, fault incidents, dead-engine windows and stack signatures.

It reads the event stream once, in order, and answers the questions the report in oMLX issue 3706
answered by hand: which process lifetimes there were, which GPU faults each had and what became of
the engine after each, when the engine was generation-dead, and whether the faults share one stack.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

from omlx_logscan.analysis.failures import errors_of
from omlx_logscan.analysis.incidents import incidents_of
from omlx_logscan.analysis.numbering import number_as_in
from omlx_logscan.analysis.outages import find_outages
from omlx_logscan.analysis.records import RecordAt, RecordIndex, before_startup_output
from omlx_logscan.analysis.requests import RequestIndex
from omlx_logscan.analysis.restarts import joins_incident, restart_evidence
from omlx_logscan.analysis.results import (
    Analysis,
    DeadWindow,
    Incident,
    Outcome,
    Session,
    SessionEnd,
    WindowEnd,
    cannot_be_placed,
    repeats_stopped,
    shows_penalty_box,
)
from omlx_logscan.analysis.signatures import signatures_of
from omlx_logscan.analysis.stated import is_version
from omlx_logscan.parsing.catalog import INCIDENT_KINDS, PENALTY_BOX_CODE
from omlx_logscan.parsing.classify import cellar_version
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import ACTIVE_ENGINE_KINDS, CRASH_KINDS, SERVING_KINDS
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.stream.reports import date_panic_reports
from omlx_logscan.timeutil import clock_seconds, seconds

CRASH_WINDOW_S = 60.0  # a session ending this soon after a fault, without an orderly stop, crashed


def _session_in_progress(event: Event) -> Session:
    """Session 1 when the log (or the watch) begins inside a running process: its start is not in view."""
    return Session(
        index=1,
        start=event.time or event.next_time,
        start_exact=False,
        start_in_log=False,
        source=event.source,
        line=event.line,
    )


def _session_started_by(
    index: int, event: Event, *, inferred: bool = False, after: str | None = None, version: str | None = None
) -> Session:
    """The session an event begins: a process start, or (``inferred``) a fault a penalty-boxed process
    could not produce. An untimed or inferred start takes the first time after it and says it is not
    exact; an inferred one lies after ``after`` and keeps the previous process's ``version``."""
    exact = event.time is not None and not inferred
    return Session(
        index=index,
        start=event.time if exact else (event.next_time or event.time),
        start_exact=exact,
        start_after=after if inferred else (None if exact else event.prev_time),
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
        self.records = RecordIndex(stream)
        # Crash evidence a dated log cannot place (``cannot_be_placed``): not a session of its own.
        dated = any(s.first for s in stream.sources)
        self.unplaced = [ev for ev in stream.events if dated and cannot_be_placed(ev)]

    # -- sessions ---------------------------------------------------------------------------
    def sessions(self) -> list[Session]:
        """Lifetimes from the events; a log of oMLX records with no event is one, already running."""
        sessions: list[Session] = []
        current: Session | None = None
        unplaced = {id(ev) for ev in self.unplaced}
        for event in self.stream.events:
            if id(event) in unplaced:
                continue
            if event.kind == "process_start":
                current = _session_started_by(len(sessions) + 1, event)
                sessions.append(current)
            elif current is None:
                current = _session_in_progress(event)
                sessions.append(current)
            current.events.append(event)
        first = self.records.first_of_log(sessions[0].source if sessions else None)
        if first is not None and not sessions:
            sessions.append(
                Session(
                    index=1, start=None, start_exact=False, start_in_log=False, source=first.source, line=first.line
                )
            )
        return sessions

    # -- incidents --------------------------------------------------------------------------
    @staticmethod
    def incidents(session: Session) -> list[Incident]:
        """The session's GPU error records grouped into incidents. The open incident's last time and
        time of day are kept as it grows (its ``last_time`` and ``last_time_of_day``): asking its
        records again at each new one would take time quadratic in a long penalty box."""
        out: list[Incident] = []
        last_time: str | None = None
        last_clock: str | None = None
        for event in session.events:
            if event.kind != "gpu_error":
                continue
            if out and joins_incident(last_time, event, last_clock):
                out[-1].records.append(event)
            else:
                first_name = event.fields.get("code_name")
                kind = INCIDENT_KINDS.get(str(first_name), "other_gpu")
                out.append(Incident(records=[event], session=session.index, kind=kind))
                last_time, last_clock = out[-1].time, None
            if event.time:
                last_time = event.time
            if event.time is None and event.time_of_day:
                last_clock = event.time_of_day
        return out


def _with_process_before_first_start(sessions: list[Session], log_start: str | None) -> list[Session]:
    """``_process_before_first_start`` for the whole log: the sessions after it are renumbered."""
    earlier = _process_before_first_start(sessions[0], log_start) if sessions else None
    if earlier is None:
        return sessions
    for number, session in enumerate(sessions, start=2):
        session.index = number
    return [earlier, *sessions]


def _process_before_first_start(first: Session, log_start: str | None) -> Session | None:
    """The process already running when the log begins, if records older than the ``first`` session's
    start line show one (it is session 1 and the sessions after it are one later).

    Its routine lines yield no events, yet it existed and ended (the new start says so): without
    it, a restart seen only as a new startup block would hide the process that went before.
    """
    started = first.start_after or first.start
    if not first.start_in_log or log_start is None or started is None:
        return None
    if log_start >= (before_startup_output(started) or started):  # the start's own output (DEBUG imports)
        return None
    return Session(index=1, start=log_start, start_exact=False, start_in_log=False, source=first.source)


def _split_after_dead(sessions: list[Session]) -> list[Session]:
    """A new (non-penalty) GPU fault after a penalty box means the process was restarted unseen."""
    out: list[Session] = []
    for session in sessions:
        pending = session
        while True:
            evidence = restart_evidence(pending)
            if evidence is None:
                out.append(pending)
                break
            split_at, after = evidence
            head_events, tail_events = pending.events[:split_at], pending.events[split_at:]
            pending.events = head_events
            out.append(pending)
            inferred = _session_started_by(0, tail_events[0], inferred=True, after=after, version=pending.omlx_version)
            inferred.events = tail_events
            pending = inferred
    for number, session in enumerate(out, start=1):
        session.index = number
    return out


def analyze(stream: EventStream, *, wedge_after_s: float | None = None) -> Analysis:
    """Sessions, faults, dead windows, signatures and outages (wedges after ``wedge_after_s``, default 10 min)."""
    date_panic_reports(stream)  # done already where the CLI read it; the API's streams come here first
    builder = _Builder(stream)
    log_start = min((s.first for s in stream.sources if s.first), default=None)
    log_end = max((s.last for s in stream.sources if s.last), default=None)
    sessions = lifetimes_of(stream, builder)
    if not sessions and stream.accounting.records and stream.has_omlx_records and stream.cut_from is None:
        # oMLX's records, timed or not, that show no start nor any event: one process wrote them,
        # its start not in the log.
        sessions = [Session(index=1, start=None, start_exact=False, start_in_log=False, source=stream.sources[0].name)]
    if stream.cut_from is not None:  # a time window: numbered as in the whole input
        number_as_in(sessions, lifetimes_of(stream.cut_from))
    if sessions and sessions[0].start is None:
        sessions[0].start = log_start
    if sessions and not sessions[0].start_in_log and log_start is not None:
        # Running when the log begins: the earliest the log shows it is the log's first record.
        sessions[0].start = min(sessions[0].start or log_start, log_start)
    if sessions and not sessions[0].start_in_log:
        _place_at_first_record(sessions[0], builder.records)
    faults: list[Incident] = []
    repeats: list[Incident] = []
    windows: list[DeadWindow] = []
    for position, session in enumerate(sessions):
        following = sessions[position + 1] if position + 1 < len(sessions) else None
        _finish_session(session, following, stream, builder, log_end)
        window_incidents: list[Incident] = []
        order = _EventOrder(session.events)
        for incident in builder.incidents(session):
            if window_incidents:  # already dead: a repeat of the window, not a new fault
                window_incidents.append(incident)
                repeats.append(incident)
                continue
            incident.outcome = _outcome(incident, session, following, builder, order)
            faults.append(incident)
            session.faults += 1
            if incident.outcome == "penalty_box":
                window_incidents.append(incident)
        if window_incidents:
            window_incidents[0].dead_window = len(windows)
            windows.append(_dead_window(session, following, window_incidents, builder, log_end))
    signatures = signatures_of(faults)
    analysis = Analysis(
        stream=stream,
        sessions=sessions,
        faults=faults,
        repeats=repeats,
        dead_windows=windows,
        signatures=signatures,
        log_start=log_start,
        log_end=log_end,
        requests=builder.requests,
        unplaced=builder.unplaced,
    )
    analysis.outages = find_outages(analysis, stream.arrivals, wedge_after_s)
    analysis.errors = errors_of((session.index, session.events) for session in sessions)
    analysis.incidents = incidents_of(analysis)
    return analysis


def lifetimes_of(stream: EventStream, builder: _Builder | None = None) -> list[Session]:
    """The stream's lifetimes, numbered, before their faults and outages: all that numbering needs."""
    if builder is None:  # a stream of its own (a window's whole input, a watch's skipped head)
        date_panic_reports(stream)
        builder = _Builder(stream)
    log_start = min((s.first for s in stream.sources if s.first), default=None)
    return _split_after_dead(_with_process_before_first_start(builder.sessions(), log_start))


def _place_at_first_record(session: Session, records: RecordIndex) -> None:
    """A lifetime already running when the log begins is where the log's first record of it is."""
    first = records.first_of_log(session.source)
    if first is not None and (session.line is None or (first.source == session.source and first.line < session.line)):
        session.source, session.line = first.source, first.line


def _finish_session(
    session: Session, following: Session | None, stream: EventStream, builder: _Builder, log_end: str | None
) -> None:
    kinds = {ev.kind for ev in session.events}
    next_start = following.start_after or following.start if following else None
    window_end = next_start if following else log_end
    begins = session.start_after or session.start
    requests = builder.requests.count(begins, window_end, include_start=True)
    last_request = builder.requests.last_between(begins, window_end)
    # Records from the lifetime's start on, or after the moment its start came after (an untimed
    # start with nothing timed before it: none can be placed after it).
    cutoff = before_startup_output(next_start)
    timed = begins is not None or not session.start_in_log
    found = builder.records.last_between(begins, cutoff, after_start=session.start_after is not None) if timed else None
    last = _last_record(session, found)
    session.end = max((t for t in (last.time if last else None, last_request) if t), default=session.start)
    if following is not None and following.start_inferred and following.start_after and session.end:
        # Its lines after the moment the next process may have begun could be either's: its end is
        # the last line only it can have written.
        session.end = min(session.end, following.start_after)
    if stream.shows("INFO"):  # both are INFO lines: at WARNING level they are unknown, not zero
        untimed = sum(1 for ev in session.events if ev.kind == "request_complete" and ev.time is None)
        session.requests_completed = requests + untimed
        session.engine_starts = sum(1 for ev in session.events if ev.kind == "engine_start")
    if session.omlx_version is None:
        kegs = (v for ev in session.events if (v := cellar_version(ev)) and is_version(v))
        session.omlx_version = next(kegs, None)  # a keg named by a commit states no version
    shut_down = "shutdown" in kinds and not _active_after_last_shutdown(session.events, builder, window_end)
    if shut_down:
        session.note_exit_aborts()
    ending = _SessionEnding(
        any(_process_end_reason(ev) == "fatal_exit" for ev in session.events),
        any(ev.kind in CRASH_KINDS for ev in session.events),
        shut_down,
        any(shows_penalty_box(ev) for ev in session.events if ev.kind == "gpu_error"),
    )
    session.end_reason = ending.reason(followed=following is not None, info_shown=stream.shows("INFO"))


def _last_record(session: Session, record: RecordAt | None) -> RecordAt | None:
    """A lifetime's last record of any kind: its last timed event, or a later record of no event."""
    event = next((ev for ev in reversed(session.events) if ev.time), None)
    if event is not None and event.time is not None and (record is None or record.time <= event.time):
        return RecordAt(event.time, event.source, event.line)
    return record


def _active_after_last_shutdown(events: list[Event], builder: _Builder, window_end: str | None) -> bool:
    """Work after the last orderly-stop line: it was a model unload or the like, not the end. An
    untimed stop line (uvicorn's, in a capture) comes after the time before it: the requests kept
    from another file (a file log read with its capture) are placed by time, not by its file order."""
    last = max(i for i, ev in enumerate(events) if ev.kind == "shutdown")
    if any(ev.kind in SERVING_KINDS for ev in events[last + 1 :]):
        return True
    stop = events[last]
    return builder.requests.count(stop.time or stop.prev_time, window_end, after=stop) > 0


def _settled_outcome(incident: Incident) -> Outcome | None:
    """The outcome an incident's own records decide, without looking at what came after it."""
    contexts = {ev.fields.get("context") for ev in incident.records}
    if "fatal_exit" in contexts:
        return "fatal_exit"
    if "uncaught_abort" in contexts:
        return "crash"
    if PENALTY_BOX_CODE in incident.code_names:
        return "penalty_box"
    return None


class _EventOrder:
    """What the outcomes of a finished session's faults ask of its events, worked out in one pass:
    each event's position, the first crash evidence at or after each position, and the latest time
    the engine was seen at work. Asked of the events again for each fault, a session of many
    absorbed faults would take time quadratic in their number."""

    def __init__(self, events: list[Event]) -> None:
        self.events = events
        self.positions = {id(ev): index for index, ev in reversed(list(enumerate(events)))}
        self.crashes = [len(events)] * (len(events) + 1)  # [i]: the first crash evidence at or after i
        for index in range(len(events) - 1, -1, -1):
            self.crashes[index] = index if events[index].kind in CRASH_KINDS else self.crashes[index + 1]
        self.last_active = max((ev.time for ev in events if ev.kind in ACTIVE_ENGINE_KINDS and ev.time), default=None)

    def active_after(self, after: str | None) -> bool:
        """Whether an event shows the process still working (its kind shows the engine at work) after ``after``."""
        return bool(after and self.last_active and self.last_active > after)


def _outcome(
    incident: Incident, session: Session, following: Session | None, builder: _Builder, order: _EventOrder
) -> Outcome:
    if settled := _settled_outcome(incident):
        return settled
    after = incident.last_time
    later = order.active_after(after)
    later_requests = builder.requests.count(after, session.end if following else None, after=incident.records[-1])
    next_start = following.start_after or following.start if following is not None else None
    went_on = _went_on(incident, order, following, builder.records)
    return _outcome_from_what_followed(
        incident,
        later,
        later_requests,
        followed=following is not None,
        next_start=next_start,
        shut_down=session.end_reason == "shutdown",
        went_on=went_on,
    )


def _went_on(incident: Incident, order: _EventOrder, following: Session | None, records: RecordIndex) -> bool:
    """Whether the fault's process wrote anything after it, before anything that ended it: a timed
    event after it (timed later, when the fault's time is known), a dated record timed later (before
    the next process's startup output), or an undated oMLX record of no event after it in its file."""
    last = incident.records[-1]
    after = incident.last_time
    events = order.events
    at = order.positions[id(last)]  # by identity: no field compares
    end_at = order.crashes[at + 1]  # what ended the process
    end = events[end_at] if end_at < len(events) else None
    if any(_written_later(events[index], incident) for index in range(at + 1, end_at)):
        return True
    next_start = following.start_after or following.start if following is not None else None
    cutoff = before_startup_output(next_start)
    until = end.time or end.prev_time if end is not None else cutoff
    if after is not None and records.any_between(after, until):
        return True
    stop = end if end is not None else (following.events[0] if following is not None and following.events else None)
    before_line = stop.line if stop is not None and stop.source == last.source else None
    return records.written_after(last.source, last.line, before_line, after, until)


def _written_later(event: Event, incident: Incident) -> bool:
    """Whether ``event``, written after ``incident``, shows its process went on: it has a time, later
    than the fault's when that is known (an untimed event may be its traceback); or, when neither
    has a date (time-only lines), a time of day other than the fault's last, being after it."""
    if event.time is not None:
        return incident.last_time is None or event.time > incident.last_time
    last = incident.records[-1]
    return (
        bool(last.time is None and last.time_of_day and event.time_of_day)
        and clock_seconds(last.time_of_day or "", event.time_of_day or "") > 0
    )


def _outcome_from_what_followed(
    incident: Incident,
    active_later: bool,
    later_requests: int,
    *,
    followed: bool,
    next_start: str | None,
    shut_down: bool,
    went_on: bool,
) -> Outcome:
    """The outcome of a fault its own records leave open (``_settled_outcome`` is None), from what its
    process did after it: ``active_later`` (``_EventOrder.active_after``), the requests it finished
    after it, whether another session ``followed`` (starting at ``next_start``), whether the
    process ``shut_down`` in order and whether it ``went_on`` (it wrote any record later, before
    anything that ended it). Sets ``later_requests`` when the fault was absorbed."""
    if followed and not shut_down:
        gap = seconds(incident.last_time, next_start)
        if not active_later and later_requests == 0 and gap is not None and gap <= CRASH_WINDOW_S:
            return "crash"
    if active_later or later_requests or went_on:
        incident.later_requests = later_requests
        return "absorbed"
    if followed and shut_down:
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
    ends = {end for ev in session.events if (end := _process_end_reason(ev))}
    reason: WindowEnd
    if "fatal_exit" in ends:
        reason = "fatal_exit"
    elif ends:
        reason = "crash"
    elif session.end_reason == "shutdown":  # stopped in order: its last line ends the window
        reason = "shutdown"
    elif following is not None or repeats_stopped(session, intervals, failure_times):
        reason = "restart"
    else:
        reason = "eof"
    window = DeadWindow(
        session=session.index,
        start=entry.time,
        last_failure=max(failure_times) if failure_times else entry.time,
        end_reason=reason,
        repeats=len(incidents) - 1,
        intervals_s=intervals,
        log_end=log_end,
        end_inferred=following is None and reason == "restart",
    )
    if following is not None and reason != "shutdown":
        _end_window_at_start(window, following)
    elif reason in ("fatal_exit", "crash", "shutdown"):
        window.end, window.end_exact = session.end, True
    elif reason == "restart":
        window.end_after = window.last_failure
    if builder.stream.shows("INFO"):
        inside_end = window.end if window.end is not None else log_end
        window.requests_completed = builder.requests.count(
            entry.time, inside_end, include_start=True, after=entry.records[-1]
        )
    return window


def _end_window_at_start(window: DeadWindow, following: Session) -> None:
    """A dead window ends where the next process starts, whatever ended it (an exit, a crash, or
    nothing seen): until then no process could generate."""
    window.end, window.end_exact, window.end_after = following.start, following.start_exact, following.start_after


def _process_end_reason(event: Event) -> Literal["fatal_exit", "crash"] | None:
    """How ``event`` ends the process that wrote it: ``fatal_exit`` (it exits for a clean restart),
    ``crash`` (an abort, any other exit, a faulthandler dump), or None when it does not end it.
    These end a dead window at once; a session's end also counts the OS's crash evidence."""
    if event.kind == "process_exit":
        return "fatal_exit" if event.fields.get("reason") == "fatal_exit" else "crash"
    return "crash" if event.kind == "faulthandler_dump" else None


@dataclass
class _SessionEnding:
    """What a session's own events say about its end; ``reason`` adds what came after it."""

    fatal_exit: bool = False  # a fatal exit line: the process exits for a clean restart
    crashed: bool = False  # an exit, abort, crash report or kernel panic (CRASH_KINDS)
    shut_down: bool = False  # an orderly-stop line with no work after it
    penalty_boxed: bool = False  # a SubmissionsIgnored record: replaced, it was killed and restarted

    @property
    def stopped_in_order(self) -> bool:
        """It shut down and nothing says it died: a fault before the stop line was absorbed, not fatal."""
        return self.shut_down and not self.crashed and not self.fatal_exit

    def reason(self, *, followed: bool, info_shown: bool) -> SessionEnd:
        """The end_reason, given whether a session ``followed`` and the log shows INFO (``info_shown``):
        replaced with no crash or orderly stop in view, it crashed if the log would show its stop line
        (unless stalled: killed and restarted); at WARNING level it may have been restarted unseen."""
        if self.fatal_exit:
            return "fatal_exit"
        if self.crashed:
            return "crash"
        if self.stopped_in_order:
            return "shutdown"
        if not followed:
            return "eof"
        return "crash" if info_shown and not self.penalty_boxed else "restart"
