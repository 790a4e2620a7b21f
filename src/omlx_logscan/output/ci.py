"""GitHub formats of ``check``: workflow annotations (one per fault) and the step summary."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from omlx_logscan.analysis.check import CheckResult, Finding
from omlx_logscan.output.findings import (
    check_headline,
    finding_message,
    finding_title,
    rule_threshold,
    rule_verdict,
    warning_message,
    warning_title,
)
from omlx_logscan.output.markup import code_span, md_cell, md_text
from omlx_logscan.output.phrases import unplaced_note
from omlx_logscan.timeutil import human_time

ANNOTATION_CAP = 10  # GitHub shows at most 10 error annotations per step


SUMMARY_ROWS = 100


def escape_data(text: str) -> str:
    """GitHub workflow-command message escaping."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """GitHub workflow-command property escaping (``file=``, ``title=``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_relative(path: str) -> str:
    """GitHub links an annotation to a file only by its path inside the checked-out repository."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace and os.path.isabs(path):
        relative = os.path.relpath(path, workspace)
        if not relative.startswith(".."):
            return relative
    return path


@dataclass(frozen=True)
class FaultFindings:
    """The findings that point at one record: one fault seen by several rules (a penalty box is also a
    dead engine and, with ``any_gpu_error``, a GPU error), so one annotation covers them all."""

    findings: list[Finding]

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def rules(self) -> list[str]:
        return [finding.rule for finding in self.findings]


def by_fault(findings: list[Finding]) -> list[FaultFindings]:
    """Findings grouped by the record they point at, in the order of each group's first (worst) finding;
    a finding without a place is a group of its own."""
    groups: dict[object, list[Finding]] = {}
    for position, finding in enumerate(findings):
        key: object = (finding.source, finding.line) if finding.source and finding.line else position
        groups.setdefault(key, []).append(finding)
    return [FaultFindings(group) for group in groups.values()]


def _annotation(group: FaultFindings) -> str:
    first = group.first
    props = []
    if first.source:
        props.append(f"file={escape_property(workspace_relative(first.source))}")
    if first.line:
        props.append(f"line={first.line}")
    titles = ", ".join(dict.fromkeys(finding_title(finding) for finding in group.findings))
    rules = ", ".join(group.rules)
    props.append(f"title={escape_property(f'{titles} ({rules})')}")
    message = "\n".join(f"{finding.rule}: {finding_message(finding)}" for finding in group.findings)
    return f"::error {','.join(props)}::{escape_data(message)}"


def github_annotations(result: CheckResult, cap: int = ANNOTATION_CAP) -> list[str]:
    """One ``::error`` per fault (naming every rule it broke) for the first ``cap`` faults, a notice that
    counts the rest, then the headline."""
    groups = by_fault(result.findings)
    lines = [_annotation(group) for group in groups[:cap]]
    rest = len(groups) - cap
    if rest > 0:
        lines.append(
            f"::notice title=logscan check::{rest} more fault{'s' if rest != 1 else ''} not annotated "
            f"(GitHub shows at most {cap} error annotations per step); the step summary lists them"
        )
    lines += [
        f"::warning file={escape_property(workspace_relative(item.example.source))},line={item.example.line},"
        f"title={escape_property(warning_title(item))}::"
        + escape_data(f"{item.kind}: {warning_message(item, result.sessions_read)}")
        for item in result.warnings
    ]
    lines += [
        f"::notice file={escape_property(workspace_relative(event.source))},line={event.line},"
        f"title={escape_property(UNPLACED_TITLE)}::{escape_data(unplaced_note(event))}"
        for event in result.notes
    ]
    lines.append(check_headline(result))
    return lines


UNPLACED_TITLE = "Crash evidence that cannot be placed"


def error_annotation(reason: str) -> str:
    """The annotation of a check that could not run (exit 2), so the run's page says why."""
    return f"::error title=logscan check could not run::{escape_data(reason)}"


def summary_markdown(result: CheckResult) -> str:
    """The Markdown for ``$GITHUB_STEP_SUMMARY``: rules with verdicts, then the findings."""
    files = ", ".join(code_span(name) for name in result.input["files"])
    out = [
        f"## {md_text(check_headline(result))}",
        "",
        f"Input: {files} ({human_time(result.input['first'])} → {human_time(result.input['last'])}).",
        "",
        "| rule | result | findings | threshold |",
        "|---|---|---|---|",
    ]
    for rule in result.rules.names:
        count = result.count(rule)
        verdict = "**fail**" if count else rule_verdict(result, rule)
        out.append(f"| `{rule}` | {verdict} | {count} | {rule_threshold(result.rules, rule) or ''} |")
    if result.findings:
        out += ["", "| where | rule | finding |", "|---|---|---|"]
        for finding in result.findings[:SUMMARY_ROWS]:
            where = md_cell(code_span(f"{finding.source or '?'}:{finding.line}"))
            message = md_cell(finding_message(finding))
            out.append(f"| {where} | `{finding.rule}` | {'**' + message + '**' if finding.worst_case else message} |")
        rest = len(result.findings) - SUMMARY_ROWS
        if rest > 0:
            out += ["", f"*{rest} more findings: `logscan check --format json` lists them all.*"]
    return "\n".join(out) + "\n"


def append_step_summary(result: CheckResult, path: str) -> bool:
    """Append the summary to the workflow's summary file. A file that cannot be written costs the run
    its summary, not its verdict: a warning on stderr, and False."""
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(summary_markdown(result))
    except OSError as exc:
        sys.stderr.write(
            f"logscan: warning: GITHUB_STEP_SUMMARY {path}: cannot append the summary ({exc.strerror or exc})\n"
        )
        return False
    return True
