#!/usr/bin/env python3
"""Write a small oMLX log in which the server goes dark in every way but the penalty box, with its truth.

The outage tests' input, made from nothing outside this repository (``bench/make_log.py`` writes
the big benchmark log; this one is small and varied). One lifetime per incident, in an order the
seed shuffles, each with steady chat traffic (arrivals at DEBUG, completions at INFO):

- ``fixed-build``: a GPU Timeout, then the build with the SubmissionsIgnored fix exits (code 70,
  ``Metal GPU submissions disabled``) and its supervisor starts it again seconds later;
- ``teardown``: a model unload outlives the 60 s teardown watchdog: exit 70, then a restart;
- ``wedge``: the scheduler stops; requests keep arriving and never finish until someone kills and
  restarts the server (no orderly stop);
- ``quiet-night``: hours without a single request, then traffic again in the same lifetime;
- ``retry-loop``: the same engine-loop error again and again, minutes apart, without SubmissionsIgnored;
- ``reboot``: a kernel panic report (as a user pastes it) after the last record, then a new start.

The last lifetime runs to the end of the log. ``--format console`` writes the stdout/stderr capture
(no ``[-]`` field, the banner and the fatal exit's thread dump); ``--level`` drops the records below it.

Usage:

    python bench/make_outages.py OUT.log [--seed 1] [--format file|console] [--level debug|info|warning]
        [--incidents fixed-build,teardown,wedge,quiet-night,retry-loop,reboot] [--truth OUT.truth.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

INCIDENTS = ("fixed-build", "teardown", "wedge", "quiet-night", "retry-loop", "reboot")
LEVELS = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}
MODEL = "Qwen3-Coder-30B-A3B-Instruct-8bit"
SITE = "/opt/homebrew/Cellar/omlx/0.6.2/libexec/lib/python3.11/site-packages/omlx"
TIMEOUT = (
    "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)"
)
IGNORED = (
    "[METAL] Command buffer execution failed: Ignored (for causing prior/excessive GPU errors) "
    "(00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)"
)
EXIT_SUFFIX = "; exiting process so the supervisor can restart with a clean state"
LOOP_ERROR = "ValueError: too many values to unpack (expected 2, got 3)"
PANIC = [
    'panic(cpu 4 caller 0xfffffe0031a2b3c4): "completeMemory() prepare count underflow" @IOGPUMemory.cpp:550',
    "Debugger message: panic",
    "OS version: 25F71",
    "Kernel version: Darwin Kernel Version 25.5.0: Mon Apr 27 20:41:06 PDT 2026; root:xnu-12377.121.6~2/RELEASE_ARM64",
]


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


class Log:
    """The lines of one log at one level and in one format, and the truth counted as they are written."""

    def __init__(self, fmt: str, level: str, rng: random.Random) -> None:
        self.fmt, self.floor, self.rng = fmt, LEVELS[level.upper()], rng
        self.lines: list[str] = []
        self.requests = 0

    def record(self, at: datetime, logger: str, level: str, message: str) -> None:
        if LEVELS[level] < self.floor:
            return
        stamp = f"{at:%Y-%m-%d %H:%M:%S},{at.microsecond // 1000:03d}"
        field = " - [-]" if self.fmt == "file" else ""
        self.lines.append(f"{stamp} - {logger} - {level}{field} - {message}")

    def stdout(self, *lines: str) -> None:
        """Lines only the stdout/stderr capture holds (the banner, a thread dump)."""
        if self.fmt == "console":
            self.lines.extend(lines)

    def start(self, at: datetime) -> datetime:
        self.stdout("oMLX - LLM inference, optimized for your Mac", "└─ Version: 0.6.2", "")
        self.record(at, "omlx.server", "INFO", "CORS origins: ['*']")
        self.record(at, "omlx.server", "INFO", "Server initialized with 1 models")
        self.record(at, "omlx.engine_pool", "INFO", f"Loading model: {MODEL}")
        ready = at + timedelta(seconds=self.rng.uniform(8, 40))
        self.record(ready, "omlx.engine_core", "INFO", "Engine started")
        self.record(ready, "omlx.process_memory_enforcer", "INFO", "Process memory enforcer started (tier=balanced)")
        return ready

    def stop(self, at: datetime) -> None:
        self.record(at, "omlx.scheduler", "INFO", "Scheduler shutdown initiated...")
        self.record(at, "omlx.engine_core", "INFO", "Engine stopped")
        self.record(at + timedelta(milliseconds=40), "omlx.engine_pool", "INFO", "Engine pool shutdown complete")

    def arrival(self, at: datetime) -> None:
        self.requests += 1
        self.record(
            at,
            "omlx.server",
            "DEBUG",
            f"Chat completion request received: model={MODEL}, messages=4, stream=True, max_tokens=4096, temp=0.7",
        )
        self.record(at, "omlx.scheduler", "DEBUG", f"Added request r{self.requests:05d} with 1873 prompt tokens")

    def completion(self, at: datetime, took: float) -> None:
        self.record(
            at,
            "omlx.server",
            "INFO",
            f"Chat completion: model={MODEL}, 214 tokens in {took:.2f}s ({214 / took:.1f} tok/s), prompt: 1873, "
            "finish_reason=stop, max_tokens=4096, request_max_tokens=4096",
        )

    def traffic(self, begin: datetime, until: datetime) -> datetime:
        """Requests one after another, a few minutes apart; returns when the last one finished."""
        at, last = begin, begin
        while True:
            arrive = at + timedelta(seconds=self.rng.uniform(30, 240))
            took = self.rng.uniform(2, 25)
            done = arrive + timedelta(seconds=took)
            if done >= until:
                return last
            self.arrival(arrive)
            self.completion(done, took)
            at = last = done

    def fatal(self, at: datetime, reason: str) -> None:
        self.record(at, "omlx.utils.fatal", "CRITICAL", reason + EXIT_SUFFIX)
        self.stdout(
            "Thread 0x000000016d2f7000 (most recent call first):",
            f'  File "{SITE}/utils/fatal.py", line 24 in fatal_exit',
            "",
        )


def build(seed: int, fmt: str, level: str, incidents: tuple[str, ...]) -> tuple[list[str], dict[str, Any]]:
    rng = random.Random(seed)
    log = Log(fmt, level, rng)
    order = list(incidents)
    rng.shuffle(order)
    truth: dict[str, Any] = {
        "generator": "bench/make_outages.py",
        "seed": seed,
        "format": fmt,
        "level": level,
        "order": order,
        "sessions": [],
        "faults": [],
        "fatal_exits": [],
        "wedges": [],
        "retry_loops": [],
        "reboots": [],
    }
    at = datetime(2026, 7, 1, 8, 0) + timedelta(minutes=rng.randint(0, 600))
    for index, incident in enumerate([*order, "eof"], start=1):
        truth["sessions"].append({"index": index, "start": iso(at), "incident": incident})
        at = _lifetime(log, truth, index, incident, log.start(at))
    return log.lines, truth


def _lifetime(log: Log, truth: dict[str, Any], index: int, incident: str, ready: datetime) -> datetime:
    """One lifetime with its incident; returns when the next one starts."""
    rng = log.rng
    hours = timedelta(hours=rng.uniform(1.5, 3))
    last = log.traffic(ready, ready + hours)
    if incident == "eof":
        return last
    if incident == "fixed-build":
        fault = last + timedelta(seconds=rng.uniform(5, 60))
        log.arrival(fault - timedelta(seconds=2))
        log.record(fault, "omlx.engine_core", "ERROR", f"Engine loop error: {TIMEOUT}")
        exit_at = fault + timedelta(milliseconds=31)
        log.fatal(exit_at, f"Metal GPU submissions disabled: {IGNORED}")
        truth["faults"].append({"time": iso(fault), "kind": "timeout", "session": index, "outcome": "fatal_exit"})
        truth["fatal_exits"].append({"time": iso(exit_at), "session": index, "reason": "submissions_ignored"})
        return exit_at + timedelta(seconds=rng.uniform(4, 12))
    if incident == "teardown":
        unload = last + timedelta(minutes=rng.uniform(5, 30))
        log.record(unload, "omlx.engine_pool", "INFO", f"Unloading model: {MODEL} (immediate abort)")
        exit_at = unload + timedelta(seconds=61.5)
        reason = f"Engine teardown timed out after 60s while running _clear_compile_cache for engine {MODEL}"
        log.fatal(exit_at, reason)
        truth["fatal_exits"].append({"time": iso(exit_at), "session": index, "reason": "teardown"})
        return exit_at + timedelta(seconds=rng.uniform(5, 20))
    if incident == "wedge":
        waiting, at = 0, last
        until = last + timedelta(hours=rng.uniform(2, 5))
        while (at := at + timedelta(seconds=rng.uniform(40, 300))) < until:
            log.arrival(at)
            waiting += 1
        restart = until + timedelta(seconds=rng.uniform(20, 90))  # killed by hand: nothing more is written
        truth["wedges"].append(
            {"session": index, "last_completion": iso(last), "unfinished_requests": waiting, "end": iso(restart)}
        )
        return restart
    if incident == "quiet-night":
        morning = last + timedelta(hours=rng.uniform(6, 9))
        last = log.traffic(morning, morning + timedelta(hours=1))
    elif incident == "retry-loop":
        at = last + timedelta(seconds=rng.uniform(20, 60))
        first = at
        repeats = rng.randint(5, 8)
        for number in range(repeats):
            if number:
                at += timedelta(seconds=rng.uniform(60, 420))
            log.record(at, "omlx.engine_core", "ERROR", f"Engine loop error: {LOOP_ERROR}")
        truth["retry_loops"].append({"session": index, "start": iso(first), "end": iso(at), "repeats": repeats})
        last = at
    elif incident == "reboot":
        log.lines.extend(PANIC)  # the report a user pastes after the log; the Mac restarted
        restart = last + timedelta(minutes=rng.uniform(3, 6))
        truth["reboots"].append({"session": index, "last_record": iso(last), "end": iso(restart)})
        return restart
    stop = last + timedelta(minutes=rng.uniform(2, 20))
    log.stop(stop)
    return stop + timedelta(minutes=rng.uniform(1, 30))


def write_log(
    path: Path, seed: int = 1, fmt: str = "file", level: str = "debug", incidents: tuple[str, ...] = INCIDENTS
) -> dict[str, Any]:
    """Write the log to ``path``; return its truth."""
    unknown = [name for name in incidents if name not in INCIDENTS]
    if unknown or fmt not in ("file", "console") or level not in ("debug", "info", "warning"):
        raise ValueError(f"unknown incident, format or level: {unknown or fmt or level}")
    lines, truth = build(seed, fmt, level, incidents)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    truth["lines"] = len(lines)
    return truth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the log to write")
    parser.add_argument("--seed", type=int, default=1, help="the random seed: the same seed, the same bytes")
    parser.add_argument("--format", choices=("file", "console"), default="file", help="server.log or the capture")
    parser.add_argument("--level", choices=("debug", "info", "warning"), default="debug", help="the log level")
    parser.add_argument("--incidents", default=",".join(INCIDENTS), help="comma list (default: all)")
    parser.add_argument("--truth", type=Path, help="where the truth JSON goes (default: OUT with .truth.json)")
    args = parser.parse_args(argv)
    chosen = tuple(name for name in args.incidents.split(",") if name)
    if any(name not in INCIDENTS for name in chosen):
        parser.error(f"--incidents: choose from {', '.join(INCIDENTS)}")
    truth = write_log(args.out, args.seed, args.format, args.level, chosen)
    (args.truth or args.out.with_suffix(".truth.json")).write_text(json.dumps(truth, indent=1) + "\n")
    print(f"{args.out}: {truth['lines']} lines, {len(truth['sessions'])} lifetimes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
