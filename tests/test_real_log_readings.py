"""What a careful human reads in each public oMLX paste (issue 14): events, order, lifetimes, lost lines.

Each test states the reading of one file of ``tests/fixtures/real/`` (or of a group of files that
show the same thing) through the library and the documented JSON of ``timeline -f json`` and
``events -f ndjson``. Only lines that are truly not log text (client output, a user's own notes,
text a UI showed) may stay unparsed; each test says which.
"""

from __future__ import annotations

import functools
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from conftest import timeline_json
from omlx_logscan import analyze, read_events, resolve
from omlx_logscan.stream.read import all_events

REAL = Path(__file__).resolve().parent / "fixtures" / "real"

Doc = dict[str, Any]
Expected = list[tuple[int, str, dict[str, Any]]]


@functools.cache
def reading(name: str) -> Doc:
    """The ``timeline -f json`` document of one real log, with its events as ``events -f ndjson`` gives them."""
    stream = read_events(resolve([str(REAL / name)]), keep_request_text=True)
    stream.zone = UTC  # the expected times are the log's own: read in UTC, each carries "+00:00"
    doc = timeline_json(analyze(stream))
    doc["events"] = [event.as_dict() for event in all_events(stream)]
    return doc


def as_written(value: Any) -> Any:
    """A document's time as the log wrote it: without the offset of UTC it was read in."""
    return value.removesuffix("+00:00") if isinstance(value, str) else value


def show(doc: Doc) -> str:
    return "\n".join(f"  line {e['line']}: {e['kind']} {e['time']} {e['message'][:70]!r}" for e in doc["events"])


def expect_events(name: str, expected: Expected, ignore: frozenset[str] = frozenset()) -> Doc:
    """The events of ``name`` are exactly ``expected`` (line, kind, fields it must carry), in this order."""
    doc = reading(name)
    got = [e for e in doc["events"] if e["kind"] not in ignore]
    want = [(line, kind) for line, kind, _ in expected]
    assert [(e["line"], e["kind"]) for e in got] == want, f"{name}: events were\n{show(doc)}"
    for event, (line, kind, fields) in zip(got, expected, strict=True):
        for key, value in fields.items():
            assert event.get(key) == value, f"{name} line {line} ({kind}): {key}={event.get(key)!r}, want {value!r}"
    return doc


def event_at(name: str, line: int, kind: str) -> dict[str, Any]:
    doc = reading(name)
    found = [e for e in doc["events"] if e["line"] == line and e["kind"] == kind]
    assert len(found) == 1, f"{name}: want one {kind} at line {line}; events were\n{show(doc)}"
    return found[0]


def expect_unparsed(name: str, count: int) -> None:
    header = reading(name)["header"]
    assert header["unparsed_lines"] == count, f"{name}: {header['unparsed_lines']} unparsed lines, want {count}"


def expect_sessions(name: str, expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The process lifetimes: how many, and for each the fields given (e.g. ``end_reason``, ``end``)."""
    sessions = reading(name)["sessions"]
    summary = [(s["index"], s["start"], s["end"], s["end_reason"], s["line"]) for s in sessions]
    assert len(sessions) == len(expected), f"{name}: {len(sessions)} lifetimes, want {len(expected)}: {summary}"
    for session, want in zip(sessions, expected, strict=True):
        for key, value in want.items():
            got = as_written(session[key])
            assert got == value, f"{name} lifetime {session['index']}: {key}={got!r}, want {value!r}"
        assert session["line"] is not None, f"{name} lifetime {session['index']} has no line"
    return sessions


def time_only(hms: str) -> dict[str, Any]:
    """What a time-only line's event carries: no date can be known, the time of day stays."""
    return {"time": None, "time_of_day": hms}


# A lifetime that began before the paste and is still running where it ends.
RUNNING = {"start_in_log": False, "end_reason": "eof"}

# ---------------------------------------------------------------------------------------------------
# Pastes of routine timed oMLX records: no catalog event, but one lifetime whose start is unknown.
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "end"),
    [
        ("omlx-issue-1566.log", "2026-05-31T19:15:07.645"),  # SSD cache init sequence
        ("omlx-issue-1675.log", "2026-06-05T21:24:11.573"),  # first line glued to a code fence
        ("omlx-issue-1880.log", "2026-06-16T13:16:25.311"),  # model discovery, em-dash in a message
        ("omlx-issue-342.log", "2026-03-22T17:54:16.519"),  # DEBUG SSD block loads
    ],
)
def test_routine_records_only_are_one_lifetime_of_unknown_start(name: str, end: str) -> None:
    expect_events(name, [])
    expect_sessions(name, [{**RUNNING, "end": end, "line": 1, "requests_completed": 0}])
    expect_unparsed(name, 0)


