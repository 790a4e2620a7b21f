"""The incident list (analysis/incidents.py): every kind of trouble, worst first, counted as the issue
asks (requests once, pressure as episodes), on shared pastes and on fixtures of the same shapes."""

from __future__ import annotations

from conftest import FIXTURES, REAL, analysis_of, summary_of
from omlx_logscan.analysis.incidents import PENALTY_BOX, UNKNOWN_OUTCOME, record_kind
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.analysis.severity import SEVERITIES
from omlx_logscan.analysis.trouble import Trouble
from omlx_logscan.output.failures import sessions_phrase
from omlx_logscan.output.incidents import incident_lines

INCIDENTS = FIXTURES / "incidents"


def kinds(analysis: Analysis) -> list[tuple[str, str, int]]:
    return [(item.kind, item.severity, item.count) for item in analysis.incidents]


def only(analysis: Analysis, kind: str) -> Trouble:
    (item,) = [item for item in analysis.incidents if item.kind == kind]
    return item


def test_the_example_leads_with_the_penalty_box_and_ranks_worst_first(example_analysis: Analysis) -> None:
    assert kinds(example_analysis) == [
        ("dead_engine", "critical", 2),
        ("gpu_fault", "error", 4),  # the absorbed Timeouts; the two that penalty-boxed are the dead engines
        ("rejected", "warning", 305),
        ("memory_pressure", "warning", 91),
    ]
    assert example_analysis.incidents[0].template == PENALTY_BOX
    ranks = [SEVERITIES.index(item.severity) for item in example_analysis.incidents]
    assert ranks == sorted(ranks)
    summary = summary_of(example_analysis)
    assert summary.startswith(f"Worst: critical, 2 × {PENALTY_BOX} (sessions 157, 159). Every kind of trouble: ")
    assert "2 × dead engine (penalty box), 4 × GPU fault, 305 × rejected request, 91 × memory-pressure" in summary


def test_ssd_write_queue_flow_control_is_no_failure(example_analysis: Analysis) -> None:
    """``SSD write queue saturated … inline`` is written in ``except queue.Full:`` that then writes the
    block itself: not an incident, not in the Errors part, not in the summary."""
    flow = [ev for s in example_analysis.sessions for ev in s.events if "SSD write queue saturated" in ev.message]
    assert len(flow) == 304 and all(record_kind(ev) is None for ev in flow)
    assert not example_analysis.errors.groups
    assert "SSD write queue" not in summary_of(example_analysis)


def test_session_lists_are_ranges_and_past_eight_a_count(example_analysis: Analysis) -> None:
    lines = incident_lines(example_analysis.incidents, len(example_analysis.sessions))
    assert "(sessions 157–158, 160; " in lines[1]
    assert "(in 160 of 160 sessions; " in lines[2] and "(in 75 of 160 sessions; " in lines[3]
    assert sessions_phrase(list(range(1, 9)), 160) == "sessions 1–8"  # eight are still listed
    assert sessions_phrase(list(range(1, 10)), 160) == "in 9 of 160 sessions"


def test_refusals_pressure_and_aborts_are_told_and_counted_by_request() -> None:
    """A preflight refusal and its 507 answer are one rejected request; the dynamic ceiling's 507 another;
    a soft → hard → ok swing with a hot-cache shrink and a settle barrier is one episode; an abort and the
    prefill it interrupted are one aborted request."""
    analysis = analysis_of(INCIDENTS / "admission-and-pressure.log")
    assert kinds(analysis) == [
        ("memory_pressure", "warning", 1),
        ("rejected", "warning", 1),
        ("rejected", "warning", 1),
        ("aborted", "notice", 1),
    ]
    preflight = analysis.incidents[1]
    assert preflight.template.startswith("Preflight rejected (") and len(preflight.records) == 2
    assert "does not fit under the " in analysis.incidents[2].template
    (episode,) = analysis.incidents[0].episodes
    assert episode["worst_level"] == "hard" and episode["records"] == 5
    assert (episode["start"], episode["end"]) == ("2026-10-03T14:05:40.312", "2026-10-03T14:06:31.644")
    assert episode["figures"] == {
        "ceiling_gb": 48.0,
        "current_gb": 46.4,
        "freed_gb": 3.1,
        "hard_gb": 46.0,
        "soft_gb": 40.0,
    }
    assert len(only(analysis, "aborted").records) == 2
    summary = summary_of(analysis)
    assert "No GPU faults" not in summary and summary.startswith("Worst: warning, 1 × Memory pressure level")
    assert "1 × memory-pressure episode, 2 × rejected request, 1 × aborted request" in summary
    assert "1 request rejected with HTTP 4xx or 507 (1 × 507)" in summary and "other failure" not in summary


