"""Small synthetic oMLX logs for tests of the rules, reports and attribution: one line per call."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

BASE = datetime(2026, 9, 15, 20, 0)
TIMEOUT = (
    "Engine loop error: [METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)."
)
IGNORED = (
    "Metal cache clear failed during error recovery: [METAL] Command buffer execution failed: Ignored (for causing "
    "prior/excessive GPU errors) (00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)."
)


def record(minute: float, level: str, logger: str, message: str) -> str:
    """One FILE-format oMLX record, ``minute`` minutes after BASE."""
    return f"{BASE + timedelta(minutes=minute):%Y-%m-%d %H:%M:%S},000 - {logger} - {level} - [-] - {message}"


def start(minute: float) -> str:
    return record(minute, "INFO", "omlx.server", "Server initialized with 1 models")


def timeout(minute: float) -> str:
    return record(minute, "ERROR", "omlx.engine_core", TIMEOUT)


def ignored(minute: float) -> str:
    return record(minute, "WARNING", "omlx.scheduler", IGNORED)


def busy(minute: float) -> str:
    """A warning that shows the process still running (so a fault before it was absorbed)."""
    return record(minute, "WARNING", "omlx.server", "POST /v1/chat/completions → 400: max_tokens must be at least 1")


def write_log(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def absorbed_faults(processes: int, per_process: int) -> list[str]:
    """Processes that each absorb ``per_process`` timeouts: many faults, written cheaply."""
    lines: list[str] = []
    minute = 0.0
    for _ in range(processes):
        lines.append(start(minute))
        for _ in range(per_process):
            lines += [timeout(minute + 1), busy(minute + 2)]
            minute += 2
        minute += 5
    return lines


STILL_DEAD = [start(0), busy(5), timeout(10), ignored(10), ignored(15), ignored(20), ignored(25)]
SHORT_DEAD = [start(0), timeout(10), ignored(10), ignored(15), start(20), busy(25)]  # dead exactly 10 min
