"""On synthetic logs with a known ground truth, counts, faults and dead windows match it exactly."""

from __future__ import annotations

import gzip

import pytest

from conftest import GENERATED, analysis_of, generated_cases, stream_of, truth

CASES = generated_cases()


def test_fixture_set_covers_formats_levels_and_rotation() -> None:
    names = " ".join(CASES)
    assert len(CASES) >= 20
    for part in ("file", "console", "info", "warning", "debug", "rotated"):
        assert part in names


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_event_counts_equal_truth(case: str) -> None:
    expected = truth(case)
    stream = stream_of(GENERATED / case)
    got = {kind: stream.kind_counts.get(kind, 0) for kind in expected["counts"]}
    assert got == expected["counts"]
    texts = [gzip.decompress(p.read_bytes()).decode() for p in sorted((GENERATED / case).iterdir())]
    lines_on_disk = sum(len(t.splitlines()) for t in texts)
    # The generator's midnight rotation drops the untimed lines before the first record (the
    # first banner): what the files hold, not what the generator planned, is what a log can show.
    missing_banners = expected["process_starts"] - sum(t.count("oMLX - LLM inference") for t in texts)
    starts_visible = expected["format"] == "console" or expected["level"] != "warning"
    if starts_visible:
        visible = expected["process_starts"] - (missing_banners if expected["format"] == "console" else 0)
        assert stream.kind_counts["process_start"] == visible
    else:  # a WARNING-level server.log holds no start line at all
        assert stream.kind_counts.get("process_start", 0) == 0
    acc = stream.accounting
    assert acc.lines == lines_on_disk
    assert lines_on_disk == expected["lines"] or (expected["format"] == "console" and "rotated" in case)
    assert acc.lines == acc.accounted
    assert acc.unparsed == 0


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_faults_equal_truth(case: str) -> None:
    expected = truth(case)
    analysis = analysis_of(GENERATED / case)
    got = [(f.time[:19] if f.time else None, f.kind, f.outcome) for f in analysis.faults]
    want = [(f["time"], f["kind"], f["outcome"]) for f in expected["faults"]]
    assert [g[:2] for g in got] == [w[:2] for w in want]
    for fault, (_t, _k, outcome) in zip(analysis.faults, want, strict=True):
        if fault.outcome == "unknown" and outcome == "absorbed":
            # Only allowed when the log holds nothing after the fault that could show the engine went on.
            assert analysis.log_end is not None and fault.last_time is not None
            assert analysis.log_end <= fault.last_time
        else:
            assert fault.outcome == outcome


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_dead_windows_equal_truth(case: str) -> None:
    expected = truth(case)
    analysis = analysis_of(GENERATED / case)
    windows = analysis.dead_windows
    assert [
        (w.start[:19] if w.start else None, w.last_failure[:19] if w.last_failure else None, w.repeats) for w in windows
    ] == [(w["start"], w["last_failure"], w["repeats"]) for w in expected["dead_windows"]]
    for got, want in zip(windows, expected["dead_windows"], strict=True):
        log_ends_with_it = (
            analysis.log_end is not None and got.last_failure is not None and (analysis.log_end <= got.last_failure)
        )
        if got.end_reason == "eof" and want["end_reason"] == "restart":
            # Only allowed when the log ends with the window's last failure: it cannot show the restart.
            assert log_ends_with_it
        else:
            assert got.end_reason == want["end_reason"]
        if got.end_exact:
            assert got.end is not None and got.end[:19] == want["end"]
        # Finished requests are INFO lines: unknown (None) in a WARNING-level log, else none in a dead window.
        assert got.requests_completed == (0 if expected["level"] != "warning" else None)


def test_info_level_restart_times_are_exact() -> None:
    analysis = analysis_of(GENERATED / "s1-file-info")
    restarted = [w for w in analysis.dead_windows if w.end_reason == "restart"]
    assert restarted and all(w.end_exact for w in restarted)
