# ruff: noqa: E501  (the realistic log lines of the cases are longer than a code line)
"""Every message of ``omlx-messages.md`` that maps to an event kind gets it (issue 14).

Each case is a realistic line, in the FILE format or, for print()ed lines, as the CAPTURE writes it,
read from a small file through ``read_events`` (with ``--all``, so routine records show as ``record``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omlx_logscan import analyze, read_events, resolve
from omlx_logscan.parsing.catalog import FATAL_EXIT_SUFFIX
from omlx_logscan.stream.read import all_events

STAMP = "2026-09-15 20:19:38,123"
TIMEOUT = "[METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)."
IGNORED = (
    "[METAL] Command buffer execution failed: Ignored (for causing prior/excessive GPU errors) "
    "(00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)."
)
RID = "6e803c1c-9f27-4033-8074-e1820bc3d317"


def file_line(logger: str, level: str, message: str, second: int = 38) -> str:
    return f"2026-09-15 20:19:{second:02d},123 - {logger} - {level} - [-] - {message}"


def read(tmp_path: Path, *lines: str) -> list[dict[str, Any]]:
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [event.as_dict() for event in read_events(resolve([str(log)]), keep_all=True).events]


def sessions(tmp_path: Path, *lines: str) -> list[dict[str, Any]]:
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [s.as_dict() for s in analyze(read_events(resolve([str(log)]))).sessions]


def only(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [e for e in events if e["kind"] == kind]
    assert len(found) == 1, f"want one {kind}, got {[(e['line'], e['kind']) for e in events]}"
    return found[0]


def check(event: dict[str, Any], fields: dict[str, Any]) -> None:
    for key, value in fields.items():
        assert event.get(key) == value, (
            f"{event['kind']} {event['message'][:60]!r}: {key}={event.get(key)!r}, want {value!r}"
        )


# ---------------------------------------------------------------------------------------------------
# Process start and exit
# ---------------------------------------------------------------------------------------------------

BANNER = ["oMLX - LLM inference, optimized for your Mac", "├─ https://github.com/jundot/omlx"]


@pytest.mark.parametrize(
    ("lines", "fields"),
    [
        pytest.param([*BANNER, "└─ Version: 0.5.7"], {"omlx_version": "0.5.7"}, id="banner"),
        pytest.param([*BANNER, "├─ Version: 0.6.4", "└─ Build: 2529"], {"omlx_version": "0.6.4"}, id="banner-build"),
        pytest.param(["Log directory: /Users/me/.omlx/logs"], {}, id="log-directory"),
        pytest.param(["Binding server at http://127.0.0.1:8000"], {}, id="binding-server"),
        pytest.param(["Starting server at http://127.0.0.1:8000"], {}, id="starting-server"),
        pytest.param(["INFO:     Started server process [48213]"], {"pid": 48213}, id="uvicorn-started"),
        pytest.param(
            [
                *BANNER,
                "└─ Version: 0.5.7",
                "Log directory: /Users/me/.omlx/logs",
                "Binding server at http://127.0.0.1:8000",
                "Binding server at http://[::1]:8000",
                "Starting server at http://127.0.0.1:8000",
                "INFO:     Started server process [48213]",
                "INFO:     Waiting for application startup.",
                "INFO:     Application startup complete.",
                "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)",
            ],
            {"omlx_version": "0.5.7", "pid": 48213},
            id="whole-capture-start",
        ),
    ],
)
def test_capture_start_lines_are_one_process_start(tmp_path: Path, lines: list[str], fields: dict[str, Any]) -> None:
    start = only(read(tmp_path, *lines), "process_start")
    check(start, fields)


STARTUP = [
    ("omlx.server", "CORS origins: ['*']"),
    ("omlx.model_settings", "Loaded settings for 17 models"),
    ("omlx.engine_pool", "Pinned model: Qwen3.6-27B-8bit"),
    ("omlx.server", "Default model: Qwen3.6-27B-8bit"),
    ("omlx.server", "Default max tokens: 32768"),
    ("omlx.server", "Memory guard tier: aggressive (guard on)"),
]


# The enforcer's start line was in STARTUP, opening a start at the top of a log. The review of issue 14:
# oMLX writes it after the first engine start, so at the top of a paste it is a running process's line
# (omlx-logscan review t18) and opens a start only after a stop or exit (below).
ENFORCER_STARTS = [
    "Process memory enforcer started (tier=balanced, ceiling=48.0GB, interval=1.0s)",
    "Process memory enforcer started (limit: 48.0GB, interval: 1.0s)",
]


@pytest.mark.parametrize(("logger", "message"), STARTUP, ids=[m.split(":")[0].split(" (")[0] for _, m in STARTUP])
def test_startup_block_line_opens_the_start_it_begins(tmp_path: Path, logger: str, message: str) -> None:
    events = read(
        tmp_path,
        file_line(logger, "INFO", message, 1),
        file_line("omlx.server", "INFO", "Server initialized with 3 models", 2),
    )
    start = only(events, "process_start")
    assert start["line"] == 1
    assert "startup_block" in start["markers"]


# Changed from the first draft, which had the discovery lines open the start too: oMLX writes them on
# every model-pool refresh of a running process as well (omlx-issue-253.log: `Discovered 1 models`,
# then `Model pool refreshed after deletion`), and omlx-issue-1431.log dates its start after them. So
# they join a start that a certain marker opened and never open one themselves.
DISCOVERY = [
    ("omlx.model_discovery", "Discovered model: Qwen3.6-27B-8bit (type: vlm, engine: vlm, size: 28.85GB)"),
    ("omlx.engine_pool", "Discovered 3 models"),
    ("omlx.engine_pool", "Discovered 3 models, max memory: 36.00GB"),
]


@pytest.mark.parametrize(("logger", "message"), DISCOVERY, ids=["discovered-model", "discovered-n", "discovered-max"])
def test_discovery_lines_join_a_start_but_alone_are_no_start(tmp_path: Path, logger: str, message: str) -> None:
    joined = read(
        tmp_path,
        file_line("omlx.server", "INFO", "CORS origins: ['*']", 1),
        file_line(logger, "INFO", message, 2),
        file_line("omlx.server", "INFO", "Server initialized with 3 models", 3),
    )
    assert [(e["line"], e["kind"]) for e in joined] == [(1, "process_start")]
    alone = read(
        tmp_path,
        file_line(logger, "INFO", message, 1),
        file_line("omlx.admin.routes", "INFO", "Model pool refreshed after deletion", 2),
    )
    assert [e["kind"] for e in alone] == ["record", "record"]


def test_enforcer_started_right_after_engine_started_is_the_same_start(tmp_path: Path) -> None:
    events = read(
        tmp_path,
        file_line("omlx.server", "INFO", "CORS origins: ['*']", 1),
        file_line("omlx.server", "INFO", "Server initialized with 3 models", 2),
        file_line("omlx.engine_core", "INFO", "Engine started", 3),
        file_line(
            "omlx.process_memory_enforcer",
            "INFO",
            "Process memory enforcer started (tier=balanced, ceiling=48.0GB, interval=1.0s)",
            4,
        ),
        file_line("omlx.engine_pool", "INFO", "Discovered 3 models", 5),
    )
    assert [e["kind"] for e in events].count("process_start") == 1
    assert only(events, "engine_start")["line"] == 3


def test_enforcer_started_after_an_orderly_stop_opens_a_new_start(tmp_path: Path) -> None:
    events = read(
        tmp_path,
        file_line("omlx.server", "INFO", "Server initialized with 3 models", 1),
        file_line("omlx.engine_pool", "INFO", "Engine pool shutdown complete", 2),
        file_line(
            "omlx.process_memory_enforcer",
            "INFO",
            "Process memory enforcer started (tier=balanced, ceiling=48.0GB, interval=1.0s)",
            3,
        ),
    )
    assert [e["line"] for e in events if e["kind"] == "process_start"] == [1, 3]


@pytest.mark.parametrize("message", ENFORCER_STARTS, ids=["tier", "limit"])
def test_enforcer_started_in_a_paste_that_begins_mid_process_opens_no_start(tmp_path: Path, message: str) -> None:
    lines = (
        file_line("omlx.engine_pool", "INFO", "Loading model: mlx-community/Qwen3-8B", 1),
        file_line("omlx.engine_core", "INFO", "Engine started", 5),
        file_line("omlx.process_memory_enforcer", "INFO", message, 6),
        file_line("omlx.server", "INFO", "Chat completion: model=m, 10 tokens in 1.00s (10.0 tok/s), prompt: 5", 9),
    )
    assert [e["kind"] for e in read(tmp_path, *lines)].count("process_start") == 0
    (session,) = sessions(tmp_path, *lines)
    assert session["end_reason"] == "eof" and session["requests_completed"] == 1


@pytest.mark.parametrize("message", ENFORCER_STARTS, ids=["tier", "limit"])
@pytest.mark.parametrize(
    "end",
    [
        ("omlx.engine_pool", "INFO", "Engine pool shutdown complete"),
        ("omlx.utils.fatal", "CRITICAL", f"Engine teardown timed out after 60s{FATAL_EXIT_SUFFIX}"),
    ],
    ids=["stop", "exit"],
)
def test_enforcer_started_after_a_stop_or_exit_opens_a_start(
    tmp_path: Path, message: str, end: tuple[str, str, str]
) -> None:
    events = read(
        tmp_path,
        file_line("omlx.engine_core", "INFO", "Engine started", 1),
        file_line(*end, 2),
        file_line("omlx.process_memory_enforcer", "INFO", message, 3),
    )
    assert [e["line"] for e in events if e["kind"] == "process_start"] == [3]


FATAL_REASONS = [
    pytest.param(f"Metal GPU submissions disabled: {IGNORED}", "SubmissionsIgnored", id="submissions-disabled"),
    pytest.param("Engine teardown timed out after 60s while running stop for engine e1", None, id="teardown-fn"),
    pytest.param(
        "Engine teardown timed out after 60s while reclaiming MLX memory for engine e1", None, id="teardown-reclaim"
    ),
    pytest.param(
        "Engine teardown timed out after 60s while clearing MLX compile cache for engine e1",
        None,
        id="teardown-compile-cache",
    ),
    pytest.param(
        "Scheduler shutdown timed out after 60s waiting for 2 async store_cache future(s)",
        None,
        id="scheduler-shutdown",
    ),
    pytest.param(
        "Scheduler reset timed out after 60s waiting for 1 async store_cache future(s)", None, id="scheduler-reset"
    ),
    pytest.param("Engine e1: teardown exceeded 120s (mlx_reclaim)", None, id="teardown-exceeded"),
    pytest.param(
        "Engine e1: teardown timed out after 60s (ssd_flush); no recent SSD persistence progress",
        None,
        id="teardown-no-ssd-progress",
    ),
    pytest.param("Engine e1: teardown progress check failed", None, id="teardown-progress-check"),
    pytest.param("Engine e1: MLX teardown failed (clear_cache)", None, id="mlx-teardown-failed"),
    pytest.param("SSD cache writer survived engine teardown", None, id="ssd-writer-survived"),
    pytest.param("Engine e1: final MLX reclaim failed: RuntimeError('x')", None, id="final-reclaim-failed"),
    pytest.param("Global MLX executor teardown timed out after 60s", None, id="executor-timeout"),
    pytest.param("Global MLX executor teardown failed: RuntimeError('x')", None, id="executor-failed"),
]


@pytest.mark.parametrize(("reason", "code_name"), FATAL_REASONS)
def test_every_fatal_exit_is_a_process_exit_and_ends_the_lifetime(
    tmp_path: Path, reason: str, code_name: str | None
) -> None:
    message = f"{reason}; exiting process so the supervisor can restart with a clean state"
    lines = [
        file_line("omlx.server", "INFO", "Server initialized with 3 models", 1),
        file_line("omlx.utils.fatal", "CRITICAL", message, 2),
        "Thread 0x000000016f4a3000 (most recent call first):",
        '  File "/opt/homebrew/Cellar/omlx/0.6.3/libexec/lib/python3.11/site-packages/omlx/engine_core.py", line 394 in _engine_loop',
    ]
    events = read(tmp_path, *lines)
    exit_ = only(events, "process_exit")
    check(exit_, {"reason": "fatal_exit", "line": 2})
    assert reason in exit_["message"]
    gpu = [e for e in events if e["kind"] == "gpu_error"]
    if code_name is None:
        assert gpu == [], "a fatal exit without a Metal code is no GPU error"
    else:
        assert [(e["code_name"], e["context"]) for e in gpu] == [(code_name, "fatal_exit")]
    assert [s["end_reason"] for s in sessions(tmp_path, *lines)] == ["fatal_exit"]


def test_failed_thread_dump_is_part_of_the_fatal_exit_not_a_second_one(tmp_path: Path) -> None:
    events = read(
        tmp_path,
        file_line("omlx.utils.fatal", "ERROR", "Failed to dump thread tracebacks before fatal exit", 1),
        file_line(
            "omlx.utils.fatal",
            "CRITICAL",
            "Global MLX executor teardown timed out after 60s; exiting process so the supervisor can restart with a clean state",
            2,
        ),
    )
    assert [e["kind"] for e in events].count("process_exit") == 1


@pytest.mark.parametrize(
    ("logger", "level", "message", "kind"),
    [
        pytest.param(
            "omlx.admin.routes",
            "WARNING",
            "Server restart requested (supervisor=menubar)",
            "restart_requested",
            id="restart-requested",
        ),
        pytest.param(
            "omlx.admin.routes", "ERROR", "Failed to self-terminate for restart", "error", id="self-terminate-failed"
        ),
        pytest.param(
            "omlx.engine_pool", "INFO", "Engine pool shutdown complete", "shutdown", id="engine-pool-shutdown"
        ),
    ],
)
def test_restart_and_stop_messages(tmp_path: Path, logger: str, level: str, message: str, kind: str) -> None:
    only(read(tmp_path, file_line(logger, level, message)), kind)


@pytest.mark.parametrize(
    "line",
    [
        "INFO:     Shutting down",
        "INFO:     Waiting for application shutdown.",
        "INFO:     Application shutdown complete.",
        "INFO:     Finished server process [48213]",
    ],
    ids=["shutting-down", "waiting-shutdown", "shutdown-complete", "finished-process"],
)
def test_uvicorn_stop_lines_are_a_shutdown(tmp_path: Path, line: str) -> None:
    events = read(tmp_path, "INFO:     Started server process [48213]", line)
    assert [e["kind"] for e in events] == ["process_start", "shutdown"]


# ---------------------------------------------------------------------------------------------------
# GPU errors and where they surface
# ---------------------------------------------------------------------------------------------------

GPU = [
    pytest.param("omlx.engine_core", "ERROR", f"Engine loop error: {TIMEOUT}", "engine_loop", id="engine-loop"),
    pytest.param(
        "omlx.scheduler", "ERROR", f"Error in batch generation step: {TIMEOUT}", "batch_step", id="batch-step"
    ),
    pytest.param(
        "omlx.scheduler",
        "WARNING",
        f"Metal cache clear failed during error recovery: {IGNORED}",
        "recovery_clear",
        id="recovery-clear",
    ),
    pytest.param("omlx.scheduler", "ERROR", f"Prefill failed for {RID}: {TIMEOUT}", "prefill", id="prefill"),
    pytest.param(
        "omlx.scheduler", "ERROR", f"Chunked prefill failed for {RID}: {TIMEOUT}", "prefill", id="chunked-prefill"
    ),
    pytest.param(
        "omlx.scheduler",
        "ERROR",
        f"Chunked prefill (first chunk) failed for {RID}: {TIMEOUT}",
        "prefill",
        id="first-chunk",
    ),
    pytest.param(
        "omlx.scheduler", "ERROR", f"SpecPrefill sparse prefill failed: {TIMEOUT}", "prefill", id="specprefill"
    ),
    pytest.param("omlx.server", "ERROR", f"Error during chat streaming: {TIMEOUT}", "chat_stream", id="chat-stream"),
]


@pytest.mark.parametrize(("logger", "level", "message", "context"), GPU)
def test_gpu_error_records_and_their_context(
    tmp_path: Path, logger: str, level: str, message: str, context: str
) -> None:
    gpu = only(read(tmp_path, file_line(logger, level, message)), "gpu_error")
    assert gpu["code"] in ("00000002", "00000004")
    assert gpu["context"] == context


@pytest.mark.parametrize(
    "message",
    [
        f"Error during completion streaming: {TIMEOUT}",
        f"Error during Anthropic streaming: {TIMEOUT}",
        f"Error during Responses API streaming: {TIMEOUT}",
        f"SSE generator error: {TIMEOUT}",
        f"Async store_cache failed for {RID}: {TIMEOUT}",
        f"Chunked prefill capacity rejected for {RID}: {TIMEOUT}",
        "Engine loop error: [metal::malloc] Resource limit (499000) exceeded.",
    ],
    ids=[
        "completion-stream",
        "anthropic-stream",
        "responses-stream",
        "sse",
        "store-cache",
        "capacity-metal",
        "metal-malloc",
    ],
)
def test_any_record_with_a_metal_code_is_a_gpu_error(tmp_path: Path, message: str) -> None:
    gpu = only(read(tmp_path, file_line("omlx.scheduler", "ERROR", message)), "gpu_error")
    assert gpu["code_name"] in ("Timeout", "ResourceLimit")


def test_overflow_idle_and_pooled_reclaim_clears_have_their_own_contexts(tmp_path: Path) -> None:
    messages = [
        ("omlx.scheduler", f"Metal cache clear failed during generation overflow recovery: {IGNORED}"),
        ("omlx.scheduler", f"Idle reclaim failed: {IGNORED}"),
        ("omlx.engine_pool", f"Pooled-buffer reclaim failed for prefill request {RID}: {IGNORED}"),
    ]
    contexts = []
    for i, (logger, message) in enumerate(messages):
        folder = tmp_path / str(i)
        folder.mkdir()
        gpu = only(read(folder, file_line(logger, "WARNING", message)), "gpu_error")
        contexts.append(gpu["context"])
    assert all(c not in (None, "other", "recovery_clear") for c in contexts), contexts
    assert len(set(contexts)) == 3, contexts


def test_headless_ane_dispatch_nserror_is_a_gpu_error(tmp_path: Path) -> None:
    events = read(
        tmp_path,
        "ANE input pack command buffer failed; canceling this dispatch: Error Domain=MTLCommandBufferErrorDomain Code=2",
        '"Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)"',
    )
    check(only(events, "gpu_error"), {"context": "ane_dispatch", "code_name": "Timeout", "time": None})


@pytest.mark.parametrize(
    "message",
    [
        f"Chunked prefill capacity rejected for {RID}: needs 30.0GB",
        f"Prefill capacity rejected for {RID}: needs 30.0GB",
    ],
    ids=["chunked", "prefill"],
)
def test_capacity_rejection_without_metal_code_is_no_gpu_fault(tmp_path: Path, message: str) -> None:
    events = read(tmp_path, file_line("omlx.scheduler", "ERROR", message))
    assert [e["kind"] for e in events if e["kind"] != "record"] in (["request_error"], ["error"])


# ---------------------------------------------------------------------------------------------------
# Finished, failed and aborted requests
# ---------------------------------------------------------------------------------------------------

DONE = [
    pytest.param(
        "Chat completion: model=qwen, 534 tokens in 25.99s (24.4 tok/s), prompt: 4168, finish_reason=stop, max_tokens=4096, request_max_tokens=4096",
        {"type": "chat", "model": "qwen", "tokens": 534, "prompt_tokens": 4168, "finish_reason": "stop"},
        id="chat-0.5.4",
    ),
    pytest.param(
        "Chat completion: model=diff, 64 tokens in 2.00s (32.0 tok/s e2e, output=64), prompt: 10",
        {"type": "chat", "model": "diff", "tokens": 64},
        id="chat-diffusion",
    ),
    pytest.param(
        "Chat completion: 534 tokens in 25.99s (24.4 tok/s), prompt: 4168, finish_reason=length, max_tokens=534, request_max_tokens=534",
        {"type": "chat", "tokens": 534, "finish_reason": "length"},
        id="chat-0.4.3",
    ),
    pytest.param(
        "Chat completion: 4096 tokens in 53.22s (78.0 tok/s), prompt: 4491",
        {"type": "chat", "tokens": 4096, "prompt_tokens": 4491},
        id="chat-0.3.9",
    ),
    pytest.param("Chat completion: 12 tokens in 1.00s (12.0 tok/s)", {"type": "chat", "tokens": 12}, id="chat-0.1"),
    pytest.param(
        "Completion: model=qwen, 20 tokens in 2.00s (10.0 tok/s), prompt: 5",
        {"type": "completion", "tokens": 20},
        id="completion-model",
    ),
    pytest.param(
        "Completion: 20 tokens in 2.00s (10.0 tok/s), prompt: 5", {"type": "completion", "tokens": 20}, id="completion"
    ),
    pytest.param(
        "Anthropic message: model=qwen, 300 tokens in 10.00s (30.0 tok/s)",
        {"type": "anthropic", "model": "qwen", "tokens": 300},
        id="anthropic",
    ),
    pytest.param(
        "Responses API: model=qwen, 300 tokens in 10.00s (30.0 tok/s)",
        {"type": "responses", "model": "qwen", "tokens": 300},
        id="responses",
    ),
    pytest.param(
        "Embedding: 4 texts, 1024 dims, 80 tokens in 0.120s", {"type": "embedding", "tokens": 80}, id="embedding-texts"
    ),
    pytest.param(
        "Embedding: 4 inputs, 1024 dims, 80 tokens in 0.120s",
        {"type": "embedding", "tokens": 80},
        id="embedding-inputs",
    ),
    pytest.param(
        "Embedding: 4 inputs, 1024 dims, 80 tokens, max_length=512, truncation=True in 0.120s",
        {"type": "embedding", "tokens": 80},
        id="embedding-max-length",
    ),
    pytest.param(
        "Embedding: model=emb, 4 inputs, 1024 dims, 80 tokens, max_length=512, truncation=True in 0.120s",
        {"type": "embedding", "model": "emb", "tokens": 80},
        id="embedding-model",
    ),
    pytest.param(
        "Rerank: model=rr, 10 docs, 900 tokens in 0.300s", {"type": "rerank", "model": "rr", "tokens": 900}, id="rerank"
    ),
]


@pytest.mark.parametrize(("message", "fields"), DONE)
def test_every_finished_request_is_a_request_complete(tmp_path: Path, message: str, fields: dict[str, Any]) -> None:
    check(only(read(tmp_path, file_line("omlx.server", "INFO", message)), "request_complete"), fields)


HTTP = [
    pytest.param("WARNING", "POST /v1/chat/completions → 400: max_tokens must be at least 1", 400, id="arrow-400"),
    pytest.param("WARNING", "POST /v1/messages → 422: [{'type': 'literal_error'}]", 422, id="arrow-422"),
    pytest.param("WARNING", "POST /v1/chat/completions → 503: Server is shutting down", 503, id="arrow-503"),
    pytest.param("WARNING", "POST /v1/chat/completions -> 400: invalid request", 400, id="ascii-400"),
    pytest.param("WARNING", "POST /v1/chat/completions -> 503: model is loading", 503, id="ascii-503"),
    pytest.param("ERROR", "POST /v1/chat/completions → 500 (unhandled): boom", 500, id="arrow-500-unhandled"),
]


@pytest.mark.parametrize(("level", "message", "status"), HTTP)
def test_http_error_lines_with_either_arrow(tmp_path: Path, level: str, message: str, status: int) -> None:
    event = only(read(tmp_path, file_line("omlx.server", level, message)), "request_error")
    check(event, {"stage": "http", "method": "POST", "status": status})


@pytest.mark.parametrize(
    "message",
    ["POST /v1/chat/completions -> 200: fine", "GET /v1/models → 304: not modified", "POST /v1/x -> 201: made"],
    ids=["ascii-200", "arrow-304", "ascii-201"],
)
def test_an_access_line_with_a_success_status_is_no_request_error(tmp_path: Path, message: str) -> None:
    """The review of issue 14 (t23): the template took any three digits, so a 200 was a failed request."""
    (event,) = read(tmp_path, file_line("omlx.server", "WARNING", message))
    assert event["kind"] == "warning"


STREAM_ERRORS = [
    pytest.param("Error during chat streaming: boom", "chat_stream", id="chat"),
    pytest.param("Error during completion streaming: boom", "stream", id="completion"),
    pytest.param("Error during Anthropic streaming: boom", "stream", id="anthropic"),
    pytest.param("Error during Responses API streaming: boom", "stream", id="responses"),
    pytest.param("SSE generator error: boom", "stream", id="sse"),
]


@pytest.mark.parametrize(("message", "stage"), STREAM_ERRORS)
def test_a_streaming_error_of_every_api_is_a_request_error(tmp_path: Path, message: str, stage: str) -> None:
    """The review of issue 14 (t23): only the chat stream's was a failed request, the others plain errors."""
    check(only(read(tmp_path, file_line("omlx.server", "ERROR", message)), "request_error"), {"stage": stage})


