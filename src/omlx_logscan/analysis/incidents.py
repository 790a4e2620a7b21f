"""Incidents: every kind of trouble the log tells, one list, worst first.

The escalation tells GPU faults, the outages tell what kept oMLX from serving, the errors group the
failed records; this list puts them side by side, ranked by ``analysis/severity.py``'s rule, so
that the summary can lead with the worst and ``check`` can fail on a severity. Each item is one kind
and one message (its template): how many, when, in which sessions, and the first record as an
example. Two kinds count otherwise:

- ``rejected`` and ``aborted`` count requests, not records. A request oMLX tells of in several
  messages (``[stream_generate] Aborting request <id>`` then ``Prefill interrupted at …: 1
  request(s) aborted``) is counted once, in the item of its first message; the others are its
  detail. A record with no request id belongs to the request told just before it (``DETAIL_S``).
- ``memory_pressure`` counts episodes: from the first sign of pressure to the level's return to
  ``ok``, a quiet of ``PRESSURE_QUIET_S`` or the end of its session, each with its worst level and
  the figures its records give, in the item of its first message.

(``results.Incident`` is one GPU fault, the escalation's unit; here a fault is one of many kinds.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from omlx_logscan.analysis.failures import http_status, template_of
from omlx_logscan.analysis.severity import (
    SEVERITIES,
    IncidentKind,
    Severity,
    entry_kind,
    entry_severity,
    kind_severity,
    status_kind,
    unmatched_severity,
)
from omlx_logscan.analysis.trouble import Trouble
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import CRASH_KINDS
from omlx_logscan.parsing.lexicon import lexicon
from omlx_logscan.timeutil import seconds

if TYPE_CHECKING:
    from omlx_logscan.analysis.results import Analysis, Incident, Session

# What each kind of crash evidence is, in words (the timeline's crash part says the same).
EVIDENCE_WORDS: Final[dict[str, str]] = {
    "kernel_panic": "macOS kernel panic",
    "crash_report": "macOS crash report",
    "faulthandler_dump": "Python fatal error (faulthandler)",
    "process_exit": "process exit",
}
ABORT_WORDS: Final = "uncaught C++ exception (C++ runtime abort)"

AT_START: Final = "exited at start: a traceback through oMLX's CLI main()"
PENALTY_BOX: Final = "GPU penalty box: the driver ignored the process's submissions until a restart"
UNKNOWN_OUTCOME: Final = "Metal error, outcome unknown"
WEDGE: Final = "wedge: requests arrived, none finished"
# A process that ended so with no record saying it (its last record is the example).
UNSEEN_END: Final = {
    "crash": "the process ended with no orderly stop; the next one started",
    "fatal_exit": "the process exited at start",
}
POSSIBLE_WEDGE: Final = "possible wedge: no request finished for a long while"

PRESSURE_QUIET_S: Final = 600.0  # pressure records further apart than this are two episodes
DETAIL_S: Final = 2.0  # a record of a refused or aborted request with no id this close after one is its detail

# The event kinds that are an incident kind whatever message wrote them (a message the lexicon does
# not know, or a line that matches a catalog row only).
_EVENT_KINDS: Final[dict[str, IncidentKind]] = {
    "model_load_failed": "load_failure",
    "memory_pressure": "memory_pressure",
    "request_abort": "aborted",
    "request_error": "error",
}
_ADMISSION: Final = "admission"  # the catalog's tag of a request refused before any work (stage)

# oMLX's own words of memory pressure that the catalog types as something else or not at all: part of
# the episode they are written in (engine_pool.py ``_unload_engine``: the settle barrier after an
# eviction; scheduler.py ``_raise_prefill_eviction_if_available``; engine_core.py: no idle model to
# evict, so the scheduler throttles).
PRESSURE_WORDS: Final = ("Settle barrier timed out", "needs prefill headroom", "fall back to throttling")

# Pressure levels, mildest first (process_memory_enforcer.py's levels). A record naming none is soft.
PRESSURE_LEVELS: Final = ("ok", "soft", "hard", "emergency")
_TAG_LEVELS: Final = {
    "emergency_abort": "emergency",
    "hard_abort": "hard",
    "hard_pinned": "hard",
    "limit_exceeded": "hard",
}


def incidents_of(analysis: Analysis) -> list[Trouble]:
    """Every incident of the analysis, worst first; among equals, the first to happen first."""
    items = [
        *_faults(analysis.faults),
        *_dead_engines(analysis),
        *_ends(analysis),
        *_wedges(analysis),
        *_records(analysis.sessions),
    ]
    order = {id(item): position for position, item in enumerate(items)}
    return sorted(items, key=lambda item: (SEVERITIES.index(item.severity), item.first or "~", order[id(item)]))


def worst(items: Iterable[Trouble]) -> Severity | None:
    """The worst severity among ``items`` (None for none)."""
    return min((item.severity for item in items), key=SEVERITIES.index, default=None)


class _Items:
    """Items by (kind, template), in the order each first appears."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], Trouble] = {}

    def get(self, kind: IncidentKind, template: str, example: Event, severity: Severity | None = None) -> Trouble:
        key = (kind, template)
        if key not in self.items:
            self.items[key] = Trouble(kind, severity or kind_severity(kind), template, example)
        return self.items[key]


