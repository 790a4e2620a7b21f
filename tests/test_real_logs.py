"""Every public paste from oMLX issues parses, loses no line, and yields the events it must."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REAL, stream_of

REAL_FILES = sorted(REAL.glob("*.log"))


def test_all_real_logs_are_here() -> None:
    assert len(REAL_FILES) >= 50


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_every_line_is_accounted_for(path: Path) -> None:
    stream = stream_of(path)
    acc = stream.accounting
    lines = len(path.read_bytes().splitlines())
    assert acc.lines == lines
    assert acc.lines == acc.accounted


def kinds(path: str) -> list[tuple[str, str | None]]:
    return [(ev.kind, ev.fields.get("code_name")) for ev in stream_of(REAL / path).events]


def test_ane_dispatch_timeout_wrapped_over_lines() -> None:
    events = stream_of(REAL / "omlx-issue-3399.log").events
    gpu = [ev for ev in events if ev.kind == "gpu_error"]
    assert len(gpu) == 1
    assert gpu[0].fields["code"] == "00000002"
    assert gpu[0].fields["code_name"] == "Timeout"
    assert gpu[0].fields["context"] == "ane_dispatch"
    assert gpu[0].lines == 7  # the NSError wrapped over six lines, and the blank line after it


@pytest.mark.parametrize(
    ("name", "code_name"),
    [
        ("omlx-issue-1387.log", "ImpactingInteractivity"),
        ("omlx-issue-2079.log", "OutOfMemory"),
        ("omlx-pr-1397.log", "OutOfMemory"),
    ],
)
def test_libcxxabi_abort_is_a_gpu_error_and_a_process_exit(name: str, code_name: str) -> None:
    found = kinds(name)
    assert ("gpu_error", code_name) in found
    assert ("process_exit", None) in found
    exits = [ev for ev in stream_of(REAL / name).events if ev.kind == "process_exit"]
    assert exits[0].fields["reason"] == "abort"
    gpu = next(ev for ev in stream_of(REAL / name).events if ev.kind == "gpu_error")
    assert gpu.fields["context"] == "uncaught_abort"


def test_restart_visible_only_as_a_new_startup_block() -> None:
    starts = [ev for ev in stream_of(REAL / "omlx-issue-1014.log").events if ev.kind == "process_start"]
    assert len(starts) == 1
    assert starts[0].time == "2026-04-30T13:28:59.865"
    assert "startup_block" in starts[0].fields["markers"]


def test_one_start_per_startup_block() -> None:
    starts = [ev for ev in stream_of(REAL / "omlx-issue-899.log").events if ev.kind == "process_start"]
    assert len(starts) == 1
    # Issue 14 lists every startup line of the facts as a marker: CORS origins, three `Discovered model`,
    # `Discovered 3 models`, Server initialized, Default model, Default max tokens (it was 2 lines), and
    # Max model memory (issue 28: every line the server's init_server writes).
    assert starts[0].fields["markers"] == ["startup_block"] and starts[0].lines == 9


def test_handled_metal_oom_in_prefill_and_stream() -> None:
    gpu = [ev for ev in stream_of(REAL / "omlx-issue-3683.log").events if ev.kind == "gpu_error"]
    assert [ev.fields["context"] for ev in gpu] == ["prefill", "chat_stream"]
    assert {ev.fields["code_name"] for ev in gpu} == {"OutOfMemory"}


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("omlx-issue-862.log", "kernel_panic"),
        ("omlx-issue-435.log", "kernel_panic"),
        ("omlx-issue-1265.log", "kernel_panic"),
        ("omlx-issue-410.log", "crash_report"),
        ("omlx-pr-1529.log", "crash_report"),
        ("omlx-issue-578.log", "faulthandler_dump"),
    ],
)
def test_blocks_are_recognised(name: str, kind: str) -> None:
    events = [ev for ev in stream_of(REAL / name).events if ev.kind == kind]
    assert len(events) == 1


def test_kernel_panic_string_and_block_size() -> None:
    panic = next(ev for ev in stream_of(REAL / "omlx-issue-862.log").events if ev.kind == "kernel_panic")
    assert panic.fields["panic"].startswith('"completeMemory() prepare count underflow"')
    assert panic.lines == 31


def test_crash_report_exception_type() -> None:
    report = next(ev for ev in stream_of(REAL / "omlx-issue-410.log").events if ev.kind == "crash_report")
    assert report.fields["exception_type"] == "EXC_CRASH (SIGABRT)"


def test_engine_loop_error_without_request_id_field_keeps_its_traceback() -> None:
    errors = [ev for ev in stream_of(REAL / "omlx-issue-1468.log").events if ev.kind == "error"]
    assert len(errors) == 1
    assert errors[0].logger == "omlx.engine_core"
    funcs = [frame["func"] for frame in errors[0].fields["traceback"]]
    assert funcs[:3] == ["_engine_loop", "run", "step"]


def test_menubar_app_log() -> None:
    events = stream_of(REAL / "omlx-issue-725.log").events
    assert sum(1 for ev in events if ev.kind == "warning") == 5
    assert all(ev.logger == "omlx_app.app" for ev in events)


def test_pressure_levels_and_requests() -> None:
    events = stream_of(REAL / "omlx-issue-1431.log").events
    pressure = [ev for ev in events if ev.kind == "memory_pressure"]
    assert pressure and all(ev.fields["action"] == "level_change" for ev in pressure)
    assert pressure[0].fields["from_level"] == "soft" and pressure[0].fields["to_level"] == "ok"
    assert pressure[0].fields["current_gb"] == 22.0


def test_request_complete_fields_new_layout() -> None:
    stream = stream_of(REAL / "omlx-issue-3234.log")
    sparse = [ev for ev in stream.events if ev.kind == "request_complete"]
    assert stream.kind_counts["request_complete"] == len(sparse) + stream.requests.height
    assert stream.kind_counts["request_complete"] >= 1


def test_http_422_quoted() -> None:
    events = stream_of(REAL / "omlx-issue-1503.log").events
    assert [(ev.kind, ev.fields.get("status")) for ev in events] == [("request_error", 422)]


def test_unload_sequence_is_not_a_server_shutdown() -> None:
    events = stream_of(REAL / "omlx-issue-2156.log").events
    assert "shutdown" not in {ev.kind for ev in events}
    assert {"model_unload", "engine_stop"} <= {ev.kind for ev in events}


def test_a_restart_seen_only_as_a_startup_block_ends_the_process_before_it() -> None:
    from conftest import analysis_of

    sessions = analysis_of(REAL / "omlx-issue-1014.log").sessions
    assert [(s.start_in_log, s.end_reason) for s in sessions] == [(False, "crash"), (True, "eof")]
    assert sessions[1].start == "2026-04-30T13:28:59.865"
