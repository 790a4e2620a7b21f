"""The CI gate: rules over an analysis, findings that point at a file and line, and exit codes.

``logscan check`` answers one question for a pipeline or a cron job: does this log show a failure
I care about? Each rule turns faults, dead-engine windows or process ends of the analysis into
findings; any finding means exit code 1. The same result is written as text, JSON (schema
``omlx-logscan/check/1``), GitHub workflow commands or JUnit XML.
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from omlx_logscan import __version__
from omlx_logscan.analysis import CRASH_KINDS, Analysis, DeadWindow, Incident, Session
from omlx_logscan.document import CRASH_WORDS, dead_for, fault_phrase, header, window_end_phrase
from omlx_logscan.errors import EXIT_FINDINGS, EXIT_OK, LogscanError
from omlx_logscan.render import md_escape
from omlx_logscan.timeutil import human_duration, human_time

SCHEMA = "omlx-logscan/check/1"
RULES: dict[str, tuple[str, str]] = {  # name: (annotation title, what it finds)
    "timeout": ("GPU timeout", "a GPU fault with a command-buffer timeout (kIOGPUCommandBufferCallbackErrorTimeout)"),
    "submissions_ignored": (
        "GPU submissions ignored",
        "a GPU fault in which the driver ignored the process's submissions (SubmissionsIgnored)",
    ),
    "penalty_box": (
        "GPU penalty box",
        "a fault that put the process in the driver's penalty box: the engine is dead until a restart",
    ),
    "dead_engine": ("Dead engine", "a dead-engine window (with --max-dead: one that lasted longer)"),
    "crash": (
        "Process crash",
        "a process that crashed: an abort, a faulthandler dump, or an end without an orderly stop",
    ),
    "fatal_exit": ("Fatal exit", "a process that exited on purpose after a GPU fault so its supervisor restarts it"),
    "out_of_memory": ("GPU out of memory", "a GPU fault with kIOGPUCommandBufferCallbackErrorOutOfMemory"),
    "any_gpu_error": ("GPU error", "any GPU fault"),
    "max_faults": ("Too many GPU faults", "more GPU faults than --max-faults"),
}
FAIL_ON_CHOICES = tuple(name for name in RULES if name != "max_faults")
ANNOTATION_CAP = 10  # GitHub shows at most 10 error annotations per step
SUMMARY_ROWS = 100
_CODE_RULES = {"timeout": "Timeout", "submissions_ignored": "SubmissionsIgnored", "out_of_memory": "OutOfMemory"}
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Rules:
    """What to check: the ``--fail-on`` rules and the two thresholds."""

    fail_on: tuple[str, ...]
    max_faults: int | None = None
    max_dead_s: float | None = None

    @property
    def names(self) -> list[str]:
        """Every rule that runs; ``--max-dead`` implies ``dead_engine``, ``--max-faults`` adds ``max_faults``."""
        names = list(self.fail_on)
        if self.max_dead_s is not None and "dead_engine" not in names:
            names.append("dead_engine")
        if self.max_faults is not None:
            names.append("max_faults")
        return names

    def threshold(self, rule: str) -> str | None:
        if rule == "dead_engine" and self.max_dead_s is not None:
            return f"longer than {human_duration(self.max_dead_s)}"
        if rule == "max_faults" and self.max_faults is not None:
            return f"more than {self.max_faults}"
        return None


@dataclass(frozen=True)
class Finding:
    """One thing a rule found, with the place of its first record."""

    rule: str
    message: str
    time: str | None
    source: str | None
    line: int | None
    session: int | None
    worst_case: bool = False  # a dead window still open when the log ends

    @property
    def title(self) -> str:
        if self.worst_case:
            return "Engine still dead at the end of the log"
        return RULES[self.rule][0]

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "title": self.title,
            "message": self.message,
            "time": self.time,
            "source": self.source,
            "line": self.line,
            "session": self.session,
            "worst_case": self.worst_case,
        }


@dataclass(frozen=True)
class CheckResult:
    rules: Rules
    findings: list[Finding]
    input: dict[str, Any]

    @property
    def exit_code(self) -> int:
        return EXIT_FINDINGS if self.findings else EXIT_OK

    def count(self, rule: str) -> int:
        return sum(1 for f in self.findings if f.rule == rule)

    def headline(self) -> str:
        if not self.findings:
            count = len(self.rules.names)
            return (
                f"logscan check: no findings ({count} rule{'' if count == 1 else 's'}: {', '.join(self.rules.names)})"
            )
        failed = [rule for rule in self.rules.names if self.count(rule)]
        parts = ", ".join(f"{rule} {self.count(rule)}" for rule in failed)
        return f"logscan check: {len(self.findings)} finding{'s' if len(self.findings) != 1 else ''} ({parts})"


# -- options ----------------------------------------------------------------------------------


def parse_fail_on(text: str) -> tuple[str, ...]:
    """``penalty_box,crash`` → the rule names, in order, without repeats; unknown names are an error."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in FAIL_ON_CHOICES]
    if unknown:
        raise LogscanError(f"--fail-on {', '.join(unknown)}: unknown rule (rules: {', '.join(FAIL_ON_CHOICES)})")
    return tuple(dict.fromkeys(names))


