"""The ids of the check's rules and its defaults, apart from the check itself: ``--help``, the option
parser, the GitHub Action and the docs take them from here without loading the analysis."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

from omlx_logscan.analysis.severity import INCIDENT_KINDS, KIND_SEVERITY, Severity, at_least

# Every rule, in the order they are listed.
RuleId = Literal[
    "timeout",
    "submissions_ignored",
    "penalty_box",
    "dead_engine",
    "crash",
    "fatal_exit",
    "out_of_memory",
    "any_gpu_error",
    "unparsed_gpu_error",
    "error",
    "wedge",
    "possible_wedge",
    "retry_loop",
    "gpu_fault",
    "reboot",
    "load_failure",
    "rejected",
    "memory_pressure",
    "aborted",
    "fallback",
    "max_faults",
    "outage",
    "empty",
]
RULES: tuple[RuleId, ...] = get_args(RuleId)

# The rules every check runs unless --fail-on names others, and the severity from which every incident
# fails too (--fail-level): the CLI, the GitHub Action (action.yml) and docs/check.md say these.
DEFAULT_RULES: tuple[RuleId, ...] = ("penalty_box", "dead_engine", "crash", "unparsed_gpu_error")
DEFAULT_FAIL_LEVEL: Severity = "error"


# These run through an option of their own: a threshold (--max-faults, --max-outage), --fail-on-empty.
OPTION_RULES: tuple[RuleId, ...] = ("max_faults", "outage", "empty")


CHOOSABLE_RULES: tuple[RuleId, ...] = tuple(name for name in RULES if name not in OPTION_RULES)


def is_rule(name: str) -> TypeGuard[RuleId]:
    """Whether a name the user gave is a rule's id."""
    return name in RULES


def level_rules(level: Severity) -> tuple[RuleId, ...]:
    """The rules of the incident kinds that can be of severity ``level`` or worse (a possible wedge,
    a warning, with the wedges), in the order of RULES."""
    kinds: set[str] = {kind for kind in INCIDENT_KINDS if at_least(KIND_SEVERITY[kind], level)}
    if "wedge" in kinds and at_least("warning", level):
        kinds.add("possible_wedge")
    return tuple(name for name in RULES if name in kinds)
