"""CI formats of ``check``: GitHub workflow annotations, the step summary, JUnit XML."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from typing import IO

from omlx_logscan.analysis.check import CheckResult
from omlx_logscan.errors import LogscanError
from omlx_logscan.output.findings import check_headline, finding_message, finding_title, rule_threshold
from omlx_logscan.output.markup import md_escape
from omlx_logscan.timeutil import human_time

ANNOTATION_CAP = 10  # GitHub shows at most 10 error annotations per step


SUMMARY_ROWS = 100


_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def escape_data(text: str) -> str:
    """GitHub workflow-command message escaping."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """GitHub workflow-command property escaping (``file=``, ``title=``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _workspace_relative(path: str) -> str:
    """GitHub links an annotation to a file only by its path inside the checked-out repository."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace and os.path.isabs(path):
        relative = os.path.relpath(path, workspace)
        if not relative.startswith(".."):
            return relative
    return path


def github_annotations(result: CheckResult, cap: int = ANNOTATION_CAP) -> list[str]:
    """``::error`` commands for the first ``cap`` findings, then one notice that counts the rest."""
    lines = []
    for finding in result.findings[:cap]:
        props = []
        if finding.source:
            props.append(f"file={escape_property(_workspace_relative(finding.source))}")
        if finding.line:
            props.append(f"line={finding.line}")
        props.append(f"title={escape_property(f'{finding_title(finding)} ({finding.rule})')}")
        lines.append(f"::error {','.join(props)}::{escape_data(finding_message(finding))}")
    rest = len(result.findings) - cap
    if rest > 0:
        lines.append(
            f"::notice title=logscan check::{rest} more finding{'s' if rest != 1 else ''} not annotated "
            f"(GitHub shows at most {cap} error annotations per step); the step summary lists them"
        )
    lines.append(check_headline(result))
    return lines


def summary_markdown(result: CheckResult) -> str:
    """The Markdown for ``$GITHUB_STEP_SUMMARY``: rules with verdicts, then the findings."""
    files = ", ".join(f"`{md_escape(name)}`" for name in result.input["files"])
    out = [
        f"## {md_escape(check_headline(result))}",
        "",
        f"Input: {files} ({human_time(result.input['first'])} → {human_time(result.input['last'])}).",
        "",
        "| rule | result | findings | threshold |",
        "|---|---|---|---|",
    ]
    for rule in result.rules.names:
        count = result.count(rule)
        verdict = "**fail**" if count else "pass"
        out.append(f"| `{rule}` | {verdict} | {count} | {rule_threshold(result.rules, rule) or ''} |")
    if result.findings:
        out += ["", "| where | rule | finding |", "|---|---|---|"]
        for finding in result.findings[:SUMMARY_ROWS]:
            where = f"`{md_escape(finding.source or '?')}:{finding.line}`"
            message = md_escape(finding_message(finding))
            out.append(f"| {where} | `{finding.rule}` | {'**' + message + '**' if finding.worst_case else message} |")
        rest = len(result.findings) - SUMMARY_ROWS
        if rest > 0:
            out += ["", f"*{rest} more findings: `logscan check --format json` lists them all.*"]
    return "\n".join(out) + "\n"


def append_step_summary(result: CheckResult, path: str) -> None:
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(summary_markdown(result))
    except OSError as exc:
        raise LogscanError(f"GITHUB_STEP_SUMMARY {path}: cannot append ({exc.strerror or exc})") from None


def _xml_text(text: str) -> str:
    return _XML_INVALID.sub("\ufffd", text)


def write_junit(result: CheckResult, out: IO[str]) -> None:
    """JUnit XML: one test case per rule, failed when the rule found something."""
    names = result.rules.names
    failures = sum(1 for rule in names if result.count(rule))
    counts = {"tests": str(len(names)), "failures": str(failures), "errors": "0", "skipped": "0", "time": "0"}
    suites = ET.Element("testsuites", {"name": "logscan check", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": "logscan check", **counts})
    properties = ET.SubElement(suite, "properties")
    for name in result.input["files"]:
        ET.SubElement(properties, "property", {"name": "file", "value": _xml_text(name)})
    for rule in names:
        case = ET.SubElement(suite, "testcase", {"classname": "logscan.check", "name": rule, "time": "0"})
        found = [f for f in result.findings if f.rule == rule]
        if found:
            first = finding_message(found[0])
            failure = ET.SubElement(
                case, "failure", {"type": rule, "message": _xml_text(f"{len(found)} finding(s): {first}")}
            )
            failure.text = _xml_text(
                "\n".join(f"{f.source or '?'}:{f.line or '?'}: {finding_message(f)}" for f in found)
            )
    ET.indent(suites)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(suites, encoding="unicode"))
    out.write("\n")
