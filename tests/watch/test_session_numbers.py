"""A watch that begins at the end of a log numbers lifetimes as ``logscan sessions`` does for the whole file."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_parity import EventKeeper

from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.stream.read import read_events
from omlx_logscan.watch.loop import Watcher, WatchOptions
from synthetic import absorbed_faults, busy, ignored, start, timeout, write_log

SRC = Path(__file__).resolve().parents[2] / "src"
HISTORY = absorbed_faults(3, 1)  # three lifetimes, each with an absorbed fault, before the watch begins
LATER = 60.0  # minutes: what is appended comes after the history


def append(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))


def batch_numbers(path: Path) -> list[tuple[int, str | None]]:
    return [(s.index, s.start) for s in analyze(read_events(resolve([str(path)]))).sessions]


def watched_from_end(log: Path, appended: list[str]) -> Watcher:
    watcher = Watcher(WatchOptions(log), EventKeeper())
    watcher.step(0.0)  # opens the file at its end
    append(log, appended)
    watcher.step(1.0)
    watcher.step(10.0)  # quiet long enough: the last record and the last incident are complete
    watcher.follower.close()
    return watcher


def test_a_new_start_after_the_skipped_lifetimes_has_the_next_batch_number(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", HISTORY)
    watcher = watched_from_end(log, [start(LATER), timeout(LATER + 1), ignored(LATER + 1), busy(LATER + 5)])
    whole = batch_numbers(log)
    assert len(whole) == 4
    assert [(s.index, s.start) for s in watcher.state.sessions] == whole[-1:]
    assert [fault.session for fault in watcher.state.faults] == [4]
    assert [window.session for window in watcher.state.windows] == [4]


def test_the_running_process_keeps_the_number_of_the_last_skipped_lifetime(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", HISTORY)
    watcher = watched_from_end(log, [timeout(LATER), ignored(LATER), busy(LATER + 5)])
    whole = analyze(read_events(resolve([str(log)])))
    assert [s.index for s in watcher.state.sessions] == [len(whole.sessions)] == [3]
    assert [fault.session for fault in watcher.state.faults] == [whole.faults[-1].session]


def test_an_empty_file_and_a_replay_number_from_one(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    watcher = watched_from_end(log, [start(0), timeout(1), busy(2)])
    assert [s.index for s in watcher.state.sessions] == [1]
    replay = Watcher(WatchOptions(write_log(tmp_path / "old.log", HISTORY), exit_at_end=True), EventKeeper())
    replay.replay_to_end()
    assert [s.index for s in replay.state.sessions] == [1, 2, 3]


def _lines_until(process: subprocess.Popen[bytes], stream: str, wanted: str, timeout_s: float = 30.0) -> list[str]:
    """Lines of the child's ``stream`` up to the first that holds ``wanted`` (failing after ``timeout_s``);
    read from the pipe itself, so no line waits in a buffer the selector cannot see."""
    fd = getattr(process, stream).fileno()
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    data = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if selector.select(deadline - time.monotonic()):
            chunk = os.read(fd, 65536)
            assert chunk, f"the watch ended before {wanted!r}: {data!r}"
            data += chunk
            lines = data.decode().splitlines()
            for at, line in enumerate(lines):
                if wanted in line and data.decode().count("\n") > at:
                    return lines[: at + 1]
    raise AssertionError(f"no {wanted!r} within {timeout_s} s: {data!r}")


@pytest.mark.slow
def test_the_subprocess_alert_names_the_session_logscan_sessions_names(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", HISTORY)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    watch = subprocess.Popen(
        [sys.executable, "-m", "omlx_logscan", "watch", str(log), "-f", "ndjson", "--interval", "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        _lines_until(watch, "stderr", "following")
        append(log, [start(LATER), timeout(LATER + 1), ignored(LATER + 1), busy(LATER + 5)])
        rows = [json.loads(line) for line in _lines_until(watch, "stdout", '"watch": "dead"')]
    finally:
        watch.send_signal(signal.SIGTERM)
        watch.communicate(timeout=30)
    sessions = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "sessions", str(log), "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    numbers = [s["index"] for s in json.loads(sessions.stdout)["sessions"]]
    assert numbers == [1, 2, 3, 4]
    assert rows[-1]["window"]["session"] == numbers[-1]
    assert [row["fault"]["session"] for row in rows if row.get("watch") == "fault"] == [numbers[-1]]
