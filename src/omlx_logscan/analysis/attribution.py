"""Why did it fault: the call site, what asked for the cache clear, and the load before each fault.

oMLX logs nothing when it decides to clear its Metal cache, so which of the three triggers ran
(a pressure reclaim, the deferred clear after a request ends, or the periodic clear) has to be
read from what surrounds the fault. Each fault gets the candidate with positive evidence, the
lines that are that evidence, and — just as important — what the log level hid: a WARNING-level
log cannot show the INFO lines that would prove or rule out two of the three triggers.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from omlx_logscan.analysis.model import Analysis, Incident, Session
from omlx_logscan.analysis.overlay import OverlayCorrelation, correlate, dead_intervals
from omlx_logscan.analysis.signatures import call_site
from omlx_logscan.inputs.overlays import Interval, Overlay
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import parse_line
from omlx_logscan.timeutil import human_time, parse, seconds, stamp_of

if TYPE_CHECKING:
    from rich.console import Console


PRESSURE_WINDOW_S = 300.0  # pressure lines this long before a fault can have asked for its clear


DEFERRED_WINDOW_S = 5.0  # the deferred clear runs 8 engine steps after a request ends: seconds at most


LOAD_WINDOWS_MIN = (10, 60)


CALL_SITE_WORDS = {
    "cache_clear": "cache-clear drain",
    "decode": "decode step",
    "prefill": "prefill",
    "ane_dispatch": "ANE dispatch",
    "unknown": "call site unknown",
}


# Memory-pressure actions that mean the enforcer was reclaiming (a level change counts when it
# goes to soft or hard), each with its name in reports and the level oMLX logs it at.
PRESSURE_ACTIONS = {
    "hot_cache_shrink": ("hot-cache shrink", "WARNING"),
    "reclaim_request": ("pressure reclaim request", "INFO"),
    "level_change": ("pressure level change", "INFO"),
    "eviction": ("pressure eviction", "INFO"),
    "hard_abort": ("hard-pressure abort", "WARNING"),
    "hard_pinned": ("hard pressure with all models pinned", "WARNING"),
    "emergency_abort": ("emergency-pressure abort", "WARNING"),
}


_PRESSURE_LEVELS = frozenset({"soft", "hard"})


_ABORT_STAGES = frozenset({"prefill", "chat_stream"})  # failures inside the scheduler; a 4xx never got there


@dataclass(frozen=True)
class Evidence:
    """One log line that speaks for a trigger."""

    time: str | None
    source: str
    line: int
    message: str
    what: str
    supports: str  # the trigger it speaks for: pressure or deferred

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "source": self.source,
            "line": self.line,
            "message": self.message,
            "what": self.what,
            "supports": self.supports,
        }


@dataclass(frozen=True)
class LoadWindow:
    """Requests finished and tokens generated in the minutes before a fault, against the usual."""

    minutes: int
    requests: int
    median_requests: float | None
    tokens: int | None  # None: the request lines' text was not read
    median_tokens: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "minutes": self.minutes,
            "requests": self.requests,
            "median_requests": self.median_requests,
            "tokens": self.tokens,
            "median_tokens": self.median_tokens,
        }


@dataclass(frozen=True)
class LoadContext:
    """The load before one fault; ``baseline`` says over what the medians were taken."""

    visible: bool
    windows: tuple[LoadWindow, ...] = ()
    baseline: str | None = None
    note: str | None = None

    @property
    def label(self) -> str | None:
        if not self.windows or self.windows[0].median_requests is None:
            return None
        count, median = self.windows[0].requests, self.windows[0].median_requests
        if count == 0 and median == 0:
            return "quiet, as usual"
        if count <= median / 4:
            return "nearly idle"
        if count >= 2 * median and count - median >= 2:  # one request more than a median of one is noise
            return "busier than usual"
        return "usual load"

    def phrase(self, *, full: bool) -> str:
        """``nearly idle: 0 requests in the 10 min before, median 4`` (all windows when ``full``)."""
        if not self.visible:
            return f"load not measurable: {self.note}" if full else "load not logged"
        if not self.windows:
            return f"load unknown: {self.note}"
        parts = [
            f"{w.requests} request{'s' if w.requests != 1 else ''} in the {w.minutes} min before, "
            f"median {_count(w.median_requests)}"
            for w in (self.windows if full else self.windows[:1])
        ]
        if full:
            parts += [
                f"{w.tokens:,} tokens generated in the {w.minutes} min before, median {_count(w.median_tokens)}"
                for w in self.windows
                if w.tokens is not None
            ]
            if self.note:
                parts.append(self.note)
            parts.append(f"medians over the {self.baseline}'s live windows")
        label = self.label
        return f"{label}: {'; '.join(parts)}" if label else "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "visible": self.visible,
            "label": self.label,
            "baseline": self.baseline,
            "windows": [w.as_dict() for w in self.windows],
            "note": self.note,
        }


@dataclass
class Attribution:
    """Why one fault happened, as far as the log can say."""

    incident: Incident
    call_site: str
    call_site_label: str
    trigger: str
    candidates: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    invisible: list[str] = field(default_factory=list)
    load: LoadContext = field(default_factory=lambda: LoadContext(False))
    pressure_window_s: float = PRESSURE_WINDOW_S
    deferred_window_s: float = DEFERRED_WINDOW_S

    def as_dict(self) -> dict[str, Any]:
        return {
            "call_site": self.call_site,
            "trigger": self.trigger,
            "candidates": self.candidates,
            "evidence": [e.as_dict() for e in self.evidence],
            "invisible": self.invisible,
            "load": self.load.as_dict(),
        }

    def trigger_phrase(self, *, full: bool) -> str:
        """What asked for the clear: ``pressure (hot-cache shrink 42 s before)``; the reasons when ``full``."""
        if self.trigger == "not_applicable":
            return "not applicable (not a cache clear)"
        if self.trigger == "periodic":
            if not full:
                return "periodic"
            return (
                f"periodic: no pressure line in the {_window(self.pressure_window_s)} before, "
                f"no request ended in the {_window(self.deferred_window_s)} before"
            )
        if self.trigger == "unknown":
            if not full:
                return "unknown"
            if self.call_site == "unknown":
                return "unknown: no traceback says this fault was a cache clear"
            if self.incident.time is None:
                return "unknown: the fault has no time of its own"
            return "unknown: the log level hides the lines that would tell (see hidden)"
        nearest = next((e for e in reversed(self.evidence) if e.supports == self.trigger), None)
        gap = seconds(nearest.time, self.incident.time) if nearest else None
        detail = f" ({nearest.what}{f' {_window(gap)} before' if gap is not None else ''})" if nearest else ""
        also = [c for c in self.candidates if c != self.trigger]
        return f"{self.trigger}{detail}" + (f"; {', '.join(also)} possible too" if full and also else "")


@dataclass
class WhyFaulted:
    """The attribution section: one ``Attribution`` per fault and one correlation per overlay."""

    attributions: list[Attribution]
    overlays: list[OverlayCorrelation]

    def extend_document(self, document: dict[str, Any]) -> None:
        """Add ``attribution`` to each fault of a timeline document and ``overlays`` at the top."""
        for fault, attribution in zip(document["faults"], self.attributions, strict=True):
            fault["attribution"] = attribution.as_dict()
        document["overlays"] = [o.as_dict() for o in self.overlays]

    def caveats(self) -> list[str]:
        """What the log level hid, once for the whole log (the same for every fault)."""
        seen: dict[str, None] = {}
        for attribution in self.attributions:
            seen.update(dict.fromkeys(attribution.invisible))
        return list(seen)

    def fault_lines(self, *, full: bool) -> list[str]:
        """One line per fault in short form, a block per fault in full, then what the level hid."""
        if not self.attributions:
            return ["no GPU faults"]
        out: list[str] = []
        for number, a in enumerate(self.attributions, start=1):
            when = human_time(a.incident.time)
            if not full:
                words = [CALL_SITE_WORDS[a.call_site]]
                if a.trigger != "not_applicable":
                    words.append(f"trigger {a.trigger_phrase(full=False)}")
                out.append(f"{when}  {', '.join(words)}; {a.load.phrase(full=False)}")
                continue
            out.append(f"{when}  fault {number} (session {a.incident.session}): {a.call_site_label}")
            out.append(f"    trigger   {a.trigger_phrase(full=True)}")
            out.extend(f"    evidence  {_evidence_line(e)}" for e in a.evidence)
            out.append(f"    load      {a.load.phrase(full=True)}")
        out.extend(f"hidden: {text}" for text in self.caveats())
        return out

    def overlay_lines(self, *, full: bool) -> list[str]:
        """One sentence per overlay; in full, what the hours at risk leave out."""
        out: list[str] = []
        for overlay in self.overlays:
            line = f"overlay {overlay.name}: {overlay.sentence()}"
            if full and overlay.hours_dead_excluded > 0:
                line += (
                    f" (the hours leave out {overlay.hours_dead_excluded:.1f} h of dead-engine windows, "
                    "when no new fault could occur)"
                )
            out.append(line)
        return out

    def write_text(self, con: Console, *, full: bool) -> None:
        """The section on a terminal; log text stays data (no markup)."""
        from rich.text import Text

        con.print(Text("Why it faulted", style="bold"))
        for line in self.fault_lines(full=full) + self.overlay_lines(full=full):
            con.print(Text(f"  {line}"), soft_wrap=True)

    def markdown(self, *, full: bool) -> list[str]:
        """GitHub Markdown: the fault lines in a code block (log text inside), the overlays as bullets."""
        body = self.fault_lines(full=full)
        fence = fence_for(body)
        bullets = [f"- {line}" for line in self.overlay_lines(full=full)]
        return ["### Why it faulted", "", fence, *body, fence, "", *bullets, *([""] if bullets else [])]


def fence_for(lines: Sequence[str]) -> str:
    """A code fence longer than any backtick run inside, so log text cannot close it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def _evidence_line(evidence: Evidence) -> str:
    where = f"{evidence.source.rsplit('/', 1)[-1]}:{evidence.line}"
    return f"{human_time(evidence.time)}  {where}  {evidence.what}: {evidence.message}"