def _faults(faults: list[Incident]) -> list[Trouble]:
    """GPU faults the process absorbed or whose end the log does not show, by their Metal codes (a
    penalty box, a crash or a fatal exit is the incident of what it became)."""
    items = _Items()
    for fault in faults:
        if fault.outcome not in ("absorbed", "unknown"):
            continue
        codes = " → ".join(fault.code_names) or fault.kind
        unread = fault.outcome == "unknown"
        template = f"{UNKNOWN_OUTCOME} ({codes})" if unread else f"GPU fault {codes}, absorbed"
        item = items.get("gpu_fault", template, fault.first)
        item.add(fault.first, fault.session)
    return list(items.items.values())


def _dead_engines(analysis: Analysis) -> list[Trouble]:
    openers = {fault.dead_window: fault for fault in analysis.faults if fault.dead_window is not None}
    items = _Items()
    for index, window in enumerate(analysis.dead_windows):
        opener = openers.get(index)
        if opener is None:
            continue
        item = items.get("dead_engine", PENALTY_BOX, opener.penalty_record)
        item.add(opener.penalty_record, window.session)
    return list(items.items.values())


def _ends(analysis: Analysis) -> list[Trouble]:
    """Crashes, fatal exits and reboots: the crash evidence, and the faults that ended a process."""
    items = _Items()
    session_of = {_place(ev): session.index for session in analysis.sessions for ev in session.events}
    ended: dict[tuple[str, int], Trouble] = {}  # (kind, session) -> the fault's item that ended it so
    for fault in analysis.faults:
        if fault.outcome in ("crash", "fatal_exit"):
            codes = " → ".join(fault.code_names) or fault.kind
            item = items.get(fault.outcome, f"GPU fault {codes} ended the process", fault.first)
            item.add(fault.first, fault.session)
            ended[(fault.outcome, fault.session)] = item
    for event in analysis.crash_evidence():
        kind: IncidentKind = "crash"
        words = EVIDENCE_WORDS[event.kind]
        if event.kind == "kernel_panic":
            kind = "reboot"
        elif event.kind == "process_exit" and event.fields.get("at_start"):
            kind, words = "fatal_exit", f"{AT_START}: {template_of(event).text}"
        elif event.kind == "process_exit" and event.fields.get("reason") == "fatal_exit":
            kind, words = "fatal_exit", template_of(event).text
        elif event.kind == "process_exit":
            words = ABORT_WORDS
        number = session_of.get(_place(event))
        by_fault = ended.get((kind, number)) if number is not None else None
        if by_fault is not None:  # the end of a process a fault ended: that fault's detail
            by_fault.add(event, number, counted=False)
        else:
            items.get(kind, words, event).add(event, number)
    for session in analysis.sessions:  # ended so with no record of it (a startup crash's traceback)
        if session.end_reason in ("crash", "fatal_exit") and not any(
            session.index in item.sessions for item in items.items.values() if item.kind == session.end_reason
        ):
            last = session.events[-1] if session.events else None
            if last is not None:
                items.get(session.end_reason, UNSEEN_END[session.end_reason], last).add(last, session.index)
    return list(items.items.values())


def _place(event: Event) -> tuple[str, int, str]:
    """Where a record is and what: the same record in the stream and in its session."""
    return event.source, event.line, event.kind


def _wedges(analysis: Analysis) -> list[Trouble]:
    items = _Items()
    sessions = {session.index: session for session in analysis.sessions}
    for outage in analysis.outages.items:
        session = sessions.get(outage.session)
        if outage.kind != "wedge" or session is None or not session.events:
            continue
        # Its example: the first record at or after its start (the arrivals it rests on are rows, not records).
        example = next((ev for ev in session.events if outage.start and ev.sort_time >= outage.start), None)
        example = example or session.events[-1]
        template = WEDGE if outage.certain else POSSIBLE_WEDGE
        item = items.get("wedge", template, example, kind_severity("wedge", outage.certain))
        item.add(example, outage.session, when=outage.start)
    return list(items.items.values())