def test_issue_888_one_debug_arrival_is_an_arrival_not_a_finished_request() -> None:
    expect_events("omlx-issue-888.log", [(1, "request_arrival", {"form": "chat_received"})])
    end = "2026-04-22T15:19:55.679"
    expect_sessions("omlx-issue-888.log", [{**RUNNING, "end": end, "line": 1, "requests_completed": 0}])
    expect_unparsed("omlx-issue-888.log", 0)


def test_issue_253_discovery_refresh_with_truncated_year_is_not_a_start() -> None:
    # `Discovered 1 models` followed by `Model pool refreshed after deletion`: an admin refresh of the
    # model pool in a running process, not a new process. The first line lost the year's first digit.
    expect_events("omlx-issue-253.log", [])
    expect_sessions("omlx-issue-253.log", [{**RUNNING, "end": "2026-03-16T15:33:18.546"}])
    expect_unparsed("omlx-issue-253.log", 0)


def test_issue_342_and_133_debug_cache_lines_and_a_discovery_error() -> None:
    # 133: DEBUG cache traffic, one discovery ERROR, and a last paragraph pasted out of order (15:27:17
    # after 15:28:40): one process throughout.
    expect_events("omlx-issue-133.log", [(13, "error", {"time": "2026-03-10T15:28:37.390"})])
    expect_sessions("omlx-issue-133.log", [{**RUNNING}])
    expect_unparsed("omlx-issue-133.log", 0)


# ---------------------------------------------------------------------------------------------------
# Kernel panics and crash reports
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("omlx-issue-435.log", 1),
        ("omlx-issue-862.log", 1),
        ("omlx-issue-1265.log", 1),
        ("omlx-issue-1372.log", 1),
    ],
)
def test_kernel_panic_prepare_count_underflow(name: str, line: int) -> None:
    expect_events(name, [(line, "kernel_panic", {"time": None})])
    assert event_at(name, line, "kernel_panic")["panic"].startswith('"completeMemory() prepare count underflow"')
    expect_sessions(name, [{"end_reason": "crash"}])
    expect_unparsed(name, 0)


def test_issue_1384_kernel_panic_after_the_users_os_note() -> None:
    # Line 1 `MacOS: 26.5 (25F71)` is the user's own note: the one line that stays unparsed.
    expect_events("omlx-issue-1384.log", [(3, "kernel_panic", {})])
    expect_sessions("omlx-issue-1384.log", [{"end_reason": "crash"}])
    expect_unparsed("omlx-issue-1384.log", 1)


@pytest.mark.parametrize("name", ["omlx-issue-410.log", "omlx-pr-1529.log"])
def test_crash_report_sigabrt_is_one_crash(name: str) -> None:
    # 410 is `> `-quoted from its first dashed line; 1529 begins with the report's .ips JSON. Both are
    # crash-report text throughout (the dashes, the JSON), so nothing is left unparsed.
    doc = reading(name)
    reports = [e for e in doc["events"] if e["kind"] == "crash_report"]
    assert [e["kind"] for e in doc["events"]] == ["crash_report"], show(doc)
    assert reports[0]["exception_type"] == "EXC_CRASH (SIGABRT)"
    expect_sessions(name, [{"end_reason": "crash"}])
    expect_unparsed(name, 0)


