"""``events`` writes its rows while the input is still being read (stdin, a named pipe), and they are
the rows a batch read of the same input prints, in the same order."""

from __future__ import annotations

import gzip
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, GENERATED, REAL, TIMEOUT_LINE, WARN
from omlx_logscan.cli.app import app
from omlx_logscan.inputs.sources import IDLE_S
from omlx_logscan.parsing.dense import NO_TIME
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream import read
from omlx_logscan.stream.streaming import GRAMMAR, REQUESTS, StreamedOrder

runner = CliRunner()

REQUEST = (
    "2026-10-25 {} - omlx.server - INFO - [-] - Chat completion: model=m, 10 tokens in 1.00s (10.0 tok/s), "
    "prompt: 5, finish_reason=stop, max_tokens=100, request_max_tokens=None\n"
)


@pytest.fixture
def streamed_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources the streaming path read in this test (a comparison must not pass by reading in batch twice)."""
    names: list[str] = []
    stream_events = read.stream_events

    def spied(source: Any, *args: Any, **kwargs: Any) -> Any:
        names.append(source.name)
        return stream_events(source, *args, **kwargs)

    monkeypatch.setattr(read, "stream_events", spied)
    return names


def _text(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def _batch_and_streamed(path: Path, *options: str) -> tuple[Any, Any]:
    """``events`` of ``path`` read as a file (the batch read) and fed on stdin (streamed)."""
    batch = runner.invoke(app, ["events", str(path), *options])
    streamed = runner.invoke(app, ["events", "-", *options], input=_text(path))
    return batch, streamed


# NDJSON rows are checked against their schema as they are written: the larger logs are compared as CSV.
LOGS = [(path, "ndjson") for path in sorted(REAL.glob("*.log"))]
LOGS += [(EXAMPLE, "csv"), (GENERATED / "s1-file-info" / "omlx.log.gz", "csv")]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "fmt"), LOGS, ids=lambda value: getattr(value, "name", value))
def test_streamed_rows_are_the_batch_rows_in_the_batch_order(path: Path, fmt: str, streamed_runs: list[str]) -> None:
    batch, streamed = _batch_and_streamed(path, "-f", fmt)
    assert streamed_runs == ["<stdin>"]
    assert streamed.exit_code == batch.exit_code
    assert streamed.stdout == batch.stdout.replace(str(path), "<stdin>")
    assert streamed.stderr == batch.stderr.replace(str(path), "<stdin>")  # the accounting, or the refusal


@pytest.mark.slow
@pytest.mark.parametrize(
    "window",
    [
        ["--since", "2026-09-15 20:30"],
        ["--since", "2026-07-01", "--until", "2026-08-01 12:00"],
        ["--since", "2030-01-01"],
    ],
)
def test_a_window_streams_the_rows_a_batch_read_keeps(window: list[str], streamed_runs: list[str]) -> None:
    batch, streamed = _batch_and_streamed(EXAMPLE, "-f", "ndjson", *window)
    assert streamed_runs == ["<stdin>"]
    assert streamed.exit_code == batch.exit_code == 0
    assert streamed.stdout == batch.stdout.replace(str(EXAMPLE), "<stdin>")
    assert streamed.stderr == batch.stderr.replace(str(EXAMPLE), "<stdin>")  # the window's accounting, or its note
    assert ("no records between" in batch.stderr) == (window[1] == "2030-01-01")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_streamed_table_and_csv_are_the_batch_ones(fmt: str, streamed_runs: list[str], tmp_path: Path) -> None:
    """Through a named pipe of the same name, so the table's ``where`` column reads the same."""
    fifo = tmp_path / EXAMPLE.name
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(EXAMPLE.read_bytes()))
    writer.start()
    streamed = runner.invoke(app, ["events", str(fifo), "-f", fmt, "-q"], env={"COLUMNS": "160"})
    writer.join(timeout=60)
    batch = runner.invoke(app, ["events", str(EXAMPLE), "-f", fmt, "-q"], env={"COLUMNS": "160"})
    assert streamed_runs == [str(fifo)]
    assert streamed.exit_code == batch.exit_code == 0
    assert streamed.stdout == batch.stdout.replace(str(EXAMPLE), str(fifo)) and streamed.stdout.count("\n") > 1000


