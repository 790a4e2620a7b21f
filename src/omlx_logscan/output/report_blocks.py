"""Report blocks: parts of the report that can be cut to fit GitHub's comment limit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate

MIN_KEPT_ROWS = 2  # a cut block keeps its first and last row, unless only cutting them can make the report fit


@dataclass
class ReportBlock:
    """A table, code block or chart whose rows may be cut in the middle to save space.

    ``marker`` writes the line that stands where rows were cut, in the block's own syntax
    (a table row, a code line, a Mermaid comment); a sentence after the block names the cut.
    """

    noun: str
    head: list[str]
    rows: list[str]
    tail: list[str]
    marker: Callable[[int], str]
    see_all: str
    keep: int = field(init=False)
    reason: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.keep = len(self.rows)

    def _split(self, keep: int) -> tuple[int, int]:
        first = (keep + 1) // 2
        return first, keep - first

    def lines(self) -> list[str]:
        cut = len(self.rows) - self.keep
        if cut == 0:
            return [*self.head, *self.rows, *self.tail, ""]
        first, last = self._split(self.keep)
        return [
            *self.head,
            *self.rows[:first],
            self.marker(cut),
            *self.rows[len(self.rows) - last :],
            *self.tail,
            "",
            f"*{cut} of {len(self.rows)} {self.noun} are cut at the “…” line above, {self.reason}; "
            f"{self.see_all} shows them all.*",
            "",
        ]

    def size(self) -> int:
        return sum(len(line) + 1 for line in self.lines())

    def cap(self, rows: int, reason: str, floor: int = MIN_KEPT_ROWS) -> None:
        """Keep at most ``rows`` rows, and no fewer than ``floor``."""
        keep = max(rows, floor)
        if keep < self.keep:
            self.keep, self.reason = keep, reason

    def trim(self, chars: int, reason: str, floor: int) -> None:
        """Cut rows from the middle until at least ``chars`` characters are gone (or ``floor`` rows are left)."""
        sums = [0, *accumulate(len(row) + 1 for row in self.rows)]

        def kept(keep: int) -> int:
            first, last = self._split(keep)
            return sums[first] + sums[-1] - sums[len(self.rows) - last]

        now = kept(self.keep)
        keep = self.keep
        while keep > floor and now - kept(keep) < chars:
            keep -= 1
        self.cap(keep, reason, floor)


Part = str | ReportBlock