ABORTS = [
    pytest.param(
        "omlx.engine.batched",
        f"[stream_generate] Aborting request {RID} (finished_normally=False)",
        id="stream-generate",
    ),
    pytest.param(
        "omlx.engine.vlm",
        f"[vlm_stream_generate] Aborting request {RID} (finished_normally=False)",
        id="vlm-stream-generate",
    ),
    pytest.param("omlx.server", f"Request {RID} cancelled, aborting", id="cancelled"),
    pytest.param(
        "omlx.server", "Client disconnected during streaming (is_disconnected), cancelling", id="disconnect-streaming"
    ),
    pytest.param("omlx.server", "Client disconnected, cancelling generation task", id="disconnect-task"),
    pytest.param(
        "omlx.server", "Client disconnected during non-streaming response, cancelling", id="disconnect-non-streaming"
    ),
    pytest.param(
        "omlx.scheduler", "Prefill interrupted at 10240/18745 tokens: 1 request(s) aborted", id="prefill-interrupted"
    ),
]


@pytest.mark.parametrize(("logger", "message"), ABORTS)
def test_aborts_cancellations_and_disconnects_are_request_aborts(tmp_path: Path, logger: str, message: str) -> None:
    only(read(tmp_path, file_line(logger, "INFO", message)), "request_abort")


