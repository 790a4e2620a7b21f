"""Timed oMLX log lines around one GPU fault, for the attribution and overlay tests."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.stream.read import read_events

FAULT_AT = datetime(2026, 9, 15, 20, 19, 38, 663000)
_PACKAGES = "/opt/homebrew/Cellar/omlx/0.5.7/libexec/lib/python3.11/site-packages/omlx"
TIMEOUT = (
    "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)"
)
CLEAR_TRACEBACK = [
    "Traceback (most recent call last):",
    f'  File "{_PACKAGES}/engine_core.py", line 394, in _engine_loop',
    "    step_outputs = await loop.run_in_executor(",
    f'  File "{_PACKAGES}/engine_core.py", line 344, in _step_burst',
    "    outputs = [self.scheduler.step()]",
    f'  File "{_PACKAGES}/scheduler.py", line 10732, in step',
    "    _sync_and_clear_cache(self._stream)",
    f'  File "{_PACKAGES}/utils/metal_sync.py", line 62, in _sync_and_clear_cache',
    "    mx.synchronize()  # default stream",
    f"RuntimeError: {TIMEOUT}",
    "",
]
DECODE_TRACEBACK = [
    "Traceback (most recent call last):",
    f'  File "{_PACKAGES}/scheduler.py", line 9100, in _decode_step',
    "    mx.eval(tokens)",
    f"RuntimeError: {TIMEOUT}",
    "",
]


def record(at: datetime, level: str, logger: str, message: str) -> str:
    """One oMLX FILE-format line."""
    return f"{at:%Y-%m-%d %H:%M:%S},{at.microsecond // 1000:03d} - {logger} - {level} - [-] - {message}"


def completion(at: datetime, tokens: int) -> str:
    return record(at, "INFO", "omlx.server", f"Chat completion: {tokens} tokens in 3.00s (20.0 tok/s), prompt: 900")


def fault(at: datetime = FAULT_AT, traceback: list[str] = CLEAR_TRACEBACK) -> list[str]:
    return [record(at, "ERROR", "omlx.engine_core", f"Engine loop error: {TIMEOUT}"), *traceback]


def before(**delta: float) -> datetime:
    return FAULT_AT - timedelta(**delta)


def info_start() -> list[str]:
    """The startup block and an engine start, two hours before the fault."""
    start = before(hours=2)
    return [
        record(start, "INFO", "omlx.server", "CORS origins: ['*']"),
        record(start + timedelta(seconds=1), "INFO", "omlx.engine_core", "Engine started"),
    ]


def analysis_from(tmp_path: Path, lines: list[str]) -> Analysis:
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n")
    return analyze(read_events(resolve([str(log)]), keep_request_text=True))
