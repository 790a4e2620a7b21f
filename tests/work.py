"""Work counted, not timed: the lines of Python a call runs, for tests of how work grows with the input."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any


def lines_run(call: Callable[[], object]) -> int:
    """How many lines of Python ``call`` runs, in any thread it starts (a loop's line once each time
    round, a comprehension's too): a measure of its work that other work on the machine leaves as
    it is, unlike its time."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        nonlocal count
        count += event == "line"
        return tracer

    threading.settrace(tracer)
    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
    return count


def growth(work: Callable[[int], int], n: int) -> float:
    """The work the input from 2n to 4n adds over what the input from n to 2n adds: 2 when the
    work is linear, 4 when quadratic. Differences leave out what every run costs whatever its input."""
    work(n)  # caches filled, patterns compiled: not counted
    at_n, at_2n, at_4n = work(n), work(2 * n), work(4 * n)
    return (at_4n - at_2n) / (at_2n - at_n)