REFUSALS = [
    pytest.param(
        "WARNING", f"Request {RID} rejected by prefill memory guard: needs 19.1GB, ceiling 17.8GB", id="prefill-guard"
    ),
    pytest.param(
        "WARNING", f"Preflight rejected (90000 tokens, cached=0, request_id={RID}): exceeds ceiling", id="preflight"
    ),
    pytest.param("WARNING", f"Memory admission stalled for {RID}: waited 30s", id="admission-stalled"),
    pytest.param(
        "ERROR",
        "Error during chat streaming: 507: Model 'big' (30.0 GB) does not fit under the dynamic memory ceiling (26.0 GB)",
        id="507-does-not-fit",
    ),
    pytest.param(
        "ERROR",
        "Error during chat streaming: Request aborted: process memory limit exceeded (usage 49.0 GB, ceiling 48.0 GB)",
        id="process-limit-exceeded",
    ),
]


@pytest.mark.parametrize(("level", "message"), REFUSALS)
def test_memory_guard_refusals_are_admission_errors(tmp_path: Path, level: str, message: str) -> None:
    event = only(read(tmp_path, file_line("omlx.server", level, message)), "request_error")
    assert event["stage"] == "admission"


@pytest.mark.parametrize(
    ("logger", "message"),
    [
        ("omlx.server", "Chat completion request received: model=q, messages=2, stream=False, max_tokens=30, temp=0.3"),
        ("omlx.scheduler", f"Added request {RID} with 4168 prompt tokens"),
    ],
    ids=["chat-request-received", "added-request"],
)
def test_debug_arrivals_are_arrivals_not_finished_requests(tmp_path: Path, logger: str, message: str) -> None:
    log = tmp_path / "server.log"
    log.write_text(file_line(logger, "DEBUG", message) + "\n", encoding="utf-8")
    stream = read_events(resolve([str(log)]), keep_all=True)
    assert [event.kind for event in all_events(stream)] == ["request_arrival"]
    assert stream.arrivals.height == 1 and not stream.requests.height


