"""``logscan watch --exit-at-end`` ends in the state ``logscan timeline`` reads: one analyzer, two readers.

The watcher reads a log line by line, as it is written, and runs ``analyze`` on what it read;
``read_events`` reads it whole. Replayed to its end, the watcher must find the same events, lifetimes,
faults and dead windows and the same line accounting, on every fixture and on the real oMLX runs.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLE, FIXTURES, GENERATED, REAL
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.cli.values import log_path
from omlx_logscan.errors import LogscanError
from omlx_logscan.inputs import follow
from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.output.notices import Notice
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.read import read_events
from omlx_logscan.watch.loop import Watcher, WatchOptions
from synthetic import busy, ignored, record, start, timeout, write_log

REAL_OMLX = FIXTURES / "real-omlx"  # logs of real oMLX servers run with GPU faults injected
SINGLE_FILE_CASES = sorted(p.parent.name for p in GENERATED.glob("s*-*/omlx.log.gz") if "-rotated" not in str(p))
LOGS = sorted([*REAL.glob("*.log"), *REAL_OMLX.glob("*.log"), EXAMPLE], key=lambda p: p.name)
SUBPROCESS_CASES = ["s1-file-info", "s5-console-warning", "omlx-issue-3683.log", "e-info-periodic@0.5.3.console.log"]

# Requests and arrivals are dense rows in a batch read and events in a live one: compared by count, not as events.
DENSE_KINDS = frozenset({"request_complete", "request_arrival", "record"})


class EventKeeper:
    """A watch sink that keeps the events (every kind) and the notices."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.notices: list[Notice] = []
        self.unparsed_lines: list[KeptLine] = []

    def event(self, event: Event) -> None:
        self.events.append(event)

    def notice(self, notice: Notice) -> None:
        self.notices.append(notice)

    def info(self, message: str) -> None:
        pass

    def unparsed(self, line: KeptLine) -> None:
        self.unparsed_lines.append(line)


def _event_keys(events: list[Event]) -> list[tuple[Any, ...]]:
    return [(e.kind, e.line, e.time, e.lines, e.message) for e in events if e.kind not in DENSE_KINDS]


def batch_state(path: Path) -> dict[str, Any]:
    """What ``logscan timeline`` reads in the log."""
    stream = read_events(resolve([str(path)]))
    analysis = analyze(stream)
    return {
        "events": _event_keys(stream.events),
        "requests": stream.kind_counts["request_complete"],
        "sessions": [(s.index, s.start, s.start_exact, s.end, s.end_reason) for s in analysis.sessions],
        "faults": [f.as_dict() for f in analysis.faults],
        "dead_windows": [w.as_dict() for w in analysis.dead_windows],
        "lines": stream.accounting.lines,
        "unparsed_lines": sorted(line for _, line, _ in stream.unparsed),
    }


def live_state(path: Path) -> dict[str, Any]:
    """The same, from the watcher replaying the file to its end (the library call behind --exit-at-end)."""
    sink = EventKeeper()
    watcher = Watcher(WatchOptions(path, exit_at_end=True), sink)
    assert watcher.replay_to_end() == 0
    state = watcher.state
    return {
        "events": _event_keys(sink.events),
        "requests": Counter(e.kind for e in sink.events)["request_complete"],
        "sessions": [(s.index, s.start, s.start_exact, s.end, s.end_reason) for s in state.sessions],
        "faults": [f.as_dict() for f in state.faults],
        "dead_windows": [w.as_dict() for w in state.windows],
        "lines": watcher.lines,
        "unparsed_lines": sorted(line.line for line in sink.unparsed_lines),  # each shown as it came
    }


def assert_same_state(path: Path) -> None:
    batch, live = batch_state(path), live_state(path)
    for part in batch:  # one part at a time, so a failure names what differs
        assert live[part] == batch[part], part


