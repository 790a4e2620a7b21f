"""Outages on generated logs (bench/make_outages.py): every incident of the truth, as the level lets it be seen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, analysis_of
from omlx_logscan import analyze, read_events, resolve
from omlx_logscan.analysis.outage_model import Outage
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.output.outages import POSSIBLE_WEDGE_CAVEAT, TRAFFIC_NOTES, outage_line, outage_notes
from omlx_logscan.watch.loop import Watcher, WatchOptions
from outage_logs import outage_log
from synthetic import IGNORED, SHORT_DEAD, busy, ignored, record, start, timeout, write_log

LEVELS = ("debug", "info", "warning")
CASES = [(seed, fmt, level) for seed in (1, 2, 3) for fmt in ("file", "console") for level in LEVELS]
Generated = tuple[Analysis, dict[str, Any]]


@pytest.fixture(scope="module", params=CASES, ids=lambda case: "-".join(map(str, case)))
def generated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Generated:
    seed, fmt, level = request.param
    path, truth = outage_log(tmp_path_factory.mktemp("outages"), seed, fmt, level)
    return analyze(read_events(resolve([str(path)]))), truth


def _second(stamp: str | None) -> str | None:
    return stamp[:19] if stamp else None


def _next_start(truth: dict[str, Any], session: int) -> str:
    return str(truth["sessions"][session]["start"])  # sessions are numbered from 1: [session] is the next one


def _of(analysis: Analysis, kind: str) -> list[Outage]:
    return analysis.outages.of_kind(kind)


def test_every_fatal_exit_is_found_with_its_reason_and_restart_gap(generated: Generated) -> None:
    analysis, truth = generated
    exits = _of(analysis, "fatal_exit")
    assert [(_second(o.start), o.reason) for o in exits] == [(e["time"], e["reason"]) for e in truth["fatal_exits"]]
    for outage, want in zip(exits, truth["fatal_exits"], strict=True):
        assert outage.start_exact and outage.certain and "wired_memory" in outage.hidden
        restart = _next_start(truth, want["session"])
        if truth["level"] == "warning":  # no start line, or an untimed banner: the gap is bounded
            assert not outage.end_exact and outage.end_after == outage.start
            assert outage.end is None or outage.end[:19] >= restart  # None: the log shows nothing later
            assert truth["format"] == "file" or outage.session == want["session"]
        else:
            assert outage.session == want["session"] and outage.end_exact and _second(outage.end) == restart


def test_the_fault_that_caused_a_fatal_exit_has_that_outcome(generated: Generated) -> None:
    analysis, truth = generated
    want = [(f["time"], f["kind"], f["outcome"]) for f in truth["faults"]]
    assert [(_second(f.time), f.kind, f.outcome) for f in analysis.faults] == want
    caused = [o.fault for o in _of(analysis, "fatal_exit") if o.reason == "submissions_ignored"]
    assert [analysis.faults[i].outcome for i in caused if i is not None] == ["fatal_exit"]


def test_a_wedge_is_certain_at_debug_possible_at_info_and_unseen_at_warning(
    generated: Generated,
) -> None:
    analysis, truth = generated
    (want,) = truth["wedges"]
    wedges = _of(analysis, "wedge")
    if truth["level"] == "warning":
        assert wedges == []
        assert outage_notes(analysis.outages) == [TRAFFIC_NOTES["hidden"]]
        return
    (wedge,) = wedges
    assert (_second(wedge.start), _second(wedge.end)) == (want["last_completion"], want["end"])
    assert wedge.session == want["session"] and wedge.end_exact
    if truth["level"] == "debug":
        assert wedge.certain and wedge.unfinished_requests == want["unfinished_requests"]
        assert analysis.sessions[wedge.session - 1].end_reason == "restart"  # killed while wedged, not a crash
        assert outage_notes(analysis.outages) == []
    else:
        assert not wedge.certain and wedge.unfinished_requests is None
        assert wedge.longest_gap_s is not None and wedge.completions_before is not None
        assert POSSIBLE_WEDGE_CAVEAT in outage_line(wedge) and "arrivals_hidden" in wedge.hidden
        assert POSSIBLE_WEDGE_CAVEAT in outage_notes(analysis.outages)[0]


def test_retry_loops_and_reboots(generated: Generated) -> None:
    analysis, truth = generated
    loops = _of(analysis, "retry_loop")
    want = truth["retry_loops"]
    assert [(_second(o.start), _second(o.end), o.repeats) for o in loops] == [
        (w["start"], w["end"], w["repeats"]) for w in want
    ]
    if truth["level"] == "warning":
        return  # the reboot's lifetime is one of the merged ones: its last record is another's
    (reboot,) = _of(analysis, "reboot")
    (expected,) = truth["reboots"]
    assert _second(reboot.start) == expected["last_record"] and not reboot.start_exact and "panic_time" in reboot.hidden
    assert _second(reboot.end) == expected["end"] and reboot.crash is not None
    assert _of(analysis, "crash") == []  # the panic is the reboot; no other lifetime crashed


@pytest.mark.parametrize("level", ["debug", "info", "warning"])
@pytest.mark.parametrize("fmt", ["file", "console"])
def test_a_quiet_night_is_no_wedge(tmp_path: Path, fmt: str, level: str) -> None:
    path, truth = outage_log(tmp_path, 4, fmt, level, ("quiet-night",))
    analysis = analyze(read_events(resolve([str(path)])))
    assert truth["wedges"] == [] and analysis.outages.items == []
    if level != "warning":  # at WARNING level the night's lifetime leaves nothing but (in a capture) its banner
        assert [s.end_reason for s in analysis.sessions] == ["shutdown", "eof"]


def test_a_shorter_wedge_after_finds_what_the_default_does_not(tmp_path: Path) -> None:
    path, _ = outage_log(tmp_path, 5, "file", "debug", ("wedge",))
    stream = read_events(resolve([str(path)]))
    found = analyze(stream).outages.of_kind("wedge")
    assert len(found) == 1
    longer = found[0].at_least_s + 60
    assert analyze(stream, wedge_after_s=longer).outages.of_kind("wedge") == []


def _loop(path: Path, message: str, minutes: list[float]) -> list[Outage]:
    lines = [start(0), *(record(m, "ERROR", "omlx.engine_core", message) for m in minutes), busy(minutes[-1] + 1)]
    return analysis_of(write_log(path, lines)).outages.of_kind("retry_loop")


def test_a_retry_loop_is_five_repeats_each_within_ten_minutes(tmp_path: Path) -> None:
    error = "Engine loop error: ValueError: bad shape (1, 3)"
    (loop,) = _loop(tmp_path / "loop.log", error, [1, 5, 14.5, 20, 29])
    assert loop.repeats == 5 and loop.reason == "ValueError: bad shape (1, 3)" and loop.certain
    assert _loop(tmp_path / "four.log", error, [1, 5, 14, 20]) == []  # four is not a loop
    assert _loop(tmp_path / "gap.log", error, [1, 5, 16, 20, 29]) == []  # 11 minutes broke it
    # A penalty box repeats SubmissionsIgnored every few minutes: its own outage, no retry loop.
    assert _loop(tmp_path / "boxed.log", f"Engine loop error: {IGNORED}", [1, 5, 10, 15, 20, 25]) == []


def test_a_penalty_boxed_lifetime_that_is_replaced_was_restarted(tmp_path: Path) -> None:
    analysis = analysis_of(write_log(tmp_path / "short.log", SHORT_DEAD))
    assert [s.end_reason for s in analysis.sessions] == ["restart", "eof"]
    (box,) = analysis.outages.of_kind("penalty_box")
    assert box.dead_window == 0 and box.fault == 0 and box.end_exact and box.at_least_s == 600.0


def test_a_kernel_panic_ends_every_process_even_when_no_start_is_in_view(tmp_path: Path) -> None:
    panic = "panic(cpu 2 caller 0xfffffe0012345678): GPU hang"
    lines = [busy(0), busy(10), panic, "Debugger message: panic", busy(40), busy(50)]
    analysis = analysis_of(write_log(tmp_path / "warning.log", lines))
    assert [(s.index, s.end_reason, s.start_exact) for s in analysis.sessions] == [
        (1, "crash", False),
        (2, "eof", False),
    ]
    (reboot,) = analysis.outages.of_kind("reboot")
    assert (reboot.start, reboot.end_after, reboot.end) == (
        analysis.sessions[0].end,
        reboot.start,
        analysis.sessions[1].start,
    )
    assert not reboot.start_exact and not reboot.end_exact and reboot.hidden == ["panic_time"]


@pytest.mark.parametrize("level", LEVELS)
def test_the_watch_replays_outage_logs_to_the_batch_lifetimes(tmp_path: Path, level: str) -> None:
    path, _ = outage_log(tmp_path, 8, "file", level)
    batch = analysis_of(path)
    watcher = Watcher(WatchOptions(path, exit_at_end=True), _Quiet())
    watcher.replay_to_end()
    assert [(s.start, s.end, s.end_reason) for s in watcher.state.sessions] == [
        (s.start, s.end, s.end_reason) for s in batch.sessions
    ]


class _Quiet:
    def event(self, event: object) -> None: ...

    def notice(self, notice: object) -> None: ...

    def info(self, message: str) -> None: ...


def test_a_pasted_panic_is_a_reboot_with_no_note_on_the_level() -> None:
    analysis = analysis_of(ROOT / "tests" / "fixtures" / "real" / "omlx-issue-1265.log")
    (reboot,) = analysis.outages.items
    assert reboot.kind == "reboot" and reboot.start is None and reboot.end is None
    assert outage_line(reboot).startswith("at a time the log does not give, no restart when the log ends")
    assert analysis.outages.excerpt and outage_notes(analysis.outages) == []  # a paste says nothing of the level


@pytest.mark.parametrize("restarted", [False, True])
def test_a_penalty_box_ends_when_its_process_stops_in_order(tmp_path: Path, restarted: bool) -> None:
    # Issue 28 item 3: SIGINT inside the penalty box; the pool's shutdown line ends the window, not the
    # next start (a restart) nor the log's end (still dead).
    stop = record(16, "INFO", "omlx.engine_pool", "Engine pool shutdown complete")
    lines = [start(0), timeout(10), ignored(10), ignored(15), stop, *([start(20), busy(25)] if restarted else [])]
    analysis = analysis_of(write_log(tmp_path / "stopped.log", lines))
    (window,) = analysis.dead_windows
    assert analysis.sessions[0].end_reason == "shutdown"
    assert (window.end_reason, window.end, window.end_exact) == ("shutdown", analysis.sessions[0].end, True)
    assert window.as_dict()["still_dead_at_end_of_log"] is False


def _served(minute: float) -> list[str]:
    """One chat request as oMLX's DEBUG log shows it: the endpoint's arrival, the scheduler's, the finish."""
    return [
        record(minute, "DEBUG", "omlx.server", "Chat completion request received: model=q, messages=1, stream=False"),
        record(minute, "DEBUG", "omlx.scheduler", "Added request 5f3a with 34 prompt tokens"),
        record(minute, "INFO", "omlx.server", "Chat completion: model=q, 24 tokens in 0.08s (300.8 tok/s), prompt: 34"),
    ]