def test_issue_1548_crash_report_pasted_from_its_header_is_one_crash() -> None:
    # The Homebrew service's report pasted from its first header field (`Process:   Python [65813]`),
    # without the `Translated Report` banner over it: the whole paste is the one report.
    expect_events("omlx-issue-1548.log", [(1, "crash_report", {"exception_type": "EXC_CRASH (SIGABRT)"})])
    expect_sessions("omlx-issue-1548.log", [{"end_reason": "crash"}])
    expect_unparsed("omlx-issue-1548.log", 0)


def test_issue_1106_user_summarised_stack_is_only_notes() -> None:
    # Three lines the user wrote (`← throws here`, `→ abort()`): no oMLX record, no lifetime.
    expect_events("omlx-issue-1106.log", [])
    expect_sessions("omlx-issue-1106.log", [])
    expect_unparsed("omlx-issue-1106.log", 3)


# ---------------------------------------------------------------------------------------------------
# Native aborts (libc++abi) with Metal codes
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "code_name"),
    [
        ("omlx-issue-1387.log", 1, "ImpactingInteractivity"),  # wrapped over 3 lines, then the .ips stack
        ("omlx-issue-2079.log", 1, "OutOfMemory"),
        ("omlx-pr-1397.log", 2, "OutOfMemory"),  # closing paren missing as pasted
    ],
)
def test_libcxxabi_metal_abort_ends_the_lifetime_as_a_crash(name: str, line: int, code_name: str) -> None:
    gpu = {"code_name": code_name, "context": "uncaught_abort"}
    expect_events(name, [(line, "gpu_error", gpu), (line, "process_exit", {"reason": "abort"})])
    expect_sessions(name, [{"end_reason": "crash"}])
    assert [c["kind"] for c in reading(name)["crashes"]] == ["process_exit"]
    expect_unparsed(name, 0)


# ---------------------------------------------------------------------------------------------------
# Restarts seen only as a new startup block
# ---------------------------------------------------------------------------------------------------


def test_issue_1014_crash_ends_at_last_record_then_startup_block() -> None:
    name = "omlx-issue-1014.log"
    expect_events(name, [(9, "process_start", {"time": "2026-04-30T13:28:59.865"})])
    assert "startup_block" in event_at(name, 9, "process_start")["markers"]
    expect_sessions(
        name,
        [
            # the first process was alive until its last record, 13:28:06, not 13:07:33
            {"start_in_log": False, "end": "2026-04-30T13:28:06.638", "end_reason": "crash", "line": 1},
            {"start": "2026-04-30T13:28:59.865", "end_reason": "eof", "line": 9},
        ],
    )
    expect_unparsed(name, 0)


def test_issue_539_wrapped_tail_first_then_restart_six_minutes_later() -> None:
    # Line 1 is the tail of a wrapped record (`trailing partial block, …)`): log text, its own record.
    name = "omlx-issue-539.log"
    expect_events(name, [(3, "process_start", {"time": "2026-04-03T09:48:27.177"})])
    expect_sessions(
        name,
        [
            {"start_in_log": False, "end": "2026-04-03T09:42:27.523", "end_reason": "crash", "line": 1},
            {"start": "2026-04-03T09:48:27.177", "end_reason": "eof", "line": 3},
        ],
    )
    expect_unparsed(name, 0)


def test_issue_899_one_startup_block_is_one_start() -> None:
    name = "omlx-issue-899.log"
    expect_events(name, [(1, "process_start", {"time": "2026-04-22T22:50:18.929", "markers": ["startup_block"]})])
    expect_sessions(name, [{"start": "2026-04-22T22:50:18.929", "end": "2026-04-22T22:50:18.936", "end_reason": "eof"}])
    expect_unparsed(name, 0)


