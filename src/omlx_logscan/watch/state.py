"""What a watch knows: the batch analysis of what it has read, and what changed since the last one.

The watch appends what it reads to a ``GrowingStream`` and runs ``analyze`` on it again when a poll
brings something new (``due``). What the watch says comes from comparing that analysis with what it
said before: a fault that is complete (a later record, a process start or end, or two quiet
seconds closed it), a dead window it has not alerted on, a window that now has an end, a wedge of
the running lifetime. Lifetimes are numbered as ``logscan sessions`` numbers them in the whole
file, and those before the last start are let go once all is said about them.
"""

from __future__ import annotations

from dataclasses import dataclass

from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.analysis.outages import SETTLING_KINDS, WEDGE_MIN_UNFINISHED
from omlx_logscan.analysis.probes import ProbeProof, generation_dead
from omlx_logscan.analysis.results import INCIDENT_GAP_S, Analysis, DeadWindow, Incident, Session
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import ARRIVAL_KIND, CRASH_KINDS
from omlx_logscan.timeutil import seconds
from omlx_logscan.watch.growing import GrowingStream
from omlx_logscan.watch.own_requests import OWN_FIELD

# What ends a wait for a wedge: a request that settles (or an engine failure), or a new process.
_SETTLING = SETTLING_KINDS | {"request_complete", "process_start"}
_ROUTINE = frozenset({"record", "request_complete", ARRIVAL_KIND})


@dataclass
class FaultClosed:
    """A new fault incident is complete (not a repeat inside a dead window); ``number`` counts the watch's."""

    incident: Incident
    number: int


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


@dataclass
class WedgeSeen:
    """The running lifetime is wedged: since ``since`` nothing settled while ``unfinished`` requests wait."""

    session: int
    since: str | None
    unfinished: int
    event: Event  # the latest arrival, which shows it


@dataclass
class ProbeProved:
    """Probes proved the running lifetime generation-dead (the log alone could not)."""

    proof: ProbeProof


Change = FaultClosed | WindowOpened | WindowClosed | WedgeSeen | ProbeProved


