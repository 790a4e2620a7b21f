"""GitHub Markdown of the timeline, its *Why it faulted* section and the bounds table."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, assert_never

from omlx_logscan.analysis.attribution import WhyFaulted
from omlx_logscan.analysis.results import DeadWindow
from omlx_logscan.output import sections as timeline
from omlx_logscan.output.chart import gantt_chart
from omlx_logscan.output.failures import errors_markdown
from omlx_logscan.output.incidents import incidents_markdown
from omlx_logscan.output.markup import code_block, code_span, fit_code, md_cell, md_text
from omlx_logscan.output.outages import outages_markdown
from omlx_logscan.output.phrases import (
    call_site_label,
    count_text,
    crash_line,
    dead_for,
    escalation_column,
    escalation_lines,
    escalation_os,
    level_phrase,
    signature_share,
    span_phrase,
    summary,
    window_end_phrase,
)
from omlx_logscan.output.provenance import an_upgrade, input_versions, versions_phrase
from omlx_logscan.output.report_blocks import ReportBlock
from omlx_logscan.output.why import EVIDENCE_LABEL, fault_lines, overlay_lines
from omlx_logscan.timeutil import human_time

if TYPE_CHECKING:  # the bounds and their words load with an OS history only
    from omlx_logscan.analysis.bounds import Bounds


DEAD_WINDOW_HEAD = [
    "| session | dead from | last failure | end | dead for | repeats | requests completed |",
    "|---|---|---|---|---|---|---|",
]


def dead_window_row(window: DeadWindow) -> str:
    """A row of the dead-engine table: the full date once, then times of day while the day stays the same
    (a narrow column squeezes a date onto several lines); a window still dead at the end in bold."""
    day = human_time(window.start)[:10]

    def clock(stamp: str | None) -> str:
        text = human_time(stamp)
        return text[11:] if text[:10] == day else text

    end = md_cell(window_end_phrase(window, clock))
    if window.end_reason == "eof":
        end = f"**{end}**"
    return (
        f"| {window.session} | {human_time(window.start)} | {clock(window.last_failure)} | {end} | "
        f"{dead_for(window).removeprefix('dead ')} | {window.repeats} | {count_text(window.requests_completed)} |"
    )


def bounds_markdown(bounds: Bounds) -> str:
    """The same table and sentence as GitHub Markdown, without a heading (the caller picks its level)."""
    from omlx_logscan.output.versions import bounds_heading, bounds_measures, bounds_sentence

    headings = [" / ".join(bounds_heading(row, bounds.by)) for row in bounds.rows]
    out = [f"| | {' | '.join(md_cell(h) for h in headings)} |"]
    out.append(f"|---|{'---|' * len(headings)}")
    columns = [bounds_measures(row) for row in bounds.rows]
    for position, (name, _value) in enumerate(columns[0] if columns else []):
        out.append(f"| {name.strip()} | {' | '.join(md_cell(column[position][1]) for column in columns)} |")
    out += ["", bounds_sentence(bounds), ""]
    return "\n".join(out)


def bounds_section(bounds: Bounds, *, level: int) -> str:
    """The bounds table under a *Version bounds* heading of ``level`` (2 on a page of their own, 3
    under the timeline)."""
    return f"{'#' * level} Version bounds\n\n{bounds_markdown(bounds)}"


def why_markdown(why: WhyFaulted, *, full: bool) -> list[str]:
    """The *Why it faulted* section: the fault lines in a code block (log text inside), the overlays as bullets."""
    bullets = [f"- {line}" for line in overlay_lines(why, full=full)]
    block = code_block(fit_code(fault_lines(why, full=full), quoting=EVIDENCE_LABEL))
    return ["### Why it faulted", "", *block, "", *bullets, *([""] if bullets else [])]


def timeline_markdown(sections: list[timeline.Section]) -> str:
    """The same tables as the terminal view, as GitHub Markdown; with an OS history, the version
    bounds follow, and with ``--probes`` the probes."""
    return "\n".join(line for section in sections for line in _markdown_section(section))


def _markdown_section(section: timeline.Section) -> list[str]:
    match section:
        case timeline.Heading():
            return _heading(section)
        case timeline.Escalation():
            os_line = escalation_os(section.rows)
            block = fit_code(escalation_lines(section.rows), hang=escalation_column(section.rows))
            return [
                "",
                "### Escalation",
                "",
                *([os_line, ""] if os_line else []),
                *code_block(block or ["no GPU faults"]),
            ]
        case timeline.Incidents():
            return incidents_markdown(section.items, section.sessions)
        case timeline.OtherFailures():
            return errors_markdown(section.errors)
        case timeline.Crashes():
            if not section.rows:
                return []
            return ["", "### Crash evidence", "", *code_block(fit_code(crash_line(row) for row in section.rows))]
        case timeline.DeadWindows():
            if not section.windows:
                return []
            return ["", "### Dead-engine windows", "", *DEAD_WINDOW_HEAD, *map(dead_window_row, section.windows)]
        case timeline.OutageList():
            return ["", *outages_markdown(section.outages)]  # every kind of outage: output/outages.py
        case timeline.Signatures():
            return _signatures(section)
        case timeline.Why():
            return ["", *why_markdown(section.why, full=False)] if section.faults else []
        case timeline.Summary():
            return ["", "### Summary", "", md_text(summary(section.analysis, section.crashes)), ""]
        case timeline.Chart():
            return [line for part in gantt_chart(section.analysis, section.os_versions) for line in _lines(part)]
        case timeline.VersionBounds():
            return [bounds_section(section.bounds, level=3)]
        case timeline.Probes():
            from omlx_logscan.output.probes import probes_markdown

            return [*probes_markdown(section.evidence, section.analysis), ""]
        case timeline.FirstFault() | timeline.Limits():  # the report's
            return []
        case _:
            assert_never(section)


def _lines(part: str | ReportBlock) -> list[str]:
    return part.lines() if isinstance(part, ReportBlock) else [part]


def _heading(section: timeline.Heading) -> list[str]:
    analysis, head = section.analysis, section.head
    return [
        "## oMLX log timeline",
        "",
        f"- **Files:** {', '.join(code_span(os.path.basename(f['name'])) for f in head['files'])}",
        f"- **Span:** {span_phrase(head, analysis.stream)}",
        f"- **Level:** {level_phrase(head['written_at_level'], head['records'])}",
        f"- **oMLX:** {md_text(versions_phrase(input_versions(analysis.stream), upgrade=an_upgrade(analysis)))}",
        f"- **Sessions:** {len(analysis.sessions)}",
    ]


def _signatures(section: timeline.Signatures) -> list[str]:
    if not section.signatures:
        return []
    out = ["", "### Stack signatures", ""]
    for sig in section.signatures:
        out.append(f"**{signature_share(sig.faults, section.faults)}** — {code_span(call_site_label(sig))}")
        frames = [f"{f['module']}:{f['line']} in {f['func']}" for f in sig.frames]
        out += [*code_block(frames + ([f"  → {sig.innermost_code}"] if sig.innermost_code else [])), ""]
    return out