def test_issue_1431_pressure_oscillation_then_a_new_process() -> None:
    name = "omlx-issue-1431.log"
    level = "memory_pressure"
    expected: Expected = [
        (1, "warning", {}),
        (2, level, {"action": "level_change", "from_level": "soft", "to_level": "ok", "current_gb": 22.0}),
        (3, "warning", {}),
        (4, "warning", {}),
        (5, "warning", {}),
        (6, "warning", {}),
        (7, level, {"action": "level_change", "from_level": "ok", "to_level": "soft", "ceiling_gb": 26.0}),
        (8, "warning", {}),
        (9, level, {"action": "level_change", "from_level": "soft", "to_level": "ok"}),
    ]
    doc = expect_events(name, expected, ignore=frozenset({"process_start"}))
    starts = [e for e in doc["events"] if e["kind"] == "process_start"]
    assert len(starts) == 1, show(doc)  # `Discovered 19 models` and `Server initialized`: one start
    assert starts[0]["time"] == "2026-05-27T18:12:09.232"
    assert starts[0]["line"] in (15, 17)
    expect_sessions(
        name,
        [
            {"start_in_log": False, "end": "2026-05-27T18:09:56.403", "end_reason": "crash"},
            {"start": "2026-05-27T18:12:09.232", "end": "2026-05-27T18:12:09.233", "end_reason": "eof"},
        ],
    )
    expect_unparsed(name, 0)


# ---------------------------------------------------------------------------------------------------
# Errors with tracebacks, dated and headless
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "time", "funcs"),
    [
        ("omlx-issue-943.log", 1, "2026-04-24T21:49:12.869", ["_engine_loop", "run", "step", "next_generated"]),
        ("omlx-issue-1468.log", 1, "2026-05-27T12:20:08.562", ["_engine_loop", "run", "step", "next_generated"]),
        ("omlx-issue-1613.log", 2, "2026-06-02T18:27:24.065", ["_engine_loop", "run", "step", "next_generated"]),
        ("omlx-issue-2813.log", 1, None, ["_engine_loop", "run", "_step_burst"]),  # no timestamp at all
    ],
)
def test_engine_loop_error_without_metal_code_is_an_error_with_its_traceback(
    name: str, line: int, time: str | None, funcs: list[str]
) -> None:
    expect_events(name, [(line, "error", {"time": time, "logger": "omlx.engine_core"})])
    error = event_at(name, line, "error")
    assert error["message"].startswith("Engine loop error: ")
    assert [frame["func"] for frame in error.get("traceback") or []][: len(funcs)] == funcs
    expect_sessions(name, [RUNNING])
    expect_unparsed(name, 0)


def test_issue_1613_homebrew_path_gives_the_version() -> None:
    assert reading("omlx-issue-1613.log")["sessions"][0]["omlx_version"] == "0.4.0rc2"


def test_issue_2530_model_load_failed_with_traceback() -> None:
    name = "omlx-issue-2530.log"
    model = "Laguna-S-2.1-DFlash"
    expect_events(
        name,
        [(1, "model_load", {"model": model, "stage": "loading"}), (2, "model_load_failed", {"model": model})],
    )
    assert [f["func"] for f in event_at(name, 2, "model_load_failed").get("traceback") or []] == [
        "_load_engine",
        "start",
    ]
    expect_sessions(name, [{**RUNNING, "omlx_version": "0.5.7"}])
    expect_unparsed(name, 0)


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("omlx-issue-394.log", 7),  # oQ quantization failed + the traceback's first line
        ("omlx-issue-1400.log", 3),  # oQ quantization failed + a cut traceback
    ],
)
def test_oq_quantization_failure_is_an_error(name: str, line: int) -> None:
    # 1400's line 1 repeats the error as the UI showed it: the text oQ raises, a record of its own.
    expect_events(name, [(line, "error", {"logger": "omlx.admin.oq_manager"})])
    expect_sessions(name, [RUNNING])
    expect_unparsed(name, 0)


def test_issue_1309_wrapped_error_keeps_its_continuation() -> None:
    name = "omlx-issue-1309.log"
    expect_events(name, [(4, "error", {"time": "2026-05-19T12:14:53.426"})])
    error = event_at(name, 4, "error")
    assert error["message"].startswith("Sensitivity measurement: model load failed (Missing 15 parameters:")
    # the message goes on over the next lines (its exception's text holds line breaks): known by its opening
    assert error["template"] == "Sensitivity measurement: model load failed ({any})"
    assert "language_model.mtp.fc.weight," in error.get("continuation", "")
    assert "language_model.mtp.layers.0.mlp.down_proj.weight," in error.get("continuation", "")
    expect_sessions(name, [RUNNING])
    expect_unparsed(name, 0)


