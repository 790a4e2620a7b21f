"""Finding a message's catalog row: the first-character index over ``CATALOG`` that skips the rows
a message cannot match, and the first row it does match. Kept apart from the table it indexes."""

from __future__ import annotations

import re

from omlx_logscan.parsing.catalog import CATALOG
from omlx_logscan.parsing.template import Template


def _first_character(pattern: str) -> str | None:
    """The character every match of an anchored pattern begins with, when the pattern fixes one."""
    fixed = len(pattern) > 2 and pattern[0] == "^" and pattern[1] not in ".^$*+?{}[]()|\\" and pattern[2] not in "*?{"
    return pattern[1] if fixed and not _alternatives_at_top(pattern) else None


def _alternatives_at_top(pattern: str) -> bool:
    """Whether a ``|`` outside any group splits the pattern ("^A|B" may begin with B)."""
    depth, in_class, escaped = 0, False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return True
    return False


def _by_first_character() -> tuple[dict[str, tuple[Template, ...]], tuple[Template, ...]]:
    firsts = [_first_character(t.pattern) for t in CATALOG]
    open_start = tuple(t for t, first in zip(CATALOG, firsts, strict=True) if first is None)
    index = {
        char: tuple(t for t, first in zip(CATALOG, firsts, strict=True) if first in (char, None))
        for char in {first for first in firsts if first is not None}
    }
    return index, open_start


_BY_FIRST, _OPEN_START = _by_first_character()


def candidates(message: str) -> tuple[Template, ...]:
    """The templates that can match ``message``, in catalog order: an anchored pattern whose
    first character is fixed matches no message that begins otherwise, so most are skipped."""
    return _BY_FIRST.get(message[:1], _OPEN_START)


def catalog_match(message: str) -> tuple[Template, re.Match[str]] | None:
    """The first catalog row ``message`` matches, and its match (the literal every match holds is
    tested first: ``in`` is far cheaper than a search)."""
    for template in candidates(message):
        if template.literal in message and (match := template.regex.search(message)):
            return template, match
    return None
