"""The analyzer's state kept one event at a time, for a live log, by the batch rules."""

from __future__ import annotations

from dataclasses import dataclass, field

from omlx_logscan.analysis.lifetimes import (
    SessionEnding,
    activity_time,
    end_window_at_start,
    joins_incident,
    outcome_from_what_followed,
    process_before_first_start,
    process_end_reason,
    session_in_progress,
    session_started_by,
    settled_outcome,
    shows_activity_after,
    shows_unseen_restart,
    written_later,
)
from omlx_logscan.analysis.model import (
    INCIDENT_GAP_S,
    DeadWindow,
    Incident,
    Session,
    failures_stopped,
    shows_penalty_box,
)
from omlx_logscan.analysis.records import before_startup_output
from omlx_logscan.analysis.signatures import signature_of
from omlx_logscan.parsing.catalog import INCIDENT_KINDS, LOGGER_PREFIX
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import ARRIVAL_KIND, CRASH_KINDS, SERVING_KINDS, leaves_no_process
from omlx_logscan.timeutil import seconds


@dataclass
class FaultClosed:
    """A new fault incident is complete (not a repeat inside a dead window)."""

    incident: Incident


@dataclass
class WindowOpened:
    """The engine entered the penalty box: generation-dead until the process ends."""

    window: DeadWindow
    entry: Incident


@dataclass
class WindowClosed:
    """A dead window ended: a new process start, an inferred restart, a fatal exit or a crash."""

    window: DeadWindow
    inferred: bool


Change = FaultClosed | WindowOpened | WindowClosed


@dataclass
class _AwaitedOutcome:
    """A fault whose records leave its outcome open: what its process did after it decides it.

    The batch rule (``outcome_from_what_followed``) needs the whole rest of the session, so the
    live state gathers the same facts as events arrive and decides when the session ends. Its
    requests are counted from the session's tally, so a request costs one comparison however many
    faults wait: batch counts those timed after the fault, so the few timed before it are taken off.
    """

    incident: Incident
    after: str | None  # the fault's last time: what happens later counts
    tally_at_close: int  # the session's requests when it closed, less those already after it
    active_later: bool = False
    requests_not_after: int = 0  # requests since it closed timed at or before ``after``
    ended: bool = False  # crash evidence came after it: what follows is not its process going on
    event_after: bool = False  # an event timed after it, before any crash evidence
    first_record_after: str | None = None  # the earliest oMLX record timed after it, before crash evidence

    def later_requests(self, tally: int) -> int:
        return tally - self.tally_at_close - self.requests_not_after

    def note(self, event: Event, record: bool) -> None:
        """What ``event``, after the fault, says of whether its process went on (``went_on``)."""
        if self.ended or event.kind in CRASH_KINDS:
            self.ended = True
        elif event.time is None and record:
            self.event_after = self.event_after or _own_record(event)  # batch: an undated oMLX record after it
        elif written_later(event, self.incident):
            self.event_after = self.event_after or not record  # batch: any later event, any logger
            if event.time is not None and _omlx_dated(event):
                self.first_record_after = min(self.first_record_after or event.time, event.time)

    def went_on(self, cutoff: str | None) -> bool:
        """Batch's rule: a later event, or a later record before the next process's startup output."""
        first = self.first_record_after
        return self.event_after or (first is not None and (cutoff is None or first < cutoff))


@dataclass
class _SessionFacts:
    """What the batch analyzer reads off a whole session, kept as the current one goes on.

    Requests are kept apart from the other events: batch reads them from its dense request table,
    by time, not as events in file order.
    """

    latest: str | None = None  # the latest event time (``failures_stopped`` looks for one long after the failures)
    last: str | None = None  # the last event time in file order, requests aside (an inferred start lies after it)
    latest_request: str | None = None  # the latest request timed at or after the session's start
    # When the engine was last seen at work (``activity_time``), in whatever order the lines came:
    # a fault closing finds in it the work done while it was still open.
    latest_activity: str | None = None
    shutdown: Event | None = None  # the last orderly-stop line with no work after it
    gone_since: str | None = None  # a fatal exit or kernel panic (``leaves_no_process``): later is another's
    ending: SessionEnding = field(default_factory=SessionEnding)
    requests: int = 0  # finished requests so far
    # The session's oMLX records (batch's records table): the latest one over STARTUP_OUTPUT_S older
    # than the newest, and those since, so that a next start can set its startup output aside.
    record_settled: str | None = None
    record_recent: list[str] = field(default_factory=list)
    awaited: list[_AwaitedOutcome] = field(default_factory=list)
    inactive: list[_AwaitedOutcome] = field(default_factory=list)  # awaited, with nothing after them yet
    latest_after: str = ""  # the latest ``after`` of the awaited faults