def test_pr_3221_python_default_format_error_with_indented_continuation() -> None:
    # The last line `...` is the paster's elision.
    name = "omlx-pr-3221.log"
    expect_events(name, [(1, "error", {"logger": "root", "time": None}), (3, "warning", {"logger": "omlx.oq"})])
    assert "No module named 'mlx_vlm.speculative.drafters.qwen4_exp'" in event_at(name, 1, "error").get(
        "continuation", ""
    )
    expect_unparsed(name, 0)


def test_ml_explore_3623_vlm_fallback_is_not_a_failed_load() -> None:
    # Line 1 is the client's 500 JSON: not log text, it stays unparsed.
    name = "ml-explore-mlx-3623.log"
    expect_events(name, [(3, "error", {"logger": "root"}), (4, "warning", {"logger": "omlx.engine_pool"})])
    expect_sessions(name, [RUNNING])
    expect_unparsed(name, 1)


# ---------------------------------------------------------------------------------------------------
# GPU faults that were handled
# ---------------------------------------------------------------------------------------------------


def test_issue_3399_handled_ane_timeout_then_recovery() -> None:
    # A headless `omlx.scheduler - ERROR - Prefill failed …` with the NSError wrapped over six lines, a
    # blank line, then two time-only oMLX records (each wrapped): the server went on prefilling.
    name = "omlx-issue-3399.log"
    expect_events(name, [(1, "gpu_error", {"code": "00000002", "code_name": "Timeout", "context": "ane_dispatch"})])
    gpu = event_at(name, 1, "gpu_error")
    assert gpu["time"] is None
    assert "Domain=MTLCommandBufferErrorDomain Code=2" in gpu.get("continuation", "")
    faults = reading(name)["faults"]
    assert [(f["kind"], f["outcome"]) for f in faults] == [("timeout", "absorbed")]
    expect_sessions(name, [{"start_in_log": False, "end_reason": "eof"}])
    expect_unparsed(name, 0)


def test_issue_3399_time_only_lines_keep_their_time_of_day() -> None:
    # `22:00:35 prefix cache: …` and `22:00:59 Using boundary cache snapshot: …`: records of their own,
    # wrapped lines joined to them; routine, so seen with `events --all` as records.
    records = [e for e in all_records("omlx-issue-3399.log") if e["line"] in (8, 11)]
    assert [(e["line"], e["time"], e.get("time_of_day")) for e in records] == [
        (8, None, "22:00:35.000"),
        (11, None, "22:00:59.000"),
    ]
    assert "comparable tokens before diverging" in (records[0].get("continuation") or "")


def all_records(name: str) -> list[dict[str, Any]]:
    """The ``events --all`` stream: routine records too, as kind ``record``."""
    stream = read_events(resolve([str(REAL / name)]), keep_all=True)
    return [event.as_dict() for event in stream.events]


def test_issue_3683_handled_metal_oom_absorbed_and_retried() -> None:
    name = "omlx-issue-3683.log"
    oom = {"code": "00000008", "code_name": "OutOfMemory"}
    expect_events(
        name,
        [
            (3, "gpu_error", {**oom, "context": "prefill", "time": "2026-09-15T21:24:50.097"}),
            (4, "gpu_error", {**oom, "context": "chat_stream", "time": "2026-09-15T21:24:50.116"}),
            (5, "warning", {"logger": "omlx.engine_pool"}),
        ],
    )
    faults = reading(name)["faults"]
    assert [(f["kind"], f["records"], f["outcome"]) for f in faults] == [("out_of_memory", 2, "absorbed")]
    expect_sessions(name, [{**RUNNING, "end": "2026-09-15T21:24:55.372", "line": 1}])
    expect_unparsed(name, 0)


# ---------------------------------------------------------------------------------------------------
# Requests: finished, failed, aborted
# ---------------------------------------------------------------------------------------------------


