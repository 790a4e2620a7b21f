"""``logscan watch``: the follower, the live state against the batch analyzer, and real subprocess runs."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_parity import EventKeeper
from typer.testing import CliRunner

from conftest import EXAMPLE, GENERATED, analysis_of
from omlx_logscan.cli.app import app
from omlx_logscan.cli.values import log_path
from omlx_logscan.errors import EXIT_DEAD
from omlx_logscan.inputs.follow import FileChange, Follower
from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.output.live import TableSink
from omlx_logscan.output.notices import Notice
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.live import LiveStream
from omlx_logscan.watch.loop import Watcher, WatchOptions
from omlx_logscan.watch.state import WatchState

WATCH = [sys.executable, "-m", "omlx_logscan", "watch"]
STARTUP_S = 20.0  # interpreter start and imports on a busy machine
WITHIN_S = 6.0  # how soon the watcher must react to appended lines
T0 = datetime(2026, 9, 15, 22, 20, 21, 140000)
runner = CliRunner()


# -- log text -----------------------------------------------------------------------------------


def _line(at: datetime, logger: str, level: str, message: str) -> str:
    return f"{at:%Y-%m-%d %H:%M:%S},{at.microsecond // 1000:03d} - {logger} - {level} - [-] - {message}\n"


_TIMEOUT = (
    "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)."
)
_IGNORED = (
    "[METAL] Command buffer execution failed: Ignored (for causing prior/excessive GPU errors) "
    "(00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)."
)


def _traceback(error: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/opt/homebrew/Cellar/omlx/0.5.7/libexec/lib/python3.11/site-packages/omlx/scheduler.py", '
        "line 10732, in step\n"
        "    _sync_and_clear_cache(self._stream)\n"
        '  File "/opt/homebrew/Cellar/omlx/0.5.7/libexec/lib/python3.11/site-packages/omlx/utils/metal_sync.py", '
        "line 62, in _sync_and_clear_cache\n"
        "    mx.synchronize()  # default stream\n"
        f"RuntimeError: {error}\n"
        "\n"
    )


def escalation(at: datetime) -> str:
    """Timeout in the periodic clear, then SubmissionsIgnored in the recovery clear 86 ms later."""
    return (
        _line(at, "omlx.engine_core", "ERROR", f"Engine loop error: {_TIMEOUT}")
        + _traceback(_TIMEOUT)
        + _line(
            at + timedelta(milliseconds=86),
            "omlx.scheduler",
            "WARNING",
            f"Metal cache clear failed during error recovery: {_IGNORED}",
        )
    )


def repeat(at: datetime) -> str:
    """The penalty-boxed engine failing again at its next step."""
    return _line(at, "omlx.engine_core", "ERROR", f"Engine loop error: {_IGNORED}") + _traceback(_IGNORED)


def timeout(at: datetime) -> str:
    """A Timeout alone: a fault the engine survives."""
    return _line(at, "omlx.engine_core", "ERROR", f"Engine loop error: {_TIMEOUT}") + _traceback(_TIMEOUT)


def startup(at: datetime) -> str:
    return _line(at, "omlx.server", "INFO", "CORS origins: ['*']") + _line(
        at + timedelta(milliseconds=200), "omlx.server", "INFO", "Server initialized with 1 models"
    )


def warning(at: datetime) -> str:
    return _line(at, "omlx.server", "WARNING", "POST /v1/chat/completions → 400: messages: at least one is required")


def fatal_exit(at: datetime) -> str:
    return _line(
        at,
        "omlx.utils.fatal",
        "CRITICAL",
        f"Metal GPU submissions disabled: {_IGNORED}; exiting process so the supervisor can restart with a clean state",
    )


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def lines_of(text: str, first: int = 1) -> list[KeptLine]:
    return [KeptLine(n, line) for n, line in enumerate(text.splitlines(), start=first)]


# -- the follower -------------------------------------------------------------------------------


def _texts(items: list[KeptLine | FileChange]) -> list[str]:
    return [item.text for item in items if isinstance(item, KeptLine)]


def _changes(items: list[KeptLine | FileChange]) -> list[str]:
    return [item.kind for item in items if isinstance(item, FileChange)]


def test_follower_starts_at_the_end_and_keeps_true_line_numbers(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("one\ntwo\nthree\n")
    follower = Follower(log, from_start=False)
    assert _changes(follower.poll()) == ["following"]
    append(log, "four\nfi")
    items = follower.poll()
    assert [(i.line, i.text) for i in items if isinstance(i, KeptLine)] == [(4, "four")]
    assert follower.poll() == []  # half a line waits for its newline
    append(log, "ve\n")
    assert [(i.line, i.text) for i in follower.poll() if isinstance(i, KeptLine)] == [(5, "five")]
    follower.close()


def test_follower_from_start_replays(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\ufeffone\ntwo\n")
    follower = Follower(log, from_start=True)
    assert _texts(follower.poll()) == ["one", "two"]
    assert follower.caught_up
    follower.close()


def test_follower_waits_for_the_file_then_reads_it_whole(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    follower = Follower(log, from_start=False)
    assert _changes(follower.poll()) == ["waiting"]
    assert follower.poll() == []  # said once
    log.write_text("first\nsecond\n")
    items = follower.poll()
    assert _changes(items) == ["following"] and _texts(items) == ["first", "second"]
    follower.close()


def test_follower_crosses_rotation_and_truncation(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("old\n")
    follower = Follower(log, from_start=False)
    follower.poll()
    append(log, "last of the day\nno newline")
    log.rename(tmp_path / "server.log.2026-09-15")
    assert follower.poll() == [KeptLine(2, "last of the day")]  # the new file is not there yet
    log.write_text("new day\n")
    items = follower.poll()
    assert _texts(items) == ["no newline", "new day"]
    assert _changes(items) == ["rotated", "following"]
    assert [i.line for i in items if isinstance(i, KeptLine)] == [3, 1]
    log.write_text("x\n")  # truncated and rewritten shorter
    items = follower.poll()
    assert _changes(items) == ["truncated"] and [(i.line, i.text) for i in items if isinstance(i, KeptLine)] == [
        (1, "x")
    ]
    follower.close()


def test_follower_reads_a_last_write_that_lands_during_the_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, old = tmp_path / "server.log", tmp_path / "server.log.2026-09-15"
    log.write_text("a\n")
    follower = Follower(log, from_start=False)
    follower.poll()
    log.rename(old)
    log.write_text("new\n")
    check = Follower._replaced

    def late_write(self: Follower) -> bool:  # the old file's last write lands between the read and the check
        append(old, "late\n")
        return check(self)

    monkeypatch.setattr(Follower, "_replaced", late_write)
    assert _texts(follower.poll()) == ["late", "new"]
    follower.close()


def test_follower_refuses_what_cannot_be_followed(tmp_path: Path) -> None:
    from omlx_logscan.errors import LogscanError

    with pytest.raises(LogscanError, match="not a regular file"):
        Follower(tmp_path, from_start=False).check()


def test_log_path_follows_omlx_base_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omlx_logscan.errors import LogscanError

    monkeypatch.setenv("OMLX_BASE_PATH", str(tmp_path / "env"))
    assert log_path(None, None) == tmp_path / "env" / "logs" / "server.log"
    assert log_path(None, str(tmp_path / "opt")) == tmp_path / "opt" / "logs" / "server.log"
    assert log_path(str(tmp_path), None) == tmp_path / "server.log"
    monkeypatch.delenv("OMLX_BASE_PATH")
    assert log_path(None, None) == Path.home() / ".omlx" / "logs" / "server.log"
    with pytest.raises(LogscanError, match="not both"):
        log_path("x.log", "base")


# -- lines to events and live state -------------------------------------------------------------


def test_a_traceback_written_in_two_pieces_joins_its_record() -> None:
    text = escalation(T0)
    lines = lines_of(text)
    stream = LiveStream("server.log")
    assert stream.add(lines[:3]) == []  # the record is still open
    events = stream.add(lines[3:])
    assert [e.kind for e in events] == ["gpu_error"]
    assert events[0].lines == 8 and events[0].fields["exception"] == "RuntimeError"
    assert stream.holding
    held = stream.flush()
    assert [(e.kind, e.fields["code_name"]) for e in held] == [("gpu_error", "SubmissionsIgnored")]
    assert not stream.holding


def test_time_only_lines_are_dated_from_the_log_before_them() -> None:
    stream = LiveStream("paste.txt")
    assert [e.kind for e in stream.add(lines_of(warning(T0))) + stream.flush()] == ["request_error"]
    events = stream.add(lines_of("22:25:21  Engine loop error: " + _IGNORED + "\n", first=2)) + stream.flush()
    assert events[-1].kind == "gpu_error" and events[-1].time == "2026-09-15T22:25:21"


def test_an_impossible_timestamp_is_an_unknown_time() -> None:
    """The grammar accepts month 13 and hour 99; the watcher must not fall over such a line."""
    text = warning(T0) + "2026-13-45 99:99:99,000 - omlx.engine_core - ERROR - [-] - Engine loop error: " + _IGNORED
    stream = LiveStream("server.log")
    events = stream.add(lines_of(text + "\n")) + stream.flush()
    assert [(e.kind, e.time) for e in events] == [("request_error", "2026-09-15T22:20:21.140"), ("gpu_error", None)]
    _events, state, changes = _live(text + "\n")
    assert changes == ["FaultClosed", "WindowOpened"] and state.window is not None


# What the watcher says, as the names of the state's changes that make it say so.
_CHANGES = {"fault": "FaultClosed", "dead": "WindowOpened", "dead_end": "WindowClosed"}


def _live(text: str) -> tuple[list[Event], WatchState, list[str]]:
    """Append text to a watched log at once and let every timer run out; the changes as names, in order."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        log.write_text("")
        sink = EventKeeper()
        watcher = Watcher(WatchOptions(log), sink)
        watcher.step(0.0)
        append(log, text)
        watcher.step(1.0)
        watcher.step(100.0)  # the last record and the last incident are complete
        watcher.follower.close()
    changes = [_CHANGES[notice.kind] for notice in sink.notices if notice.kind in _CHANGES]
    return sink.events, watcher.state, changes