class LiveState:
    """Sessions, fault incidents and dead windows, updated one event at a time by the analyzer's rules.

    An incident is complete when a record two seconds later arrives (log time) or when nothing was
    added to it for two seconds (wall time, see ``settle``): then it is a fault (signed as batch
    signs it) or a repeat. Its own records may settle its outcome; if not, it is ``absorbed`` as soon
    as the process shows it went on, and what the next start (or, in a replay, ``finish``) shows
    decides the rest, by the batch rule ``outcome_from_what_followed``. A session's end reason is
    the batch rule ``SessionEnding.reason`` on what is known so far; ``finish`` makes it final.
    """

    def __init__(self, sessions_before: int = 0) -> None:
        self.sessions_before = sessions_before  # lifetimes in what a watch from the end skipped
        self.sessions: list[Session] = []
        self.faults: list[Incident] = []
        self.windows: list[DeadWindow] = []
        self.window: DeadWindow | None = None  # the open dead window
        self.window_entry: Incident | None = None
        self.last_stamp: str | None = None
        self.log_start: str | None = None  # the earliest dated record, of any kind
        self._facts = _SessionFacts()
        self._endings: list[SessionEnding] = []  # each session's, in step with ``sessions``
        self._exited: DeadWindow | None = None  # a window its process's exit ended: its end waits on what follows
        self._incident: Incident | None = None
        self._requests_after_incident: list[str | None] = []  # times of requests since its last record
        self._incident_seen = 0.0
        self._last_incident_start: str | None = None
        self.info_seen = False  # an oMLX INFO record so far: the log level shows finished requests
        self._after_incident: list[tuple[Event, bool]] = []  # (event, is a record) since its last record
        self._session_of_records = False  # the only session so far was opened by a routine record

    def feed(self, event: Event, now: float) -> list[Change]:
        changes: list[Change] = []
        if event.logger is not None and event.level in ("INFO", "DEBUG", "TRACE"):
            self.info_seen = True
        if self._incident is not None and event.time is not None:
            gap = seconds(self._incident.last_time, event.time)
            if gap is not None and gap >= INCIDENT_GAP_S:
                changes += self.close_incident()
        if event.time is not None:
            self.log_start = min(self.log_start or event.time, event.time)
        if event.kind in ("record", ARRIVAL_KIND):  # the log's span, and when their process wrote (as batch reads them)
            self._note_record(event)
            self._note_time(event.time)
            return changes
        if event.kind != "process_start":
            self._session_of_records = False  # an event: batch's first lifetime is the one it shows
        gone = self._facts.gone_since
        if gone is not None and event.kind != "process_start" and event.time is not None and event.time > gone:
            changes += self.close_incident()  # its start is not in view (WARNING level): batch infers one
            changes += self._open_session(event, inferred=True)
        if leaves_no_process(event):
            self._facts.gone_since = event.time or event.prev_time
        if event.kind == "process_start":
            changes += self.close_incident()
            changes += self._open_session(event, inferred=False)
        elif event.kind == "gpu_error":
            changes += self._add_failure(event, now)
        elif reason := process_end_reason(event):
            changes += self.close_incident()
            self._session(event)
            changes += self._end_window(None, reason, event)
        else:
            self._count(event)
        self._note_facts(event)
        self._note_time(event.time)
        return changes

    def finish(self) -> None:
        """The log ended (a replay reached its end): settle what waited on more lines, as batch does.

        The open incident closes, faults waiting on what their process did next get the outcome the
        batch analysis gives at the end of a log, a dead window whose failures stopped long before
        the log did ended with an unseen restart (``failures_stopped``), and each session's end
        reason is final now the log level is known. The changes are history, so none is returned.
        """
        self.close_incident()
        self._decide_outcomes(None)
        if self._exited is not None and self.sessions:
            self._exited.end = self.sessions[-1].end  # no next start: the end of the process in the log
        window = self.window
        if window is not None and failures_stopped(window.intervals_s, window.last_failure, self._facts.latest):
            window.end_reason, window.end_after, window.end_inferred = "restart", window.last_failure, True
            self.window = self.window_entry = None
        if self.sessions and self.sessions[0].start is None:  # as in batch: the log's first moment
            first = self.sessions[0]
            first.start = self.log_start
            first.end = first.end or first.start
        self._name_end_reasons()

    def note_wedged(self, wedged: bool) -> None:
        """The live wedge (``analysis/live_wedge.py``) of the current lifetime is on (or over): replaced
        while it is on, the lifetime was killed and restarted, as batch's outages name it."""
        self._facts.ending.wedged = wedged

    def _note_time(self, stamp: str | None) -> None:
        if stamp is not None:
            self.last_stamp = stamp
            if self.window is not None:
                self.window.log_end = stamp

    def _note_record(self, event: Event) -> None:
        """A routine record: a log of them is one lifetime, and each shows its process alive."""
        if not self.sessions and _omlx_dated(event):
            self._add_session(session_in_progress(event), self._facts)
            self._session_of_records = True
        if self.sessions:
            self._note_written(event, record=True)
            self._set_end(None)

    def _note_written(self, event: Event, *, record: bool) -> None:
        """What any event says of when its process last wrote, for the session's end and the faults that wait."""
        if self._incident is not None:
            self._after_incident.append((event, record))
        for awaited in self._facts.awaited:
            awaited.note(event, record)
        session, facts = self.sessions[-1], self._facts
        begins = session.start_after or session.start if session.start_in_log else None
        if (session.start_in_log and begins is None) or not _omlx_dated(event) or event.time is None:
            return  # batch places no record after an untimed start, and holds only dated oMLX records
        if event.time < (begins or "") or (session.start_after is not None and event.time == session.start_after):
            return  # before the lifetime began (or at the moment its start came after)
        facts.record_recent.append(event.time)
        newest = max(facts.record_recent)
        old = before_startup_output(newest) or ""
        facts.record_settled = max([facts.record_settled or "", *(t for t in facts.record_recent if t < old)]) or None
        facts.record_recent = [t for t in facts.record_recent if t >= old]

    def _set_end(self, next_start: str | None) -> None:
        """The current session's end by batch's rule, as if the log ended here or (``next_start``) it began."""
        facts, session = self._facts, self.sessions[-1]
        cutoff = before_startup_output(next_start)
        records = [t for t in facts.record_recent if cutoff is None or t < cutoff]
        if facts.record_settled is not None and (cutoff is None or facts.record_settled < cutoff):
            records.append(facts.record_settled)
        times = [t for t in (facts.last, facts.latest_request, *records) if t]
        session.end = max(times, default=session.start)

    def _note_facts(self, event: Event) -> None:
        """Gather, for the current session, the facts batch rules read from the whole session."""
        facts, session = self._facts, self.sessions[-1]
        request = event.kind == "request_complete"
        if event.time is not None:
            facts.latest = max(facts.latest or event.time, event.time)
            if request and event.time >= (session.start_after or session.start or ""):
                facts.latest_request = max(facts.latest_request or event.time, event.time)
            elif not request:
                facts.last = event.time
        self._note_written(event, record=False)
        self._set_end(None)
        if not request and (active := activity_time(event)):
            facts.latest_activity = max(facts.latest_activity or active, active)
        if event.kind == "gpu_error" and shows_penalty_box(event):
            facts.ending.penalty_boxed = True  # a SubmissionsIgnored record: see ``shows_unseen_restart``
        self._note_ending(event, request)
        if request:
            facts.requests += 1
            if self._incident is not None:
                self._requests_after_incident.append(event.time)
            if event.time is None or event.time <= facts.latest_after:  # rare: a request not after them all
                for awaited in facts.awaited:
                    awaited.requests_not_after += not _later(event.time, awaited.after)
        for awaited in facts.inactive:
            if shows_activity_after(event, awaited.after) or (request and _later(event.time, awaited.after)):
                awaited.active_later = awaited.active_later or not request
                awaited.incident.outcome = "absorbed"  # final: a crash would leave nothing after it
                awaited.incident.later_requests = awaited.later_requests(facts.requests)
        facts.inactive = [awaited for awaited in facts.inactive if awaited.incident.outcome != "absorbed"]

    def _note_ending(self, event: Event, request: bool) -> None:
        """What ``event`` says about how the current session ends (``SessionEnding``)."""
        facts, ending = self._facts, self._facts.ending
        if event.kind in CRASH_KINDS:
            ending.crashed = True
            ending.fatal_exit = ending.fatal_exit or process_end_reason(event) == "fatal_exit"
        if event.kind == "shutdown":
            facts.shutdown = event
        elif (
            facts.shutdown is not None
            and event.kind in SERVING_KINDS
            and (not request or _later(event.time, facts.shutdown.time))  # batch counts requests timed after it
        ):
            facts.shutdown = None  # work after the stop line: it was a model unload or the like
        ending.shut_down = facts.shutdown is not None
        if event.kind in CRASH_KINDS or event.kind == "shutdown":
            self._name_end_reasons()

    def _name_end_reasons(self) -> None:
        """Each session's end reason by the batch rule, from what the log has shown so far."""
        last = len(self.sessions) - 1
        for position, (session, ending) in enumerate(zip(self.sessions, self._endings, strict=True)):
            session.end_reason = ending.reason(followed=position < last, info_shown=self.info_seen)

    def _decide_outcomes(self, following: Session | None) -> None:
        """The current session ended (``following`` began, or the log ended): decide what waited."""
        facts = self._facts
        next_start = following.start_after or following.start if following is not None else None
        if self.sessions:
            self._set_end(next_start)
        for awaited in facts.awaited:
            awaited.incident.outcome = outcome_from_what_followed(
                awaited.incident,
                awaited.active_later,
                awaited.later_requests(facts.requests),
                followed=following is not None,
                next_start=next_start,
                shut_down=facts.ending.stopped_in_order,
                went_on=awaited.went_on(before_startup_output(next_start)),
            )
        facts.awaited, facts.inactive = [], []

    def settle(self, now: float) -> list[Change]:
        """Close the open incident once nothing joined it for INCIDENT_GAP_S of wall time."""
        if self._incident is not None and now - self._incident_seen >= INCIDENT_GAP_S:
            return self.close_incident()
        return []

    def _add_session(self, session: Session, facts: _SessionFacts) -> None:
        session.end = session.start  # until an event of it says more, as in batch
        if self.sessions:
            session.index = self.sessions[-1].index + 1
        else:  # the one running when the watch began (the skipped part's last), or a start after it
            session.index = self.sessions_before + 1 if session.start_in_log else max(self.sessions_before, 1)
        self.sessions.append(session)
        self._endings.append(facts.ending)

    def _session(self, event: Event) -> Session:
        if not self.sessions:  # the log began (or watching began) inside a running process
            self._add_session(session_in_progress(event), self._facts)
        return self.sessions[-1]

    def _open_session(self, event: Event, *, inferred: bool) -> list[Change]:
        """A new process begins with ``event``: the last one's waiting outcomes and dead window end."""
        previous = self.sessions[-1] if self.sessions else None
        version = previous.omlx_version if inferred and previous else None
        started = session_started_by(
            0, event, inferred=inferred, after=self._facts.last, version=version
        )  # numbered when added
        if self._session_of_records and process_before_first_start(started, self.log_start) is None:
            self.sessions, self._endings, previous = [], [], None  # batch sees no process before this start
        self._session_of_records = False
        earlier = process_before_first_start(started, self.log_start) if previous is None else None
        if earlier is not None:
            self._add_session(earlier, _SessionFacts())
        self._decide_outcomes(started)
        if self._exited is not None:
            end_window_at_start(self._exited, started)
            self._exited = None
        changes = self._end_window(started, "restart", event, inferred=inferred)
        self._facts = _SessionFacts()
        self._add_session(started, self._facts)
        self._name_end_reasons()
        return changes

    def _count(self, event: Event) -> None:
        session = self._session(event)
        if event.kind == "request_complete":
            session.requests_completed = (session.requests_completed or 0) + 1
            if self.window is not None:
                self.window.requests_completed = (self.window.requests_completed or 0) + 1
        elif event.kind == "engine_start":
            session.engine_starts = (session.engine_starts or 0) + 1

    def _add_failure(self, event: Event, now: float) -> list[Change]:
        incident = self._incident
        self._incident_seen = now
        self._requests_after_incident = []
        self._after_incident = []
        if incident is not None and joins_incident(incident.last_time, event, incident.last_time_of_day):
            incident.records.append(event)
            return []
        changes = self.close_incident()
        if self._facts.ending.penalty_boxed and shows_unseen_restart(event):
            changes += self._open_session(event, inferred=True)
        name = str(event.fields.get("code_name"))
        self._incident = Incident([event], self._session(event).index, INCIDENT_KINDS.get(name, "other_gpu"))
        return changes

    def close_incident(self) -> list[Change]:
        """The open incident is complete: its outcome is settled and it is a new fault or a window's repeat."""
        incident = self._incident
        if incident is None:
            return []
        self._incident = None
        failure_times = [t for ev in incident.records if (t := ev.time)]
        window = self.window
        if window is not None:  # already dead: a repeat of the window, not a new fault
            window.repeats += 1
            gap = seconds(self._last_incident_start, incident.time)
            if gap is not None:
                window.intervals_s.append(gap)
            self._last_incident_start = incident.time
            window.last_failure = max([*failure_times, window.last_failure or ""]) or None
            return []
        settled = settled_outcome(incident)
        incident.outcome = settled or "unknown"
        if settled is None:
            facts, after = self._facts, incident.last_time
            already = sum(1 for t in self._requests_after_incident if _later(t, after))
            awaited = _AwaitedOutcome(incident, after, facts.requests - already, _later(facts.latest_activity, after))
            for written, record in self._after_incident:
                awaited.note(written, record)
            facts.awaited.append(awaited)
            facts.latest_after = max(facts.latest_after, after or "")
            if already or awaited.active_later:
                incident.outcome, incident.later_requests = "absorbed", already
            else:
                facts.inactive.append(awaited)
        signature = signature_of(incident)  # the id the batch analysis gives it
        incident.signature = signature.id if signature is not None else None
        self.faults.append(incident)
        self.sessions[incident.session - self.sessions[0].index].faults += 1
        changes: list[Change] = [FaultClosed(incident)]
        if incident.outcome == "penalty_box":
            opened = DeadWindow(
                incident.session,
                incident.time,
                max(failure_times, default=incident.time),
                None,
                False,
                None,
                "eof",
                0,
                [],
                0 if self.info_seen else None,  # finished requests are INFO lines: unknown at WARNING level
                self.last_stamp,
            )
            incident.dead_window = len(self.windows)
            self.windows.append(opened)
            self.window, self.window_entry = opened, incident
            self._last_incident_start = incident.time
            changes.append(WindowOpened(opened, incident))
        return changes

    def _end_window(
        self, following: Session | None, reason: str, event: Event, *, inferred: bool = False
    ) -> list[Change]:
        """The open window ends: at the ``following`` session's start, else (an exit) at ``event``."""
        window = self.window
        if window is None:
            if following is None and reason == "fatal_exit" and self._exited is not None:
                self._exited.end_reason = reason  # a fatal exit after a crash line: batch names the fatal exit
            return []
        if following is not None:
            end_window_at_start(window, following)
        else:  # the process ended: at its last moment in the log (so far), or the next start if one comes
            window.end, window.end_exact, window.end_after = event.time or self.sessions[-1].end, True, None
            self._exited = window
        window.end_reason = reason
        self.window = self.window_entry = None
        return [WindowClosed(window, inferred)]


def _omlx_dated(event: Event) -> bool:
    """Whether batch's records table holds ``event``'s record: a dated record of an oMLX logger."""
    return event.time is not None and (event.logger or "").startswith(LOGGER_PREFIX)


def _own_record(event: Event) -> bool:
    """Whether batch's records table holds an undated record's line: an oMLX logger's or a
    time-only line's (a user's note or a crash report's text is not the process going on)."""
    return event.time_of_day is not None or (event.logger or "").startswith(LOGGER_PREFIX)


def _later(stamp: str | None, after: str | None) -> bool:
    """Whether ``stamp`` (a request's time, or ``latest_activity``) is after a fault whose last time is ``after``."""
    return bool(stamp and after and stamp > after)
