"""Where every line goes: blank lines are counted as blank wherever they stand (issue 27, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REAL, pasted, stream_of
from omlx_logscan.parsing.grammar import parse_line

START = "2026-06-01 10:00:00,000 - omlx.server - INFO - [-] - Starting oMLX server\n"
ROUTINE = "2026-06-01 10:00:{:02d},000 - omlx.scheduler - DEBUG - [-] - Scheduler step {} tokens=5\n"
FAULT = (
    "2026-06-01 10:00:02,000 - omlx.engine_core - ERROR - [-] - Engine loop error: boom\n"
    "Traceback (most recent call last):\n"
    '  File "/x/omlx/engine_core.py", line 500, in _engine_loop\n'
    "ValueError: boom\n"
)
DUMP = (
    "Fatal Python error: Aborted\n"
    "\n"
    "Current thread 0x0000000204842000 (most recent call first):\n"
    '  File "/x/omlx/cache/paged_ssd_cache.py", line 854 in _writer_loop\n'
    "\n"
    "Thread 0x0000000201046000 (most recent call first):\n"
    '  File "/x/omlx/scheduler.py", line 121 in step\n'
)


@pytest.mark.parametrize(
    "text",
    [
        START + "\n\n" + FAULT + "\n\n" + ROUTINE.format(3, 3) + "\n",  # between, after a traceback, at the end
        "".join(ROUTINE.format(n % 60, n) + ("\n" if n % 7 == 0 else "") for n in range(200)),  # among routine lines
        START + DUMP + "\n",  # inside a faulthandler dump, between its threads
        "\n\n" + START,  # before anything
    ],
    ids=["around-records", "among-routine-lines", "inside-a-dump", "leading"],
)
def test_every_blank_line_is_counted_blank(tmp_path: Path, text: str) -> None:
    acc = stream_of(pasted(tmp_path, text)).accounting
    lines = text.splitlines()
    assert acc.lines == len(lines)
    assert acc.blank == sum(1 for line in lines if not line.strip())
    assert acc.accounted == acc.lines


@pytest.mark.parametrize("path", sorted(REAL.glob("*.log")), ids=lambda p: p.name)
def test_the_blank_lines_of_real_pastes_are_counted(path: Path) -> None:
    acc = stream_of(path).accounting
    lines = path.read_bytes().decode("utf-8", "replace").splitlines()
    assert acc.blank == sum(1 for line in lines if parse_line(line).form == "blank")
    assert acc.accounted == acc.lines