def test_a_wedge_counts_the_arrivals_the_endpoints_log_when_the_scheduler_adds_none(tmp_path: Path) -> None:
    """A wedge holds the MLX executor that adds requests to the scheduler: in it only the chat and
    Anthropic endpoints log the requests that arrive, though the scheduler logged the earlier ones."""
    arrived = [
        record(20 + i, "DEBUG", "omlx.server", "Chat completion request received: model=q, messages=1, stream=True")
        for i in range(3)
    ]
    arrived.append(record(24, "DEBUG", "omlx.server", "Anthropic Messages request: model=q, messages=1, stream=False"))
    lines = [start(0), *_served(1), *_served(2), *arrived, start(40), *_served(41)]
    (wedge,) = analysis_of(write_log(tmp_path / "wedge.log", lines)).outages.of_kind("wedge")
    assert wedge.certain and wedge.unfinished_requests == 4 and wedge.session == 1
    assert [line for _, line, _ in wedge.evidence] == [8, 11]  # the first and the last arrival in the wedge


def _held_stop_log(path: Path, *, teardown: bool) -> Path:
    """Steady INFO traffic, a silence, a SIGTERM whose stop writes the engine loop's `Engine stopped`
    (and, ``teardown``, the scheduler's shutdown that follows on the MLX executor), then a new process."""
    done = [
        record(1 + i / 2, "INFO", "omlx.server", "Chat completion: model=q, 24 tokens in 0.08s (300 tok/s), prompt: 34")
        for i in range(6)
    ]
    stop = [
        record(20, "INFO", "omlx.process_memory_enforcer", "Process memory enforcer stopped"),
        record(20, "INFO", "omlx.engine_pool", "Unloading model: q (immediate abort)"),
        record(20, "INFO", "omlx.engine_core", "Engine stopped"),
    ]
    if teardown:
        stop.append(record(20, "INFO", "omlx.scheduler", "Scheduler shutdown initiated..."))
    return write_log(path, [start(0), *done, *stop, start(21)])


def test_a_silence_closed_by_a_stop_the_engine_teardown_never_joined_is_a_possible_wedge(tmp_path: Path) -> None:
    """The teardown runs on the executor a wedge holds: a stop that ends at `Engine stopped` shows it held."""
    held = analysis_of(_held_stop_log(tmp_path / "held.log", teardown=False))
    (wedge,) = held.outages.of_kind("wedge")
    assert not wedge.certain and wedge.session == 1 and held.sessions[0].end_reason == "shutdown"
    assert analysis_of(_held_stop_log(tmp_path / "torn.log", teardown=True)).outages.of_kind("wedge") == []
