"""The benchmark's fleet case (bench/fleet_bench.py): the pooled answer equals the sum of the hosts' timelines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "fleet_bench.py"
pytest.importorskip("duckdb", reason="logscan fleet runs on DuckDB, a dependency")


@pytest.mark.slow
def test_a_small_fleet_matches_every_hosts_timeline(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--hosts",
            "4",
            "--days",
            "12",
            "--size-mib",
            "0.05",
            "--keep",
            str(tmp_path / "f"),
        ],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fleet matches every host's timeline" in done.stdout
    assert "peak RSS" in done.stdout
    # Every third Mac upgraded: both macOS versions are among the exported sessions.
    histories = sorted((tmp_path / "f" / "logs").glob("*/os-history.txt"))
    assert sum("27.0" in path.read_text() for path in histories) == 2


def test_a_wrong_answer_is_a_mismatch() -> None:
    sys.path.insert(0, str(BENCH.parent))
    import fleet_bench

    truth = {"hosts": {"mac-000": {"faults": 3, "penalty_box_entries": 1, "dead_hours": 0.5}}, "versions": {}}
    answer = {"hosts": [{"host": "mac-000", "faults": 2, "penalty_box_entries": 1, "dead_hours": 0.5}], "versions": []}
    assert fleet_bench.compare(answer, truth) == [
        "mac-000: fleet says {'faults': 2, 'penalty_box_entries': 1, 'dead_hours': 0.5}, its timeline "
        "{'faults': 3, 'penalty_box_entries': 1, 'dead_hours': 0.5}"
    ]
