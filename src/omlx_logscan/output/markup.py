"""Markdown escaping that every Markdown writer shares (timeline, bounds, report, CI summary)."""

from __future__ import annotations

import re
from collections.abc import Sequence


def md_escape(text: str) -> str:
    """Text safe inside a Markdown table cell: pipes escaped, newlines folded."""
    return text.replace("|", "\\|").replace("\n", " ")


def fence_for(lines: Sequence[str]) -> str:
    """A code fence longer than any backtick run inside, so log text cannot close it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)
