#!/usr/bin/env python3
"""Whether every shape of log takes time linear in its size: each written at n and 4n, timed, compared.

Run on demand, never as a test (bench/bench.py runs it last):

    python bench/shapes.py                 # n = 25,000: the 4n penalty box has 100,000 repeats
    python bench/shapes.py --n 5000 --shape penalty-box

Each shape repeats what a log of faults repeats, the one thing growing with n:

- ``penalty-box``: one GPU Timeout, then the driver ignores the process's submissions and its
  error recovery logs SubmissionsIgnored about once a second for as long as clients retry (a day
  of a dead engine is 86,400 of them): one fault, one dead window, n repeats;
- ``absorbed``: n GPU Timeouts the engine survives, each among a few finished requests;
- ``sessions``: n lifetimes (a start, a request, a Timeout, a failed request each).

Each log is read by ``logscan timeline -f json`` and ``logscan report`` (a child process each;
CPU seconds, user and system, so that other work on the machine counts less than in wall time).
Four times the input should take about four times as long: the ratio must stay under 5 (16 is
quadratic), else the run fails.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

from make_outages import IGNORED, TIMEOUT  # the Metal texts oMLX logs, written once for bench/

BEGIN = datetime(2026, 9, 15, 8, 0)
MODEL = "Qwen3-Coder-30B-A3B-Instruct-8bit"
BOUND = 5.0  # 4 when linear, 16 when quadratic
COMMANDS = (["timeline", "-f", "json", "--quiet"], ["report", "--quiet"])


def record(at: datetime, logger: str, level: str, message: str) -> str:
    """One oMLX server.log record."""
    return f"{at:%Y-%m-%d %H:%M:%S},{at.microsecond // 1000:03d} - {logger} - {level} - [-] - {message}"


def started(at: datetime) -> Iterator[str]:
    yield record(at, "omlx.server", "INFO", "Server initialized with 1 models")
    yield record(at + timedelta(seconds=20), "omlx.engine_core", "INFO", "Engine started")


def finished(at: datetime) -> str:
    return record(
        at, "omlx.server", "INFO", f"Chat completion: model={MODEL}, 214 tokens in 9.20s (23.3 tok/s), prompt: 1873"
    )


def failed(at: datetime) -> str:
    return record(at, "omlx.server", "WARNING", "POST /v1/chat/completions → 400: max_tokens must be at least 1")


def timeout(at: datetime) -> str:
    return record(at, "omlx.engine_core", "ERROR", f"Engine loop error: {TIMEOUT}")


def penalty_box(n: int) -> Iterator[str]:
    yield from started(BEGIN)
    fault = BEGIN + timedelta(minutes=30)
    yield finished(fault - timedelta(minutes=1))
    yield timeout(fault)
    at = fault
    for number in range(n):  # a retry a second (one incident), then one every 3 s (each a repeat of the window)
        at += timedelta(seconds=1 if number < n // 2 else 3)
        yield record(at, "omlx.scheduler", "WARNING", f"Metal cache clear failed during error recovery: {IGNORED}")


def absorbed(n: int) -> Iterator[str]:
    yield from started(BEGIN)
    for number in range(n):
        at = BEGIN + timedelta(minutes=1 + 2 * number)
        yield from (finished(at + timedelta(seconds=10 * k)) for k in range(3))
        yield timeout(at + timedelta(seconds=40))
        yield finished(at + timedelta(seconds=70))


def sessions(n: int) -> Iterator[str]:
    for number in range(n):
        at = BEGIN + timedelta(minutes=10 * number)
        yield from started(at)
        yield finished(at + timedelta(minutes=1))
        yield timeout(at + timedelta(minutes=2))
        yield failed(at + timedelta(minutes=3))


SHAPES: dict[str, Callable[[int], Iterator[str]]] = {
    "penalty-box": penalty_box,
    "absorbed": absorbed,
    "sessions": sessions,
}


def write(path: Path, lines: Iterator[str]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(line + "\n" for line in lines)
    return path


def cpu_seconds(argv: list[str]) -> float:
    """User and system seconds of one child process (its output thrown away)."""
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"exit code {proc.returncode}: {' '.join(argv)}")
    return usage.ru_utime + usage.ru_stime


def check(n: int, chosen: list[str], rounds: int) -> bool:
    """Print each shape's times at n and 4n and their ratio; whether every ratio is under ``BOUND``."""
    linear = True
    print(f"\nn vs 4n (CPU seconds, best of {rounds}; linear is 4x, quadratic 16x, the bound {BOUND:g}x)")
    with tempfile.TemporaryDirectory(prefix="logscan-shapes-") as folder:
        for name in chosen:
            logs = [write(Path(folder) / f"{name}-{size}.log", SHAPES[name](size)) for size in (n, 4 * n)]
            for command in COMMANDS:
                best = [float("inf"), float("inf")]
                for _ in range(rounds):  # in turn, so that other work slows both alike
                    for index, log in enumerate(logs):
                        argv = [sys.executable, "-m", "omlx_logscan", *command, str(log)]
                        best[index] = min(best[index], cpu_seconds(argv))
                ratio = best[1] / best[0]
                linear &= ratio < BOUND
                verdict = "ok" if ratio < BOUND else "NOT LINEAR"
                print(
                    f"  {name:<12} {command[0]:<9} n={n:>7,}: {best[0]:6.2f} s   4n={4 * n:>7,}: {best[1]:6.2f} s"
                    f"   {ratio:5.2f}x  {verdict}"
                )
    return linear


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=25_000, help="the smaller size (default 25,000)")
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="only this shape (repeatable)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each size, the best taken (default 1)")
    args = parser.parse_args()
    return 0 if check(args.n, args.shape or list(SHAPES), args.rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
