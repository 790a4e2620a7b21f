"""The bug-report summary: one GitHub Markdown document to paste into an oMLX issue.

It answers what a maintainer asks first — what the log is, which stack failed, how the engine
escalated, how long it was dead, which versions were involved — and, as plainly, what the log
cannot show. It must fit one GitHub comment (65,536 characters): when it would not, the longest
tables are cut in the middle (first and last rows stay; as a last resort, every row) and each
cut says where it is; no single log line takes more than ``LINE_MAX`` characters. Personal data
is masked by default (see ``output.redact``): only the text copied from the log, never the report's
own words.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, assert_never

from omlx_logscan import __version__
from omlx_logscan.analysis.attribution import WhyFaulted
from omlx_logscan.analysis.bounds import UNKNOWN
from omlx_logscan.analysis.results import Analysis, Session
from omlx_logscan.errors import InputError
from omlx_logscan.inputs.sources import Source, read_chunks
from omlx_logscan.output import sections as timeline
from omlx_logscan.output.chart import gantt_chart
from omlx_logscan.output.failures import errors_report
from omlx_logscan.output.incidents import incidents_report
from omlx_logscan.output.limits import CANNOT_SHOW, cannot_show
from omlx_logscan.output.markdown import DEAD_WINDOW_HEAD, bounds_markdown, dead_window_row
from omlx_logscan.output.markup import (
    CODE_WIDTH,
    code_block,
    code_span,
    fence_for,
    fit_blocks,
    fit_code,
    md_cell,
    md_text,
)
from omlx_logscan.output.outages import outages_report
from omlx_logscan.output.phrases import (
    call_site_label,
    escalation_column,
    escalation_lines,
    escalation_os,
    plural,
    signature_share,
    summary,
    unmatched_phrase,
    zone_phrase,
)
from omlx_logscan.output.provenance import an_upgrade, input_versions, versions_phrase
from omlx_logscan.output.redact import PLACEHOLDERS, Names, logged, redact_logged, unmark
from omlx_logscan.output.report_blocks import MIN_KEPT_ROWS, Part, ReportBlock
from omlx_logscan.output.why import EVIDENCE_LABEL, LABEL_WIDTH, fault_parts, overlay_lines
from omlx_logscan.output.wrap import CONTINUED
from omlx_logscan.timeutil import human_duration, human_time, seconds

COMMENT_LIMIT = 65_536  # GitHub's maximum length of an issue body or comment, in characters


SIZE_REASON = "to stay under GitHub's 65,536-character comment limit"


EXCERPT_MAX_LINES = 60


LINE_MAX = 2_000  # characters of one log line (excerpt, evidence, code): one huge line must not crowd out the rest


CUT_SLACK = 200  # characters cut beyond the excess, so redaction's length changes rarely need a second pass


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


# The report's order: what a maintainer asks first (what the log is, what failed, where), then the
# rest; crash evidence is the summary's. The probes follow the body, outside its size limit.
REPORT_ORDER: tuple[type[timeline.Section], ...] = (
    timeline.Heading,
    timeline.Summary,
    timeline.Incidents,
    timeline.Signatures,
    timeline.Escalation,
    timeline.OtherFailures,
    timeline.Crashes,
    timeline.DeadWindows,
    timeline.OutageList,
    timeline.Why,
    timeline.VersionBounds,
    timeline.Chart,
    timeline.FirstFault,
    timeline.Limits,
    timeline.Probes,
)


def build_report(
    sections: list[timeline.Section],
    *,
    redact_personal: bool = True,
    limit: int = COMMENT_LIMIT,
    names: Names | None = None,
) -> str:
    """The whole report, shorter than ``limit`` characters.

    With an OS history the sections carry each session's macOS version and the version bounds;
    without, the report says the log cannot show them. ``names``: user and host names learnt from
    the whole log, masked too. The probes (``--probes``) come last, whole, and the body is cut to
    leave them room.
    """
    parts: list[Part] = []
    probes = ""
    for section in timeline.arranged(sections, REPORT_ORDER):
        if isinstance(section, timeline.Probes):
            from omlx_logscan.output.probes import report_probes

            probes = report_probes(section.evidence, section.analysis)
        else:
            parts += _report_section(section)
    limit -= len(probes)
    blocks = [part for part in parts if isinstance(part, ReportBlock)]
    while True:
        text = _finish(_join(parts), blocks, redact_personal=redact_personal, names=names)
        excess = len(text) - (limit - 1)
        if excess <= 0:
            return text + probes
        cut = _next_cut(blocks)
        if cut is None:
            return _hard_cut(text, limit) + probes
        block, floor = cut
        block.trim(excess + CUT_SLACK, SIZE_REASON, floor)


def _report_section(section: timeline.Section) -> list[Part]:
    match section:
        case timeline.Heading():
            return _what_the_log_is(section)
        case timeline.Summary():
            return ["### Summary", "", md_text(summary(section.analysis, section.crashes, logged)), ""]
        case timeline.Signatures():
            return _signatures(section)
        case timeline.Escalation():
            return _escalation(section.rows)
        case timeline.Incidents():
            return incidents_report(section.items, section.sessions, _logged_line)
        case timeline.OtherFailures():
            return errors_report(section.errors, _logged_line)
        case timeline.Crashes() | timeline.Probes():  # crashes are the summary's; the probes follow the body
            return []
        case timeline.DeadWindows():
            return _dead_windows(section)
        case timeline.OutageList():
            return outages_report(section.outages)
        case timeline.Why():
            return _why(section.why) if section.faults else []
        case timeline.VersionBounds():
            return ["### Version bounds", "", bounds_markdown(section.bounds).strip("\n"), ""]
        case timeline.Chart():
            return gantt_chart(section.analysis, section.os_versions)
        case timeline.FirstFault():
            return _first_fault(section.analysis)
        case timeline.Limits():
            return [*cannot_show(section.analysis, section.os_versions)]
        case _:
            assert_never(section)


def _next_cut(blocks: list[ReportBlock]) -> tuple[ReportBlock, int] | None:
    """The longest block that can lose rows, and how few it may keep: its first and last row, else none."""
    for floor in (MIN_KEPT_ROWS, 0):
        cuttable = [block for block in blocks if block.keep > floor]
        if cuttable:
            return max(cuttable, key=ReportBlock.size), floor
    return None


def _join(parts: list[Part]) -> str:
    return "\n".join(line for part in parts for line in (part.lines() if isinstance(part, ReportBlock) else [part]))


def _finish(body: str, blocks: list[ReportBlock], *, redact_personal: bool, names: Names | None) -> str:
    """Title, the notes on redaction and cuts, and the body (masked unless redaction is off)."""
    body = _ANSI.sub("", body)
    if redact_personal:
        masked = redact_logged(body, names, keep_marks=True)
        body = masked.text
        placeholders = ", ".join(f"`{p}`" for p in PLACEHOLDERS.values())
        note = (
            "> **Redacted:** home folders are shown as `~`; user names, host names, IP and e-mail addresses, "
            f"API keys and prompt or message text are replaced by {placeholders} (masked here: "
            f"{masked.summary()}). `logscan report --no-redact` shows them as logged."
        )
    else:
        note = "> **Not redacted** (`--no-redact`): paths, names and addresses appear as logged."
    fitted, wrapped = fit_blocks(body, unmark)
    body = unmark(fitted)
    notes = [note]
    if wrapped:
        notes += [
            ">",
            f"> `{CONTINUED.strip()}` goes on with a log line wider than a code block ({CODE_WIDTH} characters).",
        ]
    shortened = [block.noun for block in blocks if block.reason == SIZE_REASON]
    if shortened:
        notes += [">", f"> **Shortened** {SIZE_REASON}: {', '.join(shortened)} (each cut is marked with “…”)."]
    return "\n".join(["## oMLX log report", "", *notes, "", body.rstrip("\n"), ""])


def _hard_cut(text: str, limit: int) -> str:
    """Last resort when every block is cut to nothing: end the text early, closing a code fence left open.

    What the log cannot show is kept at the end (unless it alone would take half the room): a reader
    must not take the report for more than the log can say.
    """
    body, heading, rest = text.partition(f"\n{CANNOT_SHOW}\n")
    kept = heading + rest
    if not heading or len(kept) > limit // 2:
        body, kept = text, ""
    note = f"\n*The rest of this report is cut {SIZE_REASON}{'; what the log cannot show follows' if kept else ''}.*\n"
    head = body[: limit - 1 - len(note) - len(kept) - 80].rsplit("\n", 1)[0]  # 80: room for a closing fence
    open_fence = None
    for line in head.splitlines():
        run = re.match(r"`{3,}", line)
        if run and open_fence is None:
            open_fence = run.group(0)
        elif run and line.rstrip() == open_fence:
            open_fence = None
    return head + (f"\n{open_fence}" if open_fence else "") + "\n" + note + kept


def _logged_line(line: str) -> str:
    """One line copied from the log, marked for redaction and cut to ``LINE_MAX`` characters."""
    if len(line) <= LINE_MAX:
        return logged(line)
    return f"{logged(line[:LINE_MAX])} … {len(line) - LINE_MAX:,} characters cut"


# -- sections -------------------------------------------------------------------------------


def _what_the_log_is(section: timeline.Heading) -> list[Part]:
    analysis, head, os_versions = section.analysis, section.head, section.os_versions
    sessions = analysis.sessions
    bounded = sum(1 for s in sessions if not s.start_exact)
    span = seconds(head["first"], head["last"])
    out: list[Part] = [
        "### What the log is",
        "",
        f"- **Span:** {human_time(head['first'])} → {human_time(head['last'])} ({human_duration(span)})",
        f"- **Times:** {md_text(zone_phrase(analysis.stream.zone))}",
        f"- **Written at level:** {head['written_at_level'] or 'unknown'} (the lowest level present)",
        f"- **oMLX version:** {_versions(sessions)}",
        f"- **oMLX by its messages:** "
        f"{md_text(versions_phrase(input_versions(analysis.stream), upgrade=an_upgrade(analysis)))}",
        f"- **macOS:** {_os_versions(os_versions)}",
        f"- **Sessions:** {len(sessions)}"
        + (f" ({bounded} with start times bounded by neighbouring records)" if bounded else ""),
        f"- **Lines:** {head['lines']} read, {head['records']} records{unmatched_phrase(head)}, "
        f"{head['unparsed_lines']} unparsed, "
        f"{head['duplicates_dropped']} duplicate records dropped",
        f"- **Made by:** omlx-logscan {__version__} (`logscan report`)",
        "",
    ]
    names = [os.path.basename(f["name"]) for f in head["files"]]
    if len(set(names)) < len(names):  # the same name in two folders: the paths tell them apart
        names = [f["name"] for f in head["files"]]
    rows = [
        f"| {md_cell(code_span(logged(name)))} | {f['lines']} | {human_time(f['first'])} | "
        f"{human_time(f['last'])} | {', '.join(f['levels']) or '?'} |"
        for name, f in zip(names, head["files"], strict=True)
    ]
    out.append(
        ReportBlock(
            "files",
            ["| file | lines | first record | last record | levels present |", "|---|---|---|---|---|"],
            rows,
            [],
            lambda n: f"| … {n} files cut here | | | | |",
            "the accounting `logscan timeline` prints",
        )
    )
    return out


def _os_versions(os_versions: dict[int, str] | None) -> str:
    if os_versions is None:
        return "not in the log"
    known = [version for version in dict.fromkeys(os_versions.values()) if version != UNKNOWN]
    return f"{', '.join(known) or 'none known'} (from the OS install history)"


def _versions(sessions: list[Session]) -> str:
    """Each version in the order the log first shows it (an upgrade reads left to right)."""
    counts = Counter(s.omlx_version for s in sessions)
    unknown = counts.pop(None, 0)
    if not counts:
        return "not in the log (no banner and no Homebrew path in a traceback)"
    text = ", ".join(f"{version} ({n} of {plural(len(sessions), 'session')})" for version, n in counts.items())
    return text + (f"; unknown for {unknown}" if unknown else "")


def _signatures(section: timeline.Signatures) -> list[Part]:
    if not section.faults:
        return []
    out: list[Part] = ["### Stack signatures", ""]
    if not section.signatures:
        return [*out, "No fault came with a traceback.", ""]
    total = section.faults
    rows = []
    for sig in section.signatures:
        frames = [_logged_line(f"{f['module']}:{f['line']} in {f['func']}") for f in sig.frames]
        if sig.innermost_code:
            frames.append(f"  → {_logged_line(sig.innermost_code)}")
        title = f"**{signature_share(sig.faults, total)}** — {code_span(call_site_label(sig))}"
        rows.append("\n".join([title, *code_block(frames), ""]))
    out.append(
        ReportBlock(
            "stack signatures",
            [],
            rows,
            [],
            lambda n: f"… {n} stack signatures cut here.",
            "`logscan timeline --format json`",
        )
    )
    return out


def _escalation(table: list[dict[str, Any]]) -> list[Part]:
    column = escalation_column(table)  # a wrapped row goes on under its text, clear of the time column
    rows = ["\n".join(fit_code([line], hang=column)) for line in escalation_lines(table)]
    if not rows:
        return ["### Escalation", "", "No GPU faults.", ""]
    fence = fence_for(rows)
    os_line = escalation_os(table)
    return [
        "### Escalation",
        "",
        *([os_line, ""] if os_line else []),
        ReportBlock(
            "escalation rows",
            [fence],
            rows,
            [fence],
            lambda n: f"… {n} rows cut here",
            "`logscan timeline`",
        ),
    ]


def _dead_windows(section: timeline.DeadWindows) -> list[Part]:
    if not section.faults:
        return []
    out: list[Part] = ["### Dead-engine windows", ""]
    if not section.windows:
        return [*out, "None: no fault put the engine in the driver's penalty box.", ""]
    out.append(
        ReportBlock(
            "dead-engine windows",
            DEAD_WINDOW_HEAD,
            [dead_window_row(w) for w in section.windows],
            [],
            lambda n: f"| … | {plural(n, 'window')} cut here | | | | | |",
            "`logscan timeline`",
        )
    )
    return out


def _why(why: WhyFaulted) -> list[Part]:
    """Attribution of each fault (a block each, cut like a table), what the level hid, the overlays."""
    why = _marked(why)
    shared, faults, hidden = fault_parts(why, full=True)
    rows = ["\n".join(_fit_why(lines)) for lines in faults]
    fence = fence_for([*shared, *rows, *hidden])
    overlays = [f"- {line}" for line in overlay_lines(why, full=True)]
    return [
        "### Why it faulted",
        "",
        ReportBlock(
            "fault attributions",
            [fence, *_fit_why(shared)],
            rows,
            [*fit_code(hidden), fence],
            lambda n: f"… {plural(n, 'fault')} cut here",
            "`logscan timeline --format json`",
        ),
        *([*overlays, ""] if overlays else []),
    ]


def _fit_why(lines: list[str]) -> list[str]:
    """Attribution lines wrapped to a code block: a labelled line (``    load      …``) goes on under its text."""
    return [
        wrapped
        for line in lines
        for wrapped in fit_code([line], quoting=EVIDENCE_LABEL, hang=LABEL_WIDTH if line[:1] == " " else None)
    ]


def _marked(why: WhyFaulted) -> WhyFaulted:
    """A copy whose log text (evidence lines and their files, overlay names) is marked for redaction and capped.

    The rest of the attribution is the report's own words and numbers, and stays as written.
    """
    attributions = [
        replace(
            attribution,
            evidence=[
                replace(e, message=_logged_line(e.message), source=logged(os.path.basename(e.source)))
                for e in attribution.evidence
            ],
        )
        for attribution in why.attributions
    ]
    return WhyFaulted(attributions, [replace(overlay, name=logged(overlay.name)) for overlay in why.overlays])


def _first_fault(analysis: Analysis) -> list[Part]:
    if not analysis.faults:
        return []
    event = analysis.faults[0].first
    shown = min(event.lines, EXCERPT_MAX_LINES)
    raw = _raw_lines(event.source, event.line, shown)
    where = f"{code_span(logged(os.path.basename(event.source)))}, line {event.line}"
    out: list[Part] = ["### First fault as logged", ""]
    if raw is None:
        return [
            *out,
            f"{where}: stdin cannot be read a second time; the stack is under *Stack signatures* above.",
            "",
        ]
    count = f"the first {shown} of its {event.lines} lines" if shown < event.lines else f"{event.lines} lines"
    while raw and not raw[-1].strip():
        raw.pop()
    rows = [_logged_line(_ANSI.sub("", line)) for line in raw]
    fence = fence_for(rows)
    excerpt = ReportBlock(
        "excerpt lines", [fence], rows, [fence], lambda n: f"… {plural(n, 'line')} cut here", "the log itself"
    )
    return [*out, f"{where} ({count}):", "", excerpt]


def _raw_lines(name: str, first: int, count: int) -> list[str] | None:
    """Lines ``first`` … ``first + count - 1`` (1-based) of a file source, or None when it cannot be reread."""
    path = Path(name)
    if not path.is_file():
        return None
    found: list[str] = []
    number = 0
    try:
        for chunk in read_chunks(Source(name, path)):
            lines = chunk.split(b"\n")
            if chunk.endswith(b"\n"):
                lines.pop()
            if number + len(lines) < first:
                number += len(lines)
                continue
            for raw in lines:
                number += 1
                if number >= first:
                    found.append(raw.decode("utf-8", errors="replace").rstrip("\r"))
                if len(found) == count:
                    return found
    except InputError:
        return None
    return found
