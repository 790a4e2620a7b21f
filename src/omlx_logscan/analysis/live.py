"""The analyzer's state kept one event at a time, for a live log, by the batch rules."""

from __future__ import annotations

from dataclasses import dataclass

from omlx_logscan.analysis.lifetimes import joins_incident, session_in_progress, session_started_by, settled_outcome
from omlx_logscan.analysis.model import INCIDENT_GAP_S, DeadWindow, Incident, Session
from omlx_logscan.parsing.catalog import INCIDENT_KINDS
from omlx_logscan.parsing.event import Event
from omlx_logscan.timeutil import seconds

# -- live analyzer state ------------------------------------------------------------------------


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


class LiveState:
    """Sessions, fault incidents and dead windows, updated one event at a time by the analyzer's rules.

    An incident is complete when a record two seconds later arrives (log time) or when nothing was
    added to it for two seconds (wall time, see ``settle``): only then is its outcome known.
    """

    def __init__(self) -> None:
        self.sessions: list[Session] = []
        self.faults: list[Incident] = []
        self.windows: list[DeadWindow] = []
        self.repeats = 0
        self.window: DeadWindow | None = None  # the open dead window
        self.window_entry: Incident | None = None
        self.last_stamp: str | None = None
        self._incident: Incident | None = None
        self._incident_seen = 0.0
        self._last_incident_start: str | None = None
        self.info_seen = False  # an oMLX INFO record so far: the log level shows finished requests

    def feed(self, event: Event, now: float) -> list[Change]:
        changes: list[Change] = []
        if event.logger is not None and event.level in ("INFO", "DEBUG", "TRACE"):
            self.info_seen = True
        if self._incident is not None and event.time is not None:
            gap = seconds(self._incident.last_time, event.time)
            if gap is not None and gap >= INCIDENT_GAP_S:
                changes += self.close_incident()
        if event.kind == "process_start":
            changes += self.close_incident()
            changes += self._end_window("restart", event)
            self._open_session(event, inferred=False)
        elif event.kind == "gpu_error":
            changes += self._add_failure(event, now)
        elif event.kind in ("process_exit", "faulthandler_dump"):
            changes += self.close_incident()
            reason = "fatal_exit" if event.fields.get("reason") == "fatal_exit" else "crash"
            self._session(event).end_reason = reason
            changes += self._end_window(reason, event)
        else:
            self._count(event)
        if event.time is not None:
            self.last_stamp = event.time
            self._session(event).end = event.time
            if self.window is not None:
                self.window.log_end = event.time
        return changes

    def settle(self, now: float) -> list[Change]:
        """Close the open incident once nothing joined it for INCIDENT_GAP_S of wall time."""
        if self._incident is not None and now - self._incident_seen >= INCIDENT_GAP_S:
            return self.close_incident()
        return []

    def _session(self, event: Event) -> Session:
        if not self.sessions:  # the log began (or watching began) inside a running process
            self.sessions.append(session_in_progress(event))
        return self.sessions[-1]

    def _open_session(self, event: Event, *, inferred: bool) -> None:
        previous = self.sessions[-1].omlx_version if inferred and self.sessions else None
        self.sessions.append(
            session_started_by(
                len(self.sessions) + 1, event, inferred=inferred, after=self.last_stamp, version=previous
            )
        )

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
        if incident is not None and joins_incident(incident.last_time, event):
            incident.records.append(event)
            self._incident_seen = now
            return []
        changes = self.close_incident()
        if self.window is not None and event.fields.get("code_name") != "SubmissionsIgnored":
            # A penalty-boxed process fails only with SubmissionsIgnored: another fault means a new process.
            changes += self._end_window("restart", event, inferred=True)
            self._open_session(event, inferred=True)
        name = str(event.fields.get("code_name"))
        self._incident = Incident([event], self._session(event).index, INCIDENT_KINDS.get(name, "other_gpu"))
        self._incident_seen = now
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
            self.repeats += 1
            window.repeats += 1
            gap = seconds(self._last_incident_start, incident.time)
            if gap is not None:
                window.intervals_s.append(gap)
            self._last_incident_start = incident.time
            window.last_failure = max([*failure_times, window.last_failure or ""]) or None
            return []
        incident.outcome = settled_outcome(incident) or "unknown"
        self.faults.append(incident)
        self.sessions[incident.session - 1].faults += 1
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

    def _end_window(self, reason: str, event: Event, *, inferred: bool = False) -> list[Change]:
        window = self.window
        if window is None:
            return []
        window.end = event.time
        window.end_exact = event.time is not None and not inferred
        window.end_after = None if window.end_exact else (self.last_stamp if inferred else event.prev_time)
        window.end_reason = reason
        self.window = self.window_entry = None
        return [WindowClosed(window, inferred)]