def test_issue_3234_two_chat_completions_with_the_newer_field_layout() -> None:
    name = "omlx-issue-3234.log"
    chat = {"type": "chat", "model": "DeepSeek-V4-Flash-0731-oQ8e-mtp", "finish_reason": "stop"}
    expect_events(
        name,
        [
            (2, "request_complete", {**chat, "tokens": 534, "seconds": 25.99, "prompt_tokens": 4168}),
            (5, "request_complete", {**chat, "tokens": 702, "seconds": 33.04, "prompt_tokens": 4199}),
        ],
    )
    expect_sessions(name, [{**RUNNING, "requests_completed": 2, "end": "2026-08-28T11:13:30.420", "line": 1}])
    expect_unparsed(name, 0)


def test_issue_1759_two_engine_starts_and_one_chat_completion_in_one_process() -> None:
    name = "omlx-issue-1759.log"
    path = (
        "/Users/frits/.cache/lm-studio/models/stamsam/Qwen3.6-35B-A3B-Claude-4.7-Opus-Reasoning-Distilled-MLX-oQ4-MTP"
    )
    expect_events(
        name,
        [
            (7, "engine_start", {"time": "2026-06-09T10:20:46.374"}),
            (8, "model_load", {"model": path, "stage": "loaded"}),
            (11, "request_complete", {"type": "chat", "tokens": 4096, "seconds": 53.22, "prompt_tokens": 4491}),
            (20, "engine_start", {"time": "2026-06-09T10:36:51.589"}),
            (21, "model_load", {"model": path, "stage": "loaded"}),
        ],
    )
    expect_sessions(name, [{**RUNNING, "engine_starts": 2, "requests_completed": 1, "line": 1}])
    expect_unparsed(name, 0)


def test_issue_667_two_aborted_streams_and_an_interrupted_prefill() -> None:
    name = "omlx-issue-667.log"
    expect_events(
        name,
        [
            (2, "request_abort", {"time": "2026-04-08T18:10:05.729"}),
            (3, "request_abort", {"time": "2026-04-08T18:10:06.628"}),  # `Prefill interrupted … aborted`
            (4, "request_abort", {"time": "2026-04-08T18:13:39.607"}),
        ],
    )
    expect_sessions(name, [{**RUNNING, "end": "2026-04-08T18:13:39.607", "line": 1}])
    expect_unparsed(name, 0)


def test_issue_578_faulthandler_abort_and_bulleted_aborts_one_with_time_of_day() -> None:
    # A user-summarised `Fatal Python error: Aborted` dump, then log messages pasted as markdown bullets
    # in inline code (`...` and `(many occurrences)` are the user's). The last bullet is time-only.
    # No lifetime count: the thread pastes from two machines (DMG on an M4 Max, HEAD on an M3 Ultra).
    name = "omlx-issue-578.log"
    expect_events(
        name,
        [
            (1, "faulthandler_dump", {"error": "Aborted", "time": None}),
            (10, "request_abort", {}),  # `[vlm_stream_generate] Aborting request ...`
            (11, "request_abort", {}),  # `Prefill interrupted at 67584/110879 tokens: 1 request(s) aborted`
            (14, "request_abort", time_only("11:53:45.511")),
        ],
    )
    assert [c["kind"] for c in reading(name)["crashes"]] == ["faulthandler_dump"]
    expect_unparsed(name, 0)


def test_issue_1503_quoted_http_422_on_v1_messages() -> None:
    name = "omlx-issue-1503.log"
    http = {"stage": "http", "method": "POST", "path": "/v1/messages", "status": 422}
    expect_events(name, [(1, "request_error", {**http, "time": "2026-05-28T20:16:37.245"})])
    expect_sessions(name, [RUNNING])
    expect_unparsed(name, 0)