@pytest.mark.slow
def test_kinds_limit_and_a_fall_back_hour_stream_as_in_a_batch(tmp_path: Path, streamed_runs: list[str]) -> None:
    # Berlin's clocks go back from 03:00 CEST to 02:00 CET on 2026-10-25: the offset of a time in that
    # hour depends on the lines after it, so those rows wait for the end of the input.
    log = tmp_path / "server.log"
    log.write_text(
        WARN.replace("2026-09-15 20:00", "2026-10-25 01:59").format(1, 1)
        + REQUEST.format("02:10:00,000")
        + WARN.replace("2026-09-15 20:00", "2026-10-25 02:40").format(0, 2)
        + REQUEST.format("02:50:00,000")
        + REQUEST.format("02:20:00,000")
        + WARN.replace("2026-09-15 20:00", "2026-10-25 02:50").format(0, 3)
        + WARN.replace("2026-09-15 20:00", "2026-10-25 02:20").format(0, 4)  # the second pass
        + TIMEOUT_LINE.replace("2026-09-15 20:19", "2026-10-25 03:19")
    )
    outputs = []
    for options in (
        ["-f", "ndjson", "--tz", "Europe/Berlin"],
        ["-f", "csv", "--tz", "Europe/Berlin", "-k", "request_complete,gpu_error"],
        ["-f", "ndjson", "--limit", "3"],
    ):
        batch, streamed = _batch_and_streamed(log, *options, "-q")
        assert batch.exit_code == streamed.exit_code == 0
        assert streamed.stdout == batch.stdout.replace(str(log), "<stdin>"), options
        outputs.append(streamed.stdout)
    assert streamed_runs == ["<stdin>"] * 3
    assert 'T02:20:00.000+01:00"' in outputs[0] and 'T02:50:00.000+02:00"' in outputs[0]  # told by what follows
    assert "warning" not in outputs[1] and outputs[1].count("request_complete") == 3
    assert outputs[2].count("\n") == 3


@pytest.mark.slow
def test_a_file_and_a_json_document_are_read_whole(streamed_runs: list[str]) -> None:
    for arguments in (
        [str(EXAMPLE), "-f", "ndjson"],
        ["-", "-f", "json"],
        ["-", "-f", "ndjson", "--all"],
    ):
        result = runner.invoke(app, ["events", *arguments, "-k", "gpu_error"], input=EXAMPLE.read_bytes())
        assert result.exit_code == 0 and "gpu_error" in result.stdout, arguments
    assert streamed_runs == []


class _Rows:
    """A sink that keeps what it is given."""

    def __init__(self) -> None:
        self.written: list[Event] = []

    def can_write(self, event: Event) -> bool:
        return True

    def write(self, event: Event) -> None:
        self.written.append(event)

    def flush(self) -> None:
        pass


def _event(kind: str, time: str, line: int) -> Event:
    return Event(kind, time, "<stdin>", line, "INFO", "omlx.server", "m")


def test_rows_wait_for_a_later_time_and_a_step_back_is_noted() -> None:
    sink = _Rows()
    order = StreamedOrder(sink, None)
    first, second = _event("warning", "2026-01-01T10:00:00", 1), _event("warning", "2026-01-01T10:00:05", 2)
    order.take([first, second], [], [], [], recognised=False, floor="2026-01-01T10:00:05")
    # A record of 10:00:05 is still open: its event, and all to come, sort after the grammar's of that time.
    assert sink.written == [first, second]
    tie = _event("request_complete", "2026-01-01T10:00:05", 3)
    order.take([], [(NO_TIME, 3, [tie])], [], [], recognised=True, floor="2026-01-01T10:00:05")
    assert sink.written == [first, second]  # that record's event would go before a request row of its time
    # A record opened at 10:00:09 was read: nothing to come sorts before it, though no event has its time yet.
    order.take([], [], [], [], recognised=True, floor="2026-01-01T10:00:09")
    assert sink.written == [first, second, tie] and order.went_back is None
    back = _event("request_complete", "2026-01-01T09:59:00", 4)
    order.take([], [(NO_TIME, 4, [back])], [], [], recognised=True, floor=None)
    assert order.went_back is back  # it sorts before rows already written
    order.finish()
    assert sink.written == [first, second, tie, back]
    assert (GRAMMAR, REQUESTS) == (0, 1)  # the grammar's events go first on equal times, as in all_events


