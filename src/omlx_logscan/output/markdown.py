"""GitHub Markdown of the timeline and the bounds table."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from omlx_logscan.analysis.attribution import WhyFaulted
from omlx_logscan.analysis.bounds import Bounds
from omlx_logscan.analysis.model import Analysis
from omlx_logscan.output.markup import md_escape
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
from omlx_logscan.output.versions import bounds_heading, bounds_measures, bounds_sentence
from omlx_logscan.output.why import why_markdown
from omlx_logscan.stream.model import header
from omlx_logscan.timeutil import human_time

if TYPE_CHECKING:
    pass


def bounds_markdown(bounds: Bounds) -> str:
    """The same table and sentence as GitHub Markdown, without a heading (the caller picks its level)."""
    headings = [" / ".join(bounds_heading(row, bounds.by)) for row in bounds.rows]
    out = [f"| | {' | '.join(md_escape(h) for h in headings)} |"]
    out.append(f"|---|{'---|' * len(headings)}")
    columns = [bounds_measures(row) for row in bounds.rows]
    for position, (name, _value) in enumerate(columns[0] if columns else []):
        out.append(f"| {name.strip()} | {' | '.join(md_escape(column[position][1]) for column in columns)} |")
    out += ["", bounds_sentence(bounds), ""]
    return "\n".join(out)


def timeline_markdown(
    analysis: Analysis, os_versions: dict[int, str] | None = None, why: WhyFaulted | None = None
) -> str:
    """The same tables as the terminal view, as GitHub Markdown."""
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
    return "\n".join(out)
