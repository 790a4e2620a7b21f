"""The merged stream: a record two sources share counts once, file order survives a clock jump."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from conftest import EXAMPLE, TIMEOUT_LINE, WARN, stream_of
from omlx_logscan.cli.app import app

runner = CliRunner()


def test_backwards_clock_is_reported_and_file_order_kept(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "2026-11-01 02:30:00,000 - omlx.scheduler - WARNING - [-] - first\n"
        "2026-11-01 02:59:00,000 - omlx.scheduler - WARNING - [-] - second\n"
        "2026-11-01 02:01:00,000 - omlx.scheduler - WARNING - [-] - third, after the clock went back\n"
    )
    stream = stream_of(log)
    assert [ev.message.split(",")[0] for ev in stream.events] == ["first", "second", "third"]
    assert [(j["line"], j["back_s"]) for j in stream.clock_jumps] == [(3, 58 * 60)]
    result = runner.invoke(app, ["events", str(log), "-f", "ndjson"])
    assert "clock went back 58 min at" in result.stderr


def test_same_record_in_file_log_and_capture_counts_once(tmp_path: Path) -> None:
    file_log = tmp_path / "server.log"
    capture = tmp_path / "omlx.log"
    record = (
        "2026-09-15 20:19:38,663 - omlx.engine_core - ERROR - {}Engine loop error: [METAL] x "
        "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
    )
    request = (
        "2026-09-15 20:19:30,000 - omlx.server - INFO - {}Chat completion: 5 tokens in 1.00s (5.0 tok/s), prompt: 9\n"
    )
    filler = "2026-09-15 20:19:31,000 - omlx.server - INFO - {}routine\n"
    file_log.write_text((request + filler + record).format("[-] - ", "[-] - ", "[-] - "))
    capture.write_text(
        "\x1b[33moMLX - LLM inference, optimized for your Mac\x1b[0m\n" + (request + filler + record).format("", "", "")
    )
    stream = stream_of(file_log, capture)
    assert stream.kind_counts["gpu_error"] == 1
    assert stream.kind_counts["request_complete"] == 1
    assert stream.kind_counts["process_start"] == 1
    assert stream.accounting.duplicates == 2
    acc = stream.accounting
    assert acc.lines == acc.accounted


def test_the_same_log_twice_counts_once(tmp_path: Path) -> None:
    copy = tmp_path / "omlx.log"
    copy.write_bytes(EXAMPLE.read_bytes())
    from conftest import analysis_of

    single, doubled = analysis_of(EXAMPLE), analysis_of(EXAMPLE, copy)
    assert len(doubled.sessions) == len(single.sessions) == 160
    assert [(f.time, f.outcome) for f in doubled.faults] == [(f.time, f.outcome) for f in single.faults]
    assert doubled.stream.accounting.duplicates == single.stream.accounting.records


def test_a_folder_and_a_file_inside_it_are_read_once(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_text(WARN.format(1, 1) + TIMEOUT_LINE)
    stream = stream_of(tmp_path, tmp_path / "server.log")
    assert len(stream.sources) == 1 and stream.kind_counts["gpu_error"] == 1


def test_a_request_that_is_a_dense_row_in_one_source_and_an_event_in_another_counts_once(tmp_path: Path) -> None:
    request = (
        "2026-09-15 20:00:01,000 - omlx.server - INFO - {}Chat completion: 5 tokens in 1.00s (5.0 tok/s), prompt: 9\n"
    )
    routine = "2026-09-15 20:00:0{},000 - omlx.server - INFO - [-] - routine\n"
    file_log = tmp_path / "server.log"  # the request line sits between two timed lines: a dense row
    file_log.write_text(routine.format(0) + request.format("[-] - ") + routine.format(2))
    capture = tmp_path / "omlx.log"  # an untimed uvicorn line touches it here: a Python-parsed event
    capture.write_text('INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n' + request.format(""))
    stream = stream_of(file_log, capture)
    assert stream.kind_counts["request_complete"] == 1
    acc = stream.accounting
    assert acc.duplicates == 1
    assert acc.lines == acc.accounted
