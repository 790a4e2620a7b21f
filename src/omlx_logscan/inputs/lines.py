"""The unit every reader hands to parsing: one numbered line of text."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class KeptLine:
    """A line for the Python grammar: its 1-based number and its text."""

    line: int
    text: str
