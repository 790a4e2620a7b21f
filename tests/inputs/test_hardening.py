"""Hostile input, odd clocks, and nothing lost: named hard cases."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, REAL, TIMEOUT_LINE, WARN, stream_of
from omlx_logscan.cli.app import app
from omlx_logscan.errors import InputError

runner = CliRunner()


def lines_in(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def assert_accounted(path: Path, expected_lines: int) -> None:
    acc = stream_of(path).accounting
    assert acc.lines == expected_lines
    assert acc.lines == acc.accounted


def one_line_error(args: list[str], fragment: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_empty_file_is_an_input_error(tmp_path: Path) -> None:
    empty = tmp_path / "server.log"
    empty.write_bytes(b"")
    one_line_error(["timeline", str(empty)], "empty file")


def test_empty_file_beside_a_good_one_is_named_as_skipped(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    result = runner.invoke(app, ["timeline", str(empty), str(EXAMPLE)])
    assert result.exit_code == 0
    assert f"skipped {empty}: empty" in result.stderr


def test_binary_file(tmp_path: Path) -> None:
    blob = tmp_path / "server.log"
    blob.write_bytes(bytes(range(256)) * 400)
    one_line_error(["events", str(blob)], "not a text log")
    result = runner.invoke(app, ["timeline", str(blob), str(EXAMPLE)])
    assert result.exit_code == 0 and "not a text log" in result.stderr


def test_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "loop.log"
    loop.symlink_to(loop)
    one_line_error(["events", str(loop)], "cannot open")


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "server.log"
    log.write_text(WARN.format(1, 1))
    monkeypatch.setattr("omlx_logscan.inputs.sources.os.access", lambda *_args: False)  # tests run as root
    one_line_error(["events", str(log)], "permission denied")


def test_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "server.log"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as handle:
            handle.write(WARN.format(1, 1) + TIMEOUT_LINE)

    writer = threading.Thread(target=feed)
    writer.start()
    stream = stream_of(fifo)
    writer.join(timeout=10)
    assert stream.kind_counts["gpu_error"] == 1 and stream.accounting.lines == 2


@pytest.mark.slow
def test_line_of_50_megabytes(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    body = "x" * (50 * 1024 * 1024)
    log.write_text(WARN.format(1, body) + TIMEOUT_LINE)
    stream = stream_of(log)
    assert stream.kind_counts["gpu_error"] == 1
    warning = next(ev for ev in stream.events if ev.kind == "warning")
    assert len(warning.message) < 70_000 and "more characters]" in warning.message
    assert_accounted(log, 2)


def test_nul_bytes_and_crlf(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    data = (WARN.format(1, "a\x00b") + "\x00\x00\n" + TIMEOUT_LINE).replace("\n", "\r\n").encode()
    log.write_bytes(data)
    stream = stream_of(log)
    assert stream.kind_counts["gpu_error"] == 1 and stream.kind_counts["warning"] == 1
    assert not any(ev.message.endswith("\r") for ev in stream.events)
    assert_accounted(log, lines_in(data))


def test_mixed_encodings(tmp_path: Path) -> None:
    log = tmp_path / "server.log.gz"  # the decoding path of compressed input
    data = WARN.format(1, "café").encode("latin-1") + WARN.format(2, "café").encode() + TIMEOUT_LINE.encode()
    log.write_bytes(gzip.compress(data))
    stream = stream_of(log)
    assert [ev.message for ev in stream.events if ev.kind == "warning"] == ["message café", "message café"]
    assert stream.kind_counts["gpu_error"] == 1


def test_utf16_with_bom(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes((WARN.format(1, 1) + TIMEOUT_LINE).encode("utf-16"))
    stream = stream_of(log)
    assert stream.kind_counts["gpu_error"] == 1 and stream.accounting.lines == 2


def test_separator_byte_inside_a_line(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(WARN.format(1, "a\x1fb").encode() + TIMEOUT_LINE.encode())
    stream = stream_of(log)
    assert stream.kind_counts["gpu_error"] == 1
    assert_accounted(log, 2)


@pytest.mark.parametrize("opener", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_inputs(tmp_path: Path, opener: object) -> None:
    suffix = {gzip.compress: ".gz", bz2.compress: ".bz2", lzma.compress: ".xz"}[opener]  # type: ignore[index]
    log = tmp_path / f"server.log{suffix}"
    log.write_bytes(opener((WARN.format(1, 1) + TIMEOUT_LINE).encode()))  # type: ignore[operator]
    assert stream_of(log).kind_counts["gpu_error"] == 1


@pytest.mark.slow
def test_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    whole = gzip.compress((WARN.format(1, 1) * 50_000 + TIMEOUT_LINE).encode())
    log = tmp_path / "server.log.gz"
    log.write_bytes(whole[: len(whole) // 2])
    stream = stream_of(log)
    assert 0 < stream.accounting.lines < 50_001
    assert stream.sources[0].problem is not None and "truncated or corrupt" in stream.sources[0].problem
    result = runner.invoke(app, ["timeline", str(log)])
    assert result.exit_code == 0 and "truncated or corrupt" in result.stderr


def test_corrupt_gzip_is_an_error(tmp_path: Path) -> None:
    log = tmp_path / "server.log.gz"
    log.write_bytes(b"\x1f\x8b" + b"\x00garbage" * 100)
    one_line_error(["events", str(log)], "truncated or corrupt")


def test_no_input_at_all() -> None:
    with pytest.raises(InputError):
        stream_of()


def test_time_only_lines_roll_over_midnight_and_new_year(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(
        "2026-12-31 23:59:58,000 - omlx.scheduler - WARNING - [-] - last of the year\n"
        "00:00:05 - omlx.scheduler - WARNING - first of the next\n"
    )
    times = [ev.time for ev in stream_of(log).events]
    assert times == ["2026-12-31T23:59:58.000", "2027-01-01T00:00:05"]


def test_internal_error_points_to_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("omlx_logscan.analysis.investigation.analyze", broken)
    result = runner.invoke(app, ["timeline", str(REAL / "omlx-issue-3683.log")])
    assert result.exit_code == 70
    assert "internal error" in result.stderr and "--debug" in result.stderr
    assert "Traceback" not in result.output


def test_debug_lets_the_traceback_through(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("omlx_logscan.analysis.investigation.analyze", broken)
    result = runner.invoke(app, ["timeline", "--debug", str(REAL / "omlx-issue-3683.log")])
    assert isinstance(result.exception, RuntimeError) and str(result.exception) == "boom"


def test_time_only_lines_stay_in_order_across_midnight(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(
        "2026-09-15 23:00:00,000 - omlx.scheduler - WARNING - [-] - dated\n"
        "23:30:00 - omlx.scheduler - WARNING - half past\n"
        "00:10:00 - omlx.scheduler - WARNING - after midnight\n"
        "13:00:00 - omlx.scheduler - WARNING - next afternoon\n"
    )
    times = [ev.time for ev in stream_of(log).events]
    assert times == ["2026-09-15T23:00:00.000", "2026-09-15T23:30:00", "2026-09-16T00:10:00", "2026-09-16T13:00:00"]


def test_a_time_only_fault_after_a_panic_report_is_not_swallowed(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(
        'panic(cpu 4 caller 0xfffffe00427725d8): "completeMemory() prepare count underflow" @IOGPUMemory.cpp:550\n'
        "Debugger message: panic\n"
        "14:40:48,000 - omlx.engine_core - ERROR - Engine loop error: [METAL] Command buffer execution failed: "
        "Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
    )
    assert [ev.kind for ev in stream_of(log).events] == ["kernel_panic", "gpu_error"]


def test_compressed_data_under_a_plain_name_is_read(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(gzip.compress((WARN.format(1, 1) * 200).encode()))
    assert stream_of(log).kind_counts["warning"] == 200


def test_data_compressed_twice_is_refused_naming_the_inner_compression(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(gzip.compress(gzip.compress((WARN.format(1, 1) * 200).encode())))
    one_line_error(["events", str(log)], "gzip-compressed data inside the decompressed input")


def test_bytes_that_look_like_a_zlib_stream_do_not_escape_as_errors(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"x\xda\t    ")
    stream = stream_of(log)
    assert stream.accounting.lines == 1 and stream.accounting.unparsed == 1
