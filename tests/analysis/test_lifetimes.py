"""Process lifetimes from records, not only events (issue 14): ends, record-only lifetimes, outcomes.

Routine records are only counted by the bulk scan, yet they show when a process last wrote: a
lifetime ends at its last record of any kind, a log of routine records is one lifetime, and a fault
whose process wrote anything later was absorbed. Block sizes must not move any of it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from conftest import FIXTURES, stream_of
from omlx_logscan import analyze, read_events, resolve
from omlx_logscan.analysis.check import Rules, run_check
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.inputs import byte_blocks
from omlx_logscan.output.phrases import fault_phrase
from synthetic import BASE, busy, record, start, timeout, write_log


def at(minute: float) -> str:
    """The stream's time of a ``synthetic`` line written at ``minute``."""
    return (BASE + timedelta(minutes=minute)).isoformat(timespec="milliseconds")


def at_ms(line: str, milliseconds: int) -> str:
    """A ``synthetic`` line moved ``milliseconds`` into its second."""
    return line.replace(",000 ", f",{milliseconds:03d} ", 1)


def routine(minute: float, n: int = 1) -> list[str]:
    """``n`` DEBUG lines a second apart from ``minute`` on: records the scan only counts."""
    return [record(minute + k / 60, "DEBUG", "omlx.scheduler", f"step {k}") for k in range(n)]


def analysis_of(path: Path) -> Analysis:
    return analyze(read_events(resolve([str(path)])))


def test_routine_records_only_are_one_running_lifetime(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", routine(0, 50))
    sessions = analysis_of(log).sessions
    assert [(s.start_in_log, s.end_reason, s.line) for s in sessions] == [(False, "eof", 1)]
    assert (sessions[0].start, sessions[0].end) == (at(0), at(49 / 60))


def test_non_omlx_dated_text_is_no_lifetime(tmp_path: Path) -> None:
    log = write_log(tmp_path / "notes.log", ["2026-01-01 10:00:00 I restarted the server", "then it worked"])
    assert analysis_of(log).sessions == []


@pytest.mark.parametrize("block_bytes", [200, 4096, 1 << 20])
def test_a_lifetime_ends_at_its_last_routine_record_before_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int
) -> None:
    # The old process writes routine lines until 10:05:29, the new one starts at 10:07.
    log = write_log(tmp_path / "server.log", [*routine(0, 30), *routine(5, 30), start(7), *routine(8, 3)])
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", block_bytes)
    sessions = analysis_of(log).sessions
    assert [(s.index, s.end, s.end_reason) for s in sessions] == [
        (1, at(5 + 29 / 60), "crash"),
        (2, at(8 + 2 / 60), "eof"),
    ]
    assert sessions[0].line == 1


def test_the_new_process_startup_output_before_its_marker_is_not_the_old_ones(tmp_path: Path) -> None:
    # As in omlx-issue-1431.log: a blank line, then the new process's lines just before its start marker.
    startup = record(7, "INFO", "omlx.model_discovery", "Discovered model: m (type: llm)")
    log = write_log(tmp_path / "server.log", [*routine(0, 3), "", startup, at_ms(start(7), 2)])
    first = analysis_of(log).sessions[0]
    assert first.end == at(2 / 60)


