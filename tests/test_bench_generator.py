"""The benchmark's own generator (bench/make_log.py) writes what its truth says, as logscan reads it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import bench_module
from omlx_logscan import analyze, read_events, resolve

BENCH = Path(__file__).resolve().parents[1] / "bench"


make_log = bench_module("make_log")


@pytest.fixture(scope="module", params=["debug", "info"])
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("bench") / f"server-{request.param}.log"
    truth = make_log.write_log(path, 1, 3, seed=7, level=request.param)
    return path, truth


def test_truth_is_counted_from_the_file(written: tuple[Path, dict[str, Any]]) -> None:
    path, truth = written
    text = path.read_text(encoding="utf-8")
    assert truth["bytes"] == path.stat().st_size
    assert 0.9 * 2**20 < truth["bytes"] < 1.1 * 2**20
    assert truth["lines"] == text.count("\n") and text.endswith("\n")
    assert (" - DEBUG - " in text) == (truth["level"] == "debug")
    # The story the benchmark needs: absorbed timeouts, a penalty box with its repeats, an orderly stop.
    outcomes = Counter(f["outcome"] for f in truth["faults"])
    assert outcomes["absorbed"] >= 2 and outcomes["penalty_box"] >= 1
    assert all(w["repeats"] >= 3 and w["end_reason"] == "shutdown" for w in truth["dead_windows"])
    assert all(n > 0 for n in truth["counts"].values())


def test_logscan_reads_what_the_truth_says(written: tuple[Path, dict[str, Any]]) -> None:
    path, truth = written
    stream = read_events(resolve([str(path)]))
    analysis = analyze(stream)
    assert stream.accounting.lines == truth["lines"]
    assert stream.accounting.unparsed == 0
    assert {kind: stream.kind_counts.get(kind, 0) for kind in truth["counts"]} == truth["counts"]
    assert stream.kind_counts["process_start"] == truth["process_starts"]
    assert [(s.start[:19] if s.start else None, s.end_reason) for s in analysis.sessions] == [
        (s["start"], s["end_reason"]) for s in truth["sessions"]
    ]
    assert [(f.time[:19] if f.time else None, f.kind, f.outcome) for f in analysis.faults] == [
        (f["time"], f["kind"], f["outcome"]) for f in truth["faults"]
    ]
    assert [
        (w.start[:19] if w.start else None, w.last_failure[:19] if w.last_failure else None, w.repeats, w.end_reason)
        for w in analysis.dead_windows
    ] == [(w["start"], w["last_failure"], w["repeats"], w["end_reason"]) for w in truth["dead_windows"]]
    assert [w.end[:19] if w.end else None for w in analysis.dead_windows] == [w["end"] for w in truth["dead_windows"]]
    assert all(w.requests_completed == 0 for w in analysis.dead_windows)


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    first, second, other = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "c.log"
    make_log.write_log(first, 0.2, 3, seed=3)
    make_log.write_log(second, 0.2, 3, seed=3)
    make_log.write_log(other, 0.2, 3, seed=4)
    assert first.read_bytes() == second.read_bytes() != other.read_bytes()