def test_a_start_of_a_kind_not_asked_for_holds_no_row_back() -> None:
    """``-k gpu_error``: the running process's start may still gain a marker, but it is not written."""
    for kinds, expected in ((set(), []), ({"warning"}, [2])):
        sink = _Rows()
        order = StreamedOrder(sink, None, shown=lambda event, kinds=kinds: not kinds or event.kind in kinds)  # type: ignore[misc]
        start = _event("process_start", "2026-01-01T10:00:00", 1)
        start.fields = {"marker": "banner"}
        warning = _event("warning", "2026-01-01T10:30:00", 2)
        order.take([start, warning], [], [], [], recognised=True, floor="2026-01-01T11:00:00")
        assert [event.line for event in sink.written] == expected


def test_a_start_waits_while_a_marker_could_still_join_it() -> None:
    sink = _Rows()
    order = StreamedOrder(sink, None)
    banner = _event("process_start", "2026-01-01T10:00:00", 1)
    banner.fields = {"marker": "banner"}
    warning = _event("warning", "2026-01-01T10:00:10", 2)
    order.take([banner, warning], [], [], [], recognised=False, floor="2026-01-01T10:01:00")
    assert sink.written == []  # a marker within two minutes of the last one joins the start
    marker = _event("process_start", "2026-01-01T10:01:30", 3)
    marker.fields = {"marker": "startup_block"}
    order.take([marker], [], [], [], recognised=False, floor="2026-01-01T10:02:00")
    assert sink.written == []
    later = _event("warning", "2026-01-01T10:05:00", 4)
    order.take([later], [], [], [], recognised=False, floor="2026-01-01T10:05:00")  # no later marker can join now
    assert [event.line for event in sink.written] == [1, 2, 4]  # what comes later sorts after the grammar's rows
    assert sink.written[0].fields["markers"] == ["banner", "startup_block"]
    assert banner.fields == {"marker": "banner"}  # a copy was folded: the batch read folds its own


def test_nothing_is_written_before_the_input_shows_it_is_an_omlx_log() -> None:
    sink = _Rows()
    order = StreamedOrder(sink, None)
    note = Event("record", "2026-01-01T10:00:00", "<stdin>", 1, None, None, "a note")
    later = _event("record", "2026-01-01T11:00:00", 2)
    later.logger = None
    order.take([note, later], [], [], [], recognised=False, floor="2026-01-01T11:00:00")
    assert sink.written == []
    order.take([], [], [], [], recognised=True, floor="2026-01-01T11:00:00")  # a request row: oMLX's
    assert sink.written == [note, later]


def _first_line(stream: Any, deadline: float) -> bytes:
    """The child's first line of output, read as it comes (None of it is waited for past ``deadline``)."""
    got = b""
    while b"\n" not in got and time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.5)
        if ready:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            got += chunk
    return got