def test_issue_1645_trace_arrival_model_load_then_unhandled_500() -> None:
    name = "omlx-issue-1645.log"
    expect_events(
        name,
        [
            (1, "request_arrival", {"form": "incoming", "method": "POST", "path": "/v1/chat/completions"}),
            (2, "request_arrival", {"form": "chat_received", "model": "gemma-4-12B-it-OptiQ-4bit"}),
            (4, "model_load", {"model": "gemma-4-12B-it-OptiQ-4bit", "stage": "loading"}),
            (6, "request_error", {"stage": "http", "method": "POST", "path": "/v1/chat/completions", "status": 500}),
        ],
    )
    expect_sessions(name, [{**RUNNING, "line": 1, "requests_completed": 0}])
    expect_unparsed(name, 0)


def test_issue_3768_cached_load_failure_and_load_500() -> None:
    name = "omlx-issue-3768.log"
    path = "/admin/api/models/Ternary-Bonsai-2-27B-mlx-2bit/load"
    expect_events(name, [(1, "warning", {}), (2, "request_error", {"stage": "http", "path": path, "status": 500})])
    expect_sessions(name, [RUNNING])
    expect_unparsed(name, 0)


# ---------------------------------------------------------------------------------------------------
# Memory pressure in user-condensed, time-only pastes
# ---------------------------------------------------------------------------------------------------


def test_issue_3338_time_only_pressure_level_change() -> None:
    name = "omlx-issue-3338.log"
    pressure = {"action": "level_change", "from_level": "ok", "to_level": "soft", "current_gb": 41.9}
    expect_events(name, [(1, "memory_pressure", {**pressure, "ceiling_gb": 48.0, **time_only("01:50:12.000")})])
    expect_sessions(name, [{"start_in_log": False, "end_reason": "eof"}])
    expect_unparsed(name, 0)


def test_issue_1666_condensed_pressure_lines_keep_their_time_of_day() -> None:
    # `HH:MM:SS — message`: the pressure steps are memory_pressure events; the `Chunked prefill above
    # max_bytes` lines (a WARNING whose level was stripped) are log text, so nothing is unparsed.
    name = "omlx-issue-1666.log"
    steps = [(2, "19:40:10.000", 23.9), (4, "19:40:13.000", 23.9), (6, "19:40:16.000", 24.1)]
    expected: Expected = [
        (line, "memory_pressure", {"action": "level_change", "to_level": "soft", "current_gb": gb, **time_only(hms)})
        for line, hms, gb in steps
    ]
    expect_events(name, expected, ignore=frozenset({"warning"}))
    expect_sessions(name, [{"start_in_log": False, "end_reason": "eof"}])
    expect_unparsed(name, 0)


def test_issue_2059_throttling_warnings_and_a_wrapped_prefill_guard_refusal() -> None:
    # Lines 1-6 (`09:51:55 - ok → soft (14.8GB > 14.5GB)`, one with a `←` note) are the user's
    # condensation, not oMLX text: they may stay unparsed (6) or be read as level-less records (0).
    name = "omlx-issue-2059.log"
    expected: Expected = [
        (8, "warning", {"logger": "omlx.engine_core", **time_only("09:47:37.279")}),
        (9, "warning", {"logger": "omlx.engine_core", **time_only("09:51:59.327")}),
        (10, "warning", {"logger": "omlx.engine_core", **time_only("09:53:48.071")}),
        (12, "request_error", {"stage": "admission", **time_only("09:55:02.871")}),
    ]
    expect_events(name, expected)
    assert "metal_cap ceiling is 17.76 GB" in event_at(name, 12, "request_error").get("continuation", "")
    expect_sessions(name, [{"start_in_log": False, "end_reason": "eof"}])
    assert reading(name)["header"]["unparsed_lines"] in (0, 6)


# ---------------------------------------------------------------------------------------------------
# Models, engines, cache
# ---------------------------------------------------------------------------------------------------