def test_penalty_box_opens_one_window_and_repeats_do_not_reopen_it() -> None:
    text = escalation(T0) + repeat(T0 + timedelta(minutes=5)) + repeat(T0 + timedelta(minutes=11))
    _events, state, changes = _live(text)
    assert changes == ["FaultClosed", "WindowOpened"]
    assert state.window is not None and state.window.repeats == 2
    assert state.window.start == "2026-09-15T22:20:21.140"
    assert [f.outcome for f in state.faults] == ["penalty_box"]


def test_a_restart_ends_the_window_and_rearms() -> None:
    later = T0 + timedelta(hours=2)
    text = escalation(T0) + startup(later) + escalation(later + timedelta(minutes=30))
    _events, state, changes = _live(text)
    assert changes == ["FaultClosed", "WindowOpened", "WindowClosed", "FaultClosed", "WindowOpened"]
    assert [w.session for w in state.windows] == [1, 2]
    assert state.windows[0].end_reason == "restart" and state.windows[0].end == "2026-09-16T00:20:21.140"


def test_a_new_kind_of_fault_after_the_penalty_box_means_an_unseen_restart() -> None:
    """At WARNING level a restart leaves no line; a Timeout cannot come from a penalty-boxed process."""
    text = escalation(T0) + repeat(T0 + timedelta(minutes=5)) + escalation(T0 + timedelta(hours=3))
    _events, state, changes = _live(text)
    assert changes == ["FaultClosed", "WindowOpened", "WindowClosed", "FaultClosed", "WindowOpened"]
    first = state.windows[0]
    assert first.end_reason == "restart" and not first.end_exact and first.repeats == 1
    assert state.sessions[1].start_inferred