def test_client_aborts_count_requests_not_records() -> None:
    """Shared paste 667: two aborted requests, the first with the prefill it interrupted (three records)."""
    aborted = only(analysis_of(REAL / "omlx-issue-667.log"), "aborted")
    assert (aborted.count, len(aborted.records), aborted.severity) == (2, 3, "notice")


def test_each_http_answer_is_a_request_of_its_own() -> None:
    """The real wedge run answered 422 twice and 404 once within a second: three rejected requests."""
    analysis = analysis_of(FIXTURES / "real-omlx" / "g-debug-wedge@0.6.3rc2.server.log")
    rejected = {item.template: item.count for item in analysis.incidents if item.kind == "rejected"}
    assert rejected == {"POST /v1/chat/completions → 422": 2, "POST /v1/chat/completions → 404": 1}


def test_failures_the_gate_passed_are_error_incidents() -> None:
    """Shared pastes: an ``Engine loop error`` with its traceback (943), a failed model load (2530), an
    HTTP 500 (1645); a GPU error whose end the log does not show is a GPU fault of unknown outcome."""
    assert kinds(analysis_of(REAL / "omlx-issue-943.log"))[0] == ("error", "error", 1)
    assert ("load_failure", "error", 1) in kinds(analysis_of(REAL / "omlx-issue-2530.log"))
    assert any(item.template.endswith("→ 500") for item in analysis_of(REAL / "omlx-issue-1645.log").incidents)
    (fault,) = analysis_of(INCIDENTS / "metal-unknown-outcome.log").incidents
    assert (fault.kind, fault.severity, fault.template) == ("gpu_fault", "error", f"{UNKNOWN_OUTCOME} (ResourceLimit)")


def test_a_fallback_is_a_notice_and_an_unmatched_error_an_error() -> None:
    """Shared paste mlx-3623: the VLM → LLM fallback and the root logger's ERROR that matches no message."""
    assert kinds(analysis_of(REAL / "ml-explore-mlx-3623.log")) == [("error", "error", 1), ("fallback", "notice", 1)]


def test_a_crash_a_fault_caused_is_told_once() -> None:
    """Shared paste 1387: the Metal error and the C++ runtime's abort are one crash, the fault's."""
    (crash,) = analysis_of(REAL / "omlx-issue-1387.log").incidents
    assert (crash.kind, crash.severity, crash.count, len(crash.records)) == ("crash", "critical", 1, 2)


def test_a_startup_crash_is_a_fatal_exit_at_start() -> None:
    """A terminal capture: the banner, the settings, ``Uvicorn running on …``, then a traceback through
    oMLX's CLI entry point. The session ends in a fatal exit, told by the traceback's exception."""
    analysis = analysis_of(INCIDENTS / "startup-crash.log")
    (session,) = analysis.sessions
    assert session.end_reason == "fatal_exit"
    (item,) = analysis.incidents
    assert (item.kind, item.severity) == ("fatal_exit", "critical")
    assert item.example.message == "ValueError: Model directory not found: /Users/dev/models"
    assert [outage.reason for outage in analysis.outages.items] == ["at_start"]


def test_records_without_events_make_a_session() -> None:
    """Shared paste 2232: two bare oMLX messages, no time, no event: one session whose start is not in
    the log; the summary says so rather than "0 sessions"."""
    analysis = analysis_of(REAL / "omlx-issue-2232.log")
    (session,) = analysis.sessions
    assert not session.start_in_log and session.start is None
    assert "in 1 session" in summary_of(analysis)