def test_issue_2156_manual_unload_of_a_398_gb_model_is_not_a_shutdown() -> None:
    name = "omlx-issue-2156.log"
    model = "GLM-5.2-oQ4"
    expect_events(
        name,
        [
            (1, "model_unload", {"model": model, "stage": "unloading"}),
            (9, "model_unload", {"model": model, "stage": "unloaded", "time": "2026-07-10T19:51:41.360"}),
            (10, "model_unload", {"model": model}),  # `Manually unloaded model: GLM-5.2-oQ4`
        ],
        ignore=frozenset({"engine_stop"}),
    )
    assert [e["kind"] for e in reading(name)["events"]].count("engine_stop") >= 1  # `Engine stopped`, line 2
    expect_sessions(name, [{**RUNNING, "end": "2026-07-10T19:51:41.361"}])
    expect_unparsed(name, 0)


def test_issue_396_pinned_model_preload() -> None:
    name = "omlx-issue-396.log"
    model = "Qwen3.5-122B-A10B-oQ4"
    stage = {"model": model, "stage": "loading"}
    expect_events(name, [(1, "model_load", stage), (2, "model_load", stage)])
    expect_sessions(name, [{**RUNNING, "end": "2026-03-26T17:24:16.600", "line": 1}])
    expect_unparsed(name, 0)


def test_issue_1070_ssd_queue_full_burst_then_scheduler_shutdown() -> None:
    name = "omlx-issue-1070.log"
    expected: Expected = [(line, "warning", {"logger": "omlx.cache.paged_ssd_cache"}) for line in range(1, 9)]
    expect_events(name, [*expected, (10, "engine_stop", {"time": "2026-05-05T13:58:27.756"})])
    expect_sessions(name, [{**RUNNING, "end": "2026-05-05T13:58:27.773", "line": 1}])
    expect_unparsed(name, 0)


def test_issue_272_free_unknown_block_warning_burst() -> None:
    name = "omlx-issue-272.log"
    expect_events(name, [(line, "warning", {"logger": "omlx.cache.paged_cache"}) for line in range(1, 6)])
    expect_sessions(name, [{**RUNNING, "end": "2026-03-17T12:10:01.005", "line": 1}])
    expect_unparsed(name, 0)


# ---------------------------------------------------------------------------------------------------
# Not server logs, or not log text
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["omlx-issue-725.log", "omlx-issue-1398.log"])
def test_menubar_app_log_warnings_only(name: str) -> None:
    # The menu-bar app's own log (`omlx_app.app`): five WARNINGs, nothing about server lifetimes is
    # asserted (the app is not the server process).
    doc = reading(name)
    assert [e["kind"] for e in doc["events"]] == ["warning"] * 5, show(doc)
    assert {e["logger"] for e in doc["events"]} == {"omlx_app.app"}
    expect_unparsed(name, 0)


@pytest.mark.parametrize(
    ("name", "unparsed"),
    [
        ("omlx-issue-3711.log", 2),  # the client's `Error: OMLX stream timed out …`, wrapped
    ],
)
def test_client_or_ui_text_only_stays_unparsed(name: str, unparsed: int) -> None:
    expect_events(name, [])
    expect_sessions(name, [])
    expect_unparsed(name, unparsed)


def test_issue_2232_oq_failure_texts_are_the_messages_oq_raises() -> None:
    # Two oQ failure texts as the admin UI showed them: the texts oQ's code raises, each a record that
    # keeps its lexicon entry; no event, and the versions whose code raises both.
    name = "omlx-issue-2232.log"
    records = [event.as_dict() for event in read_events(resolve([str(REAL / name)]), keep_all=True).events]
    assert [(e["line"], e["kind"], e["level"]) for e in records] == [(1, "record", None), (3, "record", None)]
    assert records[0]["template"].startswith("oQ{float}: sensitivity measurement produced no scores.")
    assert records[1]["template"] == "oQe imatrix collection produced no entries"
    expect_events(name, [])
    expect_unparsed(name, 0)
    assert reading(name)["header"]["omlx_version_range"]["entries"] == 2


def test_issue_2784_client_error_then_bulleted_log_messages() -> None:
    # Line 1 (`Error: 'TurboQuantMSEState' object has no attribute 'ndim'`) is what the client showed;
    # the bullets are oMLX log messages in inline code with `…` elisions: log text, no catalog event.
    name = "omlx-issue-2784.log"
    expect_events(name, [])
    expect_unparsed(name, 1)
