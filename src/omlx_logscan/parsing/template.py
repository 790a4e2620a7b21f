"""A row of the message catalog (``parsing.catalog``): an event kind, the regex of its message, a
tag, and the literal every match begins with."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from omlx_logscan.data.catalog_entries import ENTRIES, FOREIGN
from omlx_logscan.parsing.kinds import EventKind


@dataclass(frozen=True)
class Template:
    kind: EventKind
    pattern: str
    tag: str = ""
    literal: str = ""  # the fixed text the pattern opens with, when not given

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Compiled when first matched: a log meets a few dozen of the catalog's patterns, and
        compiling them all would cost every run about 8 ms of its start."""
        return re.compile(self.pattern)

    @cached_property
    def entries(self) -> tuple[str, ...]:
        """The ids of the lexicon entries (``parsing/lexicon.py``) this row covers: the oMLX calls
        that write its message, named in ``data/catalog_entries.py``."""
        return ENTRIES.get(self.pattern, ())

    @property
    def foreign(self) -> str:
        """Why no oMLX call writes this row's text (uvicorn's lines, say); empty for oMLX's own."""
        return FOREIGN.get(self.pattern, "")

    def __post_init__(self) -> None:
        if not self.literal:
            object.__setattr__(self, "literal", _opening_text(self.pattern))
        if not self.literal:
            raise ValueError(f"no literal for {self.pattern!r}: give one")


_FIXED = re.compile(r"(?:[^\\.^$*+?{}\[\]()|]|\\[^\w])+")  # plain characters and escaped punctuation


def _opening_text(pattern: str) -> str:
    """The text every match of ``pattern`` begins with: its fixed characters after ``^``, less the
    last one when a quantifier makes that one optional."""
    body = pattern.removeprefix("^")
    match = _FIXED.match(body)
    if match is None:
        return ""
    fixed = match[0]
    if body[match.end() : match.end() + 1] in ("?", "*", "{"):
        fixed = fixed[:-2] if fixed[-2:-1] == "\\" else fixed[:-1]
    return re.sub(r"\\(.)", r"\1", fixed)