# -- the rules ----------------------------------------------------------------------------------


def run_check(analysis: Analysis, rules: Rules) -> CheckResult:
    """Apply every rule; findings come worst first (a dead engine at the end of the log), then by time."""
    findings: list[Finding] = []
    for rule in rules.names:
        findings.extend(_findings(analysis, rule, rules))
    findings.sort(key=lambda f: (not f.worst_case, f.time or "", rules.names.index(f.rule)))
    head = header(analysis.stream)
    summary_input = {
        "files": [f["name"] for f in head["files"]],
        "first": head["first"],
        "last": head["last"],
        "written_at_level": head["written_at_level"],
        "faults": len(analysis.faults),
        "dead_windows": len(analysis.dead_windows),
        "sessions": len(analysis.sessions),
    }
    return CheckResult(rules, findings, summary_input)


def _findings(analysis: Analysis, rule: str, rules: Rules) -> Iterable[Finding]:
    visible = analysis.stream.shows("INFO")
    faults = analysis.faults
    if rule in _CODE_RULES:
        return [_fault_finding(rule, f, visible) for f in faults if _CODE_RULES[rule] in f.code_names]
    if rule == "any_gpu_error":
        return [_fault_finding(rule, f, visible) for f in faults]
    if rule == "penalty_box":
        return [_fault_finding(rule, f, visible) for f in faults if f.outcome == "penalty_box"]
    if rule in ("crash", "fatal_exit"):
        return _process_end_findings(analysis, rule, visible)
    if rule == "dead_engine":
        return _dead_findings(analysis, rules.max_dead_s)
    limit = rules.max_faults
    if limit is None or len(faults) <= limit:
        return []
    first_over = faults[limit]
    return [
        Finding(
            rule,
            f"{len(faults)} GPU faults, more than --max-faults {limit}; fault {limit + 1} is at "
            f"{human_time(first_over.time)}",
            first_over.time,
            first_over.first.source,
            first_over.first.line,
            first_over.session,
        )
    ]


def _fault_finding(rule: str, incident: Incident, requests_visible: bool) -> Finding:
    phrase = " ".join(fault_phrase(incident, requests_visible).split())
    return Finding(
        rule,
        f"{human_time(incident.time)} {phrase} (process {incident.session})",
        incident.time,
        incident.first.source,
        incident.first.line,
        incident.session,
    )


def _process_end_findings(analysis: Analysis, reason: str, visible: bool) -> list[Finding]:
    """Faults with this outcome, and processes that ended so without such a fault."""
    out = [_fault_finding(reason, f, visible) for f in analysis.faults if f.outcome == reason]
    covered = {f.session for f in out}
    for session in analysis.sessions:
        if session.end_reason == reason and session.index not in covered:
            out.append(_session_end_finding(session, reason))
    return out


def _session_end_finding(session: Session, reason: str) -> Finding:
    evidence = next((ev for ev in reversed(session.events) if ev.kind in CRASH_KINDS), None)
    last = evidence or (session.events[-1] if session.events else None)
    if reason != "crash":
        what = "exited for a restart (omlx.utils.fatal)"
    elif evidence is not None and evidence.kind != "process_exit":
        what = f"crashed ({CRASH_WORDS[evidence.kind]})"
    else:
        what = "ended without an orderly stop"
    return Finding(
        reason,
        f"process {session.index} {what}"
        + (f"; its last record is at {human_time(session.end)}" if session.end else ""),
        session.end,
        last.source if last else session.source,
        last.line if last else session.line,
        session.index,
    )


def dead_at_least(window: DeadWindow) -> float:
    """How long the log proves the engine was dead; infinite for a window still open at the end."""
    return math.inf if window.end_reason == "eof" else window.at_least_s