class WatchState:
    """The last analysis, numbered as in the whole file, and the lifetimes let go before it."""

    def __init__(self, source: str, wedge_after_s: float) -> None:
        self.growing = GrowingStream(source)
        self.wedge_after_s = wedge_after_s
        self.sessions_before = 0  # lifetimes in what a watch from the end skipped
        self.analysis: Analysis | None = None
        self._first_number: int | None = None  # the number of the stream's first lifetime, once fixed
        self._shown_from = 0  # the first lifetime of ``analysis`` not let go
        self.finished = False  # the log ended: the analysis is the one a batch read gives
        self._gone: tuple[list[Session], list[Incident], list[DeadWindow]] = ([], [], [])
        self._said: set[int] = set()  # ids of the first records of faults told, and of windows' entries
        self._ended: set[int] = set()  # ... of the entries of windows whose end was told
        self._wedged: set[int] = set()  # lifetimes whose wedge was told
        self._last_gpu: Event | None = None  # the last gpu_error record, while its incident may grow
        self._last_gpu_seen = 0.0  # when (wall clock) it arrived
        self._latest_after_gpu: str | None = None  # the latest time written after it
        self._gpu_closed = False  # a process start or end came after it
        self._new = False  # an event that is no routine record came since the last analysis
        self._settled_at: str | None = None  # log time of the last request settled (or start) read
        self._arrived = 0  # arrivals since then
        self.last_arrival: Event | None = None
        self.latest: str | None = None
        self.probes: list[Event] = []  # the probes' answers (``watch --probe``), in the order they came
        self._proven: set[tuple[int, str | None]] = set()  # (session, since) of the probe proofs told

    def add_probe(self, probe: Event) -> list[Change]:
        """A probe's answer: what it proves with those before it, if that was not told yet (one alert
        per outage: an alive probe or a new lifetime ends one)."""
        self.probes.append(probe)
        proof = generation_dead(self.analysis, self.probes, running=max(self.sessions_before, 1))
        if proof is None or (proof.session, proof.since) in self._proven:
            return []
        self._proven.add((proof.session, proof.since))
        return [ProbeProved(proof)]

    def proven_outage(self) -> bool:
        """Whether the log proves the running lifetime dead already (a penalty box, a wedge): no probe needed."""
        return self.open_window() is not None or self.wedged() is not None

    # -- what was read ------------------------------------------------------------------------
    def add(self, event: Event, seen: float) -> None:
        """One event, in file order; ``seen``: when (wall clock) its lines arrived."""
        self.growing.add(event)
        if event.time is not None:
            self.latest = max(self.latest or event.time, event.time)
        self._new = self._new or event.kind not in _ROUTINE
        if event.kind == "gpu_error":
            self._last_gpu, self._last_gpu_seen = event, seen
            self._latest_after_gpu, self._gpu_closed = None, False
        elif self._last_gpu is not None:
            if event.time is not None:
                self._latest_after_gpu = max(self._latest_after_gpu or event.time, event.time)
            self._gpu_closed = self._gpu_closed or event.kind == "process_start" or event.kind in CRASH_KINDS
        if event.fields.get(OWN_FIELD):
            return  # the watch's own probe: its answer tells what its lines would
        if event.kind in _SETTLING:
            self._settled_at, self._arrived = event.time or self._settled_at, 0
        elif event.kind == ARRIVAL_KIND:
            self._arrived += 1
            self.last_arrival = event

    def due(self, now: float) -> bool:
        """Whether to analyse again: something other than routine records came, an incident's two
        quiet seconds are over (``now``, wall clock), or a wedge may have begun."""
        last = self._last_gpu
        gap = seconds(last.time, self._latest_after_gpu) if last is not None else None
        settle = last is not None and (now - self._last_gpu_seen >= INCIDENT_GAP_S or (gap or 0) >= INCIDENT_GAP_S)
        quiet = seconds(self._settled_at or self.growing.info.first, self.latest)  # (from the watch's first line)
        wedge = self._arrived >= WEDGE_MIN_UNFINISHED - 1 and quiet is not None and quiet > self.wedge_after_s
        running = self.analysis.sessions[-1].index if self.analysis and self.analysis.sessions else None
        return self._new or settle or (wedge and running not in self._wedged)

    # -- the analysis -------------------------------------------------------------------------
    def refresh(self, now: float, *, history: bool = False, finished: bool = False) -> list[Change]:
        """Analyse what was read and return what changed since the last analysis (nothing for
        ``history``: what a replay read is counted, not told). ``finished``: the log ended, so the
        last incident is complete too."""
        self._new, self.finished = False, finished
        analysis = analyze(self.growing.ready(), wedge_after_s=self.wedge_after_s)
        self._number(analysis)
        self.analysis = analysis
        open_incident = None if finished or history else self._open_incident(analysis, now)
        changes = self._changes(analysis, open_incident)
        if self._last_gpu is not None and open_incident is None:
            self._last_gpu = None  # complete: no timer runs for it
        self._let_go(analysis)
        return [] if history else changes

    def _number(self, analysis: Analysis) -> None:
        """Number the lifetimes as in the whole file: on from those a watch from the end skipped."""
        if not analysis.sessions:
            return
        if self._first_number is None:
            first = analysis.sessions[0]
            before = self.sessions_before
            self._first_number = before + 1 if first.start_in_log else max(before, 1)
        offset = self._first_number - 1
        if not offset:
            return
        for session in analysis.sessions:
            session.index += offset
        for incident in (*analysis.faults, *analysis.repeats):
            incident.session += offset
        for window in analysis.dead_windows:
            window.session += offset
        for outage in analysis.outages.items:
            outage.session += offset

    def _open_incident(self, analysis: Analysis, now: float) -> Incident | None:
        """The incident of the last gpu_error record if it may still grow: no later record two
        seconds on, no process start or end after it, and two seconds of wall clock not over."""
        last = self._last_gpu
        if last is None or self._gpu_closed or now - self._last_gpu_seen >= INCIDENT_GAP_S:
            return None
        incident = next((i for i in (*analysis.faults, *analysis.repeats) if i.records[-1] is last), None)
        gap = seconds(incident.last_time, self._latest_after_gpu) if incident is not None else None
        return None if gap is not None and gap >= INCIDENT_GAP_S else incident

    def _changes(self, analysis: Analysis, open_incident: Incident | None) -> list[Change]:
        """What is new, lifetime by lifetime in order: complete faults (and the windows they open),
        then the end of the lifetime's window; then a wedge of the running lifetime."""
        changes: list[Change] = []
        numbers = {id(fault): n for n, fault in enumerate(analysis.faults, start=len(self._gone[1]) + 1)}
        for position, session in enumerate(analysis.sessions):
            following = analysis.sessions[position + 1] if position + 1 < len(analysis.sessions) else None
            for fault in analysis.faults:
                if fault.session != session.index or id(fault.first) in self._said or fault is open_incident:
                    continue
                self._said.add(id(fault.first))
                changes.append(FaultClosed(fault, numbers[id(fault)]))
                if fault.dead_window is not None:
                    changes.append(WindowOpened(analysis.dead_windows[fault.dead_window], fault))
            for entry, window in self._windows(analysis, session):
                if window.end is not None and id(entry.first) in self._said and id(entry.first) not in self._ended:
                    self._ended.add(id(entry.first))
                    changes.append(WindowClosed(window, following is not None and following.start_inferred))
        wedged = self.wedged()
        if wedged is not None and wedged.session not in self._wedged:
            self._wedged.add(wedged.session)
            changes.append(wedged)
        return changes

    @staticmethod
    def _windows(analysis: Analysis, session: Session) -> list[tuple[Incident, DeadWindow]]:
        return [
            (fault, analysis.dead_windows[fault.dead_window])
            for fault in analysis.faults
            if fault.session == session.index and fault.dead_window is not None
        ]

    def wedged(self) -> WedgeSeen | None:
        """The running lifetime's wedge, if it is on: requests arrive and none settles."""
        analysis, arrival = self.analysis, self.last_arrival
        if analysis is None or not analysis.sessions or arrival is None:
            return None
        last = analysis.sessions[-1].index
        wedges = (o for o in analysis.outages.of_kind("wedge") if o.session == last and o.end is None)
        found = next(wedges, None)
        return WedgeSeen(last, found.start, found.unfinished_requests or 0, arrival) if found is not None else None

    def _let_go(self, analysis: Analysis) -> None:
        """Drop the lifetimes before the last process start: all is said about them, and the stream
        from that start on gives the later ones as the whole does. Their tallies stay."""
        sessions = analysis.sessions
        cut = next(
            (p for p in range(len(sessions) - 1, 0, -1) if sessions[p].events[:1] and _starts(sessions[p])), None
        )
        if cut is None:
            return
        gone, kept = sessions[:cut], sessions[cut]
        indices = {session.index for session in gone}
        faults = [fault for fault in analysis.faults if fault.session in indices]
        windows = [window for window in analysis.dead_windows if window.session in indices]
        for session in gone:
            session.events = []
        self._gone[0].extend(gone)
        self._gone[1].extend(faults)
        self._gone[2].extend(windows)
        for fault in faults:
            self._said.discard(id(fault.first))
            self._ended.discard(id(fault.first))
        self._first_number = self._shown_from = kept.index
        self.growing.cut(kept.events[0], kept.start)
        self.probes = [probe for probe in self.probes if kept.start is None or (probe.time or "") >= kept.start]

    # -- what the watch shows -----------------------------------------------------------------
    @property
    def sessions(self) -> list[Session]:
        shown = [s for s in self.analysis.sessions if s.index >= self._shown_from] if self.analysis else []
        return [*self._gone[0], *shown]

    @property
    def faults(self) -> list[Incident]:
        shown = [f for f in self.analysis.faults if f.session >= self._shown_from] if self.analysis else []
        return [*self._gone[1], *shown]

    @property
    def windows(self) -> list[DeadWindow]:
        shown = [w for w in self.analysis.dead_windows if w.session >= self._shown_from] if self.analysis else []
        return [*self._gone[2], *shown]

    def open_window(self) -> tuple[DeadWindow, Incident] | None:
        """The dead window still open, with the fault that opened it: one with no end (once the log
        ended, one whose failures did not stop either: the batch rule's unseen restart)."""
        analysis = self.analysis
        if analysis is None:
            return None
        for session in reversed(analysis.sessions):
            for entry, window in self._windows(analysis, session):
                if window.end is None and (not self.finished or window.end_reason == "eof"):
                    return window, entry
        return None

    @property
    def window(self) -> DeadWindow | None:
        found = self.open_window()
        return found[0] if found else None


def _starts(session: Session) -> bool:
    """Whether a lifetime begins with its own start line, timed (an inferred one begins with a fault;
    an untimed one may yet take a later marker's time, or be placed at the stream's first record)."""
    return session.events[0].kind == "process_start" and not session.start_inferred and session.start_exact
