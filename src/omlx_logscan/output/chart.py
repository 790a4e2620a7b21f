"""The report's Mermaid gantt chart of sessions and faults."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import timedelta

from omlx_logscan.analysis.model import Analysis, DeadWindow, Incident, Session
from omlx_logscan.output.blocks import Part, ReportBlock
from omlx_logscan.output.phrases import plural
from omlx_logscan.timeutil import parse, to_second

_END_REASONS = {
    "eof": "runs to the end of the log",
    "restart": "ended by a restart",
    "crash": "crashed",
    "shutdown": "stopped in order",
    "fatal_exit": "exited for a restart",
}


_SEVERE = frozenset({"penalty_box", "crash", "fatal_exit"})


READABLE_REASON = "to keep the chart readable"


GANTT_MAX_PROCESSES = 24


GANTT_MAX_FAULTS = 12  # milestones per process; Mermaid also refuses diagrams over 50,000 characters


_MERMAID_UNSAFE = re.compile(r"[:;#]")


def gantt_chart(analysis: Analysis, os_versions: dict[int, str]) -> list[Part]:
    """The report's *Timeline chart* section: the lifetimes with a fault or a dead window, in Mermaid."""
    windows = {w.session: w for w in analysis.dead_windows}
    faults: defaultdict[int, list[Incident]] = defaultdict(list)
    for incident in analysis.faults:
        faults[incident.session].append(incident)
    shown = [s for s in analysis.sessions if s.index in faults or s.index in windows]
    out: list[Part] = ["### Timeline chart", ""]
    hidden = len(analysis.sessions) - len(shown)
    if not shown:
        return [
            *out,
            f"No session had a GPU fault, so there is nothing to chart ({plural(hidden, 'session')} in the log).",
            "",
        ]
    intro = f"The chart shows the {plural(len(shown), 'session')} with a GPU fault or a dead-engine window"
    intro += f"; the other {hidden} are left out so that it stays readable." if hidden else "."
    if any(len(faults[s.index]) > GANTT_MAX_FAULTS for s in shown):
        half = GANTT_MAX_FAULTS // 2
        intro += f" A session with more than {GANTT_MAX_FAULTS} faults shows its first and last {half}."
    sections = [_gantt_section(s, faults[s.index], windows.get(s.index), os_versions.get(s.index)) for s in shown]
    rows = [section for section in sections if section is not None]
    if len(rows) < len(sections):
        intro += f" {len(sections) - len(rows)} of them have no timestamp to place them by and are not drawn."
    if not rows:
        return [*out, intro, ""]
    out += [intro, ""]
    chart = ReportBlock(
        "charted sessions",
        [
            "```mermaid",
            "gantt",
            "    title oMLX sessions, GPU faults and dead-engine windows",
            "    dateFormat YYYY-MM-DDTHH:mm:ss",
            "    axisFormat %m-%d %H:%M",
        ],
        rows,
        ["```"],
        lambda n: f"    %% … {plural(n, 'session')} not drawn here",
        "`logscan sessions`",
    )
    chart.cap(GANTT_MAX_PROCESSES, READABLE_REASON)
    out.append(chart)
    return out


def _task(name: str, tags: str, start: str, end: str) -> str:
    return f"    {_MERMAID_UNSAFE.sub(' ', name)} :{tags}{start}, {end}"


def _gantt_section(
    session: Session, faults: list[Incident], window: DeadWindow | None, os_version: str | None
) -> str | None:
    """One process in the chart: its lifetime, its faults as milestones, its dead window (None if untimed)."""
    times = [t for t in (session.start, session.end, *(f.time for f in faults)) if t]
    dead_end = None
    if window is not None and window.start:
        dead_end = window.end or (window.log_end if window.end_reason == "eof" else window.end_after)
        times += [t for t in (window.start, dead_end) if t]
    if not times:
        return None
    start, end = min(times), max(times)
    if parse(end) - parse(start) < timedelta(minutes=1):
        end = (parse(start) + timedelta(minutes=1)).isoformat()
    lines = [
        f"    section Session {session.index}" + (f" (macOS {os_version})" if os_version else ""),
        _task(
            f"session ({_END_REASONS.get(session.end_reason, session.end_reason)})",
            "",
            str(to_second(start)),
            str(to_second(end)),
        ),
    ]
    timed = [incident for incident in faults if incident.time]
    half = GANTT_MAX_FAULTS // 2
    for position, incident in enumerate(timed):
        if len(timed) > GANTT_MAX_FAULTS and half <= position < len(timed) - half:
            if position == half:
                lines.append(f"    %% … {plural(len(timed) - 2 * half, 'fault')} of this session not drawn here")
            continue
        label = f"{' → '.join(incident.code_names) or incident.kind} ({incident.outcome.replace('_', ' ')})"
        tags = "crit, milestone, " if incident.outcome in _SEVERE else "milestone, "
        lines.append(_task(label, tags, str(to_second(incident.time)), "0d"))
    if window is not None and window.start and dead_end:
        name = "STILL DEAD at the end of the log" if window.end_reason == "eof" else "dead engine (penalty box)"
        lines.append(_task(name, "crit, ", str(to_second(window.start)), str(to_second(dead_end))))
    return "\n".join(lines)
