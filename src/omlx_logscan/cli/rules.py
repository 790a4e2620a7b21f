"""The ``--fail-on`` option of ``check``: a comma list of rule names, checked against the rules."""

from __future__ import annotations

from omlx_logscan.analysis.check import FAIL_ON_CHOICES
from omlx_logscan.errors import LogscanError


def parse_fail_on(text: str) -> tuple[str, ...]:
    """``penalty_box,crash`` → the rule names, in order, without repeats; unknown names are an error."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in FAIL_ON_CHOICES]
    if unknown:
        raise LogscanError(f"--fail-on {', '.join(unknown)}: unknown rule (rules: {', '.join(FAIL_ON_CHOICES)})")
    return tuple(dict.fromkeys(names))