# ---------------------------------------------------------------------------------------------------
# Memory pressure and the enforcer
# ---------------------------------------------------------------------------------------------------

E = "omlx.process_memory_enforcer"
PRESSURE = [
    pytest.param(
        "INFO",
        "Memory pressure level: ok -> soft (current=22.7GB, soft=22.1GB, hard=24.7GB, ceiling=26.0GB)",
        {"action": "level_change", "from_level": "ok", "to_level": "soft", "current_gb": 22.7, "ceiling_gb": 26.0},
        id="level-change",
    ),
    pytest.param(
        "INFO",
        "Memory pressure level: soft -> hard (current=24.8GB, soft=22.1GB, hard=24.7GB)",
        {"action": "level_change", "to_level": "hard", "current_gb": 24.8, "hard_gb": 24.7},
        id="level-change-before-0.3.11",
    ),
    pytest.param(
        "INFO",
        "Memory pressure after hot-cache shrink: hard -> soft (current=20.0GB, freed_hot=1.5GB)",
        {"from_level": "hard", "to_level": "soft", "current_gb": 20.0},
        id="after-hot-cache-shrink",
    ),
    pytest.param(
        "WARNING",
        "Shrank shared hot cache under memory pressure: freed=1.5GB target_hot=2.0GB protected=3",
        {"action": "hot_cache_shrink"},
        id="shrank-shared",
    ),
    pytest.param(
        "WARNING",
        "Shrank hot cache under memory pressure: freed=1.5GB protected=2",
        {"action": "hot_cache_shrink"},
        id="shrank",
    ),
    pytest.param(
        "INFO",
        "Requested pressure cache reclaim on 2 scheduler(s) (freed_hot=1.5GB, pool=3.0GB)",
        {"action": "reclaim_request", "schedulers": 2},
        id="reclaim-request",
    ),
    pytest.param(
        "WARNING", "Pressure cache reclaim request failed: RuntimeError('x')", {}, id="reclaim-request-failed"
    ),
    pytest.param(
        "WARNING", "Evicting model 'qwen' (pressure=hard)", {"action": "eviction", "model": "qwen"}, id="evicting"
    ),
    pytest.param(
        "INFO",
        "Memory pressure post-eviction: hard -> ok (current=10.0GB)",
        {"action": "post_eviction", "from_level": "hard", "to_level": "ok", "current_gb": 10.0},
        id="post-eviction",
    ),
    pytest.param(
        "WARNING",
        "Hard memory pressure: aborted 2 request(s) on 'qwen' and kept model loaded",
        {"action": "hard_abort", "aborted": 2, "model": "qwen"},
        id="hard-aborted-kept",
    ),
    pytest.param(
        "WARNING",
        "Hard memory pressure: requested abort/unload for 'qwen' (aborted=1)",
        {"aborted": 1, "model": "qwen"},
        id="hard-abort-unload",
    ),
    pytest.param(
        "WARNING",
        "Aborted 2 requests on 'qwen' due to hard memory pressure (model kept loaded)",
        {"aborted": 2, "model": "qwen"},
        id="aborted-hard-0.3.9",
    ),
    pytest.param(
        "WARNING",
        "Aborted 2 requests on 'qwen' before eviction",
        {"aborted": 2, "model": "qwen"},
        id="aborted-before-eviction",
    ),
    pytest.param(
        "WARNING", "Aborting in-progress load of 'qwen' (hard memory pressure)", {"model": "qwen"}, id="aborting-load"
    ),
    pytest.param("WARNING", "Hard memory pressure but no models loaded.", {}, id="hard-no-models"),
    pytest.param(
        "WARNING",
        "Emergency memory pressure: aborted 3 in-flight request(s) (current=47.0GB, ceiling=48.0GB); models kept loaded.",
        {"action": "emergency_abort", "aborted": 3, "current_gb": 47.0, "ceiling_gb": 48.0},
        id="emergency",
    ),
    pytest.param(
        "WARNING",
        "Hard memory pressure but all loaded models are pinned and no loads in progress.",
        {"action": "hard_pinned"},
        id="hard-pinned",
    ),
    pytest.param(
        "WARNING",
        "Hard memory pressure, all loaded models pinned and no loads in progress: requested idle reclaim on 1 scheduler(s).",
        {"schedulers": 1},
        id="pinned-idle-reclaim",
    ),
    pytest.param(
        "WARNING",
        "Hard memory pressure, no evictable models and no loads in progress: requested idle reclaim on 2 scheduler(s).",
        {"schedulers": 2},
        id="no-evictable-idle-reclaim",
    ),
    pytest.param(
        "INFO",
        "Hard memory pressure on 'qwen': deferring request abort (poll 1/5) while 2.0GB of pooled Metal buffers drain",
        {"model": "qwen"},
        id="deferring-abort-0.5",
    ),
    pytest.param(
        "INFO",
        "Hard memory pressure: deferring destructive enforcement (poll 1/5) while pooled Metal buffers drain on 2 scheduler(s)",
        {"schedulers": 2},
        id="deferring-enforcement-0.6",
    ),
    pytest.param(
        "WARNING",
        "Process memory limit exceeded: 50.0GB / 48.0GB (over by 2.0GB)",
        {"current_gb": 50.0, "ceiling_gb": 48.0},
        id="old-limit-exceeded",
    ),
    pytest.param(
        "WARNING",
        "Evicting model 'qwen' to enforce process memory limit",
        {"action": "eviction", "model": "qwen"},
        id="old-evicting",
    ),
    pytest.param(
        "WARNING",
        "Aborted 2 requests on 'qwen' due to memory pressure (model kept loaded)",
        {"aborted": 2, "model": "qwen"},
        id="old-aborted-kept",
    ),
    pytest.param(
        "WARNING",
        "Requesting abort of loading model 'qwen' — process memory limit exceeded",
        {"model": "qwen"},
        id="old-abort-loading",
    ),
    pytest.param(
        "WARNING", "Process memory limit exceeded but all loaded models are pinned — cannot evict.", {}, id="old-pinned"
    ),
    pytest.param("WARNING", "Process memory limit exceeded but no models are loaded to evict.", {}, id="old-no-models"),
    pytest.param("WARNING", "Aborted 2 requests due to memory pressure", {"aborted": 2}, id="aborted-requests"),
    pytest.param(
        "WARNING", "Aborted 2 requests: process memory limit exceeded", {"aborted": 2}, id="aborted-requests-0.6.1"
    ),
]