def test_a_crash_finding_points_at_a_line(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", [*routine(0, 3), start(7)])
    findings = run_check(analysis_of(log), Rules(("crash",))).findings
    assert [(f.rule, f.line) for f in findings] == [("crash", 1)]


def test_a_fault_followed_by_routine_records_was_absorbed(tmp_path: Path) -> None:
    # Nothing but routine lines after the fault, and the log goes on for an hour: the process went on.
    log = write_log(tmp_path / "server.log", [start(0), timeout(1), *routine(2, 3), *routine(60, 3)])
    fault = analysis_of(log).faults[0]
    assert fault.outcome == "absorbed"
    assert "absorbed" in fault_phrase(fault, requests_visible=True)


def test_a_fault_with_nothing_after_it_is_unknown_without_saying_the_log_ends(tmp_path: Path) -> None:
    # The next start is two hours later and the process wrote nothing after the fault.
    log = write_log(tmp_path / "server.log", [start(0), busy(0.5), timeout(1), start(120), busy(121)])
    analysis = analysis_of(log)
    fault = analysis.faults[0]
    assert fault.outcome == "unknown"
    phrase = fault_phrase(fault, requests_visible=True)
    assert "logged nothing after it" in phrase and "log ends" not in phrase


def test_routine_records_just_before_a_quick_restart_do_not_absorb_a_fault(tmp_path: Path) -> None:
    # The new process's startup output is not the old process going on: a crash, as without it.
    startup = routine(1.5)
    log = write_log(tmp_path / "server.log", [start(0), busy(0.5), timeout(1), *startup, at_ms(start(1.5), 500)])
    assert analysis_of(log).faults[0].outcome == "crash"


def test_untimed_completions_count_in_the_lifetime(tmp_path: Path) -> None:
    lines = [
        start(0),
        "12:00:01.000 omlx.server - INFO - Chat completion: 12 tokens in 3.00s (20.0 tok/s), prompt: 900",
        "omlx.server - INFO - [-] - Chat completion: 12 tokens in 3.00s (20.0 tok/s), prompt: 900",
        record(1, "INFO", "omlx.server", "Chat completion: 12 tokens in 3.00s (20.0 tok/s), prompt: 900"),
    ]
    analysis = analysis_of(write_log(tmp_path / "server.log", lines))
    untimed = [ev for ev in analysis.stream.events if ev.kind == "request_complete" and ev.time is None]
    assert analysis.sessions[0].requests_completed == 1 + len(untimed)


def _imported(minute: float, *handlers: str) -> list[str]:
    """What oMLX writes as its modules are imported: the cache type registry's handlers (written by the
    function its module's top level calls), then, 3 s later, the scheduler's top-level patch line."""
    registered = [record(minute, "DEBUG", "omlx.cache.type_registry", f"Registered handler for {h}") for h in handlers]
    patch = record(minute + 0.05, "INFO", "omlx.scheduler", "ChunkedKVCache patch: methods present, skipped: size")
    return [*registered, patch, start(minute + 0.06)]


def test_the_lines_written_as_oMLX_is_imported_open_the_start_they_precede(tmp_path: Path) -> None:
    """No process before the first one (a phantom that crashed), and a process that registers a handler
    while it runs (the DeepSeek V4 patch, on its model's load) goes on: no start there."""
    lines = [
        *_imported(0, "KVCache", "ArraysCache"),
        record(0.5, "INFO", "omlx.engine_core", "Engine started"),
        busy(1),
        record(2, "DEBUG", "omlx.cache.type_registry", "Registered handler for PoolingCache"),
        busy(2.5),
        record(3, "INFO", "omlx.process_memory_enforcer", "Process memory enforcer stopped"),
        *_imported(4, "KVCache"),
    ]
    sessions = analyze(read_events(resolve([str(write_log(tmp_path / "omlx.log", lines))]))).sessions
    assert [(s.start, s.start_exact, s.end_reason) for s in sessions] == [
        (at(0), True, "shutdown"),
        (at(4), True, "eof"),
    ]


@pytest.mark.parametrize("run", ["a-info-clean@0.5.3", "b-info-seed@0.5.3"])
def test_a_file_log_and_its_capture_read_together_end_as_either_alone_in_either_order(run: str) -> None:
    """The capture's uvicorn stop lines are untimed and the requests kept are the first file's: the
    requests after a stop are those timed after the line before it, whichever file holds them."""
    server, capture = (FIXTURES / "real-omlx" / f"{run}.{part}.log" for part in ("server", "console"))

    def ends(*paths: Path) -> list[tuple[str | None, str]]:
        return [(s.end, s.end_reason) for s in analyze(stream_of(*paths)).sessions]

    alone = ends(server)
    assert [reason for _, reason in alone] == [reason for _, reason in ends(capture)]
    assert ends(server, capture) == ends(capture, server) == alone