def test_a_fatal_exit_is_no_dead_window() -> None:
    """Builds after the fix exit on their own; the supervisor restarts them without our help."""
    text = _line(T0, "omlx.scheduler", "ERROR", f"Error in batch generation step: {_IGNORED}") + fatal_exit(
        T0 + timedelta(milliseconds=5)
    )
    events, state, changes = _live(text)
    assert [e.kind for e in events] == ["gpu_error", "gpu_error", "process_exit"]
    assert changes == ["FaultClosed"]
    assert [f.outcome for f in state.faults] == ["fatal_exit"] and state.windows == []


def test_an_abort_ends_the_window() -> None:
    abort = (
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: " + _IGNORED.rstrip(".") + "\n"
    )
    text = escalation(T0) + warning(T0 + timedelta(minutes=1)) + abort
    _events, state, changes = _live(text)
    assert changes == ["FaultClosed", "WindowOpened", "WindowClosed"]
    assert state.windows[0].end_reason == "crash" and state.window is None


def _replay(path: Path) -> tuple[list[Event], WatchState]:
    sink = EventKeeper()
    watcher = Watcher(WatchOptions(path, exit_at_end=True), sink)
    watcher.replay_to_end()
    return sink.events, watcher.state


@pytest.mark.slow
@pytest.mark.parametrize("case", ["example", "s2-file-warning", "s5-console-info"])
def test_live_state_matches_the_batch_analyzer(case: str, tmp_path: Path) -> None:
    """Replayed line by line, the log gives the batch command's events, sessions, faults and windows."""
    if case == "example":
        source = plain = EXAMPLE
    else:
        source = GENERATED / case / "omlx.log.gz"
        plain = tmp_path / "omlx.log"
        plain.write_bytes(gzip.decompress(source.read_bytes()))
    batch = analysis_of(source)
    events, state = _replay(plain)

    def key(ev: Event) -> tuple[str, int, str | None]:
        return ev.kind, ev.line, ev.time

    live_events = [key(e) for e in events if e.kind not in ("record", "request_complete")]
    assert live_events == [key(e) for e in batch.stream.events if e.kind != "request_complete"]
    assert len(state.sessions) == len(batch.sessions)
    assert [(f.time, f.session) for f in state.faults] == [(f.time, f.session) for f in batch.faults]
    assert [f.time for f in state.faults if f.outcome == "penalty_box"] == [
        f.time for f in batch.faults if f.outcome == "penalty_box"
    ]
    assert [(w.session, w.start, w.repeats, w.last_failure) for w in state.windows] == [
        (w.session, w.start, w.repeats, w.last_failure) for w in batch.dead_windows
    ]
    still_dead = [w.end_reason == "eof" for w in batch.dead_windows]
    assert [w is state.window for w in state.windows] == still_dead


