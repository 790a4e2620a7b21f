"""Every shape of fault log takes work linear in its size (issue 36 item 2): work counted, not timed.

Before: a penalty box's repeats asked the growing incident for its last time at each new record,
an absorbed fault looked through all of its session's events, and every session too short for a
whole load window worked out the whole log's medians again: 80,000 SubmissionsIgnored took 217 s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omlx_logscan.cli.app import app
from tests.synthetic import absorbed_faults, busy, ignored, record, start, timeout, write_log
from tests.work import growth, lines_run


def _penalty_box(n: int) -> list[str]:
    """One Timeout, then n SubmissionsIgnored a second apart (one dead window: one incident of n records)."""
    return [start(0), busy(1), timeout(2), *(ignored(2 + index / 60) for index in range(n))]


def _sessions(n: int) -> list[str]:
    return [line for index in range(n) for line in (start(10 * index), busy(10 * index + 1), timeout(10 * index + 2))]


def _among_requests(n: int) -> list[str]:
    """Absorbed Timeouts, each among finished requests of the same process."""
    finished = "Chat completion: 214 tokens in 9.20s (23.3 tok/s), prompt: 1873"
    return [
        start(0),
        *(
            line
            for index in range(n)
            for line in (
                timeout(index + 1),
                *(record(index + 1 + k / 10, "INFO", "omlx.server", finished) for k in (1, 2, 3)),
            )
        ),
    ]


# Each shape and its n: big enough that a quadratic part of the work would show.
SHAPES: dict[str, tuple[Callable[[int], list[str]], int]] = {
    "penalty box": (_penalty_box, 300),
    "absorbed": (lambda n: absorbed_faults(1, n), 80),
    "sessions": (_sessions, 80),
    "among requests": (_among_requests, 80),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["timeline"], ["report"]]
)  # (JSON documents are checked against the schema here: work of the tests)
@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_takes_linear_work(tmp_path: Path, shape: str, command: list[str]) -> None:
    runner = CliRunner()
    lines, n = SHAPES[shape]

    def work(n: int) -> int:
        log = write_log(tmp_path / f"{n}.log", lines(n))
        return lines_run(lambda: runner.invoke(app, [*command, "-q", str(log)], catch_exceptions=False))

    assert growth(work, n) < 3  # 2 when linear, 4 when quadratic
