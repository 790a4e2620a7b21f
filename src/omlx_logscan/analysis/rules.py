"""The ids of the check's rules, apart from the check itself: ``--help`` and the option parser list
them without loading the analysis."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

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
    "max_faults",
    "outage",
    "empty",
]
RULES: tuple[RuleId, ...] = get_args(RuleId)


# These run through an option of their own: a threshold (--max-faults, --max-outage), --fail-on-empty.
OPTION_RULES: tuple[RuleId, ...] = ("max_faults", "outage", "empty")


CHOOSABLE_RULES: tuple[RuleId, ...] = tuple(name for name in RULES if name not in OPTION_RULES)


def is_rule(name: str) -> TypeGuard[RuleId]:
    """Whether a name the user gave is a rule's id."""
    return name in RULES
