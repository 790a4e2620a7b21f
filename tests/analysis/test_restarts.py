"""Processes that began unseen above INFO (issue 28): after the engine pool's stop, and after a penalty box.

oMLX's lifespan stops its engine pool last (``EnginePool.shutdown``): after a line of that step the
process writes only its stop's own lines, so a later line of a process at work is the next process's,
whose start the level hid. Where nothing marks the handover (a kill), the tool bounds it instead.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from omlx_logscan import analyze, read_events, resolve
from omlx_logscan.analysis.results import Analysis
from synthetic import BASE, IGNORED, busy, ignored, record, timeout, write_log

METAL_IGNORED = IGNORED.split(": ", 1)[1]


def at(minute: float) -> str:
    """The stream's time of a ``synthetic`` line written at ``minute`` (its lines are stamped to the second)."""
    return (BASE + timedelta(seconds=int(minute * 60 + 1e-6))).isoformat(timespec="milliseconds")


def unload_failed(minute: float, model: str = "tiny", error: str = METAL_IGNORED) -> str:
    """The engine pool's stop met an error unloading ``model`` (a penalty-boxed engine's, by default)."""
    return record(minute, "ERROR", "omlx.engine_pool", f"Error unloading {model} during shutdown: {error}")


def engine_built(minute: float) -> str:
    """A warning oMLX writes when it builds an engine, on a host whose memory size it cannot read."""
    return record(minute, "WARNING", "omlx.utils.hardware", "Using default memory size: 8 GB")


def analysis_of(tmp_path: Path, lines: list[str]) -> Analysis:
    return analyze(read_events(resolve([str(write_log(tmp_path / "server.log", lines))])))


def test_a_line_of_a_process_at_work_after_the_pool_stop_is_the_next_process(tmp_path: Path) -> None:
    lines = [timeout(0), ignored(0), ignored(1), unload_failed(3), engine_built(3.1), timeout(3.2), ignored(3.2)]
    analysis = analysis_of(tmp_path, lines)
    assert [(s.start, s.start_inferred, s.start_after, s.end, s.end_reason) for s in analysis.sessions] == [
        (at(0), False, None, at(3), "shutdown"),
        (at(3.1), True, at(3), at(3.2), "eof"),
    ]
    first = analysis.dead_windows[0]
    assert (first.end, first.end_exact, first.end_reason) == (at(3), True, "shutdown")
    assert [ev.kind for ev in analysis.sessions[0].events][-2:] == ["gpu_error", "shutdown"]


def test_the_pool_stop_is_a_stop_whatever_error_it_met(tmp_path: Path) -> None:
    lines = [busy(0), unload_failed(3, error="boom"), engine_built(3.1), busy(3.2)]
    sessions = analysis_of(tmp_path, lines).sessions
    assert [(s.start, s.end, s.end_reason) for s in sessions] == [(at(0), at(3), "shutdown"), (at(3.1), at(3.2), "eof")]


def test_the_stop_own_lines_do_not_open_a_process(tmp_path: Path) -> None:
    """The pool stops its models one after another: a second model's failed unload, the engines'
    teardown, the stop's last line and the lifespan's clean-up after it are the same process's."""
    lines = [
        timeout(0),
        ignored(0),
        unload_failed(3, "first"),
        record(3.01, "INFO", "omlx.engine_core", "Engine stopped"),
        record(3.02, "INFO", "omlx.engine_pool", "Unloaded model: second"),
        unload_failed(3.03, "third"),
        record(3.04, "INFO", "omlx.engine_pool", "Engine pool shutdown complete"),
        record(3.05, "WARNING", "omlx.server", "Failed to reset boundary snapshot directory: busy"),
    ]
    sessions = analysis_of(tmp_path, lines).sessions
    assert [(s.end, s.end_reason) for s in sessions] == [(at(3.05), "shutdown")]


def test_a_stop_line_before_the_last_step_opens_no_process(tmp_path: Path) -> None:
    """The memory enforcer is stopped earlier in the stop (and by the admin page in a running process):
    a line after it is the same process's."""
    lines = [busy(0), record(1, "INFO", "omlx.process_memory_enforcer", "Process memory enforcer stopped"), busy(2)]
    assert [(s.start, s.end) for s in analysis_of(tmp_path, lines).sessions] == [(at(0), at(2))]


def test_a_kill_in_a_penalty_box_is_bounded_by_lines_only_each_process_can_write(tmp_path: Path) -> None:
    """Killed in its penalty box at WARNING: nothing marks the handover. The warning between its last
    failure and the next process's first fault may be either's, so the old process ends at its last
    failure and the window's end is bounded by it and by that fault."""
    lines = [timeout(0), ignored(0), ignored(3), engine_built(5), timeout(5.1), ignored(5.1)]
    analysis = analysis_of(tmp_path, lines)
    assert [(s.start, s.start_inferred, s.start_after, s.end, s.end_reason) for s in analysis.sessions] == [
        (at(0), False, None, at(3), "restart"),
        (at(5.1), True, at(3), at(5.1), "eof"),
    ]
    window = analysis.dead_windows[0]
    assert (window.end_after, window.end, window.end_exact, window.end_reason) == (at(3), at(5.1), False, "restart")
