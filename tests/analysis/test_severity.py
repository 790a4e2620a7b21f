"""The severity rule (analysis/severity.py) on oMLX's own messages, and docs/severity.md's table."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from omlx_logscan.analysis.severity import (
    INCIDENT_KINDS,
    KIND_SEVERITY,
    LOST_WRITES,
    at_least,
    entry_kind,
    entry_severity,
    kind_severity,
    status_kind,
    unmatched_severity,
)
from omlx_logscan.parsing.lexicon import Entry, lexicon

PAGE = ROOT / "docs" / "severity.md"
TOOL = ROOT / "tools" / "severity_table.py"


def _entry(template: str, function: str | None = None, level: str | None = None) -> Entry:
    """The one entry of the committed lexicon with this template (where several versions of the
    call differ, the one of ``function`` or ``level``)."""
    found = [
        e
        for e in lexicon().entries
        if e.template == template and function in (None, e.function) and level in (None, e.level)
    ]
    assert len(found) == 1, [(e.function, e.level) for e in found]
    return found[0]


# ---------------------------------------------------------------- on oMLX's messages


def test_the_ssd_write_queue_warning_is_flow_control_not_a_failure() -> None:
    """paged_ssd_cache.py ``_enqueue_ssd_write``: ``except queue.Full:`` warns, then writes inline."""
    saturated = _entry("SSD write queue saturated (cap={any}); writing evicted block {any} inline")
    assert (saturated.level, saturated.catches, saturated.handler_action) == ("WARNING", ("queue.Full",), "carry_on")
    assert entry_severity(saturated) == "notice"


def test_a_warning_in_a_handler_that_answers_a_5xx_is_an_error() -> None:
    """server.py ``distributed_unavailable_handler`` logs a WARNING, then answers 503."""
    unavailable = _entry("{any} {any} -> 503: {any}")
    assert (unavailable.level, unavailable.handler_action, unavailable.answer_status) == ("WARNING", "answer", 503)
    assert entry_severity(unavailable) == "error"


def test_the_http_error_line_ranks_by_the_status_it_holds() -> None:
    """``http_exception_handler`` answers the exception's own status: the line's status decides."""
    line = _entry("{any} {any} → {int}: {any}")
    assert "HTTPException" in line.catches and line.handler_action == "answer" and line.answer_status is None
    assert entry_severity(line) == "warning"
    assert (status_kind(500), status_kind(503), status_kind(404), status_kind(507)) == (
        "error",
        "error",
        "rejected",
        "rejected",
    )


def test_a_full_scheduler_queue_answers_a_refusal_not_a_failure() -> None:
    """server.py ``scheduler_queue_full_handler``: SchedulerQueueFullError, 503 "Try again shortly"."""
    full = _entry("{any} {any} → 503: {any}")
    assert full.catches == ("SchedulerQueueFullError",) and full.answer_status == 503
    assert entry_kind(full) == "rejected" and entry_severity(full) == "warning"


def test_a_lost_snapshot_write_is_an_error_though_written_at_debug() -> None:
    """boundary_snapshot_store.py ``_process_write_item``: DEBUG, then the files and the entry go."""
    lost = _entry("Background snapshot write failed: {any}")
    assert (lost.level, lost.handler_action) == ("DEBUG", "carry_on")
    assert entry_severity(lost) == "error"


def test_every_lost_write_names_a_message_of_omlx() -> None:
    written = {(f"{e.module}.{e.function}", e.template) for e in lexicon().entries}
    assert written >= LOST_WRITES, LOST_WRITES - written


def test_a_fatal_exit_is_critical() -> None:
    reason = _entry("{any}; exiting process so the supervisor can restart with a clean state")
    assert (reason.function, entry_kind(reason), entry_severity(reason)) == ("fatal_exit", "fatal_exit", "critical")
    teardown = _entry(
        "Engine teardown timed out after {float}s while running {any} for engine {any}; "
        "exiting process so the supervisor can restart with a clean state"
    )
    assert teardown.catches == ("concurrent.futures.TimeoutError",) and teardown.handler_action == "exit"
    assert entry_severity(teardown) == "critical"


def test_a_fallback_taken_is_a_notice_even_at_error() -> None:
    """``run_specprefill_draft_scoring`` logs an ERROR, clears the sparse indices and goes on."""
    specprefill = _entry(
        "SpecPrefill scoring failed, falling back to normal path: {any}", "run_specprefill_draft_scoring"
    )
    assert (specprefill.level, specprefill.handler_action) == ("ERROR", "carry_on")
    assert entry_kind(specprefill) == "fallback" and entry_severity(specprefill) == "notice"
    vision = _entry("VLM loading failed for {any}, falling back to LLM: {any}")
    assert entry_severity(vision) == "notice"
    failed = _entry("CacheList.from_state() fallback failed: {any}")  # a fallback that failed
    assert entry_severity(failed) == "error"


def test_the_catalog_s_meaning_ranks_before_the_level() -> None:
    refused = _entry("Prefill capacity rejected for {any}: {any}")  # an ERROR of the admission guard
    assert refused.level == "ERROR" and entry_kind(refused) == "rejected" and entry_severity(refused) == "warning"
    failed_load = _entry("Model load failed for '{any}'; caching failure until next discovery refresh")
    assert entry_kind(failed_load) == "load_failure" and entry_severity(failed_load) == "error"
    abort = _entry("Client disconnected, cancelling generation task")
    assert entry_kind(abort) == "aborted" and entry_severity(abort) == "notice"


def test_routine_lines_have_no_severity() -> None:
    assert entry_severity(_entry("Loaded model: {any} (estimated: {any}, total: {any})")) is None
    routine = _entry("Model '{any}' not found, falling back to default model '{any}'")  # INFO
    assert entry_severity(routine) is None


# ---------------------------------------------------------------- the rule on made entries


def _made(**fields: object) -> Entry:
    """An entry of the WARNING kind with these fields changed."""
    base = Entry(
        "0", "log", "WARNING", "omlx.x", "omlx.x", "f", ("Something went wrong",), (), False, "0.1", None, "code"
    )
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, "warning"),
        ({"catches": ("Exception",), "handler_action": "carry_on"}, "notice"),
        ({"catches": ("Exception",), "handler_action": "reraise"}, "warning"),
        ({"catches": ("Exception",), "handler_action": "answer", "answer_status": 500}, "error"),
        ({"catches": ("Exception",), "handler_action": "answer", "answer_status": 404}, "warning"),
        ({"catches": ("queue.Full",), "handler_action": "answer", "answer_status": 503}, "warning"),
        ({"catches": ("Exception",), "handler_action": "exit"}, "critical"),
        ({"level": "DEBUG", "catches": ("Exception",), "handler_action": "answer", "answer_status": 500}, None),
        ({"level": "ERROR"}, "error"),
        ({"level": "ERROR", "literals": ("X failed, falling back to Y",), "handler_action": "carry_on"}, "notice"),
        ({"level": "ERROR", "literals": ("X fallback failed",), "handler_action": "carry_on"}, "error"),
        ({"level": "INFO", "literals": ("X unavailable, falling back to Y",)}, None),
        ({"kind": "http", "level": None, "logger": None, "status": 502}, "error"),
        ({"kind": "raise", "level": None, "logger": None}, None),
    ],
)
def test_the_rule(fields: dict[str, object], expected: str | None) -> None:
    assert entry_severity(_made(**fields)) == expected


def test_the_defaults_by_kind() -> None:
    assert set(KIND_SEVERITY) == set(INCIDENT_KINDS)
    by_severity = {
        severity: {k for k, s in KIND_SEVERITY.items() if s == severity} for severity in KIND_SEVERITY.values()
    }
    assert by_severity == {
        "critical": {"crash", "fatal_exit", "reboot", "dead_engine", "wedge"},
        "error": {"gpu_fault", "error", "load_failure"},
        "warning": {"rejected", "memory_pressure"},
        "notice": {"aborted", "fallback"},
    }
    assert (kind_severity("wedge"), kind_severity("wedge", certain=False)) == ("critical", "warning")
    assert (unmatched_severity("ERROR"), unmatched_severity("CRITICAL"), unmatched_severity("WARNING")) == (
        "error",
        "error",
        None,
    )
    assert at_least("critical", "error") and at_least("error", "error") and not at_least("warning", "error")


# ---------------------------------------------------------------- docs/severity.md


def _check(*page: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": ""}
    command = [sys.executable, str(TOOL), "--check", *page]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def test_the_committed_table_is_current() -> None:
    result = _check()
    assert result.returncode == 0, result.stderr


def test_a_stale_table_fails_the_check(tmp_path: Path) -> None:
    stale = tmp_path / "severity.md"
    text = PAGE.read_text(encoding="utf-8")
    stale.write_text(text.replace("| critical | `{any}; exiting process", "| error | `{any}; exiting process"))
    assert stale.read_text() != text
    result = _check(str(stale))
    assert result.returncode == 1 and "stale" in result.stderr


def test_the_table_lists_every_entry_of_severity_error_or_worse() -> None:
    table = PAGE.read_text(encoding="utf-8").split("<!-- The table below", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith(("| critical |", "| error |"))]
    worst = [e for e in lexicon().entries if (s := entry_severity(e)) is not None and at_least(s, "error")]
    assert len(rows) == len(worst) > 100
    assert any("Background snapshot write failed" in row for row in rows)
    assert not any("SSD write queue saturated" in row for row in rows)
