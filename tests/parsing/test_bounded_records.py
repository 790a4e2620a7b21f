"""Record assembly stays linear and a record's kept text bounded, whatever the shape (issue 29 item 7)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.parsing.classify import classify
from omlx_logscan.parsing.records import KEEP_HEAD, KEEP_TAIL, assemble
from tests.work import growth, lines_run

FAULT = (
    "2026-06-20 12:07:{second:02d},865 - omlx.engine_core - ERROR - Engine loop error: [METAL] Command buffer "
    "execution failed: Impacting Interactivity (0000000e:kIOGPUCommandBufferCallbackErrorImpactingInteractivity)"
)
CHAINED = [
    "Traceback (most recent call last):",
    '  File "/omlx/engine.py", line 3, in step',
    "    run()",
    "ValueError: step {n} failed",
    "",
    "During handling of the above exception, another exception occurred:",
    "",
]


def _blank_lines(n: int) -> list[str]:
    return [FAULT.format(second=1), *[""] * n, FAULT.format(second=2)]


def _chained_tracebacks(n: int) -> list[str]:
    body = [line.format(n=index) for index in range(n) for line in CHAINED]
    return [FAULT.format(second=1), *body, *CHAINED[:4], FAULT.format(second=2)]


def _work(shape: Callable[[int], list[str]]) -> Callable[[int], int]:
    """The lines of Python assembling the records of ``shape`` at a size runs."""

    def work(n: int) -> int:
        kept = [KeptLine(number, text) for number, text in enumerate(shape(n), 1)]
        return lines_run(lambda: assemble(kept))

    return work


@pytest.mark.slow
def test_blank_lines_between_records_take_linear_time() -> None:
    # Before: every blank line looked through the whole record for a traceback (10,000 blank lines 11 s).
    assert growth(_work(_blank_lines), 2_000) < 3  # 2 when linear, 4 when quadratic


@pytest.mark.slow
def test_chained_tracebacks_take_linear_time() -> None:
    assert growth(_work(_chained_tracebacks), 300) < 3


def test_a_long_record_keeps_its_head_and_tail_and_counts_the_rest() -> None:
    lines = _chained_tracebacks(2_000)
    assembly = assemble([KeptLine(number, text) for number, text in enumerate(lines, 1)])
    first, last = assembly.records
    continuation = len(lines) - 2
    assert first.lines == 1 + continuation  # every line is still counted as the record's
    assert KEEP_HEAD + 1 + KEEP_TAIL <= len(first.extra) <= KEEP_HEAD + 2 * KEEP_TAIL  # bounded, whatever the input
    assert first.dropped + len(first.extra) - 1 == continuation  # the note stands for the dropped lines
    assert first.extra[:4] == [line.format(n=0) for line in CHAINED[:4]]
    assert first.extra[-1] == "ValueError: step {n} failed"  # the innermost lines are the tail's
    assert f"{first.dropped} continuation lines not kept" in first.extra[KEEP_HEAD]
    (event,) = classify(first, "paste.log", 0)
    assert event.fields["continuation_dropped"] == first.dropped
    assert event.lines == first.lines
    assert last.lines == 1
