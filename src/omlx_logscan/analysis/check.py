"""The CI gate: rules over an analysis, findings that point at a file and line, and exit codes.

``logscan check`` answers one question for a pipeline or a cron job: does this log show a failure
I care about? Each rule turns faults, dead-engine windows or process ends of the analysis into
findings; any finding means exit code 1. The same result is written as text, JSON (schema
``omlx-logscan/check/1``), GitHub workflow commands or JUnit XML.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from omlx_logscan.analysis.model import CRASH_KINDS, Analysis, DeadWindow, Incident, Session
from omlx_logscan.errors import EXIT_FINDINGS, EXIT_OK, LogscanError
from omlx_logscan.output.phrases import CRASH_WORDS, dead_for, fault_phrase, window_end_phrase
from omlx_logscan.stream.model import header
from omlx_logscan.timeutil import human_duration, human_time

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


_CODE_RULES = {"timeout": "Timeout", "submissions_ignored": "SubmissionsIgnored", "out_of_memory": "OutOfMemory"}


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