@pytest.mark.parametrize(("level", "message", "fields"), PRESSURE)
def test_every_pressure_action_is_memory_pressure(
    tmp_path: Path, level: str, message: str, fields: dict[str, Any]
) -> None:
    event = only(read(tmp_path, file_line(E, level, message)), "memory_pressure")
    assert isinstance(event.get("action"), str) and event["action"], "every pressure step names its action"
    check(event, fields)


def test_idle_reclaim_trim_is_a_cache_clear(tmp_path: Path) -> None:
    message = "Idle reclaim: trimmed Metal transients between turns (12.3GB -> 8.1GB)"
    check(only(read(tmp_path, file_line("omlx.scheduler", "INFO", message)), "cache_clear"), {"trigger": "idle"})


# ---------------------------------------------------------------------------------------------------
# Engines and models
# ---------------------------------------------------------------------------------------------------

MODELS = [
    pytest.param("omlx.engine_core", "INFO", "Engine started", "engine_start", {}, id="engine-started"),
    pytest.param("omlx.engine_core", "INFO", "Engine stopped", "engine_stop", {}, id="engine-stopped"),
    pytest.param(
        "omlx.scheduler", "INFO", "Scheduler shutdown initiated...", "engine_stop", {}, id="scheduler-shutdown"
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Preloading pinned model: qwen",
        "model_load",
        {"model": "qwen", "stage": "loading"},
        id="preloading",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Loading model: qwen",
        "model_load",
        {"model": "qwen", "stage": "loading"},
        id="loading",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Loading model as LM (force_lm=True): qwen",
        "model_load",
        {"model": "qwen", "stage": "loading"},
        id="loading-as-lm",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Loaded model: qwen (actual: 20.1GB, estimated: 20.0GB, total: 20.1GB)",
        "model_load",
        {"model": "qwen", "stage": "loaded"},
        id="loaded",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Loaded model: qwen (actual: 20.1GB, local estimate: 20.0GB, full model: 21.0GB, total: 20.1GB)",
        "model_load",
        {"model": "qwen", "stage": "loaded"},
        id="loaded-0.6",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Loaded model: qwen (estimated: 20.0GB, total: 20.0GB)",
        "model_load",
        {"model": "qwen", "stage": "loaded"},
        id="loaded-before-0.3.9",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Successfully loaded qwen as LLM (fallback from VLM)",
        "model_load",
        {"model": "qwen", "stage": "loaded"},
        id="fallback-loaded",
    ),
    pytest.param(
        "omlx.engine_pool",
        "WARNING",
        "VLM loading failed for qwen, falling back to LLM: Model type x not supported.",
        "warning",
        {},
        id="vlm-fallback-is-not-a-failure",
    ),
    pytest.param(
        "omlx.engine_pool",
        "ERROR",
        "Model load failed for 'qwen'; caching failure until next discovery refresh",
        "model_load_failed",
        {"model": "qwen"},
        id="model-load-failed",
    ),
    pytest.param(
        "omlx.engine_pool",
        "ERROR",
        "Failed to preload pinned model qwen: out of memory",
        "model_load_failed",
        {"model": "qwen"},
        id="preload-pinned-failed",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Unloading model: qwen (immediate abort)",
        "model_unload",
        {"model": "qwen", "stage": "unloading"},
        id="unloading",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "Unloaded model: qwen, freed=20.00GB (expected>=19.50GB), active_memory: 1.02KB (settled)",
        "model_unload",
        {"model": "qwen", "stage": "unloaded"},
        id="unloaded",
    ),
    pytest.param(
        "omlx.engine_pool",
        "INFO",
        "TTL expired for model 'qwen' (idle 601s > ttl 600s)",
        "model_unload",
        {"model": "qwen", "stage": "ttl"},
        id="ttl",
    ),
]