@pytest.mark.slow
def test_rows_come_while_a_slow_writer_still_holds_the_pipe_open() -> None:
    """A real process fed through a pipe: the first rows come out while the writer has written only part
    of the log and keeps the pipe open, idle for longer than ``IDLE_S`` (as a logger writes whole
    records, it stops between two); once it closes, the output is the batch read's."""
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)
    split = next(n for n in range(600, len(lines)) if lines[n].startswith(b"2026-"))  # a record begins
    command = [sys.executable, "-m", "omlx_logscan", "events", "-f", "ndjson", "-q"]
    child = subprocess.Popen([*command, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(b"".join(lines[:split]))
        child.stdin.flush()
        first = _first_line(child.stdout, time.monotonic() + 120)
        assert b"\n" in first, "no row while the pipe was open"
        assert child.poll() is None  # still reading: the writer holds the pipe open
        time.sleep(IDLE_S + 0.5)  # idle: the last record read is taken as complete
        rest, errors = child.communicate(b"".join(lines[split:]), timeout=120)  # the rest, then the end
    finally:
        child.kill()
    batch = subprocess.run([*command, str(EXAMPLE)], capture_output=True, timeout=120, check=True)
    assert child.returncode == 0, errors
    assert first + rest == batch.stdout.replace(str(EXAMPLE).encode(), b"<stdin>")


@pytest.mark.slow
def test_a_limit_on_a_silent_pipe_ends_the_run_while_the_writer_holds_it_open() -> None:
    """``--limit`` stops the reading: the run does not wait for a writer that sends nothing more."""
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)
    command = [sys.executable, "-m", "omlx_logscan", "events", "-f", "ndjson", "-q", "--limit", "3", "-"]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(b"".join(lines[:600]))
        child.stdin.flush()  # and held open, silent
        assert child.wait(timeout=60) == 0
        rows = child.stdout.read().splitlines()
    finally:
        child.kill()
        child.stdin.close()
    assert len(rows) == 3 and all(json.loads(row)["source"] == "<stdin>" for row in rows)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "end", "prefix"),
    [
        (["-k", "gpu_error"], 1832, b""),  # a warning after the fault
        (["-k", "gpu_error", "-f", "table"], 1832, b""),
        (["--since", "2026-09-15 20:00"], 1832, b""),
        (["-k", "gpu_error"], 1830, b""),  # the fault and its traceback are the last lines written
        (["-k", "gpu_error"], 1830, b"omlx-1  | "),  # docker compose logs -f
    ],
)
def test_a_fault_comes_through_an_open_pipe_before_the_input_ends(options: list[str], end: int, prefix: bytes) -> None:
    """``printf …; sleep | logscan events -k gpu_error -``: a banner starts the session (its start may
    still gain a marker), then the fault and its traceback; the writer then holds the pipe open. The
    fault's row comes before the input ends (at once when a line follows it, else once the writer
    is idle), and the whole output is the batch read's."""
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)
    head = b"".join(prefix + line for line in lines[:6] + lines[1812:end])  # the banner; warnings, the first fault
    assert b"GPU Timeout" in head
    command = [sys.executable, "-m", "omlx_logscan", "events", "-q", *options]
    environment = {**os.environ, "COLUMNS": "200"}
    child = subprocess.Popen(
        [*command, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write(head)
        child.stdin.flush()
        first = _first_line(child.stdout, time.monotonic() + 60)
        while b"gpu_error" not in first and b"\n" in first and child.poll() is None:
            more = _first_line(child.stdout, time.monotonic() + 60)
            if not more:
                break
            first += more
        assert b"gpu_error" in first, f"no fault's row while the pipe was open: {first!r}"
        assert child.poll() is None  # still reading
        rest, errors = child.communicate(b"", timeout=60)
    finally:
        child.kill()
    batch = subprocess.run([*command, "-"], input=head, capture_output=True, timeout=60, check=True, env=environment)
    assert child.returncode == 0, errors
    assert first + rest == batch.stdout


@pytest.mark.slow
def test_a_writer_that_pauses_between_bursts_gets_the_batch_rows(tmp_path: Path) -> None:
    """Each pause hands on the lines sent so far, mid-traceback too; rows and accounting stay the batch's."""
    lines = (GENERATED / "s1-console-info" / "omlx.log.gz").read_bytes()
    lines = gzip.decompress(lines).splitlines(keepends=True)[:2500]
    command = [sys.executable, "-m", "omlx_logscan", "events", "-f", "ndjson", "-"]
    with (tmp_path / "out").open("wb") as out, (tmp_path / "err").open("wb") as err:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, stderr=err)
        assert child.stdin is not None
        try:
            for start in range(0, len(lines), 97):  # 26 bursts, each ending at a line of its own kind
                child.stdin.write(b"".join(lines[start : start + 97]))
                child.stdin.flush()
                time.sleep(0.06)
            child.stdin.close()
            assert child.wait(timeout=120) == 0
        finally:
            child.kill()
    batch = subprocess.run(command, input=b"".join(lines), capture_output=True, timeout=120, check=True)
    assert (tmp_path / "out").read_bytes() == batch.stdout and batch.stdout.count(b"\n") > 900
    assert (tmp_path / "err").read_bytes() == batch.stderr
