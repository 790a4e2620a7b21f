"""The Mermaid gantt charts of sessions and faults (report and ``timeline -f markdown``).

Each chart must read at the width of a GitHub comment (about 760 px) whatever the log's span:
lifetimes whose faults lie more than a day apart go into charts of their own, so hour-long bars
do not shrink to a pixel in a chart of weeks; the axis labels and tick interval are chosen from
the chart's span so that labels never run together; a lifetime that lasted far longer than its
faults is drawn only around them (its label says when it really began or ended); Mermaid's
"today" line, which would mark the reader's date, is off.

A chart is a list of lanes (one per process) of bars; each bar has a kind from ``BAR_KINDS``, so a
new kind of bar is one entry there and the code that makes its bars.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from omlx_logscan.analysis.outage_model import Outage
from omlx_logscan.analysis.results import Analysis, DeadWindow, Incident, Outcome, Session, SessionEnd
from omlx_logscan.output.outages import outage_title
from omlx_logscan.output.phrases import plural
from omlx_logscan.output.report_blocks import Part, ReportBlock
from omlx_logscan.timeutil import parse

_END_REASONS: dict[SessionEnd, str] = {
    "eof": "runs to the end of the log",
    "restart": "ended by a restart",
    "crash": "crashed",
    "shutdown": "stopped in order",
    "fatal_exit": "exited for a restart",
}


_SEVERE: frozenset[Outcome] = frozenset({"penalty_box", "crash", "fatal_exit"})


BarKind = Literal["lifetime", "fault", "severe_fault", "dead", "outage"]


BAR_KINDS: dict[BarKind, str] = {  # kind: Mermaid task tags; a kind without an end time is drawn as a milestone
    "lifetime": "",
    "fault": "milestone, ",
    "severe_fault": "crit, milestone, ",
    "dead": "crit, ",
    "outage": "crit, ",  # a wedge, fatal exit, crash, reboot or retry loop (output/outages.py names it)
}


READABLE_REASON = "to keep the chart readable"


GANTT_MAX_PROCESSES = 24  # lanes per chart


GANTT_MAX_FAULTS = 12  # milestones per process; Mermaid also refuses diagrams over 50,000 characters


GANTT_MAX_CHARTS = 2  # charts in a report: more make a reader scroll past pictures; the rest are listed


_SEVERE_BARS: frozenset[BarKind] = frozenset({"severe_fault", "dead", "outage"})


CLUSTER_GAP = timedelta(hours=24)  # lifetimes further apart than this go into separate charts


CONTEXT = timedelta(hours=12)  # how much of a long lifetime is drawn before its first and after its last fault


MIN_SPAN = timedelta(minutes=1)


PLOT_WIDTH_PX = 590  # the time axis of a gantt rendered 760 px wide (Mermaid's default paddings take the rest)


TICK_FONT_PX = 10  # Mermaid's axis labels


EM_PER_CHAR = 0.6  # an upper bound on the width of one character of its sans-serif font


TICK_GAP_PX = 12  # room between two labels


LABEL_MAX = 52  # characters of a bar's label: with its bar it must fit the plot on one side or the other


TICKS = (  # Mermaid tickInterval words and their length in seconds, shortest first
    ("10second", 10),
    ("30second", 30),
    ("1minute", 60),
    ("5minute", 300),
    ("10minute", 600),
    ("15minute", 900),
    ("30minute", 1800),
    ("1hour", 3600),
    ("2hour", 7200),
    ("3hour", 10800),
    ("6hour", 21600),
    ("12hour", 43200),
    ("1day", 86400),
    ("2day", 172800),
    ("1week", 604800),
    ("2week", 1209600),
    ("1month", 2678400),
    ("3month", 8035200),
)


_MERMAID_UNSAFE = re.compile(r"[:;#]")


@dataclass(frozen=True)
class Bar:
    """One task of the chart: ``end`` None for a milestone."""

    kind: BarKind
    label: str
    start: datetime
    end: datetime | None = None


@dataclass(frozen=True)
class Lane:
    """One process: its section title and bars, the lifetime first; ``hidden`` milestones not drawn."""

    title: str
    bars: list[Bar]
    hidden: int = 0
    cut: bool = False  # the lifetime is drawn only around its faults

    @property
    def start(self) -> datetime:
        return min(bar.start for bar in self.bars)

    @property
    def end(self) -> datetime:
        return max(bar.end or bar.start for bar in self.bars)

    def lines(self) -> str:
        out = [f"    section {self.title}"]
        for position, bar in enumerate(self.bars):
            if self.hidden and position == 1 + GANTT_MAX_FAULTS // 2:
                out.append(f"    %% … {plural(self.hidden, 'fault')} of this session not drawn here")
            out.append(_task(bar))
        return "\n".join(out)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def _task(bar: Bar) -> str:
    label = _MERMAID_UNSAFE.sub(" ", bar.label)
    if len(label) > LABEL_MAX:
        label = label[: LABEL_MAX - 1].rstrip() + "…"
    end = _stamp(bar.end) if bar.end else "0d"
    return f"    {label} :{BAR_KINDS[bar.kind]}{_stamp(bar.start)}, {end}"


def label_chars(axis_format: str) -> int:
    """How many characters an axis label of ``axis_format`` has (every field has a fixed width)."""
    return len(datetime(2026, 12, 31, 23, 59).strftime(axis_format))


def axis(span: timedelta, one_day: bool) -> tuple[str, str]:
    """The ``axisFormat`` and ``tickInterval`` for a chart of ``span``: the shortest interval whose
    labels, at their widest, leave room between them on the plot (``one_day``: the chart lies within
    one calendar day, so the time of day alone names a tick)."""
    seconds = max(span.total_seconds(), 1.0)
    for word, length in TICKS:
        if length >= 2678400:
            label = "%Y-%m"
        elif length >= 86400:
            label = "%m-%d"
        elif length < 60:
            label = "%H:%M:%S"
        else:
            label = "%H:%M" if one_day else "%m-%d %H:%M"
        chars = label_chars(label)
        room = PLOT_WIDTH_PX * length / seconds
        if room >= chars * EM_PER_CHAR * TICK_FONT_PX + TICK_GAP_PX:
            return label, word
    return "%Y-%m", TICKS[-1][0]


def _lane(
    session: Session,
    faults: list[Incident],
    window: DeadWindow | None,
    os_version: str | None,
    outages: list[Outage] | None = None,
) -> Lane | None:
    """One process in the chart: its lifetime, its faults as milestones, its dead window and its other
    outages as bars (None if untimed)."""
    timed = [incident for incident in faults if incident.time]
    marks: list[Bar] = []
    for incident in timed:
        kind: BarKind = "severe_fault" if incident.outcome in _SEVERE else "fault"
        label = f"{' → '.join(incident.code_names) or incident.kind} ({incident.outcome.replace('_', ' ')})"
        marks.append(Bar(kind, label, parse(str(incident.time))))
    hidden = 0
    if len(marks) > GANTT_MAX_FAULTS:
        half = GANTT_MAX_FAULTS // 2
        hidden = len(marks) - 2 * half
        marks = [*marks[:half], *marks[-half:]]
    dead_end = None
    if window is not None and window.start:
        dead_end = window.end or (window.log_end if window.end_reason == "eof" else window.end_after)
        if dead_end:
            name = "STILL DEAD at the end of the log" if window.end_reason == "eof" else "dead engine (penalty box)"
            marks.append(Bar("dead", name, parse(window.start), parse(dead_end)))
    for outage in outages or []:  # only where the log places it: a crash after an unknown moment is not drawn
        ends = outage.end or outage.end_after
        if outage.start and outage.start_exact and ends and ends > outage.start:
            marks.append(Bar("outage", outage_title(outage), parse(outage.start), parse(ends)))
    times = [parse(t) for t in (session.start, session.end) if t] + [m.start for m in marks]
    times += [m.end for m in marks if m.end]
    if not times:
        return None
    lifetime, cut = _lifetime(session, min(times), max(times), marks, os_version)
    return Lane(f"Session {session.index}", [lifetime, *marks], hidden, cut)


def _lifetime(
    session: Session, start: datetime, end: datetime, marks: list[Bar], os_version: str | None
) -> tuple[Bar, bool]:
    """The lifetime bar, drawn from at most ``CONTEXT`` before the first fault to ``CONTEXT`` after the
    last, and whether it was cut; a cut lifetime names its real first and last day in the label."""
    reason = _END_REASONS[session.end_reason]
    shown_start, shown_end = start, end
    if marks:
        first, last = min(m.start for m in marks), max(m.end or m.start for m in marks)
        shown_start, shown_end = max(start, first - CONTEXT), min(end, last + CONTEXT)
    cut = (shown_start, shown_end) != (start, end)
    span = f"{start:%m-%d} → {end:%m-%d} " if cut else ""
    version = f"macOS {os_version}, " if os_version else ""
    label = f"session {span}({version}{reason})"
    return Bar("lifetime", label, shown_start, max(shown_end, shown_start + MIN_SPAN)), cut


def clusters(lanes: list[Lane]) -> list[list[Lane]]:
    """Lanes in time order, a new group wherever more than ``CLUSTER_GAP`` separates one from all before it."""
    groups: list[list[Lane]] = []
    reach = datetime.min  # the latest end in the last group, kept as it grows (not asked of it again)
    for lane in sorted(lanes, key=lambda lane: lane.start):
        if groups and lane.start - reach <= CLUSTER_GAP:
            groups[-1].append(lane)
            reach = max(reach, lane.end)
        else:
            groups.append([lane])
            reach = lane.end
    return groups


def _chart(lanes: list[Lane], number: int, count: int) -> ReportBlock:
    start, end = min(lane.start for lane in lanes), max(lane.end for lane in lanes)
    label, tick = axis(end - start, start.date() == end.date())
    title = "oMLX sessions, GPU faults and dead-engine windows"
    if count > 1:
        title += f" ({number} of {count})"
    chart = ReportBlock(
        "charted sessions",
        [
            "```mermaid",
            "gantt",
            f"    title {title}",
            "    dateFormat YYYY-MM-DDTHH:mm:ss",
            f"    axisFormat {label}",
            f"    tickInterval {tick}",
            "    todayMarker off",
        ],
        [lane.lines() for lane in lanes],
        ["```"],
        lambda n: f"    %% … {plural(n, 'session')} not drawn here",
        "`logscan sessions`",
    )
    chart.cap(GANTT_MAX_PROCESSES, READABLE_REASON)
    return chart


def gantt_chart(analysis: Analysis, os_versions: dict[int, str]) -> list[Part]:
    """The *Timeline chart* section: the lifetimes with a fault or a dead window, one chart per cluster."""
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
            f"No session had a GPU fault, so there is nothing to chart ({plural(hidden, 'session')} in the log).",
            "",
        ]
    intro = f"The chart shows the {plural(len(shown), 'session')} with a GPU fault, a dead-engine window or an outage"
    intro += f"; the other {hidden} are left out so that it stays readable." if hidden else "."
    if any(len(faults[s.index]) > GANTT_MAX_FAULTS for s in shown):
        half = GANTT_MAX_FAULTS // 2
        intro += f" A session with more than {GANTT_MAX_FAULTS} faults shows its first and last {half}."
    built = [_lane(s, faults[s.index], windows.get(s.index), os_versions.get(s.index), outages[s.index]) for s in shown]
    lanes = [lane for lane in built if lane is not None]
    if len(lanes) < len(built):
        intro += f" {len(built) - len(lanes)} of them have no timestamp to place them by and are not drawn."
    groups = clusters(lanes)
    gap = f"{CLUSTER_GAP.total_seconds() / 3600:.0f} h"
    drawn = sorted(sorted(groups, key=_weight, reverse=True)[:GANTT_MAX_CHARTS], key=lambda group: group[0].start)
    if len(groups) > len(drawn):
        intro += (
            f" Sessions more than {gap} apart form {len(groups)} groups: the {len(drawn)} with the most severe "
            "faults (the latest, where they tie) are drawn, the others are listed after the charts."
        )
    elif len(groups) > 1:
        intro += f" Sessions more than {gap} apart are drawn in separate charts ({len(groups)})."
    if any(lane.cut for lane in lanes):
        intro += f" Long sessions are drawn only {CONTEXT.total_seconds() / 3600:.0f} h around their faults."
    out += [intro, ""]
    for number, group in enumerate(drawn, start=1):
        out.append(_chart(group, number, len(drawn)))
    listed = [_group_line(group) for group in groups if not any(group is shown for shown in drawn)]
    return [*out, *([*listed, ""] if listed else [])]


def _weight(group: list[Lane]) -> tuple[int, int, datetime]:
    """How much a group of lanes matters to a reader: its severe bars, then its faults, then how late it is."""
    bars = [bar for lane in group for bar in lane.bars]
    severe = sum(1 for bar in bars if bar.kind in _SEVERE_BARS)
    faults = sum(1 for bar in bars if bar.kind in ("fault", "severe_fault")) + sum(lane.hidden for lane in group)
    return severe, faults, group[0].start


def _group_line(group: list[Lane]) -> str:
    """A group not drawn, as a bullet: when, which sessions, its faults and outages (a dead engine is one)."""
    start, end = min(lane.start for lane in group), max(lane.end for lane in group)
    bars = [bar for lane in group for bar in lane.bars]
    _, faults, _ = _weight(group)
    down = sum(1 for bar in bars if bar.kind in ("dead", "outage"))
    sessions = ", ".join(lane.title.removeprefix("Session ") for lane in group)
    what = plural(faults, "GPU fault") + (f", {plural(down, 'outage')}" if down else "")
    which = "session" if len(group) == 1 else "sessions"
    return f"- {start:%Y-%m-%d %H:%M} → {end:%Y-%m-%d %H:%M}, {which} {sessions}: {what}"