def record_kind(event: Event) -> tuple[IncidentKind, Severity] | None:
    """The incident kind and severity of one record that is neither a GPU fault nor crash evidence:
    the HTTP status in its line, its message's kind and severity (the lexicon), its event kind, or
    its level (a record at ERROR or CRITICAL that no message of oMLX's matches); None for none."""
    if event.kind == "gpu_error" or event.kind in CRASH_KINDS:
        return None
    status = http_status(event)
    if status is not None:
        answered = status_kind(status)
        return answered, kind_severity(answered)
    entry = lexicon().entry(event.entry) if event.entry is not None else None
    kind = entry_kind(entry) if entry is not None else None
    severity = entry_severity(entry) if entry is not None else None
    if kind is None and any(words in event.message for words in PRESSURE_WORDS):
        kind = "memory_pressure"
    if kind is None and event.kind in _EVENT_KINDS:
        kind = _EVENT_KINDS[event.kind]
        if kind == "error" and event.fields.get("stage") == _ADMISSION:
            kind = "rejected"
    if kind is not None:
        return kind, kind_severity(kind) if severity is None or kind != "error" else severity
    if entry is None:
        severity = unmatched_severity(event.level) or ("error" if "traceback" in event.fields else None)
    if severity in ("critical", "error"):
        return "error", severity
    return None  # a warning the code recovered from, a notice of flow control, routine


def _records(sessions: list[Session]) -> list[Trouble]:
    """The incidents told by records: errors, failed loads, refusals, aborts, fallbacks, pressure."""
    items = _Items()
    for session in sessions:
        told: dict[str, Trouble] = {}  # request id -> the item its first message counts it in
        last: dict[IncidentKind, tuple[Event, Trouble]] = {}
        pressure: list[Event] = []
        for event in session.events:
            found = record_kind(event)
            if found is None:
                continue
            kind, severity = found
            if kind == "memory_pressure":
                if pressure and not _same_episode(pressure[-1], event):
                    _episode(items, pressure, session.index)
                    pressure = []
                pressure.append(event)
                continue
            if kind in ("rejected", "aborted") and _detail(event, told, last.get(kind), session.index):
                continue
            item = items.get(kind, template_of(event).text, event, severity)
            item.add(event, session.index)
            last[kind] = (event, item)
            request = event.fields.get("request_id")
            if isinstance(request, str):
                told[request] = item
        _episode(items, pressure, session.index)
    return list(items.items.values())


def _detail(event: Event, told: dict[str, Trouble], before: tuple[Event, Trouble] | None, session: int) -> bool:
    """Whether ``event`` tells of a request already counted (its id; or no id, another message just
    after one: the same message again, or another HTTP answer, is another request), and adds it to
    that request's item as detail."""
    request = event.fields.get("request_id")
    item = told.get(request) if isinstance(request, str) else None
    if item is None and request is None and before is not None and _close(before[0], event):
        answers = http_status(before[0]) is not None and http_status(event) is not None  # each its own request
        item = before[1] if template_of(before[0]) != template_of(event) and not answers else None
    if item is None:
        return False
    item.add(event, session, counted=False)
    return True


def _close(before: Event, event: Event) -> bool:
    gap = seconds(before.time, event.time)
    return gap is not None and 0 <= gap <= DETAIL_S


def _same_episode(before: Event, event: Event) -> bool:
    """Whether ``event`` goes on the episode ``before`` is in: that one did not return to ``ok`` and
    no long quiet lies between them (times the log does not state keep them together)."""
    if _level(before) == "ok":
        return False
    gap = seconds(before.time, event.time)
    return gap is None or gap <= PRESSURE_QUIET_S


def _level(event: Event) -> str | None:
    """The pressure level a record says oMLX is at (a level change's new level), else its tag's."""
    to_level = event.fields.get("to_level")
    if isinstance(to_level, str):
        return to_level.lower()
    return _TAG_LEVELS.get(str(event.fields.get("action")))


def _episode(items: _Items, records: list[Event], session: int) -> None:
    """One episode of pressure records (the last may be the return to ``ok``), in the item of its
    first message; none when all they show is a level already ``ok``."""
    levels = [level for ev in records if (level := _level(ev)) in PRESSURE_LEVELS]
    if not records or (levels and all(level == "ok" for level in levels)):
        return
    worst_level = max(levels or ["soft"], key=PRESSURE_LEVELS.index)
    first = records[0]
    item = items.get("memory_pressure", template_of(first).text, first)
    for event in records:
        item.add(event, session, counted=False)
    times = [t for ev in records if (t := ev.time or ev.time_of_day)]
    item.count += 1
    item.times += times[:1] + times[-1:]
    item.episodes.append(
        {
            "start": times[0] if times else None,
            "end": times[-1] if times and _level(records[-1]) == "ok" else None,
            "worst_level": "soft" if worst_level == "ok" else worst_level,
            "records": len(records),
            "figures": _figures(records),
        }
    )


def _figures(records: list[Event]) -> dict[str, float]:
    """The figures the episode's records give: each ``…_gb`` figure at its highest, requests aborted in all."""
    figures: dict[str, float] = {}
    for event in records:
        for name, value in event.fields.items():
            if isinstance(value, str) and value.upper().endswith("GB") and not name.endswith("_gb"):
                name, value = f"{name}_gb", value[:-2].strip()  # ``freed=3.10GB``
            number = _number(value)
            if number is None:
                continue
            if name.endswith("_gb"):
                figures[name] = max(figures.get(name, number), number)
            elif name == "aborted":
                figures[name] = figures.get(name, 0.0) + number
    return dict(sorted(figures.items()))


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None