@pytest.mark.parametrize(("logger", "level", "message", "kind", "fields"), MODELS)
def test_engine_and_model_messages(
    tmp_path: Path, logger: str, level: str, message: str, kind: str, fields: dict[str, Any]
) -> None:
    events = read(tmp_path, file_line(logger, level, message))
    assert [e["kind"] for e in events] == [kind]
    check(events[0], fields)


# ---------------------------------------------------------------------------------------------------
# Records that start anywhere, and time-only lines
# ---------------------------------------------------------------------------------------------------

HEADLESS = [
    pytest.param(
        ["Traceback (most recent call last):", '  File "/x/omlx/scheduler.py", line 10, in step', "RuntimeError: boom"],
        "error",
        id="bare-traceback",
    ),
    pytest.param(["AttributeError: 'TurboQuantMSEState' object has no attribute 'ndim'"], "error", id="bare-exception"),
    pytest.param([f"RuntimeError: {TIMEOUT}"], "gpu_error", id="bare-exception-metal"),
    pytest.param(
        [
            "Error Domain=MTLCommandBufferErrorDomain Code=4",
            '"Ignored (for causing prior/excessive GPU errors)',
            '(00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)"',
        ],
        "gpu_error",
        id="bare-nserror",
    ),
    pytest.param([f"Engine loop error: {IGNORED}"], "gpu_error", id="bare-catalog-message"),
    pytest.param(
        [
            "Emergency memory pressure: aborted 1 in-flight request(s) (current=47.0GB, ceiling=48.0GB); models kept loaded."
        ],
        "memory_pressure",
        id="bare-pressure-message",
    ),
    pytest.param([f"scheduler   - Prefill failed for {RID}: {TIMEOUT}"], "gpu_error", id="short-padded-logger"),
    pytest.param(
        [f"2026-09-19 16:06:50 ... Preflight rejected (90000 tokens, cached=0, request_id={RID}): too big"],
        "request_error",
        id="elided-head",
    ),
]


