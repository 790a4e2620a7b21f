"""The report's Mermaid gantt chart of process lifetimes and faults."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import timedelta

from omlx_logscan.analysis.model import Analysis, DeadWindow, Incident, Session
from omlx_logscan.analysis.outage_model import Outage
from omlx_logscan.output.blocks import Part, ReportBlock
from omlx_logscan.output.outages import outage_title
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
    outages: defaultdict[int, list[Outage]] = defaultdict(list)
    for outage in analysis.outages.items:
        if outage.kind != "penalty_box":  # drawn as its dead window
            outages[outage.session].append(outage)
    shown = [s for s in analysis.sessions if s.index in faults or s.index in windows or s.index in outages]
    out: list[Part] = ["### Timeline chart", ""]
    hidden = len(analysis.sessions) - len(shown)
    if not shown:
        return [
            *out,
            f"No process had a GPU fault, so there is nothing to chart ({hidden} lifetime(s) in the log).",
            "",
        ]
    intro = f"The chart shows the {len(shown)} process lifetime(s) with a GPU fault, a dead-engine window or an outage"
    intro += f"; the other {hidden} are left out so that it stays readable." if hidden else "."
    if any(len(faults[s.index]) > GANTT_MAX_FAULTS for s in shown):
        half = GANTT_MAX_FAULTS // 2
        intro += f" A process with more than {GANTT_MAX_FAULTS} faults shows its first and last {half}."
    sections = [
        _gantt_section(s, faults[s.index], windows.get(s.index), os_versions.get(s.index), outages[s.index])
        for s in shown
    ]
    rows = [section for section in sections if section is not None]
    if len(rows) < len(sections):
        intro += f" {len(sections) - len(rows)} of them have no timestamp to place them by and are not drawn."
    if not rows:
        return [*out, intro, ""]
    out += [intro, ""]
    chart = ReportBlock(
        "charted processes",
        [
            "```mermaid",
            "gantt",
            "    title oMLX processes, GPU faults and dead-engine windows",
            "    dateFormat YYYY-MM-DDTHH:mm:ss",
            "    axisFormat %m-%d %H:%M",
        ],
        rows,
        ["```"],
        lambda n: f"    %% … {n} processes not drawn here",
        "`logscan sessions`",
    )
    chart.cap(GANTT_MAX_PROCESSES, READABLE_REASON)
    out.append(chart)
    return out


def _task(name: str, tags: str, start: str, end: str) -> str:
    return f"    {_MERMAID_UNSAFE.sub(' ', name)} :{tags}{start}, {end}"


def _gantt_section(
    session: Session,
    faults: list[Incident],
    window: DeadWindow | None,
    os_version: str | None,
    outages: list[Outage] | None = None,
) -> str | None:
    """One process in the chart: its lifetime, its faults as milestones, its dead window and its
    other outages as bars (None if untimed)."""
    bars = [(o, o.start, o.end or o.end_after) for o in outages or [] if o.start and (o.end or o.end_after)]
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
        f"    section Process {session.index}" + (f" (macOS {os_version})" if os_version else ""),
        _task(
            f"lifetime ({_END_REASONS.get(session.end_reason, session.end_reason)})",
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
                lines.append(f"    %% … {len(timed) - 2 * half} faults of this process not drawn here")
            continue
        label = f"{' → '.join(incident.code_names) or incident.kind} ({incident.outcome.replace('_', ' ')})"
        tags = "crit, milestone, " if incident.outcome in _SEVERE else "milestone, "
        lines.append(_task(label, tags, str(to_second(incident.time)), "0d"))
    if window is not None and window.start and dead_end:
        name = "STILL DEAD at the end of the log" if window.end_reason == "eof" else "dead engine (penalty box)"
        lines.append(_task(name, "crit, ", str(to_second(window.start)), str(to_second(dead_end))))
    for outage, begins, ends in bars:
        if ends is not None and begins is not None and ends > begins:
            lines.append(_task(outage_title(outage), "crit, ", str(to_second(begins)), str(to_second(ends))))
    return "\n".join(lines)