def _window(total: float | None) -> str:
    if total is None:
        return "?"
    return f"{total:.0f} s" if total < 120 else f"{total / 60:.0f} min"


def _count(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:,.0f}" if value == int(value) or value >= 10 else f"{value:.1f}"


# -- per fault --------------------------------------------------------------------------------


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

    def attribute(self, incident: Incident) -> Attribution:
        signature = self.signatures.get(incident.signature or "")
        if signature is not None:
            site, label = signature.call_site, signature.call_site_label
        else:
            site, label = call_site([], incident.context)
        attribution = Attribution(
            incident,
            site,
            label,
            "not_applicable",
            pressure_window_s=self.pressure_window_s,
            deferred_window_s=self.deferred_window_s,
        )
        attribution.load = self.load(incident)
        if site not in ("cache_clear", "unknown"):
            return attribution
        if incident.time is None:
            attribution.trigger = "unknown"
            return attribution
        session = self.sessions.get(incident.session)
        pressure = self.pressure_evidence(incident, session)
        ended = self.ended_evidence(incident, session)
        attribution.evidence = sorted(pressure + ended, key=lambda e: e.time or "")
        attribution.candidates = [name for name, found in (("pressure", pressure), ("deferred", ended)) if found]
        attribution.invisible = self.invisible(bool(pressure), bool(ended))
        if site == "unknown":
            attribution.trigger = "unknown"
        elif attribution.candidates:
            attribution.trigger = attribution.candidates[0]
        else:
            attribution.trigger = "unknown" if attribution.invisible else "periodic"
        return attribution

    def _before(self, incident: Incident, window_s: float, session: Session | None) -> tuple[str, str]:
        """The ISO bounds of the window before a fault, clipped to its process's start."""
        assert incident.time is not None
        start = (parse(incident.time) - timedelta(seconds=window_s)).isoformat()
        process_start = session.start_after or session.start if session else None
        if process_start and process_start > start:
            start = process_start
        return start, incident.time

    @staticmethod
    def _written_before(event_source: int, line: int, incident: Incident) -> bool:
        """Not after the fault in the same file (a line in the fault's second may follow it)."""
        first = incident.first
        return event_source != first.source_index or line < first.line

    def pressure_evidence(self, incident: Incident, session: Session | None) -> list[Evidence]:
        start, end = self._before(incident, self.pressure_window_s, session)
        return [
            _event_evidence(ev, PRESSURE_ACTIONS[ev.fields["action"]][0], "pressure")
            for ev in (session.events if session else self.stream.events)
            if ev.kind == "memory_pressure"
            and _is_pressure(ev)
            and ev.time
            and start <= ev.time <= end
            and self._written_before(ev.source_index, ev.line, incident)
        ]

    def ended_evidence(self, incident: Incident, session: Session | None) -> list[Evidence]:
        """Requests that finished or failed inside the scheduler just before the fault."""
        start, end = self._before(incident, self.deferred_window_s, session)
        found = [
            _event_evidence(ev, "request failed", "deferred")
            for ev in (session.events if session else self.stream.events)
            if ev.kind == "request_error"
            and ev.fields.get("stage") in _ABORT_STAGES
            and ev.time
            and start <= ev.time <= end
            and self._written_before(ev.source_index, ev.line, incident)
        ]
        if self.completions is not None:
            for source, line, moment, tokens, text in self.completions.between(parse(start), parse(end)):
                if self._written_before(source, line, incident):
                    message = parse_line(text).message if text else f"Chat completion: {tokens} tokens"
                    found.append(
                        Evidence(
                            stamp_of(moment),
                            self.completions.names[source],
                            line,
                            message,
                            "request finished",
                            "deferred",
                        )
                    )
        return found

    def invisible(self, pressure_found: bool, ended_found: bool) -> list[str]:
        """What the log level hid that could have named (or ruled out) a trigger."""
        shows = self.stream.shows
        absent = [level for level in ("INFO", "WARNING") if not shows(level)]
        if not absent:
            return []
        missing = f"{' and '.join(absent)} lines absent: "
        hidden = ", ".join(what for what, level in PRESSURE_ACTIONS.values() if not shows(level))
        pressure = f"{missing}a pressure clear cannot be excluded ({hidden} would not show)"
        if shows("WARNING"):
            pressure += f"; the hot-cache shrink warning (WARNING) {_seen(pressure_found)}"
        ended = (
            f"{missing}finished requests are not logged, so neither a deferred clear nor the load before the "
            "fault can be judged"
        )
        if shows("ERROR"):
            ended += f"; failed requests (ERROR) {_seen(ended_found)}"
        return [pressure, ended]

    # -- load -------------------------------------------------------------------------------
    def load(self, incident: Incident) -> LoadContext:
        if self.completions is None:
            return LoadContext(False, note="finished requests are INFO lines, absent from this log")
        if incident.time is None:
            return LoadContext(True, note="the fault has no time of its own")
        moment = parse(incident.time)
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
            assert self.completions is not None
            session = self.sessions.get(session_index)
            result: tuple[str, float | None, float | None] = ("log", None, None)
            spans = [("session", *(_session_span(session) if session else (None, None)))]
            spans.append(("log", self.analysis.log_start, self.analysis.log_end))
            for name, start, end in spans:
                edges = _live_edges(start, end, timedelta(minutes=minutes), self.dead)
                if not edges:
                    continue
                requests, tokens = self.completions.totals([e for pair in edges for e in pair])
                result = (name, statistics.median(requests[::2]), statistics.median(tokens[::2]))
                break
            self._medians[key] = result
        return self._medians[key]


def _seen(found: bool) -> str:
    return "showed" if found else "would have shown and did not"


def _is_pressure(event: Event) -> bool:
    action = event.fields.get("action")
    if action == "level_change":
        return event.fields.get("to_level") in _PRESSURE_LEVELS
    return action in PRESSURE_ACTIONS


def _event_evidence(event: Event, what: str, supports: str) -> Evidence:
    return Evidence(event.time, event.source, event.line, event.message, what, supports)


def _session_span(session: Session) -> tuple[str | None, str | None]:
    return session.start or session.start_after, session.end


def _live_edges(start: str | None, end: str | None, width: timedelta, dead: list[Interval]) -> list[Interval]:
    """Whole windows of ``width`` tiling [start, end], less those touching a dead-engine window."""
    if not start or not end:
        return []
    cursor, stop = parse(start), parse(end)
    out: list[Interval] = []
    while cursor + width <= stop:
        tile = (cursor, cursor + width)
        if not any(d_start < tile[1] and tile[0] < d_end for d_start, d_end in dead):
            out.append(tile)
        cursor += width
    return out


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
