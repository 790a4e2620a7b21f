"""The CI gate: rules over an analysis, findings that point at a file and line, and exit codes.

``logscan check`` answers one question for a pipeline or a cron job: does this log show a failure
I care about? Each rule turns faults, dead-engine windows or process ends of the analysis into
findings; any finding means exit code 1. The same result is written as text, JSON (schema
``omlx-logscan/check/1``), GitHub workflow commands or JUnit XML; ``output.findings`` says it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from omlx_logscan.analysis.outage_model import Outage
from omlx_logscan.analysis.results import Analysis, DeadWindow, Incident, Session, aborted_at_exit
from omlx_logscan.analysis.rules import RuleId, level_rules
from omlx_logscan.analysis.severity import INCIDENT_KINDS, Severity, at_least
from omlx_logscan.analysis.trouble import Trouble
from omlx_logscan.errors import EXIT_FINDINGS, EXIT_OK
from omlx_logscan.parsing.catalog import OUT_OF_MEMORY_CODE, PENALTY_BOX_CODE, TIMEOUT_CODE, carries_metal_error
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import CRASH_KINDS, EventKind
from omlx_logscan.parsing.recognition import written_by_omlx
from omlx_logscan.stream.event_stream import EventStream, header
from omlx_logscan.stream.window import is_empty

# The incident kinds whose rule is the incident list's items of that kind (the others have rules of their own).
_INCIDENT_RULES: frozenset[RuleId] = frozenset(
    {"error", "gpu_fault", "reboot", "load_failure", "rejected", "memory_pressure", "aborted", "fallback"}
)

_CODE_RULES: dict[RuleId, str] = {
    "timeout": TIMEOUT_CODE,
    "submissions_ignored": PENALTY_BOX_CODE,
    "out_of_memory": OUT_OF_MEMORY_CODE,
}


@dataclass(frozen=True)
class Rules:
    """What to check: the chosen rules and the two thresholds (the faults allowed, the dead time allowed)."""

    chosen: tuple[RuleId, ...]
    max_faults: int | None = None
    max_dead_s: float | None = None
    max_outage_s: float | None = None  # --max-outage: outages of every kind longer than this
    fail_on_empty: bool = False  # --fail-on-empty: an input (or window) with no record is a finding
    # --fail-level: every incident of this severity or worse fails, by the rule of its kind; None: only the chosen
    fail_level: Severity | None = None

    @property
    def names(self) -> list[RuleId]:
        """Every rule that runs; ``max_dead_s`` implies ``dead_engine``, ``max_faults`` adds ``max_faults``,
        ``fail_level`` the rules of the incident kinds that can be that bad."""
        names: list[RuleId] = list(
            dict.fromkeys([*self.chosen, *(level_rules(self.fail_level) if self.fail_level else ())])
        )
        dead: RuleId = "dead_engine"
        if self.max_dead_s is not None and dead not in names:
            names.append(dead)
        if self.max_faults is not None:
            names.append("max_faults")
        if self.max_outage_s is not None:
            names.append("outage")
        if self.fail_on_empty:
            names.append("empty")
        return names


@dataclass(frozen=True)
class FaultFound:
    """A finding about one GPU fault; ``requests_visible`` says whether the log shows finished requests."""

    incident: Incident
    requests_visible: bool


@dataclass(frozen=True)
class SessionEnded:
    """A process that crashed or exited for a restart without a fault of that outcome.

    ``crash_kind`` is the kind of the last crash record of the session (None without one).
    """

    session: Session
    crash_kind: EventKind | None


@dataclass(frozen=True)
class DeadFound:
    """A dead-engine window; ``still_dead`` when it is open at the end of the log."""

    window: DeadWindow

    @property
    def still_dead(self) -> bool:
        return self.window.end_reason == "eof"


@dataclass(frozen=True)
class TooManyFaults:
    """More faults than allowed; ``first_over`` is the fault past the limit."""

    count: int
    limit: int
    first_over: Incident


@dataclass(frozen=True)
class OutageFound:
    """An outage of any kind (wedge, retry loop, or any one longer than --max-outage)."""

    outage: Outage


@dataclass(frozen=True)
class IncidentFound:
    """One item of the incident list (``analysis.incidents``): a kind and a message, one finding for them all."""

    incident: Trouble


@dataclass(frozen=True)
class UnparsedGpuError:
    """A line the tool could not parse that carries a Metal or ANE error: whatever wrote it, it is
    never passed over in silence (a log of a shape no reader knows still fails ``check``)."""

    text: str


@dataclass(frozen=True)
class NothingChecked:
    """The input, or its window, held no record: with --fail-on-empty, a CI job that read nothing fails."""


@dataclass(frozen=True)
class UnplacedCrash:
    """Crash evidence the log cannot place (``results.cannot_be_placed``) that shows a process dying
    while it ran: in no session, yet never passed over. An abort as a process exited is not one."""

    event: Event


Subject = (
    FaultFound
    | SessionEnded
    | DeadFound
    | TooManyFaults
    | OutageFound
    | IncidentFound
    | UnparsedGpuError
    | NothingChecked
    | UnplacedCrash
)


@dataclass(frozen=True)
class Finding:
    """One thing a rule found, what it is about, and the place of its first record."""

    rule: RuleId
    subject: Subject
    time: str | None
    source: str | None
    line: int | None
    session: int | None
    worst_case: bool = False  # a dead window still open when the log ends


@dataclass(frozen=True)
class CheckResult:
    """The rules that ran, what they found, and what input they ran on."""

    rules: Rules
    findings: list[Finding]
    input: dict[str, Any]
    stream: EventStream | None = None  # what it ran on, for the zone of its times
    # Crash evidence the log cannot place that no finding is about (an abort as a process exited):
    # said with the verdict, never passed over.
    notes: list[Event] = field(default_factory=list)
    # The incidents no finding is about, under the --fail-level: listed as warnings, they fail nothing.
    warnings: list[Trouble] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_FINDINGS if self.findings else EXIT_OK

    @property
    def sessions_read(self) -> int:
        return int(self.input["sessions"])

    def count(self, rule: RuleId) -> int:
        return sum(1 for f in self.findings if f.rule == rule)

    @property
    def checked_nothing(self) -> bool:
        """The input (or its window) held no record: no rule could find anything, nor pass on evidence.
        Records read that became no event (untimed oMLX lines, a bare message) are records checked."""
        stream = self.stream
        if stream is None or not is_empty(stream):
            return False
        return stream.cut_from is not None or not stream.accounting.records


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
    found = {id(f.subject.event) for f in findings if isinstance(f.subject, UnplacedCrash)}
    notes = [event for event in analysis.unplaced if id(event) not in found]
    failed = {id(f.subject.incident) for f in findings if isinstance(f.subject, IncidentFound)}
    covered = {rule for rule in rules.names if rule in INCIDENT_KINDS}  # a kind whose own rule ran
    warnings = [item for item in analysis.incidents if id(item) not in failed and item.kind not in covered]
    return CheckResult(rules, findings, summary_input, analysis.stream, notes, warnings)


def _findings(analysis: Analysis, rule: RuleId, rules: Rules) -> Iterable[Finding]:
    visible = analysis.stream.shows("INFO")
    faults = analysis.faults
    if rule in _CODE_RULES:
        return [_fault_finding(rule, f, visible) for f in faults if _CODE_RULES[rule] in f.code_names]
    if rule == "any_gpu_error":
        return [_fault_finding(rule, f, visible) for f in faults]
    if rule == "penalty_box":
        return [_fault_finding(rule, f, visible) for f in faults if f.outcome == "penalty_box"]
    if rule == "crash" or rule == "fatal_exit":
        return _process_end_findings(analysis, rule, visible)
    if rule == "dead_engine":
        return _dead_findings(analysis, rules.max_dead_s)
    if rule == "wedge" or rule == "possible_wedge" or rule == "retry_loop":
        return [_outage_finding(rule, o) for o in analysis.outages.items if o.rule == rule]
    if rule in _INCIDENT_RULES:
        chosen = rule in rules.chosen
        return [
            _incident_finding(rule, item)
            for item in analysis.incidents
            if item.kind == rule and (chosen or rules.fail_level is None or at_least(item.severity, rules.fail_level))
        ]
    if rule == "unparsed_gpu_error":
        unparsed = analysis.stream.unparsed
        found = [
            Finding(rule, UnparsedGpuError(text), None, source, line, None)
            for source, line, text in unparsed
            if carries_metal_error(text)
        ]
        return found + [_unread_fault_finding(rule, fault) for fault in faults if _unread(fault)]
    if rule == "empty":
        return [Finding(rule, NothingChecked(), None, None, None, None)] if is_empty(analysis.stream) else []
    if rule == "outage":
        allowed = rules.max_outage_s or 0.0
        return [_outage_finding(rule, o) for o in analysis.outages.items if o.open_at_end or o.at_least_s > allowed]
    limit = rules.max_faults
    if limit is None or len(faults) <= limit:
        return []
    first_over = faults[limit]
    return [
        Finding(
            rule,
            TooManyFaults(len(faults), limit, first_over),
            first_over.time,
            first_over.first.source,
            first_over.first.line,
            first_over.session,
        )
    ]


def _unread(incident: Incident) -> bool:
    """A fault the log shows nothing of but its Metal text: no record of it is oMLX's (another
    program's line, a bare paste), and nothing after it says how it ended. Left to the fault
    rules, it would pass the default check: a Metal error given a clean bill."""
    return incident.outcome == "unknown" and not any(map(written_by_omlx, incident.records))


def _unread_fault_finding(rule: RuleId, incident: Incident) -> Finding:
    first = incident.first
    return Finding(rule, UnparsedGpuError(first.message), incident.time, first.source, first.line, incident.session)


def _fault_finding(rule: RuleId, incident: Incident, requests_visible: bool) -> Finding:
    return Finding(
        rule,
        FaultFound(incident, requests_visible),
        incident.time,
        incident.first.source,
        incident.first.line,
        incident.session,
    )


def _process_end_findings(analysis: Analysis, reason: Literal["crash", "fatal_exit"], visible: bool) -> list[Finding]:
    """Faults with this outcome, and processes that ended so without such a fault."""
    out = [_fault_finding(reason, f, visible) for f in analysis.faults if f.outcome == reason]
    covered = {f.session for f in out}
    for session in analysis.sessions:
        if session.end_reason == reason and session.index not in covered:
            out.append(_session_end_finding(session, reason))
    if reason == "crash":
        out += [
            Finding(reason, UnplacedCrash(ev), None, ev.source, ev.line, None)
            for ev in analysis.unplaced
            if not aborted_at_exit(ev)
        ]
    return out


def _session_end_finding(session: Session, reason: Literal["crash", "fatal_exit"]) -> Finding:
    evidence = next((ev for ev in reversed(session.events) if ev.kind in CRASH_KINDS), None)
    last = evidence or (session.events[-1] if session.events else None)
    return Finding(
        reason,
        SessionEnded(session, evidence.kind if evidence else None),
        session.end,
        last.source if last else session.source,
        last.line if last else session.line,
        session.index,
    )


def _incident_finding(rule: RuleId, item: Trouble) -> Finding:
    example = item.example
    session = min(item.sessions, default=None)
    return Finding(rule, IncidentFound(item), item.first, example.source, example.line, session)


def _outage_finding(rule: RuleId, outage: Outage) -> Finding:
    where = outage.evidence[0] if outage.evidence else (None, None, None)
    return Finding(
        rule, OutageFound(outage), outage.start, where[0], where[1], outage.session, worst_case=outage.open_at_end
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
        subject = DeadFound(window)
        out.append(
            Finding(
                "dead_engine",
                subject,
                window.start,
                opener.first.source if opener else None,
                opener.first.line if opener else None,
                window.session,
                worst_case=subject.still_dead,
            )
        )
    return out
