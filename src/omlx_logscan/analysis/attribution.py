"""Why did it fault: the call site, what asked for the cache clear, and the load before each fault.

oMLX logs nothing when it decides to clear its Metal cache, so which trigger ran (a pressure
reclaim, the deferred clear after a request ends or is aborted, the periodic clear, or the idle
reclaim the enforcer asks for between turns) has to be read from what surrounds the fault; only the
clear ``Scheduler.step`` runs every 1,024 decoded tokens is told by its own stack. Each
fault gets the candidate with positive evidence, the lines that are that evidence, and — just as
important — what the log level hid: a WARNING-level log cannot show the INFO lines that would
prove or rule out the triggers.

This module holds only the findings (ids, numbers, times); ``output.why`` puts them into words.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final, Literal

from omlx_logscan.analysis.overlays import OverlayCorrelation, correlate, dead_intervals
from omlx_logscan.analysis.results import Analysis, CallSite, Incident, Session, Signature
from omlx_logscan.analysis.signatures import CLEAR_CONTEXTS, ClearReason, call_site, decode_interval_clear
from omlx_logscan.inputs.overlays import Interval, Overlay
from omlx_logscan.parsing.catalog import RECLAIMING_LEVELS, chat_completion_message
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import parse_line
from omlx_logscan.parsing.kinds import IDLE_RECLAIM, LEVEL_CHANGE, PRESSURE_ACTIONS, RECLAIMING
from omlx_logscan.timeutil import parse, stamp_of

PRESSURE_WINDOW_S = 300.0  # pressure lines this long before a fault can have asked for its clear


# The deferred clear runs on the 8th engine step after a request ends (``_DEFERRED_CLEAR_DELAY``,
# oMLX 0.3.5 on), and the engine keeps stepping while it is pending: every 50 ms when idle
# (``step_interval``), once per token while requests decode. One second allows 125 ms a step; a
# request that ended earlier had its clear run before the fault.
DEFERRED_WINDOW_S = 1.0


LOAD_WINDOWS_MIN = (10, 60)


# Memory-pressure actions that mean the enforcer was reclaiming (a level change counts when it
# goes to a reclaiming level), each with the level oMLX logs it at: derived from the kinds
# registry's table, so a new enforcer message is one row there.
PRESSURE_ACTION_LEVELS = {
    action: row.level for action, row in PRESSURE_ACTIONS.items() if row.shows in (RECLAIMING, LEVEL_CHANGE)
}


# The enforcer's requests for the idle reclaim (pressure actions that speak for the idle trigger).
IDLE_REQUESTS = frozenset(action for action, row in PRESSURE_ACTIONS.items() if row.shows == IDLE_RECLAIM)


# A trigger the log can show evidence for (the schemas' evidence ``supports``).
Supported = Literal["pressure", "deferred", "idle"]

# What asked for a failing clear (the schemas' ``trigger``): found from the evidence before it, left
# unknown, not applicable (not a clear), the periodic or decode-interval clear, or the reason a clear its
# record names runs for (signatures.CLEAR_CONTEXTS).
Trigger = Literal[
    "pressure", "deferred", "idle", "periodic", "decode_interval", "unknown", "not_applicable", ClearReason
]

DECODE_INTERVAL: Final = "decode_interval"  # the clear Scheduler.step runs every 1,024 decoded tokens


IDLE_TRIM = "idle_trim"  # an idle reclaim that ran (a cache_clear event)


REQUEST_FAILED = "request_failed"  # evidence actions besides the pressure actions
REQUEST_FINISHED = "request_finished"
REQUEST_ABORTED = "request_aborted"


# Failures inside the scheduler (a prefill, a stream of any API); a 4xx never got there.
_ABORT_STAGES = frozenset({"prefill", "chat_stream", "stream"})
_PRESSURE_KINDS = frozenset({"memory_pressure"})  # the kinds each evidence is of
_IDLE_KINDS = frozenset({"cache_clear", "memory_pressure"})
_ENDED_KINDS = frozenset({"request_abort", "request_error"})


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """One log line that speaks for a trigger."""

    time: str | None
    source: str
    line: int
    message: str
    action: str  # a PRESSURE_ACTIONS key, REQUEST_FAILED/FINISHED/ABORTED or IDLE_TRIM
    supports: Supported  # the trigger it speaks for


@dataclass(frozen=True)
class LoadWindow:
    """Requests finished and tokens generated in the minutes before a fault, against the usual."""

    minutes: int
    requests: int
    median_requests: float | None
    tokens: int | None  # None: the request lines' text was not read
    median_tokens: float | None

    def as_dict(self) -> dict[str, int | float | None]:
        return {
            "minutes": self.minutes,
            "requests": self.requests,
            "median_requests": self.median_requests,
            "tokens": self.tokens,
            "median_tokens": self.median_tokens,
        }


class LoadLevel(StrEnum):
    """How the requests in the first window compare with their median."""

    quiet = "quiet"  # none, and none is usual
    nearly_idle = "nearly_idle"
    busy = "busy"
    usual = "usual"


class LoadGap(StrEnum):
    """Why the load before a fault cannot be measured."""

    not_logged = "not_logged"  # finished requests are INFO lines and the log has none
    untimed_fault = "untimed_fault"  # the fault has no time of its own


@dataclass(frozen=True)
class LoadContext:
    """The load before one fault; ``baseline`` says over what the medians were taken (session or log)."""

    visible: bool
    windows: tuple[LoadWindow, ...] = ()
    baseline: str | None = None
    gap: LoadGap | None = None

    @property
    def level(self) -> LoadLevel | None:
        """The first window against its median; None without a median to compare with."""
        if not self.windows or self.windows[0].median_requests is None:
            return None
        count, median = self.windows[0].requests, self.windows[0].median_requests
        if count == 0 and median == 0:
            return LoadLevel.quiet
        if count <= median / 4:
            return LoadLevel.nearly_idle
        if count >= 2 * median and count - median >= 2:  # one request more than a median of one is noise
            return LoadLevel.busy
        return LoadLevel.usual


@dataclass(frozen=True)
class Hidden:
    """What the log level hid that could have named (or ruled out) a trigger.

    ``shrink_warning_seen`` and ``failed_requests_seen`` are None when their level is hidden too.
    """

    absent_levels: tuple[str, ...]  # of INFO and WARNING, those the log does not show
    hidden_actions: tuple[str, ...]  # pressure actions logged at a hidden level
    shrink_warning_seen: bool | None
    failed_requests_seen: bool | None


@dataclass(kw_only=True)
class Attribution:
    """Why one fault happened, as far as the log can say."""

    incident: Incident
    call_site: CallSite
    signature: Signature | None  # the fault's stack, None without a traceback
    # pressure, deferred, idle, periodic, unknown or not_applicable; decode_interval, told by the
    # stack; or the reason of a clear its record names (a CLEAR_CONTEXTS value: recovery, overflow,
    # idle, pooled_reclaim)
    trigger: Trigger
    candidates: list[Trigger] = field(default_factory=list)
    # When the level hid what would tell (trigger unknown for that reason): the triggers left open.
    possible: list[Trigger] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    hidden: Hidden | None = None
    load: LoadContext = field(default_factory=lambda: LoadContext(False))
    pressure_window_s: float = PRESSURE_WINDOW_S
    deferred_window_s: float = DEFERRED_WINDOW_S


@dataclass
class WhyFaulted:
    """The attribution section: one ``Attribution`` per fault and one correlation per overlay."""

    attributions: list[Attribution]
    overlays: list[OverlayCorrelation]


# -- per fault --------------------------------------------------------------------------------


def own_time(incident: Incident) -> str | None:
    """The time a fault's first record carries itself. ``Incident.time`` falls back to the record
    before it, which places an untimed fault in the timeline; but a trigger or a load measured from
    that borrowed moment would be measured from some other line (a request that "finished 0 s
    before" is the record whose time was borrowed), so attribution uses only this."""
    return incident.first.time


class _Attributor:
    def __init__(self, analysis: Analysis, pressure_window_s: float, deferred_window_s: float) -> None:
        self.analysis = analysis
        self.stream = analysis.stream
        self.pressure_window_s = pressure_window_s
        self.deferred_window_s = deferred_window_s
        self.sessions = {s.index: s for s in analysis.sessions}
        self.signatures = {s.id: s for s in analysis.signatures}
        self.completions = analysis.requests if self.stream.shows("INFO") else None
        self.dead = dead_intervals(analysis)
        self._medians: dict[tuple[int, int], tuple[str, float | None, float | None]] = {}
        self._log_medians: dict[int, tuple[str, float | None, float | None]] = {}
        self._by_time: dict[tuple[int | None, frozenset[str]], _ByTime] = {}

    def attribute(self, incident: Incident) -> Attribution:
        signature = self.signatures.get(incident.signature or "")
        site = signature.call_site if signature is not None else call_site([], incident.context)
        attribution = Attribution(
            incident=incident,
            call_site=site,
            signature=signature,
            trigger="not_applicable",
            pressure_window_s=self.pressure_window_s,
            deferred_window_s=self.deferred_window_s,
        )
        attribution.load = self.load(incident)
        if site not in ("cache_clear", "unknown"):
            return attribution
        timed = own_time(incident) is not None
        session = self.sessions.get(incident.session)
        if own := CLEAR_CONTEXTS.get(incident.context):
            # The record names the clear that failed, and so the reason it ran, with or without a
            # time: nothing else asked for it, and no hidden line could have. Only the idle
            # reclaim's requests speak for their own clear.
            attribution.trigger, attribution.candidates = own, [own]
            if own == "idle" and timed:
                attribution.evidence = self.idle_evidence(incident, session)
            return attribution
        if signature is not None and decode_interval_clear(signature.frames):
            # Its stack says which of step's clears it was (an ERROR record: every level shows it).
            attribution.trigger, attribution.candidates = DECODE_INTERVAL, [DECODE_INTERVAL]
            return attribution
        if not timed:
            attribution.trigger = "unknown"
            return attribution
        idle = self.idle_evidence(incident, session)
        pressure = self.pressure_evidence(incident, session)
        ended = self.ended_evidence(incident, session)
        attribution.evidence = sorted(pressure + ended + idle, key=lambda e: e.time or "")
        found: tuple[tuple[Supported, list[Evidence]], ...] = (
            ("pressure", pressure),
            ("deferred", ended),
            ("idle", idle),
        )
        attribution.candidates = [name for name, evidence in found if evidence]
        attribution.hidden = self.hidden(bool(pressure), bool(ended))
        if site == "unknown":
            attribution.trigger = "unknown"
        elif attribution.candidates:
            attribution.trigger = attribution.candidates[0]
        elif attribution.hidden:
            attribution.trigger, attribution.possible = "unknown", left_open(attribution.hidden)
        else:
            attribution.trigger = "periodic"
        return attribution

    def _before(self, incident: Incident, window_s: float, session: Session | None) -> tuple[str, str]:
        """The ISO bounds of the window before a fault, clipped to its process's start."""
        time = own_time(incident)
        assert time is not None
        start = stamp_of(parse(time) - timedelta(seconds=window_s))  # compared as text with the events' times
        process_start = session.start_after or session.start if session else None
        if process_start and process_start > start:
            start = process_start
        return start, time

    @staticmethod
    def _written_before(event_source: int, line: int, incident: Incident) -> bool:
        """Not after the fault in the same file (a line in the fault's second may follow it)."""
        first = incident.first
        return event_source != first.source_index or line < first.line

    def _timed(self, session: Session | None, kinds: frozenset[str]) -> _ByTime:
        """The session's (else the whole stream's) events of ``kinds``, indexed by time once."""
        key = (session.index if session else None, kinds)
        if key not in self._by_time:
            events = session.events if session else self.stream.events
            self._by_time[key] = _ByTime(ev for ev in events if ev.kind in kinds)
        return self._by_time[key]

    def pressure_evidence(self, incident: Incident, session: Session | None) -> list[Evidence]:
        """The enforcer's reclaiming lines of the pressure episode still open at the fault. An episode
        ends when the level falls back to one that does not reclaim (``hard -> ok``): the clear it
        asked for ran at the next engine step (``_consume_pressure_clear``), so its lines ask for
        no later clear."""
        start, end = self._before(incident, self.pressure_window_s, session)
        found: list[Evidence] = []
        for ev in self._timed(session, _PRESSURE_KINDS).between(start, end):
            if not self._written_before(ev.source_index, ev.line, incident):
                continue
            if _is_pressure(ev):
                found.append(_event_evidence(ev, ev.fields["action"], "pressure"))
            elif _shows(ev) == LEVEL_CHANGE:  # a level that does not reclaim: the episode is over
                found = []
        return found

    def idle_evidence(self, incident: Incident, session: Session | None) -> list[Evidence]:
        """The enforcer's requests for the idle reclaim, and idle reclaims that ran, before the fault."""
        start, end = self._before(incident, self.pressure_window_s, session)
        return [
            _event_evidence(ev, IDLE_TRIM if ev.kind == "cache_clear" else ev.fields["action"], "idle")
            for ev in self._timed(session, _IDLE_KINDS).between(start, end)
            if (ev.kind == "cache_clear" or ev.fields.get("action") in IDLE_REQUESTS)
            and self._written_before(ev.source_index, ev.line, incident)
        ]

    def ended_evidence(self, incident: Incident, session: Session | None) -> list[Evidence]:
        """Requests that failed inside the scheduler or were aborted (each schedules the deferred clear),
        and requests that finished, just before the fault."""
        start, end = self._before(incident, self.deferred_window_s, session)
        found = [
            _event_evidence(ev, REQUEST_ABORTED if ev.kind == "request_abort" else REQUEST_FAILED, "deferred")
            for ev in self._timed(session, _ENDED_KINDS).between(start, end)
            if (ev.kind == "request_abort" or ev.fields.get("stage") in _ABORT_STAGES)
            and self._written_before(ev.source_index, ev.line, incident)
        ]
        if self.completions is not None:
            for source, line, moment, tokens, text in self.completions.between(parse(start), parse(end)):
                if self._written_before(source, line, incident):
                    message = parse_line(text).message if text else chat_completion_message(tokens)
                    found.append(
                        Evidence(
                            time=stamp_of(moment),
                            source=self.completions.names[source],
                            line=line,
                            message=message,
                            action=REQUEST_FINISHED,
                            supports="deferred",
                        )
                    )
        return found

    def hidden(self, pressure_found: bool, ended_found: bool) -> Hidden | None:
        """What the log level hid that could have named (or ruled out) a trigger; None when nothing."""
        shows = self.stream.shows
        absent = tuple(level for level in ("INFO", "WARNING") if not shows(level))
        if not absent:
            return None
        return Hidden(
            absent,
            tuple(action for action, level in PRESSURE_ACTION_LEVELS.items() if not shows(level)),
            pressure_found if shows("WARNING") else None,
            ended_found if shows("ERROR") else None,
        )

    # -- load -------------------------------------------------------------------------------
    def load(self, incident: Incident) -> LoadContext:
        if self.completions is None:
            return LoadContext(False, gap=LoadGap.not_logged)
        time = own_time(incident)
        if time is None:
            return LoadContext(True, gap=LoadGap.untimed_fault)
        moment = parse(time)
        windows: list[LoadWindow] = []
        baseline = "session"
        for minutes in LOAD_WINDOWS_MIN:
            span = timedelta(minutes=minutes)
            requests, tokens = self.completions.totals([moment - span, moment])
            baseline, median_requests, median_tokens = self.medians(incident.session, minutes)
            windows.append(
                LoadWindow(
                    minutes,
                    requests[0],
                    median_requests,
                    tokens[0],
                    median_tokens,
                )
            )
        return LoadContext(True, tuple(windows), baseline)

    def medians(self, session_index: int, minutes: int) -> tuple[str, float | None, float | None]:
        """Median requests and tokens per window over the session's live time (else the whole log's)."""
        key = (session_index, minutes)
        if key not in self._medians:
            session = self.sessions.get(session_index)
            found = self._median_over(*_session_span(session), minutes) if session else None
            if found is not None:
                self._medians[key] = ("session", *found)
            else:  # worked out once, not once per session too short for a whole window
                if minutes not in self._log_medians:
                    over_log = self._median_over(self.analysis.log_start, self.analysis.log_end, minutes)
                    self._log_medians[minutes] = ("log", *(over_log or (None, None)))
                self._medians[key] = self._log_medians[minutes]
        return self._medians[key]

    def _median_over(self, start: str | None, end: str | None, minutes: int) -> tuple[float, float] | None:
        """Median requests and tokens per live window of ``minutes`` in [start, end]; None without a whole window."""
        assert self.completions is not None
        edges = _live_edges(start, end, timedelta(minutes=minutes), self.dead)
        if not edges:
            return None
        requests, tokens = self.completions.totals([e for pair in edges for e in pair])
        return statistics.median(requests[::2]), statistics.median(tokens[::2])


def left_open(hidden: Hidden) -> list[Trigger]:
    """The triggers of a clear with no evidence that the hidden levels leave possible: a pressure
    clear when a reclaiming action was hidden, a deferred one when finished requests were (INFO),
    the idle reclaim when the enforcer's request for it was (WARNING), and the periodic clear, which
    no line shows. The decode-interval clear is never left open: its stack, an ERROR record, tells."""
    left: list[Trigger] = []
    if hidden.hidden_actions:
        left.append("pressure")
    if "INFO" in hidden.absent_levels:
        left.append("deferred")
    if "WARNING" in hidden.absent_levels:
        left.append("idle")
    return [*left, "periodic"]


def _shows(event: Event) -> str | None:
    """What a memory-pressure line shows (a PRESSURE_ACTIONS row's ``shows``), None for another line."""
    row = PRESSURE_ACTIONS.get(event.fields.get("action", ""))
    return None if row is None else row.shows


def _is_pressure(event: Event) -> bool:
    shows = _shows(event)
    if shows not in (RECLAIMING, LEVEL_CHANGE):
        return False
    return shows == RECLAIMING or event.fields.get("to_level") in RECLAIMING_LEVELS


def _event_evidence(event: Event, action: str, supports: Supported) -> Evidence:
    return Evidence(
        time=event.time, source=event.source, line=event.line, message=event.message, action=action, supports=supports
    )


def _session_span(session: Session) -> tuple[str | None, str | None]:
    return session.start or session.start_after, session.end


def _live_edges(start: str | None, end: str | None, width: timedelta, dead: list[Interval]) -> list[Interval]:
    """Whole windows of ``width`` tiling [start, end], less those touching a dead-engine window."""
    if not start or not end:
        return []
    cursor, stop = parse(start), parse(end)
    out: list[Interval] = []
    by_start = sorted(dead)
    begun = 0  # the dead windows that begin before the tile's end, and the latest end among them
    latest_end: datetime | None = None
    while cursor + width <= stop:
        tile = (cursor, cursor + width)
        while begun < len(by_start) and by_start[begun][0] < tile[1]:
            ends = by_start[begun][1]
            latest_end = ends if latest_end is None else max(latest_end, ends)
            begun += 1
        if latest_end is None or latest_end <= tile[0]:  # none of them reaches into the tile
            out.append(tile)
        cursor += width
    return out


class _ByTime:
    """Timed events found by a window of time, in their written order: bisected, where looking
    through all of a session's events for each of its faults would take quadratic time."""

    def __init__(self, events: Iterable[Event]) -> None:
        timed = sorted((ev.time, position, ev) for position, ev in enumerate(events) if ev.time)
        self._times = [time for time, _, _ in timed]
        self._rows = [(position, ev) for _, position, ev in timed]

    def between(self, start: str, end: str) -> list[Event]:
        """The events timed in ``[start, end]``, in the order they were written."""
        lo, hi = bisect.bisect_left(self._times, start), bisect.bisect_right(self._times, end)
        return [ev for _, ev in sorted(self._rows[lo:hi], key=lambda row: row[0])]


def explain(
    analysis: Analysis,
    overlays: list[Overlay] | None = None,
    *,
    pressure_window_s: float = PRESSURE_WINDOW_S,
    deferred_window_s: float = DEFERRED_WINDOW_S,
) -> WhyFaulted:
    """Attribute every fault of an analysis and correlate it with each overlay."""
    attributor = _Attributor(analysis, pressure_window_s, deferred_window_s)
    return WhyFaulted(
        [attributor.attribute(incident) for incident in analysis.faults],
        correlate(analysis, overlays or []),
    )
