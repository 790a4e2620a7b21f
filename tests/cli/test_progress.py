"""The progress bar appears only for big inputs, on a terminal, without --quiet."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from omlx_logscan.cli.progress import PROGRESS_MIN_BYTES, progress_for
from omlx_logscan.inputs.sources import resolve


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def big_log(tmp_path: Path) -> Path:
    log = tmp_path / "server.log"
    with open(log, "wb") as handle:
        handle.truncate(PROGRESS_MIN_BYTES + 1)  # sparse: size is all progress_for looks at
    return log


def test_a_bar_on_a_terminal_for_a_big_input(big_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_for(resolve([str(big_log)]), quiet=False) as tick:
        assert tick is not None
        tick(PROGRESS_MIN_BYTES + 1)
    with progress_for(resolve([str(big_log)]), quiet=True) as tick:
        assert tick is None


def test_no_bar_when_stderr_is_not_a_terminal_or_the_input_is_small(
    big_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with progress_for(resolve([str(big_log)]), quiet=False) as tick:
        assert tick is None
    small = tmp_path / "small.log"
    small.write_text("x\n")
    monkeypatch.setattr(sys, "stderr", _Terminal())
    with progress_for(resolve([str(small)]), quiet=False) as tick:
        assert tick is None
