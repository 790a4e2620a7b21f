"""The shipped example reproduces the escalation table of oMLX issue 3706."""

from __future__ import annotations

from conftest import summary_of
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.output.phrases import escalation_rows


def test_six_timeouts_with_the_reports_outcomes(example_analysis: Analysis) -> None:
    got = [(f.time[:19] if f.time else None, f.kind, f.outcome) for f in example_analysis.faults]
    assert got == [
        ("2026-09-15T20:19:38", "timeout", "absorbed"),
        ("2026-09-15T21:44:31", "timeout", "absorbed"),
        ("2026-09-15T22:20:21", "timeout", "penalty_box"),
        ("2026-09-15T23:26:38", "timeout", "absorbed"),
        ("2026-09-16T02:07:02", "timeout", "penalty_box"),
        ("2026-09-16T03:22:40", "timeout", "absorbed"),
    ]


def test_dead_windows(example_analysis: Analysis) -> None:
    windows = example_analysis.dead_windows
    assert [
        (w.start[:19], w.last_failure[:19], w.end_reason, w.repeats) for w in windows if w.start and w.last_failure
    ] == [
        ("2026-09-15T22:20:21", "2026-09-15T23:07:36", "restart", 8),
        ("2026-09-16T02:07:02", "2026-09-16T02:41:41", "restart", 6),
    ]
    first = windows[0]
    assert not first.end_exact and first.end_after is not None and first.end_after[:19] == "2026-09-15T23:07:36"
    assert min(first.intervals_s) >= 4.9 * 60 and max(first.intervals_s) <= 7 * 60


def test_escalation_rows_read_like_the_report(example_analysis: Analysis) -> None:
    rows = escalation_rows(example_analysis)
    texts = [(r["time"][11:] if r["time"] else None, r["text"]) for r in rows]
    assert texts[2] == ("22:20:21", "Timeout → SubmissionsIgnored in the same second")
    assert texts[3][0] == "22:25:21" and rows[3]["until"][11:] == "23:07:36"
    assert "engine generation-dead" in texts[3][1]
    assert texts[0][1].startswith("Timeout   absorbed")


def test_one_stack_for_all_faults(example_analysis: Analysis) -> None:
    sigs = example_analysis.signatures
    assert len(sigs) == 1 and sigs[0].faults == 6
    assert sigs[0].call_site == "cache_clear"
    assert sigs[0].innermost_code == "mx.synchronize()  # default stream"
    assert [f["module"] for f in sigs[0].frames][-1] == "omlx/utils/metal_sync.py"
    assert "identical for all 6 faults" in summary_of(example_analysis)


def test_sessions_and_level(example_analysis: Analysis) -> None:
    assert example_analysis.stream.lowest_level == "WARNING"
    assert len(example_analysis.sessions) == 160
    assert sum(1 for s in example_analysis.sessions if s.faults) == 4
    assert all(not s.start_exact for s in example_analysis.sessions)
    first_on_27 = example_analysis.sessions[156]
    assert first_on_27.start is not None and first_on_27.start[:19] == "2026-09-15T17:56:38"