# -- the watcher, on a clock the test sets -------------------------------------------------------


class Recorder:
    """A sink that keeps what the watcher said, in order, as (what, text) pairs."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []

    def event(self, event: Event) -> None:
        self.said.append(("event", event.kind))

    def notice(self, notice: Notice) -> None:
        self.said.append((notice.kind, notice.message))

    def info(self, message: str) -> None:
        self.said.append(("info", message))

    def unparsed(self, line: KeptLine) -> None:
        self.said.append(("unparsed", line.text))

    def kinds(self) -> list[str]:
        return [what for what, _ in self.said]


@pytest.mark.slow
def test_from_start_keeps_a_fault_at_the_end_of_the_history_in_the_history(tmp_path: Path) -> None:
    """The last replayed record and incident are history: counted in the replay, never a notice or a hook."""
    log = tmp_path / "server.log"
    log.write_text(startup(T0 - timedelta(minutes=2)) + warning(T0 - timedelta(minutes=1)) + timeout(T0))
    sink = Recorder()
    watcher = Watcher(WatchOptions(log, from_start=True, on_fault="true"), sink)
    watcher.step(0.0)
    for now in (10.0, 20.0):  # long past the record hold and the incident gap
        assert not watcher.step(now)
    at = next(i for i, (what, text) in enumerate(sink.said) if what == "info" and text.startswith("replayed"))
    assert "1 session, 1 GPU fault, 0 dead windows" in sink.said[at][1]
    assert ("event", "gpu_error") in sink.said[:at]  # printed as part of the replay
    assert "fault" not in sink.kinds() and watcher.hook_runs == {}

    append(log, timeout(T0 + timedelta(minutes=1)))  # a live fault still is news
    watcher.step(30.0)
    watcher.step(40.0)
    deadline = time.monotonic() + WITHIN_S
    while "command" not in sink.kinds() and time.monotonic() < deadline:
        watcher.step(50.0)
        time.sleep(0.01)
    watcher.follower.close()
    assert [text for what, text in sink.said if what == "fault"] == [
        "GPU fault 2 in session 1 at 2026-09-15 22:21:21: Timeout (engine_loop)"
    ]
    assert watcher.hook_runs == {"on-fault": 1} and "command" in sink.kinds()


def test_the_table_shows_control_characters_instead_of_sending_them_to_the_terminal() -> None:
    """A log line (or a hook's output) must not retitle, clear or recolour the user's terminal."""
    hostile = "POST /v1/chat/completions → 400: \x1b]0;owned\x07\x1b[2J\x9b31m\rdone\tok"
    stream = LiveStream("server.log")
    events = stream.add([KeptLine(1, _line(T0, "omlx.server", "WARNING", hostile).rstrip("\n"))]) + stream.flush()
    assert [e.kind for e in events] == ["request_error"]
    out = io.StringIO()
    sink = TableSink(out, quiet=True)
    sink.event(events[0])
    sink.notice(Notice("command", "on-dead command exited 0", {}, ["\x1b[2J\x1b[31mrestarted\x1b[0m"]))
    text = out.getvalue()
    for raw in ("\x1b]0;", "\x07", "\x9b", "\r", "\x1b[2J", "\x1b[31mrestarted"):  # colour codes of our own may stay
        assert raw not in text
    assert "400: \\x1b]0;owned\\x07\\x9b31m\\x0ddone" in text  # the grammar already drops colour (CSI) codes
    assert "\\x1b[2J\\x1b[31mrestarted\\x1b[0m" in text


# -- the command, in process --------------------------------------------------------------------


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    for args, words in (
        (["watch", "x.log", "--base-path", str(tmp_path)], "not both"),
        (["watch", "-"], "cannot follow stdin"),
        (["watch", str(tmp_path / "a.log"), "-k", "nonsense"], "unknown"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert words in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--interval", "inf"),
        ("--interval", "nan"),
        ("--interval", "1e12"),
        ("--interval", "0"),
        ("--interval", "-1"),
        ("--command-timeout", "inf"),
        ("--command-timeout", "nan"),
        ("--command-timeout", "0"),
    ],
)
def test_seconds_must_be_finite_and_positive(option: str, value: str, tmp_path: Path) -> None:
    """A dead backlog makes the watch end by itself, so a value wrongly accepted cannot hang the test."""
    log = tmp_path / "server.log"
    log.write_text(escalation(T0) + warning(T0 + timedelta(minutes=1)) + warning(T0 + timedelta(minutes=2)))
    args = ["watch", str(log), "--from-start", "--exit-on-dead", "-q", "--on-dead", "true"]
    result = runner.invoke(app, [*args, "--interval", "0.05", option, value])
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and option in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_exit_on_dead_after_replaying_a_dead_backlog(tmp_path: Path) -> None:
    """--from-start: history is replayed quietly; the alert is for what is still true, with its repeats."""
    log = tmp_path / "server.log"
    runs = tmp_path / "runs.txt"
    minutes = [timedelta(minutes=m) for m in (5, 11, 12, 13)]
    log.write_text(
        startup(T0 - timedelta(hours=1))
        + escalation(T0)  # an earlier window, ended by the restart below
        + startup(T0 + minutes[0])
        + escalation(T0 + minutes[1])
        + repeat(T0 + minutes[1] + timedelta(minutes=5))
        + repeat(T0 + minutes[1] + timedelta(minutes=10))
        + warning(T0 + timedelta(hours=1))
        + warning(T0 + timedelta(hours=2))
    )
    on_dead = f'printf "%s|%s\\n" "$LOGSCAN_DEAD_SINCE" "$LOGSCAN_SESSION" >> {runs}'
    args = ["watch", str(log), "--from-start", "--interval", "0.05", "--exit-on-dead", "--on-dead", on_dead]
    started = time.monotonic()
    result = runner.invoke(app, [*args, "-q", "--tz", "Europe/Berlin"])
    assert result.exit_code == EXIT_DEAD, result.output
    assert time.monotonic() - started < WITHIN_S
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    alerts = [r for r in rows if r.get("watch") == "dead"]
    assert len(alerts) == 1 and alerts[0]["window"]["session"] == 2 and alerts[0]["window"]["repeats"] == 2
    assert (
        "engine generation-dead since 2026-09-15 22:31:21 (session 2, server.log:22); 2 repeats" in alerts[0]["message"]
    )
    assert [r["exit_code"] for r in rows if r.get("watch") == "command"] == [0]
    assert runs.read_text().splitlines() == ["2026-09-15T22:31:21.140+02:00|2"]  # the offset of --tz, as everywhere
    assert sum(1 for r in rows if r.get("kind") == "gpu_error") == 6  # the replay printed the history
    assert "logscan watch: stopped" in result.stderr and "2 dead windows" in result.stderr


@pytest.mark.slow
def test_a_hook_that_hangs_is_killed_and_reported(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(escalation(T0) + warning(T0 + timedelta(minutes=1)) + warning(T0 + timedelta(minutes=2)))
    args = ["watch", str(log), "--from-start", "--interval", "0.05", "--exit-on-dead", "-q"]
    started = time.monotonic()
    result = runner.invoke(app, [*args, "--on-dead", "echo begun; sleep 30", "--command-timeout", "0.3"])
    assert result.exit_code == EXIT_DEAD, result.output
    assert time.monotonic() - started < WITHIN_S
    command = next(json.loads(line) for line in result.stdout.splitlines() if '"watch": "command"' in line)
    assert command["timed_out"] and command["exit_code"] == -signal.SIGKILL and command["output"] == "begun\n"


# -- the command as a real process --------------------------------------------------------------


class Watch:
    """A ``logscan watch`` subprocess whose output the test waits on, line by line, with deadlines."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        env = (
            {k: v for k, v in os.environ.items() if not k.startswith(("OMLX_", "LOGSCAN_"))}
            | {"TZ": "UTC"}
            | (env or {})
        )
        self.process = subprocess.Popen(
            [*WATCH, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._changed = threading.Condition()
        self._pumps = [
            threading.Thread(target=self._pump, args=(pipe, lines), daemon=True)
            for pipe, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err))
        ]
        for pump in self._pumps:
            pump.start()

    def _pump(self, pipe: Any, lines: list[str]) -> None:
        for line in pipe:
            with self._changed:
                lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def wait_for(self, lines: list[str], match: Callable[[str], bool], within: float = WITHIN_S) -> str:
        deadline = time.monotonic() + within
        with self._changed:
            while True:
                found = next((line for line in lines if match(line)), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"not seen within {within} s\nstdout: {self.out[-15:]}\nstderr: {self.err}")
                self._changed.wait(min(left, 0.2))

    def row(self, match: Callable[[dict[str, Any]], bool], within: float = WITHIN_S) -> dict[str, Any]:
        def matches(line: str) -> bool:
            try:
                return match(json.loads(line))
            except (ValueError, AttributeError):
                return False

        return json.loads(self.wait_for(self.out, matches, within))  # type: ignore[no-any-return]

    def rows(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in list(self.out)]

    def finish(self, within: float = WITHIN_S) -> int:
        code = self.process.wait(timeout=within)
        for pump in self._pumps:
            pump.join(timeout=within)
        return code


