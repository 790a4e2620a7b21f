"""GitHub Markdown of the timeline, its *Why it faulted* section and the bounds table."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from omlx_logscan.analysis.attribution import WhyFaulted
from omlx_logscan.analysis.model import Analysis
from omlx_logscan.output.markup import fence_for, md_escape
from omlx_logscan.output.outages import outages_markdown
from omlx_logscan.output.phrases import (
    call_site_label,
    count_text,
    crash_line,
    crash_rows,
    dead_for,
    escalation_lines,
    escalation_rows,
    level_phrase,
    span_phrase,
    summary,
    window_end_phrase,
)
from omlx_logscan.output.why import fault_lines, overlay_lines
from omlx_logscan.stream.model import header
from omlx_logscan.timeutil import human_time

if TYPE_CHECKING:  # the bounds and their words load with an OS history only
    from omlx_logscan.analysis.bounds import Bounds


def bounds_markdown(bounds: Bounds) -> str:
    """The same table and sentence as GitHub Markdown, without a heading (the caller picks its level)."""
    from omlx_logscan.output.versions import bounds_heading, bounds_measures, bounds_sentence

    headings = [" / ".join(bounds_heading(row, bounds.by)) for row in bounds.rows]
    out = [f"| | {' | '.join(md_escape(h) for h in headings)} |"]
    out.append(f"|---|{'---|' * len(headings)}")
    columns = [bounds_measures(row) for row in bounds.rows]
    for position, (name, _value) in enumerate(columns[0] if columns else []):
        out.append(f"| {name.strip()} | {' | '.join(md_escape(column[position][1]) for column in columns)} |")
    out += ["", bounds_sentence(bounds), ""]
    return "\n".join(out)


def bounds_section(bounds: Bounds, *, level: int) -> str:
    """The bounds table under a *Version bounds* heading of ``level`` (2 on a page of their own, 3
    under the timeline)."""
    return f"{'#' * level} Version bounds\n\n{bounds_markdown(bounds)}"


def why_markdown(why: WhyFaulted, *, full: bool) -> list[str]:
    """The *Why it faulted* section: the fault lines in a code block (log text inside), the overlays as bullets."""
    body = fault_lines(why, full=full)
    fence = fence_for(body)
    bullets = [f"- {line}" for line in overlay_lines(why, full=full)]
    return ["### Why it faulted", "", fence, *body, fence, "", *bullets, *([""] if bullets else [])]


def timeline_markdown(
    analysis: Analysis,
    os_versions: dict[int, str] | None = None,
    why: WhyFaulted | None = None,
    bounds: Bounds | None = None,
) -> str:
    """The same tables as the terminal view, as GitHub Markdown; with ``bounds`` (an OS history was
    given), the version bounds follow."""
    head = header(analysis.stream)
    out = ["## oMLX log timeline", ""]
    out.append(f"- **Files:** {', '.join('`' + os.path.basename(f['name']) + '`' for f in head['files'])}")
    out.append(f"- **Span:** {span_phrase(head)}")
    out.append(f"- **Level:** {level_phrase(head['written_at_level'], head['records'])}")
    out.append(f"- **Process lifetimes:** {len(analysis.sessions)}")
    out += ["", "### Escalation", "", "```"]
    rows = escalation_rows(analysis, os_versions)
    out.extend(escalation_lines(rows))
    if not rows:
        out.append("no GPU faults")
    out.append("```")
    crashes = crash_rows(analysis)
    if crashes:
        out += ["", "### Crash evidence", "", "```", *(crash_line(row) for row in crashes), "```"]
    if analysis.dead_windows:
        out += [
            "",
            "### Dead-engine windows",
            "",
            "| session | from | last failure | end | repeats | requests completed |",
            "|---|---|---|---|---|---|",
        ]
        for w in analysis.dead_windows:
            out.append(
                f"| {w.session} | {human_time(w.start)} | {human_time(w.last_failure)} | "
                f"{md_escape(window_end_phrase(w))}; {dead_for(w)} | {w.repeats} | "
                f"{count_text(w.requests_completed)} |"
            )
    out += ["", *outages_markdown(analysis.outages)]  # every kind of outage: output/outages.py
    if analysis.signatures:
        out += ["", "### Stack signatures", ""]
        for sig in analysis.signatures:
            out.append(f"**{sig.faults} of {len(analysis.faults)} faults** — {md_escape(call_site_label(sig))}")
            out.append("```")
            out.extend(f"{f['module']}:{f['line']} in {f['func']}" for f in sig.frames)
            if sig.innermost_code:
                out.append(f"  → {sig.innermost_code}")
            out += ["```", ""]
    if why is not None and analysis.faults:
        out += ["", *why_markdown(why, full=False)]
    out += ["", "### Summary", "", summary(analysis), ""]
    if bounds is not None:
        out += [bounds_section(bounds, level=3)]
    return "\n".join(out)
