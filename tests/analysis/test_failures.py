"""Failures other than GPU faults, grouped by template (issue 27, item 4), and the rejected requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REAL, analysis_of
from omlx_logscan.analysis.failures import ANY_SHOWN, DETAIL, masked
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.parsing.lexicon import lexicon

STAMP = "2026-09-15 {} - {} - {} - [-] - {}\n"
METAL = (
    "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)"
)


def line(clock: str, level: str, message: str, logger: str = "omlx.engine_core") -> str:
    return STAMP.format(clock, logger, level, message)


def two_processes(tmp_path: Path) -> Analysis:
    """Two lifetimes with engine-loop errors in both, HTTP answers of both classes, a GPU fault and a
    warning (oMLX writes it outside any exception handler)."""
    log = tmp_path / "server.log"
    log.write_text(
        line("10:00:00,000", "INFO", "CORS origins: ['*']", "omlx.server")
        + line("10:00:05,000", "ERROR", "Engine loop error: There is no Stream(gpu, 0) in current thread.")
        + line("10:00:06,000", "WARNING", "POST /v1/chat/completions → 400: max_tokens must be at least 1, got 0")
        + line("10:00:07,000", "ERROR", "POST /v1/messages → 422: messages: field required", "omlx.server")
        + line("10:00:08,000", "ERROR", "POST /v1/chat/completions → 500 (unhandled): boom", "omlx.server")
        + line("10:00:09,000", "ERROR", f"Engine loop error: {METAL}")
        + line("10:00:10,000", "WARNING", "Aborted 3 requests due to memory pressure")
        + line("11:00:00,000", "INFO", "CORS origins: ['*']", "omlx.server")
        + line("11:00:05,000", "ERROR", "Engine loop error: 'TurboQuantMSEState' object has no attribute 'ndim'")
        + line("11:00:06,000", "WARNING", "POST /v1/chat/completions -> 400: messages: at least one message")
    )
    return analysis_of(log)


def test_failures_are_grouped_by_template_with_their_sessions_and_times(tmp_path: Path) -> None:
    analysis = two_processes(tmp_path)
    assert len(analysis.sessions) == 2
    got = [(g.template.text, g.count, g.level, g.sessions, g.first, g.last) for g in analysis.errors.groups]
    assert got == [
        (f"Engine loop error: {ANY_SHOWN}", 2, "ERROR", [1, 2], "2026-09-15T10:00:05.000", "2026-09-15T11:00:05.000"),
        ("POST /v1/chat/completions → 500", 1, "ERROR", [1], "2026-09-15T10:00:08.000", "2026-09-15T10:00:08.000"),
    ]
    engine_loop, answer = (lexicon().entry(group.template.entry or "") for group in analysis.errors.groups)
    assert (engine_loop.logger, engine_loop.level, engine_loop.in_handler) == ("omlx.engine_core", "ERROR", True)
    assert answer.logger == "omlx.server"


def test_a_warning_written_while_handling_an_exception_is_a_failure_unless_the_code_recovered(tmp_path: Path) -> None:
    """oMLX logs ``FP8 sanitize failed (…), aborting`` in an ``except`` block that raises on (its lexicon
    entry says so): a failure. ``Timeout waiting for request …`` sits in one that carries on (it waits
    again): a notice, no failure. A warning with a traceback is a failure; one written elsewhere is not."""
    log = tmp_path / "server.log"
    log.write_text(
        line("10:00:00,000", "WARNING", "Timeout waiting for request 4420aa8c", "omlx.engine_core")
        + line("10:00:00,500", "WARNING", "FP8 sanitize failed (bad scale), aborting", "omlx.oq")
        + line("10:00:01,000", "WARNING", "Aborted 3 requests due to memory pressure")
        + line("10:00:02,000", "WARNING", "Something unexpected", "omlx.server")
        + 'Traceback (most recent call last):\n  File "/x/omlx/server.py", line 3, in run\nOSError: gone\n'
    )
    groups = analysis_of(log).errors.groups
    assert [(g.template.text, g.level) for g in groups] == [
        (f"FP8 sanitize failed ({ANY_SHOWN}), aborting", "WARNING"),
        ("Something unexpected", "WARNING"),
    ]
    entry = lexicon().entry(groups[0].template.entry or "")
    assert entry.in_handler and entry.handler_action == "reraise"
    assert groups[1].example.fields["exception"] == "OSError"  # a warning keeps its traceback


def test_the_gpu_fault_stays_in_the_escalation_and_is_not_repeated(tmp_path: Path) -> None:
    analysis = two_processes(tmp_path)
    assert len(analysis.faults) == 1
    examples = [ev.message for group in analysis.errors.groups for ev in group.events]
    assert not any("METAL" in message for message in examples)


def test_http_4xx_answers_are_rejected_requests_not_failures_whatever_their_level(tmp_path: Path) -> None:
    analysis = two_processes(tmp_path)
    assert dict(analysis.errors.rejected) == {400: 2, 422: 1}
    assert analysis.errors.rejected_dict() == {"count": 3, "by_status": {"400": 2, "422": 1}}
    assert not any("→ 4" in group.template.text for group in analysis.errors.groups)


def test_the_example_is_the_first_record_of_its_group(tmp_path: Path) -> None:
    group = two_processes(tmp_path).errors.groups[0]
    assert group.example.line == 2
    assert group.as_dict()["example"] == {
        "source": str(tmp_path / "server.log"),
        "line": 2,
        "message": "Engine loop error: There is no Stream(gpu, 0) in current thread.",
    }


def test_a_traceback_pasted_alone_is_named_by_its_exception_or_its_header(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/Applications/oMLX.app/Contents/Resources/omlx/engine_pool.py", line 90, in _load\n'
        "    model = load(path)\n"
        "ValueError: Model type gemma4_unified not supported.\n"
    )
    (group,) = analysis_of(log).errors.groups
    assert (group.template.text, group.level, group.first) == (f"ValueError: {DETAIL}", "ERROR", None)
    log.write_text('Traceback (most recent call last):\n  File "/x/omlx/server.py", line 3, in <module>\n')
    (group,) = analysis_of(log).errors.groups
    assert group.template.text == "Traceback (most recent call last):"


def test_a_log_without_dates_gives_times_of_day_in_file_order(tmp_path: Path) -> None:
    # Past midnight the later record has the smaller time of day: file order, not the clock, says which is last.
    log = tmp_path / "paste.log"
    log.write_text(
        "23:59:58,100 - omlx.engine_core - ERROR - Engine loop error: first\n"
        "00:00:03,200 - omlx.engine_core - ERROR - Engine loop error: second\n"
    )
    (group,) = analysis_of(log).errors.groups
    assert not group.dated
    assert (group.first, group.last) == ("23:59:58.100", "00:00:03.200")


@pytest.mark.parametrize(
    ("message", "template"),
    [
        ("Engine loop error: [convert] Only length-1 arrays", f"Engine loop error: {DETAIL}"),
        ("Model load failed for 'Laguna-S-2.1'; caching failure", "Model load failed for <str>; caching failure"),
        ("No safetensors found in /Volumes/X/Users/me/.omlx/models", "No safetensors found in <path>"),
        ("Request 4420aa8c-9f27 needs 21.13GB at 40 tok/s", "Request <id> needs <n>GB at <n> tok/s"),
        ("Model type gemma4_unified not supported.", "Model type <id> not supported."),
        ("Aborted 3 requests (see ~/x/y.log)", "Aborted <n> requests (see <path>)"),
    ],
)
def test_masked_replaces_the_variable_parts_only(message: str, template: str) -> None:
    assert masked(message) == template


@pytest.mark.parametrize(
    ("paste", "template", "level"),
    [
        ("omlx-issue-1645.log", "POST /v1/chat/completions → 500", "ERROR"),  # `→ 500 (unhandled)`
        ("omlx-issue-3768.log", "POST /admin/api/models/Ternary-Bonsai-2-27B-mlx-2bit/load → 500", "WARNING"),
        ("omlx-issue-943.log", f"Engine loop error: {ANY_SHOWN}", "ERROR"),  # with its traceback
        ("omlx-issue-2530.log", "Model load failed for '<…>'; caching failure until next discovery refresh", "ERROR"),
        ("omlx-issue-2813.log", f"Engine loop error: {ANY_SHOWN}", "ERROR"),  # no timestamp: first/last null
    ],
)
def test_real_pastes_name_their_failure(paste: str, template: str, level: str) -> None:
    (group,) = analysis_of(REAL / paste).errors.groups
    assert (group.template.text, group.level, group.count) == (template, level, 1)


@pytest.mark.parametrize(
    "paste",
    [
        "omlx-issue-3683.log",  # two handled Metal OOM records: GPU faults, the escalation's
        "omlx-issue-1387.log",  # a libc++abi abort: a GPU fault and crash evidence
        "omlx-issue-1265.log",  # a kernel panic: crash evidence
        "omlx-issue-1503.log",  # POST /v1/messages → 422: a rejected request
    ],
)
def test_failures_shown_in_other_parts_or_rejections_are_not_errors(paste: str) -> None:
    assert analysis_of(REAL / paste).errors.groups == []


def test_the_example_log_has_no_other_failure_and_305_rejected_requests(example_analysis: Analysis) -> None:
    """The warnings oMLX 0.5.7 writes when its SSD write queue is full (``except queue.Full``, then it
    writes the block itself) are flow control: no failure, though the log holds 304 of them."""
    assert example_analysis.errors.groups == []
    flow = [ev for s in example_analysis.sessions for ev in s.events if "SSD write queue saturated" in ev.message]
    assert len(flow) == 304
    assert dict(example_analysis.errors.rejected) == {400: 305}