@pytest.fixture
def watches() -> Iterator[list[Watch]]:
    started: list[Watch] = []
    yield started
    for watch in started:
        if watch.process.poll() is None:
            watch.process.kill()
            watch.process.wait(timeout=STARTUP_S)


def _following(watch: Watch) -> None:
    watch.wait_for(watch.err, lambda line: line.startswith("following "), within=STARTUP_S)


@pytest.mark.slow
def test_live_alert_single_on_dead_rotation_restart_and_rearm(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "server.log"
    log.write_text(startup(T0 - timedelta(hours=3)) + warning(T0 - timedelta(hours=2)))
    runs, faults = tmp_path / "runs.txt", tmp_path / "faults.txt"
    on_dead = (
        f'printf "%s|%s|%s\\n" "$LOGSCAN_DEAD_SINCE" "$LOGSCAN_SESSION" "$LOGSCAN_LOG" >> {runs}; '
        f'printf "%s" "$LOGSCAN_EVENT" > {tmp_path}/event-$LOGSCAN_SESSION.json; echo restarted'
    )
    on_fault = f'echo "$LOGSCAN_SESSION $LOGSCAN_DEAD_SINCE" >> {faults}'
    watch = Watch(str(log), "--interval", "0.1", "-f", "ndjson", "--on-dead", on_dead, "--on-fault", on_fault)
    watches.append(watch)
    _following(watch)

    # The penalty box: one alert, one --on-dead run with its environment.
    append(log, escalation(T0) + warning(T0 + timedelta(minutes=1)))
    alert = watch.row(lambda r: r.get("watch") == "dead")
    window = alert["window"]
    assert window["start"] == "2026-09-15T22:20:21.140+00:00" and window["session"] == 1 and window["repeats"] == 0
    assert "engine generation-dead since 2026-09-15 22:20:21 (session 1, server.log:12); 0 repeats" in alert["message"]
    done = watch.row(lambda r: r.get("watch") == "command" and r["hook"] == "on-dead")
    assert done["exit_code"] == 0 and done["output"] == "restarted\n"
    assert runs.read_text().splitlines() == [f"2026-09-15T22:20:21.140+00:00|1|{log}"]
    watch.row(lambda r: r.get("watch") == "command" and r["hook"] == "on-fault" and r["session"] == 1)
    event = json.loads((tmp_path / "event-1.json").read_text())
    assert event["kind"] == "gpu_error" and event["code_name"] == "SubmissionsIgnored" and event["line"] == 12
    assert event["time"] == "2026-09-15T22:20:21.226+00:00" and event["host"]  # its NDJSON row: zoned, with a host
    assert all(r["line"] > 3 for r in watch.rows() if "watch" not in r)  # watching began at the end

    # A repeat inside the window, then the midnight rotation and a new process.
    append(log, repeat(T0 + timedelta(minutes=5)) + warning(T0 + timedelta(minutes=6)))
    append(log, warning(T0 + timedelta(minutes=7)))
    log.rename(tmp_path / "server.log.2026-09-15")
    later = datetime(2026, 9, 16, 0, 0, 5)
    log.write_text(startup(later))
    ended = watch.row(lambda r: r.get("watch") == "dead_end")["window"]
    assert ended["end_reason"] == "restart" and ended["repeats"] == 1
    assert ended["end"] == "2026-09-16T00:00:05.000+00:00"
    watch.wait_for(watch.err, lambda line: "was rotated" in line)
    kinds = [(r["kind"], r["line"]) for r in watch.rows() if "watch" not in r]
    assert kinds.index(("request_error", 23)) < kinds.index(("process_start", 1))  # the old file was read to its end

    # The new process enters the penalty box too: the alert was re-armed.
    append(log, escalation(later + timedelta(hours=1)) + warning(later + timedelta(hours=2)))
    second = watch.row(lambda r: r.get("watch") == "dead" and r["window"]["session"] == 2)
    assert second["window"]["start"] == "2026-09-16T01:00:05.000+00:00"
    watch.row(lambda r: r.get("watch") == "command" and r["hook"] == "on-dead" and r["session"] == 2)
    assert runs.read_text().splitlines() == [
        f"2026-09-15T22:20:21.140+00:00|1|{log}",
        f"2026-09-16T01:00:05.000+00:00|2|{log}",
    ]
    watch.row(lambda r: r.get("watch") == "command" and r["hook"] == "on-fault" and r["session"] == 2)
    assert faults.read_text().splitlines() == ["1 2026-09-15T22:20:21.140+00:00", "2 2026-09-16T01:00:05.000+00:00"]

    watch.process.send_signal(signal.SIGINT)  # Ctrl-C
    assert watch.finish() == 0
    summary = watch.err[-1]
    assert summary.startswith("logscan watch: stopped after ")
    assert "2 sessions, 2 GPU faults, 2 dead windows" in summary and "on-dead ran 2x" in summary


@pytest.mark.slow
def test_exit_on_dead_when_the_log_appears_later(tmp_path: Path, watches: list[Watch]) -> None:
    base = tmp_path / "omlx"
    watch = Watch("--base-path", str(base), "--interval", "0.1", "-f", "table", "--exit-on-dead")
    watches.append(watch)
    watch.wait_for(watch.err, lambda line: line.startswith("waiting for "), within=STARTUP_S)
    (base / "logs").mkdir(parents=True)
    log = base / "logs" / "server.log"
    started = time.monotonic()
    log.write_text(escalation(T0))  # nothing follows: the incident completes after two quiet seconds
    assert watch.finish(within=WITHIN_S) == EXIT_DEAD
    assert time.monotonic() - started < WITHIN_S
    alerts = [line for line in watch.out if "ALERT engine generation-dead since 2026-09-15 22:20:21" in line]
    assert len(alerts) == 1 and "(session 1, server.log:9)" in alerts[0]  # the SubmissionsIgnored record
    assert any("gpu_error" in line and "server.log:1 " in line for line in watch.out)
    assert watch.err[-1].startswith("logscan watch: stopped") and "engine dead since" in watch.err[-1]


@pytest.mark.slow
def test_sigterm_stops_cleanly(tmp_path: Path, watches: list[Watch]) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    watch = Watch(str(log), "--interval", "0.1", "-f", "ndjson")
    watches.append(watch)
    _following(watch)
    with log.open("ab") as handle:
        handle.write(b"\x00\x01 not a log line \xff\xfe\n" + warning(T0).encode())
    watch.row(lambda r: r.get("kind") == "request_error")
    watch.process.terminate()
    assert watch.finish() == 0
    assert watch.err[-1].startswith("logscan watch: stopped") and "1 unparsed line" in watch.err[-1]


def test_a_binary_file_is_refused() -> None:
    result = runner.invoke(app, ["watch", "/bin/ls"])
    assert result.exit_code == 2 and "not a text log" in result.stderr


# -- --exit-at-end and the batch rules, live --------------------------------------------------------


def test_exit_at_end_replays_a_finished_log_and_stops(tmp_path: Path) -> None:
    """No following: the whole file, then the summary; the fault is absorbed, as the timeline says."""
    log = tmp_path / "server.log"
    log.write_text(startup(T0) + timeout(T0 + timedelta(minutes=1)) + warning(T0 + timedelta(minutes=2)))
    result = runner.invoke(app, ["watch", str(log), "--exit-at-end", "-f", "ndjson"])
    assert result.exit_code == 0, result.output
    kinds = [json.loads(line).get("kind") for line in result.stdout.splitlines()]
    assert kinds == ["process_start", "gpu_error", "request_error"]
    assert (
        "replayed 11 lines: 1 session, 1 GPU fault, 0 dead windows; stopping: the log is read to its end"
        in result.stderr
    )
    assert "logscan watch: stopped after" in result.stderr


def test_exit_at_end_with_exit_on_dead_says_whether_the_engine_is_dead_at_the_end(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(escalation(T0) + repeat(T0 + timedelta(minutes=5)))
    result = runner.invoke(app, ["watch", str(log), "--exit-at-end", "--exit-on-dead", "-q"])
    assert result.exit_code == EXIT_DEAD, result.output
    assert [json.loads(line)["window"]["repeats"] for line in result.stdout.splitlines() if '"watch"' in line] == [1]


def test_a_live_fault_has_its_signature_and_is_absorbed_when_the_process_goes_on(tmp_path: Path) -> None:
    """The record that closes the fault shows the process working: the notice already says absorbed."""
    text = startup(T0) + timeout(T0 + timedelta(minutes=1)) + warning(T0 + timedelta(minutes=2))
    log = tmp_path / "server.log"
    log.write_text(text)
    batch_fault = analysis_of(log).faults[0]
    _events, state, _changes = _live(text)
    live_fault = state.faults[0]
    assert (live_fault.outcome, live_fault.signature) == ("absorbed", batch_fault.signature)
    assert live_fault.signature is not None


# -- records kept whole across polls ------------------------------------------------------------


def test_a_traceback_whose_lines_come_a_poll_later_stays_one_record(tmp_path: Path) -> None:
    """oMLX's record and its traceback can reach the file in pieces: a second of quiet must not tear them."""
    log = tmp_path / "server.log"
    log.write_text("")
    sink = Recorder()
    watcher = Watcher(WatchOptions(log), sink)
    watcher.step(0.0)
    head, *rest = timeout(T0).splitlines(keepends=True)
    append(log, head + "".join(rest[:2]))
    assert watcher.step(1.0)
    assert not watcher.step(2.5)  # 1.5 s of quiet: the traceback may still be on its way
    append(log, "".join(rest[2:]))
    assert watcher.step(2.9)
    assert not watcher.step(5.0)  # 2 s of quiet after its last line: now it is complete
    watcher.follower.close()
    assert [text for what, text in sink.said if what == "event"] == ["gpu_error"]
    assert "unparsed" not in sink.kinds() and watcher.stream.unparsed == 0


def test_the_next_record_head_completes_the_record_at_once(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    sink = Recorder()
    watcher = Watcher(WatchOptions(log), sink)
    watcher.step(0.0)
    append(log, timeout(T0))
    watcher.step(0.1)
    assert "event" not in sink.kinds()  # held: its continuation may still come
    append(log, warning(T0 + timedelta(seconds=1)))
    watcher.step(0.2)
    watcher.follower.close()
    assert [text for what, text in sink.said if what == "event"] == ["gpu_error"]  # the warning is held now


def test_the_table_shows_unparsed_lines_as_they_come(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    out = io.StringIO()
    watcher = Watcher(WatchOptions(log), TableSink(out, quiet=True))
    watcher.step(0.0)
    append(log, timeout(T0) + "a note pasted by hand\n" + warning(T0 + timedelta(seconds=1)))
    watcher.step(0.1)
    watcher.follower.close()
    shown = out.getvalue().splitlines()
    assert shown[1].startswith("unparsed") and shown[1].endswith("line 9: a note pasted by hand"), shown
    assert "gpu_error" in shown[0]  # in file order: the fault's record came first
    assert watcher.stream.unparsed == 1


# -- the alert on a terminal --------------------------------------------------------------------


def _dead_log(tmp_path: Path) -> Path:
    log = tmp_path / "server.log"
    log.write_text(startup(T0 - timedelta(minutes=1)) + escalation(T0) + repeat(T0 + timedelta(minutes=5)))
    return log


def test_the_alert_is_one_reverse_video_line_across_the_terminal(tmp_path: Path) -> None:
    from rich.console import Console

    out = io.StringIO()
    terminal = Console(file=out, width=100, force_terminal=True, color_system="standard", markup=False)
    sink = TableSink(out, quiet=True, bell=True, console=terminal)
    Watcher(WatchOptions(_dead_log(tmp_path), exit_at_end=True), sink).replay_to_end()
    lines = out.getvalue().splitlines()
    alerts = [n for n, line in enumerate(lines) if "ALERT" in line]
    assert len(alerts) == 1
    alert = lines[alerts[0]]
    assert alert.startswith("\a") and "\x1b[1;7;31m" in alert  # the bell, then bold reverse red
    headline = re.sub(r"\x1b\[[0-9;]*m|\a", "", alert)
    assert len(headline) == 100 and headline.startswith(" ALERT engine generation-dead since 2026-09-15 22:20:21")
    assert "only a restart recovers it" in lines[alerts[0] + 1]


@pytest.mark.slow
def test_bell_rings_once_per_dead_window_as_a_subprocess(tmp_path: Path) -> None:
    log = _dead_log(tmp_path)
    quiet = subprocess.run([*WATCH, str(log), "--exit-at-end", "-f", "table"], capture_output=True, text=True)
    rung = subprocess.run([*WATCH, str(log), "--exit-at-end", "-f", "table", "--bell"], capture_output=True, text=True)
    assert quiet.returncode == rung.returncode == 0, rung.stderr
    assert "\a" not in quiet.stdout and rung.stdout.count("\a") == 1
    assert "ALERT engine generation-dead" in rung.stdout.split("\a")[1].splitlines()[0]
    assert "--bell" in runner.invoke(app, ["watch", "--help"]).stdout
