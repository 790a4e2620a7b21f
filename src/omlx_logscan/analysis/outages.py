"""Every way the server went dark, as one list: penalty boxes, wedges, fatal exits, crashes,
reboots and retry loops, each bounded only as far as the log proves.

Data only: ``output/outages.py`` says it in words.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from omlx_logscan.analysis.outage_model import (
    ARRIVALS_SHOWN,
    COMPLETIONS_SHOWN,
    LEVEL_EVIDENCE_RECORDS,
    TRAFFIC_HIDDEN,
    WEDGE_AFTER_S,
    Outage,
    OutageKind,
    Outages,
)
from omlx_logscan.analysis.results import Analysis, Session, shows_penalty_box
from omlx_logscan.parsing.catalog_outages import ENGINE_LOOP_ERROR, ENGINE_LOOP_STOPPED, fatal_reason
from omlx_logscan.parsing.dense import Dense, form_code, moment_of, ms_of, timed_in_order
from omlx_logscan.parsing.kinds import CRASH_KINDS, EventKind
from omlx_logscan.timeutil import seconds, stamp_of

if TYPE_CHECKING:
    from omlx_logscan.parsing.event import Event

WEDGE_MIN_UNFINISHED = 3  # the oldest request that never finished, and at least two later ones
RETRY_LOOP_MIN = 5  # the same engine-loop error this many times ...
RETRY_LOOP_GAP_S = 600.0  # ... each within this long of the one before
TRAFFIC_BEFORE_S = 6 * 3600.0  # a possible wedge is measured against the completions of these hours
TRAFFIC_MIN_COMPLETIONS = 5  # ... which must be steady traffic: at least this many
EXCERPT_SPAN_S = 3600.0  # an input of few records spanning less than this is a pasted excerpt
SILENCE_FACTOR = 2.0  # ... and the silence longer than this many times their longest gap

# Events in which a request aborts or fails, or the engine fails: a wedge has none (nor finished
# requests, which are dense rows here and events in a watch).
SETTLING_KINDS: frozenset[EventKind] = frozenset({"request_abort", "request_error", "gpu_error"})

# The lines of a stop after the engine loop's.
_STOP_KINDS: frozenset[EventKind] = frozenset({"engine_stop", "shutdown"})

# The arrival lines that count requests, each set one line per request at most: the scheduler's
# (every generation request, once the engine's MLX executor adds it) and the endpoints' (the chat and
# Anthropic endpoints log each request they take; the completions endpoint none). A wedge holds the
# executor, so the scheduler adds none of the requests that arrive in it (``EngineCore.add_request``
# runs ``Scheduler.add_request`` on that executor, 0.4.4 to 0.6.3rc2): the set that counts more is the
# nearer count. The TRACE body line (every HTTP request, probes too) counts only where neither shows.
SCHEDULER_ARRIVALS = ("scheduler_added",)
ENDPOINT_ARRIVALS = ("chat_received", "messages_received")
FALLBACK_ARRIVALS = ("incoming",)


AT_START = "at_start"  # a fatal exit's reason: the process raised out of the CLI's main() as it started


def find_outages(analysis: Analysis, arrivals: Dense, wedge_after_s: float | None = None) -> Outages:
    """The outages of an analysed log; ``arrivals`` are its request-arrival rows (source, line, time,
    form); ``wedge_after_s`` defaults to WEDGE_AFTER_S. Marks the lifetimes that ended inside a wedge
    as restarted."""
    if wedge_after_s is None:
        wedge_after_s = WEDGE_AFTER_S
    stream = analysis.stream
    traffic = ARRIVALS_SHOWN if stream.shows("DEBUG") else COMPLETIONS_SHOWN if stream.shows("INFO") else TRAFFIC_HIDDEN
    crash_events = analysis.crash_evidence()
    timeline = _Arrivals(arrivals)
    items: list[Outage] = [*_penalty_boxes(analysis)]
    for position, session in enumerate(analysis.sessions):
        following = analysis.sessions[position + 1] if position + 1 < len(analysis.sessions) else None
        items += _fatal_exits(analysis, session, following, crash_events)
        items += _retry_loops(session)
        wedge = None
        if traffic == ARRIVALS_SHOWN:
            wedge = _wedge(analysis, session, following, timeline, wedge_after_s)
        elif traffic == COMPLETIONS_SHOWN:
            wedge = _possible_wedge(analysis, session, following, wedge_after_s)
        if wedge is not None:
            items.append(wedge)
            _restarted_inside(session, wedge.certain and following is not None)
        else:
            items += _crash_or_reboot(analysis, session, following, crash_events)
    items.sort(key=lambda o: (o.start or "", o.session))
    # A paste: no time at all, or a few records of less than an hour say nothing of the server's level.
    span = seconds(analysis.log_start, analysis.log_end)
    excerpt = span is None or (stream.accounting.records < LEVEL_EVIDENCE_RECORDS and span < EXCERPT_SPAN_S)
    return Outages(items, traffic, wedge_after_s=wedge_after_s, excerpt=excerpt)


def _restarted_inside(session: Session, restarted: bool) -> None:
    """A lifetime that ended inside a wedge, replaced with no crash evidence, was killed and
    restarted: it did not crash (a penalty box's lifetime is named so by its dead window's end)."""
    if restarted and session.end_reason == "crash" and not _crash_evidence(session):
        session.end_reason = "restart"


def _crash_evidence(session: Session) -> list[Event]:
    return [ev for ev in session.events if ev.kind in CRASH_KINDS]


def _next_start(following: Session | None) -> tuple[str | None, bool, str | None]:
    """Where the next lifetime starts: (time, exact, after) — the end of an outage that lasts to it."""
    if following is None:
        return None, False, None
    return following.start, following.start_exact, following.start_after


def _ending_at_next_start(
    kind: OutageKind,
    session: Session,
    following: Session | None,
    start: str | None,
    start_exact: bool,
    open_until: str | None,
) -> Outage:
    """An outage from ``start`` to the next start (its bounds), or, with no next start, open and
    proven to last until ``open_until`` (the end of the log for a wedge; nothing more for an exit)."""
    end, end_exact, end_after = _next_start(following)
    if following is None:
        end_after = max((t for t in (open_until, start) if t), default=None)
    elif not end_exact:
        end_after = end_after or start
    next_session = following.index if following is not None else None
    return Outage(
        kind=kind,
        session=session.index,
        start=start,
        start_exact=start_exact,
        end=end,
        end_exact=end_exact,
        end_after=end_after,
        next_session=next_session,
    )


def _where(event: Event) -> tuple[str, int, str | None]:
    return event.source, event.line, event.time


def _penalty_boxes(analysis: Analysis) -> Iterable[Outage]:
    """The dead-engine windows, as outages (their own JSON stays as it was)."""
    for index, window in enumerate(analysis.dead_windows):
        fault = next(i for i, f in enumerate(analysis.faults) if f.dead_window == index)
        outage = Outage(
            kind="penalty_box",
            session=window.session,
            start=window.start,
            start_exact=True,
            end=window.end,
            end_exact=window.end_exact,
            end_after=window.proven_end,
            evidence=[_where(analysis.faults[fault].penalty_record)],
            fault=fault,
            dead_window=index,
        )
        if not window.end_exact:
            outage.hidden.append("end_time")
        yield outage


def _fatal_exits(
    analysis: Analysis, session: Session, following: Session | None, crash_events: list[Event]
) -> Iterable[Outage]:
    """A fatal exit ends its lifetime: the outage is the restart gap, from the exit to the next start."""
    for event in session.events:
        if event.kind != "process_exit" or event.fields.get("reason") != "fatal_exit":
            continue
        outage = _ending_at_next_start(
            "fatal_exit", session, following, event.time or event.prev_time, event.time is not None, None
        )
        # A traceback out of the CLI's main() as it started (stream/starts.py), else oMLX's stated reason.
        outage.reason = AT_START if event.fields.get("at_start") else fatal_reason(event.fields.get("reason_text"))
        outage.evidence.append(_where(event))
        outage.crash = crash_events.index(event)
        outage.fault = next(
            (
                i
                for i, f in enumerate(analysis.faults)
                if f.session == session.index and f.outcome == "fatal_exit" and f.records[-1].line <= event.line
            ),
            None,
        )
        outage.hidden.append("wired_memory")
        if not outage.end_exact:
            outage.hidden.append("restart_time")
        yield outage


def _crash_or_reboot(
    analysis: Analysis, session: Session, following: Session | None, crash_events: list[Event]
) -> Iterable[Outage]:
    """A lifetime that crashed: a reboot when a kernel panic report is in it, else a crash (a fatal
    exit is its own outage)."""
    if session.end_reason != "crash":
        return
    evidence = _crash_evidence(session)
    panic = next((ev for ev in evidence if ev.kind == "kernel_panic"), None)
    shown = panic or next((ev for ev in reversed(evidence)), None)
    exact = shown is not None and shown.time is not None
    start = shown.time if shown is not None and exact else session.end  # else: it died after its last record
    outage = _ending_at_next_start("reboot" if panic else "crash", session, following, start, exact, None)
    if shown is not None:
        outage.evidence.append(_where(shown))
        outage.crash = crash_events.index(shown)
    elif following is not None and following.source is not None and following.line is not None:
        outage.evidence.append((following.source, following.line, following.start))
    if not exact:
        outage.hidden.append("panic_time" if panic else "crash_time")
    yield outage


_LOOP_ERROR_KINDS: frozenset[EventKind] = frozenset({"gpu_error", "error"})  # what an engine loop error is read as


def _retry_loops(session: Session) -> Iterable[Outage]:
    """The same engine-loop error text again and again, each soon after the one before, with no
    SubmissionsIgnored among or between them (a penalty box repeats too, but is its own outage; at
    WARNING level lifetimes merge, so one seen later in the "lifetime" says nothing of the loop)."""
    ignored = [ev.time for ev in session.events if ev.kind == "gpu_error" and ev.time and shows_penalty_box(ev)]
    runs: dict[str, list[Event]] = {}
    found: list[list[Event]] = []
    for event in session.events:
        if event.time is None or event.kind not in _LOOP_ERROR_KINDS:
            continue
        if not event.message.startswith(ENGINE_LOOP_ERROR):
            continue
        text = event.message.splitlines()[0][len(ENGINE_LOOP_ERROR) :].strip()
        run = runs.get(text)
        gap = seconds(run[-1].time, event.time) if run else None
        if run is not None and gap is not None and gap <= RETRY_LOOP_GAP_S:
            run.append(event)
            continue
        if run is not None and len(run) >= RETRY_LOOP_MIN:
            found.append(run)
        runs[text] = [event]
    found += [run for run in runs.values() if len(run) >= RETRY_LOOP_MIN]
    for run in found:
        if any(str(run[0].time) <= moment <= str(run[-1].time) for moment in ignored):
            continue
        outage = Outage(
            kind="retry_loop",
            session=session.index,
            start=run[0].time,
            start_exact=True,
            end=run[-1].time,
            end_exact=True,
            end_after=run[-1].time,
        )
        outage.reason = run[0].message.splitlines()[0][len(ENGINE_LOOP_ERROR) :].strip()
        outage.repeats = len(run)
        outage.evidence = [_where(run[0]), _where(run[-1])]
        outage.hidden.append("loop_cause")
        yield outage


def _last_settled(analysis: Analysis, session: Session, until: str | None) -> str | None:
    """When a request last finished, aborted or failed in ``session`` (before ``until``)."""
    begins = session.start_after or session.start
    finished = analysis.requests.last_between(begins, until)
    settled = [ev.time for ev in session.events if ev.kind in SETTLING_KINDS and ev.time]
    return max((t for t in (finished, *settled) if t), default=None)


def _window_end(analysis: Analysis, following: Session | None) -> str | None:
    if following is not None:
        return following.start_after or following.start
    return analysis.log_end


class _Arrivals:
    """The arrivals in time order (untimed ones left out), for slices by time: a bisect on the
    times, and the forms as bytes (one code a row), which ``bytes.count`` and ``find`` search at
    memory speed, without a Python object per row."""

    def __init__(self, arrivals: Dense) -> None:
        arrivals = timed_in_order(arrivals)
        self.times = arrivals.ints("time")
        self.forms = arrivals.ints("form").tobytes()
        self.sources = arrivals.ints("source")
        self.lines = arrivals.ints("line")

    def at_or_after(self, stamp: str) -> int:
        """The first row timed at or after ``stamp`` (compared at the ms the times have)."""
        return bisect.bisect_left(self.times, ms_of(datetime.fromisoformat(stamp)))

    def after(self, stamp: str, lo: int, hi: int) -> int:
        """The first row in ``[lo, hi)`` timed after ``stamp``."""
        return bisect.bisect_right(self.times, ms_of(datetime.fromisoformat(stamp)), lo, hi)

    def where(self, row: int) -> tuple[int, int, str]:
        return self.sources[row], self.lines[row], stamp_of(moment_of(self.times[row]))


def _wedge(
    analysis: Analysis, session: Session, following: Session | None, arrivals: _Arrivals, wedge_after_s: float
) -> Outage | None:
    """At DEBUG or TRACE: requests keep arriving and none finishes, aborts or fails for longer than
    ``wedge_after_s``, from the last finished request to the next start (or the end of the log, the
    arrivals at that end included: a live log's newest line may be the one that shows the wedge)."""
    if any(w.session == session.index for w in analysis.dead_windows) or session.end_reason == "fatal_exit":
        return None
    until = _window_end(analysis, following)
    begins = session.start_after or session.start
    if until is None or begins is None:
        return None
    last = _last_settled(analysis, session, until) or begins
    silence = seconds(last, until)
    if silence is None or silence <= wedge_after_s:
        return None
    lo = arrivals.at_or_after(begins)  # the arrivals at or after ``begins`` and before the next start
    hi = max(lo, arrivals.at_or_after(until) if following is not None else len(arrivals.times))
    start = arrivals.after(last, lo, hi)
    counted = _arrivals_counted(arrivals, lo, start, hi, session.requests_completed or 0)
    if counted is None:
        return None
    codes, unfinished, later = counted
    if later < WEDGE_MIN_UNFINISHED - 1 or unfinished < WEDGE_MIN_UNFINISHED:
        return None
    outage = _ending_at_next_start("wedge", session, following, last, True, analysis.log_end)
    outage.unfinished_requests = unfinished
    names = [s.name for s in analysis.stream.sources]
    first = min(found for code in codes if (found := arrivals.forms.find(code, start, hi)) >= 0)
    final = max(arrivals.forms.rfind(code, start, hi) for code in codes)
    ends = (arrivals.where(first), arrivals.where(final))
    outage.evidence = [(names[source], line, stamp) for source, line, stamp in ends]
    outage.hidden.append("why_stalled")
    return outage


def _arrivals_counted(
    arrivals: _Arrivals, lo: int, start: int, hi: int, completed: int
) -> tuple[list[bytes], int, int] | None:
    """The requests the arrivals of the rows ``[lo, hi)`` show unfinished: the codes of the set that
    counts the most, how many did not finish (at least those of the rows ``[start, hi)``, after the
    last settled request; for the scheduler's set also all it added, less the ``completed``) and how
    many arrived after ``start``. None when the rows hold no arrival."""
    forms = arrivals.forms
    for tier in ((SCHEDULER_ARRIVALS, ENDPOINT_ARRIVALS), (FALLBACK_ARRIVALS,)):
        counts = []
        for names in tier:
            codes = [bytes((form_code(name),)) for name in names]
            if any(forms.find(code, lo, hi) >= 0 for code in codes):
                later = sum(forms.count(code, start, hi) for code in codes)
                added = sum(forms.count(code, lo, hi) for code in codes) if names is SCHEDULER_ARRIVALS else 0
                counts.append((max(later, added - completed), later, codes))
        if counts:
            unfinished, later, codes = max(counts, key=lambda count: count[:2])
            return codes, unfinished, later
    return None


def _possible_wedge(
    analysis: Analysis, session: Session, following: Session | None, wedge_after_s: float
) -> Outage | None:
    """At INFO: a lifetime whose steady traffic stops, then nothing finishes until it is replaced
    with no orderly stop, or with a stop its engine's teardown never joined (``_stop_held``). The log
    level cannot tell this from an idle server, so it is only possible; a silence that traffic, an
    orderly stop or the log's end closes is a quiet night, not a wedge."""
    if following is None or _crash_evidence(session):
        return None
    if session.end_reason not in ("crash", "restart") and not (
        session.end_reason == "shutdown" and _stop_held(session)
    ):
        return None
    if any(w.session == session.index for w in analysis.dead_windows):
        return None
    until = _window_end(analysis, following)
    last = _last_settled(analysis, session, until)
    silence = seconds(last, until)
    if last is None or silence is None or silence <= wedge_after_s:
        return None
    moment = datetime.fromisoformat(last)
    earliest = max(moment - timedelta(seconds=TRAFFIC_BEFORE_S), datetime.fromisoformat(session.start or last))
    times = [row[2] for row in analysis.requests.between(earliest, moment)]
    if len(times) < TRAFFIC_MIN_COMPLETIONS:
        return None
    longest = max((b - a).total_seconds() for a, b in itertools.pairwise(times))
    if silence <= SILENCE_FACTOR * longest:
        return None
    outage = _ending_at_next_start("wedge", session, following, last, True, analysis.log_end)
    outage.certain = False
    outage.longest_gap_s = longest
    outage.completions_before = len(times)
    outage.hidden.append("arrivals_hidden")
    if session.source is not None:
        final = analysis.requests.between(moment, moment)
        if final:
            outage.evidence.append((analysis.requests.names[final[-1][0]], final[-1][1], last))
    return outage


def _stop_held(session: Session) -> bool:
    """Whether the lifetime's stop began and then waited on a held MLX executor: after its last
    ENGINE_LOOP_STOPPED line it wrote no more of the stop (no engine teardown, no stop's end)."""
    stopped = [
        i
        for i, ev in enumerate(session.events)
        if ev.kind == "engine_stop" and ev.message.startswith(ENGINE_LOOP_STOPPED)
    ]
    return bool(stopped) and not any(ev.kind in _STOP_KINDS for ev in session.events[stopped[-1] + 1 :])
