"""The incidents in words: the *Incidents* part of the text, Markdown and report timelines and the
summary's opening sentence, which leads with the worst and names every kind that happened."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Final

from omlx_logscan.analysis.severity import IncidentKind
from omlx_logscan.analysis.trouble import Trouble
from omlx_logscan.output.failures import sessions_phrase
from omlx_logscan.output.markup import fence_for, fit_code
from omlx_logscan.output.report_blocks import Part, ReportBlock
from omlx_logscan.timeutil import human_time

INCIDENTS_TITLE: Final = "Incidents"

# Each kind in words, one of it (``2 × dead engine``).
KIND_WORDS: Final[dict[IncidentKind, str]] = {
    "gpu_fault": "GPU fault",
    "crash": "crash",
    "fatal_exit": "fatal exit",
    "reboot": "reboot (kernel panic)",
    "dead_engine": "dead engine (penalty box)",
    "wedge": "wedge",
    "error": "error",
    "load_failure": "failed model load",
    "rejected": "rejected request",
    "memory_pressure": "memory-pressure episode",
    "aborted": "aborted request",
    "fallback": "fallback to a degraded path",
}


def span_phrase(item: Trouble) -> str:
    """``2026-09-15 22:20:21``, ``first … last`` (the end's date only when it is another day), or untimed."""
    first, last = item.first, item.last
    if first is None or last is None:
        return "untimed"
    if "T" not in first:  # times of day of a log without dates
        return f"{first[:8]}{'' if first[:8] == last[:8] else f' … {last[:8]}'} (date unknown)"
    start, end = human_time(first), human_time(last)
    if start == end:
        return start
    return f"{start} … {end[11:] if end[:10] == start[:10] else end}"


def incident_line(item: Trouble, sessions: int, quote: Callable[[str], str] = str) -> str:
    """One incident: severity, kind, how many, its message (the log's words through ``quote``), where, when."""
    counted = f"{item.count} × " if item.count != 1 else ""
    where = sessions_phrase(sorted(item.sessions), sessions) if item.sessions else "in no session"
    worst = [episode["worst_level"] for episode in item.episodes]
    levels = f"; worst level {max(worst, key=_PRESSURE_ORDER.index)}" if worst else ""
    return (
        f"{item.severity:<8}  {item.kind:<15}  {counted}{quote(item.template)}  ({where}; {span_phrase(item)}{levels})"
    )


_PRESSURE_ORDER: Final = ("ok", "soft", "hard", "emergency")


def incident_lines(items: list[Trouble], sessions: int, quote: Callable[[str], str] = str) -> list[str]:
    """The part's lines, worst first (the list's order)."""
    return [incident_line(item, sessions, quote) for item in items]


def incidents_sentence(items: list[Trouble], sessions: int, quote: Callable[[str], str] = str) -> str:
    """``Worst: critical, 2 × GPU penalty box … (sessions 157, 159). In all: 2 × dead engine, …`` — the
    summary's opening, or nothing when the log shows no incident."""
    if not items:
        return ""
    worst = items[0]
    counts: Counter[IncidentKind] = Counter()
    for item in items:
        counts[item.kind] += item.count
    ranked = dict.fromkeys(item.kind for item in items)  # each kind where its worst item comes
    kinds = ", ".join(f"{counts[kind]} × {KIND_WORDS[kind]}" for kind in ranked)
    return (
        f"Worst: {worst.severity}, {worst.count} × {quote(worst.template)} "
        f"({sessions_phrase(sorted(worst.sessions), sessions) if worst.sessions else 'in no session'}). "
        f"Every kind of trouble: {kinds}."
    )


def incidents_markdown(items: list[Trouble], sessions: int) -> list[str]:
    """The *Incidents* section of the Markdown timeline (the log's words in a code block), or nothing."""
    if not items:
        return []
    lines = fit_code(incident_lines(items, sessions))
    fence = fence_for(lines)
    return ["", f"### {INCIDENTS_TITLE}", "", fence, *lines, fence]


def incidents_report(items: list[Trouble], sessions: int, quote: Callable[[str], str]) -> list[Part]:
    """The report's *Incidents* section, a block whose last items can be cut to fit; log text through ``quote``."""
    if not items:
        return []
    rows = fit_code(incident_lines(items, sessions, quote))
    fence = fence_for(rows)
    block = ReportBlock(
        "incidents", [fence], rows, [fence], lambda n: f"… {n} incidents cut here", "`logscan timeline`"
    )
    return [f"### {INCIDENTS_TITLE}", "", block]
