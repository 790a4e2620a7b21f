"""The line grammar recognises every format in the fact sheet and what people paste."""

from __future__ import annotations

import pytest

from omlx_logscan.parsing.grammar import parse_line


@pytest.mark.parametrize(
    ("line", "form", "stamp", "logger", "level", "message"),
    [
        (
            "2026-09-15 20:19:38,123 - omlx.scheduler - WARNING - [-] - hello",
            "log",
            "2026-09-15T20:19:38.123",
            "omlx.scheduler",
            "WARNING",
            "hello",
        ),
        (
            "2026-09-15 20:19:38,123 - omlx.scheduler - ERROR - no request id",
            "log",
            "2026-09-15T20:19:38.123",
            "omlx.scheduler",
            "ERROR",
            "no request id",
        ),
        (
            "> 2026-05-28 20:16:37,245 - omlx.server - WARNING - [-] - quoted",
            "log",
            "2026-05-28T20:16:37.245",
            "omlx.server",
            "WARNING",
            "quoted",
        ),
        (
            "```2026-06-05 21:24:07,054 - omlx.cache - DEBUG - [-] - fenced",
            "log",
            "2026-06-05T21:24:07.054",
            "omlx.cache",
            "DEBUG",
            "fenced",
        ),
        (
            "026-03-16 15:12:32,973 - omlx.model_discovery - INFO - [-] - cut year",
            "log",
            "2026-03-16T15:12:32.973",
            "omlx.model_discovery",
            "INFO",
            "cut year",
        ),
        (
            "2026-04-17 16:29:29,423 omlx_app.app INFO menubar app launched",
            "app",
            "2026-04-17T16:29:29.423",
            "omlx_app.app",
            "INFO",
            "menubar app launched",
        ),
        (
            "ERROR:root:Model type qwen4_exp not supported.",
            "pydefault",
            None,
            "root",
            "ERROR",
            "Model type qwen4_exp not supported.",
        ),
        (
            "INFO:     Started server process [48213]",
            "uvicorn",
            None,
            None,
            "INFO",
            "Started server process [48213]",
        ),
        (
            "omlx.engine_core - ERROR - [-] - Engine loop error: x",
            "nostamp_log",
            None,
            "omlx.engine_core",
            "ERROR",
            "Engine loop error: x",
        ),
        (
            "\x1b[33moMLX - LLM inference, optimized for your Mac\x1b[0m",
            "banner",
            None,
            None,
            None,
            "oMLX - LLM inference, optimized for your Mac",
        ),
        (
            "libc++abi: terminating due to uncaught exception",
            "abort",
            None,
            None,
            None,
            "libc++abi: terminating due to uncaught exception",
        ),
        ("Fatal Python error: Aborted", "faulthandler", None, None, None, "Fatal Python error: Aborted"),
        (
            'panic(cpu 4 caller 0xfffffe00427725d8): "x" @IOGPUMemory.cpp:550',
            "panic",
            None,
            None,
            None,
            'panic(cpu 4 caller 0xfffffe00427725d8): "x" @IOGPUMemory.cpp:550',
        ),
    ],
)
def test_formats(line: str, form: str, stamp: str | None, logger: str | None, level: str | None, message: str) -> None:
    parsed = parse_line(line)
    assert (parsed.form, parsed.timestamp, parsed.logger, parsed.level, parsed.message) == (
        form,
        stamp,
        logger,
        level,
        message,
    )


@pytest.mark.parametrize(
    ("line", "form", "time", "message"),
    [
        (
            "19:40:08 — Chunked prefill above max_bytes",
            "timeonly",
            "19:40:08",
            "Chunked prefill above max_bytes",
        ),
        (
            "01:50:12  Memory pressure level: ok -> soft",
            "timeonly",
            "01:50:12",
            "Memory pressure level: ok -> soft",
        ),
        (
            "09:47:37,279 - omlx.engine_core - WARNING - No idle model",
            "timeonly_log",
            "09:47:37",
            "No idle model",
        ),
        (
            "- `11:53:45,511 [vlm_stream_generate] Aborting request`",
            "timeonly",
            "11:53:45",
            "[vlm_stream_generate] Aborting request",
        ),
    ],
)
def test_time_only_lines_keep_their_time_but_no_date(line: str, form: str, time: str, message: str) -> None:
    parsed = parse_line(line)
    assert (parsed.form, parsed.time, parsed.date, parsed.message) == (form, time, None, message)


@pytest.mark.parametrize(
    "line", ["    ^^^^^^^^", "\x1b[33m└─ Version: 0.5.7\x1b[0m", "UserInfo={NSUnderlyingError=...}"]
)
def test_continuation_lines_never_start_a_record(line: str) -> None:
    assert parse_line(line).form == "text"


# Issue 14: these continue the record before them, but a paste can begin with them (or they can
# follow a blank line); then they open a record of their own. The assembler decides which.
@pytest.mark.parametrize(
    ("line", "form"),
    [
        ('  File "/x/omlx/scheduler.py", line 3, in step', "headless"),
        ("RuntimeError: [METAL] boom", "headless"),
        ("(00000002:kIOGPUCommandBufferCallbackErrorTimeout)", "headless"),
        ("Traceback (most recent call last):", "headless"),
        ("Error Domain=MTLCommandBufferErrorDomain Code=4", "headless"),
        ('"Ignored (for causing prior/excessive GPU errors)', "headless"),
        ("ANE input pack command buffer failed; canceling this dispatch: Error Domain=MTLX Code=2", "headless"),
        ("Thread 0x00000001f0d2c0c0 (most recent call first):", "thread_dump"),
        ("Current thread 0x000000016f7d3000 (most recent call first):", "thread_dump"),
        ("- `Rescheduled 1 requests for re-prefill`", "snippet"),
        ("scheduler   - Prefill failed for x: boom", "short_log"),
    ],
)
def test_headless_lines_that_can_begin_a_paste(line: str, form: str) -> None:
    assert parse_line(line).form == form


@pytest.mark.parametrize("line", ["Error: OMLX stream timed out", "MacOS: 26.5 (25F71)", "x - y", "Caused by me"])
def test_prose_is_no_headless_record(line: str) -> None:
    assert parse_line(line).form == "text"


def test_blank_and_crlf() -> None:
    assert parse_line("\r\n").form == "blank"
    assert parse_line("2026-09-15 20:19:38,123 - a.b - INFO - [-] - x\r").message == "x"