def _plain(case: str, tmp_path: Path) -> Path:
    """A generator fixture decompressed: the watcher follows plain files, as oMLX writes them."""
    plain = tmp_path / "omlx.log"
    plain.write_bytes(gzip.decompress((GENERATED / case / "omlx.log.gz").read_bytes()))
    return plain


@pytest.fixture
def small_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Polls of 4 KiB, as a live log is read: the lifetimes before the last start are let go as it goes."""
    monkeypatch.setattr(follow, "POLL_BYTES", 4096)
    monkeypatch.setattr(follow, "READ_BYTES", 4096)


@pytest.mark.slow
@pytest.mark.usefixtures("small_polls")
@pytest.mark.parametrize("case", SINGLE_FILE_CASES)
def test_generated_logs_replay_to_the_batch_state(case: str, tmp_path: Path) -> None:
    assert_same_state(_plain(case, tmp_path))


@pytest.mark.slow
@pytest.mark.usefixtures("small_polls")
@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_real_logs_replay_to_the_batch_state(path: Path) -> None:
    assert_same_state(path)


# -- the rules one at a time, on small logs written for them --------------------------------------


def _completion(minute: float) -> str:
    return record(minute, "INFO", "omlx.server", "Chat completion: 12 tokens in 3.00s (20.0 tok/s), prompt: 900")


def _at_ms(line: str, milliseconds: int) -> str:
    """A line of ``synthetic`` (timed to the second) moved ``milliseconds`` into its second."""
    return line.replace(",000 ", f",{milliseconds:03d} ", 1)


def _panic() -> str:
    return "panic(cpu 0 caller 0xfffffe0012345678): GPU hang"


_ENFORCER = "Process memory enforcer started (tier=balanced, ceiling=100GB, interval=1.0s)"


# Logs that the live reading must store as a batch read does: requests, routine records, starts.
RULE_CASES: dict[str, list[str]] = {
    "absorbed-requests-only": [start(0), timeout(5), _completion(6), _completion(8)],
    "a-new-fault-means-a-restart": [timeout(10), ignored(10), ignored(15), timeout(60), busy(61)],
    "repeats-stopped-long-ago": [timeout(0), ignored(0), ignored(5), ignored(10), busy(100)],
    "records-before-the-first-start": [busy(0), timeout(1), busy(2), start(10), timeout(20)],
    "routine-records-only": [record(m, "DEBUG", "omlx.scheduler", "step") for m in (0, 1, 2)],
    "a-fault-then-startup-output-and-a-start": [
        start(0),
        busy(0.5),
        timeout(1),
        record(1.5, "INFO", "omlx.model_discovery", "Discovered model: m"),
        _at_ms(start(1.5), 500),
    ],
    # Threads write out of order: a request logged after the fault but timed before it is not after it.
    "a-request-timed-before-the-fault": [start(0), timeout(10), _completion(9.99), start(10.5)],
    "a-warning-while-the-fault-is-open-at-the-end": [start(0), timeout(10), _at_ms(busy(10), 500)],
    "a-panic-after-the-fault": [start(0), timeout(10), busy(11), _panic(), start(20)],
    "the-enforcer-line-at-the-top-of-a-paste": [
        record(0, "INFO", "omlx.engine_core", "Engine started"),
        record(0.1, "INFO", "omlx.process_memory_enforcer", _ENFORCER),
        _completion(1),
    ],
}


@pytest.mark.parametrize("case", sorted(RULE_CASES))
def test_each_rule_gives_the_batch_state_live(case: str, tmp_path: Path) -> None:
    assert_same_state(write_log(tmp_path / "server.log", RULE_CASES[case]))


# -- bytes that are not UTF-8 --------------------------------------------------------------------


def _windows_1252_log(tmp_path: Path, *, utf8_mark: bool) -> Path:
    """A head line and a traceback line in Windows-1252 (é, curly quotes), between UTF-8 lines."""
    lines = [
        start(0).encode(),
        record(2, "WARNING", "omlx.server", "model caf\u00e9 loaded").encode("cp1252"),
        timeout(5).encode(),
        b"Traceback (most recent call last):",
        b'  File "/opt/omlx/scheduler.py", line 10, in step',
        b"    raise RuntimeError(\x93GPU\x94)",
        b"RuntimeError: GPU",
        busy(7).encode(),
    ]
    path = tmp_path / "server.log"
    path.write_bytes((b"\xef\xbb\xbf" if utf8_mark else b"") + b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("utf8_mark", [False, True], ids=["no-mark", "utf8-byte-order-mark"])
def test_windows_1252_lines_read_alike(utf8_mark: bool, tmp_path: Path) -> None:
    """Batch reads a bad line as Windows-1252 (or, after a UTF-8 mark, as UTF-8 with U+FFFD): so does watch."""
    path = _windows_1252_log(tmp_path, utf8_mark=utf8_mark)
    assert_same_state(path)
    live = live_state(path)
    assert live["unparsed_lines"] == []
    warning = next(key for key in live["events"] if key[0] == "warning")
    assert warning[4] == ("model caf\ufffd loaded" if utf8_mark else "model café loaded")
    gpu = next(key for key in live["events"] if key[0] == "gpu_error")
    assert gpu[3] == 5  # the head line and its four traceback lines: one record


# Byte-level shapes of one log that the two readers must cut into the same lines.
LINE_SHAPES = {
    "crlf": lambda data: data.replace(b"\n", b"\r\n"),
    "no-final-newline": lambda data: data.rstrip(b"\n"),
    "blank-lines": lambda data: data.replace(b"\n", b"\n\n", 50),
    "lone-carriage-returns": lambda data: data.replace(b"\n", b"\r", 3),
    "nul-bytes": lambda data: data.replace(b"Traceback", b"Trace\x00back", 2),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(LINE_SHAPES))
def test_line_shapes_read_alike(shape: str, tmp_path: Path) -> None:
    """A last line without its newline is a line once the log is finished (the follower holds it until then)."""
    path = _plain("s1-file-info", tmp_path)
    path.write_bytes(LINE_SHAPES[shape](path.read_bytes()))
    assert_same_state(path)


def test_a_slow_replay_in_small_polls_gives_the_same_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """History is timed by the log: polls of a few hundred bytes, each a minute apart on the wall clock,
    must not close a fault or a record between two polls."""
    frames = [f'  File "/opt/omlx/scheduler.py", line {n}, in step\n    mx.synchronize()' for n in range(40)]
    traceback = ["Traceback (most recent call last):", *frames, "RuntimeError: GPU"]
    escalation = [timeout(10), *traceback, ignored(10.001), *traceback]
    path = write_log(tmp_path / "server.log", [start(0), *escalation, ignored(15), *traceback, busy(16)])
    monkeypatch.setattr(follow, "POLL_BYTES", 256)
    monkeypatch.setattr(follow, "READ_BYTES", 128)
    ticks = itertools.count(step=60.0)
    watcher = Watcher(WatchOptions(path, exit_at_end=True), EventKeeper())
    watcher.replay_to_end(clock=lambda: next(ticks))
    batch = batch_state(path)
    assert [f.as_dict() for f in watcher.state.faults] == batch["faults"]
    assert [w.as_dict() for w in watcher.state.windows] == batch["dead_windows"]
    assert watcher.lines == batch["lines"]


@pytest.mark.usefixtures("small_polls")
def test_lifetimes_before_the_last_start_are_let_go(tmp_path: Path) -> None:
    """A server runs for months: the stream keeps only the lifetimes from the last start on."""
    path = _plain("s1-file-info", tmp_path)
    watcher = Watcher(WatchOptions(path, exit_at_end=True), EventKeeper())
    watcher.replay_to_end()
    kept = watcher.state.growing.stream.events
    assert kept[0].kind == "process_start" and len(kept) < len(batch_state(path)["events"]) / 2


def test_exit_at_end_needs_a_file(tmp_path: Path) -> None:
    with pytest.raises(LogscanError, match="no such file"):
        Watcher(WatchOptions(tmp_path / "server.log", exit_at_end=True), EventKeeper()).replay_to_end()


def test_utf16_is_read_by_timeline_and_refused_by_watch(tmp_path: Path) -> None:
    """A true limit: the follower cuts bytes at newlines, which UTF-16 text does not allow. oMLX
    writes UTF-8, so watch refuses such a file at once (as binary data) rather than misread it."""
    path = tmp_path / "server.log"
    path.write_bytes("\n".join(RULE_CASES["absorbed-requests-only"]).encode("utf-16") + "\n".encode("utf-16-le"))
    assert len(batch_state(path)["faults"]) == 1
    with pytest.raises(LogscanError, match="not a text log"):
        Watcher(WatchOptions(log_path(str(path), None), exit_at_end=True), EventKeeper()).replay_to_end()


# -- the command, as a supervisor runs it ----------------------------------------------------------


def _fixture(case: str, tmp_path: Path) -> Path:
    if not case.endswith(".log"):
        return _plain(case, tmp_path)
    return REAL / case if (REAL / case).exists() else REAL_OMLX / case


@pytest.mark.slow
@pytest.mark.parametrize("case", SUBPROCESS_CASES)
def test_watch_exit_at_end_prints_what_timeline_reads(case: str, tmp_path: Path) -> None:
    path = _fixture(case, tmp_path)
    command = [sys.executable, "-m", "omlx_logscan"]
    watch = subprocess.run(
        [*command, "watch", str(path), "--exit-at-end", "-f", "ndjson", "-k", "gpu_error"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ | {"TZ": "UTC"},  # a live log is read in this machine's zone: its rows carry +00:00
    )
    timeline = subprocess.run(
        [*command, "timeline", str(path), "-f", "json"], capture_output=True, text=True, timeout=60, check=True
    )
    assert watch.returncode == 0, watch.stderr
    document = json.loads(timeline.stdout)
    rows = [json.loads(line) for line in watch.stdout.splitlines()]
    batch = batch_state(path)
    assert [(r["kind"], r["line"], r["time"]) for r in rows if "kind" in r] == [
        (k[0], k[1], k[2] and k[2] + "+00:00") for k in batch["events"] if k[0] == "gpu_error"
    ]
    header = document["header"]
    summary = watch.stderr.strip().splitlines()[-1]
    sessions, faults, windows = len(document["sessions"]), len(document["faults"]), len(document["dead_windows"])
    assert f"{header['lines']} line" in summary
    assert f"{sessions} session" in summary and f"{faults} GPU fault" in summary and f"{windows} dead window" in summary
    assert ("unparsed line" in summary) == (header["unparsed_lines"] > 0)


# Pastes whose faults' outcomes hang on what follows them: text that is not oMLX's, time-only lines.
_WENT_ON_PASTES = {
    "user-note": "\nAfter this I ran:\n- `brew services restart omlx`\n",
    "short-form-note": "\nsteps  - restarted the server, same thing\n",
    "report-json": '\n  "procName" : "python3.12",\n',
    "undated-omlx-record": "\nomlx.scheduler - INFO - prefix cache: re-prefills 10 of 20 tokens\n",
    "time-only": (
        "23:58:01.100 - omlx.scheduler - ERROR - Engine loop error: [METAL] Command buffer execution failed: "
        "Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
        "23:59:30.000 - omlx.server - INFO - Chat completion: model=m, 10 tokens in 1.00s (10.0 tok/s), prompt: 5\n"
    ),
}


@pytest.mark.parametrize("paste", sorted(_WENT_ON_PASTES))
def test_what_follows_a_fault_decides_its_outcome_alike(paste: str, tmp_path: Path) -> None:
    path = tmp_path / "omlx.log"
    fault = (
        "2026-09-19 16:00:01,000 - omlx.engine_core - ERROR - [-] - Engine loop error: [METAL] Command buffer "
        "execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
    )
    path.write_text(("" if paste == "time-only" else fault) + _WENT_ON_PASTES[paste])
    assert_same_state(path)