@pytest.mark.parametrize(("lines", "kind"), HEADLESS)
def test_a_record_can_start_anywhere(tmp_path: Path, lines: list[str], kind: str) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stream = read_events(resolve([str(log)]), keep_all=True)
    assert [e.kind for e in stream.events] == [kind]
    assert stream.accounting.unparsed == 0


def test_a_blank_line_ends_a_traceback_record(tmp_path: Path) -> None:
    events = read(
        tmp_path,
        file_line("omlx.engine_core", "ERROR", "Engine loop error: boom", 1),
        "Traceback (most recent call last):",
        '  File "/x/omlx/scheduler.py", line 10, in step',
        "",
        "Traceback (most recent call last):",
        '  File "/x/omlx/engine_core.py", line 20, in _engine_loop',
        "RuntimeError: again",
    )
    assert [(e["line"], e["kind"]) for e in events] == [(1, "error"), (5, "error")]


@pytest.mark.parametrize(
    ("line", "hms"),
    [
        ("16:04:31.040  Memory pressure level: ok -> soft (current=41.9GB, soft=40.8GB)", "16:04:31.040"),
        ("01:50:12  Memory pressure level: ok -> soft (current=41.9GB, soft=40.8GB)", "01:50:12.000"),
        (
            "09:47:37,279 - omlx.engine_core - WARNING - Memory pressure level: ok -> soft (current=41.9GB, soft=40.8GB)",
            "09:47:37.279",
        ),
    ],
    ids=["dot-millis", "no-millis", "comma-millis-logger-level"],
)
def test_time_only_lines_keep_their_time_of_day(tmp_path: Path, line: str, hms: str) -> None:
    check(only(read(tmp_path, line), "memory_pressure"), {"time": None, "time_of_day": hms})


def test_a_date_carries_over_only_when_time_does_not_go_back(tmp_path: Path) -> None:
    events = read(
        tmp_path,
        file_line("omlx.server", "WARNING", "POST /v1/chat/completions → 400: bad", 30),
        "20:19:45,000 - omlx.server - WARNING - POST /v1/chat/completions → 400: later",
        "20:10:00,000 - omlx.server - WARNING - POST /v1/chat/completions → 400: earlier",
    )
    got = [(e["line"], e["time"], e.get("time_of_day")) for e in events]
    assert got[1][1] in ("2026-09-15T20:19:45.000", None)
    assert got[2][1] is None and got[2][2] == "20:10:00.000", got


def test_wrapped_continuation_is_part_of_the_event(tmp_path: Path) -> None:
    event = only(
        read(
            tmp_path,
            file_line("omlx.oq", "ERROR", "Sensitivity measurement: model load failed (Missing 2 parameters:"),
            "a.weight,",
            "b.weight)",
        ),
        "error",
    )
    assert event["message"] == "Sensitivity measurement: model load failed (Missing 2 parameters:"
    assert "a.weight," in event.get("continuation", "") and "b.weight)" in event.get("continuation", "")