def _dead_findings(analysis: Analysis, max_dead_s: float | None) -> list[Finding]:
    openers = {f.dead_window: f for f in analysis.faults if f.dead_window is not None}
    out = []
    for index, window in enumerate(analysis.dead_windows):
        if max_dead_s is not None and dead_at_least(window) <= max_dead_s:
            continue
        opener = openers.get(index)
        still_dead = window.end_reason == "eof"
        if still_dead:
            message = (
                f"engine generation-dead since {human_time(window.start)} and STILL DEAD when the log ends at "
                f"{human_time(window.log_end)} ({dead_for(window)}, {window.repeats} repeated failures): "
                "a penalty-boxed engine does not recover without a restart"
            )
        else:
            message = (
                f"engine generation-dead from {human_time(window.start)}: {window_end_phrase(window)}; "
                f"{dead_for(window)}, {window.repeats} repeated failures"
            )
        out.append(
            Finding(
                "dead_engine",
                message,
                window.start,
                opener.first.source if opener else None,
                opener.first.line if opener else None,
                window.session,
                worst_case=still_dead,
            )
        )
    return out


# -- outputs -------------------------------------------------------------------------------------


def check_document(result: CheckResult) -> dict[str, Any]:
    """The ``check --format json`` document (schema omlx-logscan/check/1)."""
    return {
        "schema": SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        "status": "findings" if result.findings else "clean",
        "exit_code": result.exit_code,
        "input": result.input,
        "rules": [
            {
                "rule": rule,
                "title": RULES[rule][0],
                "finds": RULES[rule][1],
                "threshold": result.rules.threshold(rule),
                "findings": result.count(rule),
            }
            for rule in result.rules.names
        ],
        "findings": [f.as_dict() for f in result.findings],
    }


def check_text(result: CheckResult, con: Console) -> None:
    """The terminal view: one line per rule, then one per finding."""
    con.print(Text(result.headline(), style="bold"))
    for rule in result.rules.names:
        count = result.count(rule)
        threshold = result.rules.threshold(rule)
        verdict = Text("fail" if count else "pass", style="bold red" if count else "green")
        con.print(Text(f"  {rule:<20} "), verdict, Text(f"  {count}" + (f"  ({threshold})" if threshold else "")))
    for finding in result.findings:
        where = f"{finding.source}:{finding.line}" if finding.source else "(no record)"
        style = "bold red" if finding.worst_case else ""
        con.print(Text(f"{where}: {finding.rule}: {finding.message}", style=style), soft_wrap=True)


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
        props.append(f"title={escape_property(f'{finding.title} ({finding.rule})')}")
        lines.append(f"::error {','.join(props)}::{escape_data(finding.message)}")
    rest = len(result.findings) - cap
    if rest > 0:
        lines.append(
            f"::notice title=logscan check::{rest} more finding{'s' if rest != 1 else ''} not annotated "
            f"(GitHub shows at most {cap} error annotations per step); the step summary lists them"
        )
    lines.append(result.headline())
    return lines


def summary_markdown(result: CheckResult) -> str:
    """The Markdown for ``$GITHUB_STEP_SUMMARY``: rules with verdicts, then the findings."""
    files = ", ".join(f"`{md_escape(name)}`" for name in result.input["files"])
    out = [
        f"## {md_escape(result.headline())}",
        "",
        f"Input: {files} ({human_time(result.input['first'])} → {human_time(result.input['last'])}).",
        "",
        "| rule | result | findings | threshold |",
        "|---|---|---|---|",
    ]
    for rule in result.rules.names:
        count = result.count(rule)
        verdict = "**fail**" if count else "pass"
        out.append(f"| `{rule}` | {verdict} | {count} | {result.rules.threshold(rule) or ''} |")
    if result.findings:
        out += ["", "| where | rule | finding |", "|---|---|---|"]
        for finding in result.findings[:SUMMARY_ROWS]:
            where = f"`{md_escape(finding.source or '?')}:{finding.line}`"
            message = md_escape(finding.message)
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
            failure = ET.SubElement(
                case, "failure", {"type": rule, "message": _xml_text(f"{len(found)} finding(s): {found[0].message}")}
            )
            failure.text = _xml_text("\n".join(f"{f.source or '?'}:{f.line or '?'}: {f.message}" for f in found))
    ET.indent(suites)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(suites, encoding="unicode"))
    out.write("\n")
