"""The outage generator (bench/make_outages.py) writes what its truth says, the same for the same seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from outage_logs import make_outages, outage_log


def test_the_same_seed_writes_the_same_bytes(tmp_path: Path) -> None:
    first, truth = outage_log(tmp_path, 3, "console", "info")
    again = tmp_path / "again"
    again.mkdir()
    second, _ = outage_log(again, 3, "console", "info")
    assert first.read_bytes() == second.read_bytes()
    assert truth["lines"] == len(first.read_text(encoding="utf-8").splitlines())
    assert sorted(truth["order"]) == sorted(make_outages.INCIDENTS)


def test_a_level_drops_the_records_below_it_and_only_a_capture_has_the_banner(tmp_path: Path) -> None:
    texts = {
        (fmt, level): outage_log(tmp_path, 2, fmt, level)[0].read_text()
        for fmt in ("file", "console")
        for level in ("debug", "warning")
    }
    assert " - DEBUG - [-] - Added request " in texts["file", "debug"]
    assert " - INFO - " not in texts["file", "warning"] and " - CRITICAL - [-] - " in texts["file", "warning"]
    assert (
        "oMLX - LLM inference" in texts["console", "warning"] and "oMLX - LLM inference" not in texts["file", "debug"]
    )
    assert " - [-] - " not in texts["console", "debug"]


def test_the_command_line_writes_the_log_and_its_truth(tmp_path: Path) -> None:
    out = tmp_path / "only-wedge.log"
    assert make_outages.main([str(out), "--seed", "9", "--incidents", "wedge", "--level", "info"]) == 0
    truth = json.loads(out.with_suffix(".truth.json").read_text())
    assert truth["order"] == ["wedge"] and len(truth["wedges"]) == 1 and truth["level"] == "info"
    with pytest.raises(SystemExit):
        make_outages.main([str(out), "--incidents", "meteor"])
