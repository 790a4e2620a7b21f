"""The words of ``check``: rule titles and what each finds, finding messages, thresholds, the headline."""

from __future__ import annotations

from omlx_logscan.analysis.check import (
    CheckResult,
    DeadFound,
    FaultFound,
    Finding,
    IncidentFound,
    NothingChecked,
    OutageFound,
    Rules,
    SessionEnded,
    TooManyFaults,
    UnparsedGpuError,
    UnplacedCrash,
)
from omlx_logscan.analysis.rules import RuleId
from omlx_logscan.analysis.trouble import Trouble
from omlx_logscan.output.failures import sessions_phrase
from omlx_logscan.output.incidents import span_phrase
from omlx_logscan.output.outages import outage_line
from omlx_logscan.output.phrases import (
    CRASH_WORDS,
    dead_for,
    fault_phrase,
    plural,
    unplaced_phrase,
    window_end_phrase,
)
from omlx_logscan.parsing.catalog import (
    FATAL_LOGGER,
    GPU_CODE_PREFIX,
    OUT_OF_MEMORY_CODE,
    PENALTY_BOX_CODE,
    TIMEOUT_CODE,
)
from omlx_logscan.timeutil import human_duration, human_time

RULE_WORDS: dict[RuleId, tuple[str, str]] = {  # rule: (annotation title, what it finds)
    "timeout": ("GPU timeout", f"a GPU fault with a command-buffer timeout ({GPU_CODE_PREFIX}{TIMEOUT_CODE})"),
    "submissions_ignored": (
        "GPU submissions ignored",
        f"a GPU fault in which the driver ignored the process's submissions ({PENALTY_BOX_CODE})",
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
    "out_of_memory": ("GPU out of memory", f"a GPU fault with {GPU_CODE_PREFIX}{OUT_OF_MEMORY_CODE}"),
    "any_gpu_error": ("GPU error", "any GPU fault"),
    "unparsed_gpu_error": ("Unparsed GPU error", "a Metal or ANE error in a line that could not be parsed"),
    "error": (
        "oMLX error",
        "a failure other than a GPU fault: a message of severity error (docs/severity.md: a record at ERROR or "
        "CRITICAL, a traceback, an HTTP 5xx answer, a lost write); one finding per message",
    ),
    "gpu_fault": (
        "GPU fault",
        "a GPU fault the process absorbed, or a Metal error whose outcome the log does not show",
    ),
    "reboot": ("Kernel panic", "a macOS kernel panic: the Mac restarted"),
    "load_failure": ("Model load failed", "a model that failed to load"),
    "rejected": ("Rejected request", "a request turned away: an HTTP 4xx or 507, the memory guard, a preflight"),
    "memory_pressure": ("Memory pressure", "an episode of memory pressure (soft, hard, throttling, a settle barrier)"),
    "aborted": ("Aborted request", "a request aborted or cancelled (a client that gave up, a shutdown)"),
    "fallback": ("Fallback", "a degraded path taken: VLM to LLM, DFlash to the default engine, SpecPrefill off"),
    "wedge": ("Wedged engine", "a wedge: requests kept arriving and none finished, aborted or failed (DEBUG logs)"),
    "possible_wedge": (
        "Possible wedge",
        "a silence after steady traffic that the log level cannot tell from an idle server (INFO logs)",
    ),
    "retry_loop": ("Engine retry loop", "the same engine-loop error again and again without SubmissionsIgnored"),
    "max_faults": ("Too many GPU faults", "more GPU faults than --max-faults"),
    "outage": ("Outage", "an outage of any kind longer than --max-outage, or one still going when the log ends"),
    "empty": ("Nothing checked", "an input, or a --since/--until window, with no record (--fail-on-empty)"),
}


MAX_QUOTED_CHARS = 300  # of an unparsed line, what a finding quotes

STILL_DEAD_TITLE = "Engine still dead at the end of the log"


def rule_title(rule: RuleId) -> str:
    """The annotation title of a rule: ``GPU penalty box``."""
    return RULE_WORDS[rule][0]


def rule_finds(rule: RuleId) -> str:
    """What a rule finds, in one phrase."""
    return RULE_WORDS[rule][1]


def rule_threshold(rules: Rules, rule: RuleId) -> str | None:
    """``longer than 10 min`` or ``more than 3`` for the rules a threshold tunes, else None."""
    if rule == "dead_engine" and rules.max_dead_s is not None:
        return f"longer than {human_duration(rules.max_dead_s)}"
    if rule == "outage" and rules.max_outage_s is not None:
        return f"longer than {human_duration(rules.max_outage_s)}"
    if rule == "max_faults" and rules.max_faults is not None:
        return f"more than {rules.max_faults}"
    return None


def finding_title(finding: Finding) -> str:
    """The title of a finding: its rule's, or the worst case's own."""
    if finding.worst_case and isinstance(finding.subject, OutageFound):
        return f"{rule_title(finding.rule)} still going at the end of the log"
    return STILL_DEAD_TITLE if finding.worst_case else rule_title(finding.rule)


def finding_message(finding: Finding) -> str:
    """What was found, in one line that names its time and session."""
    subject = finding.subject
    if isinstance(subject, FaultFound):
        return _fault_message(subject)
    if isinstance(subject, SessionEnded):
        return _session_end_message(subject, finding.rule)
    if isinstance(subject, DeadFound):
        return _dead_message(subject)
    if isinstance(subject, OutageFound):
        return outage_line(subject.outage)
    if isinstance(subject, IncidentFound):
        return warning_message(subject.incident)
    if isinstance(subject, UnplacedCrash):
        return f"{CRASH_WORDS[subject.event.kind]}: {unplaced_phrase(subject.event)}"
    if isinstance(subject, UnparsedGpuError):
        return f"a Metal or ANE error in a line that could not be parsed: {subject.text.strip()[:MAX_QUOTED_CHARS]}"
    if isinstance(subject, NothingChecked):
        return "no record to check (--fail-on-empty)"
    return _too_many_message(subject)


def warning_message(item: Trouble, total: int | None = None) -> str:
    """One incident on one line, for a finding or a warning: when, how many, which message, where
    (``total``: how many sessions were read)."""
    where = sessions_phrase(sorted(item.sessions), total) if item.sessions else "in no session"
    return f"{span_phrase(item)}: {item.count} × {item.template} ({where})"


def warning_title(item: Trouble) -> str:
    """A warning's title: the title of its kind's rule."""
    return rule_title(item.kind)


def _fault_message(found: FaultFound) -> str:
    incident = found.incident
    phrase = " ".join(fault_phrase(incident, found.requests_visible).split())
    return f"{human_time(incident.time)} {phrase} (session {incident.session})"


def _session_end_message(ended: SessionEnded, reason: str) -> str:
    session = ended.session
    if reason != "crash":
        what = f"exited for a restart ({FATAL_LOGGER})"
    elif ended.crash_kind is not None and ended.crash_kind != "process_exit":
        what = f"crashed ({CRASH_WORDS[ended.crash_kind]})"
    else:
        what = "ended without an orderly stop"
    last = f"; its last record is at {human_time(session.end)}" if session.end else ""
    return f"session {session.index} {what}{last}"


def _dead_message(found: DeadFound) -> str:
    window = found.window
    if found.still_dead:
        return (
            f"engine generation-dead since {human_time(window.start)} and STILL DEAD when the log ends at "
            f"{human_time(window.log_end)} ({dead_for(window)}, {plural(window.repeats, 'repeated failure')}): "
            "a penalty-boxed engine does not recover without a restart"
        )
    return (
        f"engine generation-dead from {human_time(window.start)}: {window_end_phrase(window)}; "
        f"{dead_for(window)}, {plural(window.repeats, 'repeated failure')}"
    )


def _too_many_message(too_many: TooManyFaults) -> str:
    return (
        f"{plural(too_many.count, 'GPU fault')}, more than --max-faults {too_many.limit}; "
        f"fault {too_many.limit + 1} is at {human_time(too_many.first_over.time)}"
    )


def rule_verdict(result: CheckResult, rule: RuleId) -> str:
    """A rule's word in the verdict table: ``fail``, ``pass``, or ``no records`` when there was nothing to check."""
    if result.count(rule):
        return "fail"
    return "no records" if result.checked_nothing else "pass"


def check_headline(result: CheckResult) -> str:
    """``logscan check: 4 findings (penalty_box 2, dead_engine 2)`` or that there were none."""
    names = result.rules.names
    if not result.findings:
        count = len(names)
        found = "nothing to check, no records" if result.checked_nothing else "no findings"
        return f"logscan check: {found} ({count} rule{'' if count == 1 else 's'}: {', '.join(names)})"
    failed = [rule for rule in names if result.count(rule)]
    parts = ", ".join(f"{rule} {result.count(rule)}" for rule in failed)
    return f"logscan check: {len(result.findings)} finding{'s' if len(result.findings) != 1 else ''} ({parts})"
