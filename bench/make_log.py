#!/usr/bin/env python3
"""Write a synthetic DEBUG-level oMLX server.log of a given size, and the truth of what it holds.

The benchmark's input, made from nothing outside this repository. The log is in oMLX's file
format (``2026-09-15 20:19:38,123 - omlx.scheduler - WARNING - [-] - message``) and spans a number
of days with what a busy local server writes at DEBUG level: a startup block at every process
start, a request arrival (DEBUG) and the scheduler's DEBUG chatter for every chat request, its
``Chat completion:`` line (INFO) when it finishes, memory-pressure episodes of the enforcer, model
unloads after an idle hour and reloads, orderly shutdowns, and a few GPU faults: timeouts the
engine absorbs, and timeouts that send the process to the driver's penalty box
(SubmissionsIgnored), which then fails again every five to seven minutes until someone restarts
it.

The truth file is counted from what was written, not from the plan: lines, event counts by kind,
process starts and how each lifetime ended, every fault with its time, kind and outcome, and every
dead window (start, last failure, repeats, end). The same seed gives the same bytes.

Usage:

    python bench/make_log.py OUT.log --size-mib 1024 --days 90 [--seed 1] [--truth OUT.truth.json]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

EPOCH = datetime(2026, 6, 20)  # midnight of the first day; all times are milliseconds after it
DAY_MS = 86_400_000
FIRST_START_MS = 8 * 3_600_000  # the first process starts at 08:00

HMS = [f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in range(86_400)]
MILLIS = [f",{m:03d}" for m in range(1000)]

TIMEOUT_ERROR = (
    "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)."
)
IGNORED_ERROR = (
    "[METAL] Command buffer execution failed: Ignored (for causing prior/excessive GPU errors) "
    "(00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)."
)
SITE = "/opt/homebrew/Cellar/omlx/0.5.7/libexec/lib/python3.11/site-packages/omlx"
# The call path of a fault in the step-boundary cache clear: (file, line, function, source).
CLEAR_PATH = (
    ("engine_core.py", 402, "_engine_loop", "outputs = await loop.run_in_executor(self._executor, self._run_step)"),
    ("engine_core.py", 351, "_run_step", "return self.scheduler.step()"),
    ("scheduler.py", 10741, "step", "_sync_and_clear_cache(self._stream)"),
    ("utils/metal_sync.py", 64, "_sync_and_clear_cache", "mx.synchronize()"),
)

# (name, size in GB, decode tok/s, prefill tok/s, share of the traffic)
MODELS = (
    ("Qwen3-Coder-30B-A3B-Instruct-8bit", 32.5, 78.0, 2400.0, 0.55),
    ("gpt-oss-120b-MXFP4-Q8", 63.4, 52.0, 1300.0, 0.30),
    ("Llama-3.3-70B-Instruct-4bit", 39.7, 14.0, 420.0, 0.15),
)
PINNED = MODELS[0][0]
MODEL_ROOT = "/Users/dev/.omlx/models"

# Logger and level columns, written once.
SERVER_DEBUG = " - omlx.server - DEBUG - [-] - "
SERVER_INFO = " - omlx.server - INFO - [-] - "
SERVER_WARNING = " - omlx.server - WARNING - [-] - "
SCHED_DEBUG = " - omlx.scheduler - DEBUG - [-] - "
SCHED_INFO = " - omlx.scheduler - INFO - [-] - "
SCHED_WARNING = " - omlx.scheduler - WARNING - [-] - "
PREFIX_DEBUG = " - omlx.cache.prefix_cache - DEBUG - [-] - "
PAGED_DEBUG = " - omlx.cache.paged_cache - DEBUG - [-] - "
ENFORCER_DEBUG = " - omlx.process_memory_enforcer - DEBUG - [-] - "
ENFORCER_INFO = " - omlx.process_memory_enforcer - INFO - [-] - "
ENFORCER_WARNING = " - omlx.process_memory_enforcer - WARNING - [-] - "
POOL_INFO = " - omlx.engine_pool - INFO - [-] - "
CORE_INFO = " - omlx.engine_core - INFO - [-] - "
CORE_ERROR = " - omlx.engine_core - ERROR - [-] - "

REJECTIONS = (
    "max_tokens must be a positive integer",
    "messages must not be empty",
    "Unsupported content part type 'input_audio'",
    "temperature must be between 0 and 2",
)


def stamp(ms: int) -> str:
    """oMLX's asctime for ``ms`` milliseconds after EPOCH: ``YYYY-MM-DD HH:MM:SS,mmm``."""
    day, rest = divmod(ms, DAY_MS)
    return f"{EPOCH + timedelta(days=day):%Y-%m-%d} {HMS[rest // 1000]}{MILLIS[rest % 1000]}"


def iso(ms: int) -> str:
    """The truth file's second-precision time: ``YYYY-MM-DDTHH:MM:SS``."""
    return stamp(ms)[:19].replace(" ", "T")


@dataclass
class Fault:
    """A planned GPU fault: when, and whether it puts the process in the penalty box."""

    ms: int
    penalty_box: bool


@dataclass
class Lifetime:
    """One planned process: start, end (its shutdown, or the log's end), what happens in it."""

    start: int
    end: int
    next_start: int | None  # the next lifetime's start (None: this one runs to the log's end)
    idle: tuple[int, int] | None = None  # an idle stretch that ends in a TTL unload and a reload
    faults: list[Fault] = field(default_factory=list)


@dataclass
class Truth:
    """What the written log holds, counted while writing it."""

    lines: int = 0
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("engine_start", "request_complete", "memory_pressure", "gpu_error"), 0)
    )
    sessions: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    dead_windows: list[dict[str, Any]] = field(default_factory=list)


class Writer:
    """Buffers lines and writes them in big chunks; counts lines and event kinds as they go."""

    def __init__(self, out: TextIO, truth: Truth, rng: random.Random, *, debug: bool = True) -> None:
        self.out = out
        self.debug = debug  # False: an INFO-level log, without the DEBUG lines
        self.truth = truth
        self.rng = rng
        self.parts: list[str] = []
        self.written = 0  # characters written so far (bytes, but for the odd non-ASCII one)
        self.day = -1
        self.date = ""
        # Pools of ready-made pieces, drawn from by index (cheaper than formatting each time).
        r = rng.random
        self.prompt_sizes = [int(120 * math.exp(4.2 * r() ** 1.6)) for _ in range(4096)]
        self.output_sizes = [max(1, int(40 * math.exp(3.4 * r() ** 1.3))) for _ in range(4096)]
        self.model_pick = [m for m in MODELS for _ in range(round(m[4] * 100))]
        self.arrivals = [
            f"Chat completion request received: model={m[0]}, messages={rng.randint(1, 48)}, "
            f"stream={rng.choice(('True', 'True', 'False'))}, max_tokens={rng.choice((2048, 4096, 8192, 32768))}, "
            f"temp={rng.choice((0.0, 0.2, 0.6, 0.7, 1.0))}"
            for m in self.model_pick
            for _ in range(40)
        ]

    def stamp(self, ms: int) -> str:
        day, rest = divmod(ms, DAY_MS)
        if day != self.day:
            self.day, self.date = day, f"{EPOCH + timedelta(days=day):%Y-%m-%d} "
        return f"{self.date}{HMS[rest // 1000]}{MILLIS[rest % 1000]}"

    def line(self, ms: int, head: str, message: str, kind: str | None = None) -> None:
        if not self.debug and " - DEBUG - " in head:
            return
        self.parts.append(f"{self.stamp(ms)}{head}{message}\n")
        self.truth.lines += 1
        if kind:
            self.truth.counts[kind] += 1
        if len(self.parts) >= 50_000:
            self.flush()

    def flush(self) -> None:
        chunk = "".join(self.parts)
        self.out.write(chunk)
        self.written += len(chunk)
        self.parts.clear()

    # -- what a process writes ------------------------------------------------------------

    def startup(self, ms: int) -> int:
        """The startup block of a new process; returns the time after it."""
        rng = self.rng
        t = ms
        self.line(t, SERVER_INFO, "CORS origins: ['*']")
        self.line(t + 2, " - omlx.model_settings - INFO - [-] - ", f"Loaded settings for {len(MODELS)} models")
        t += 40
        for name, size, *_ in MODELS:
            t += rng.randint(3, 30)
            self.line(
                t,
                " - omlx.model_discovery - INFO - [-] - ",
                f"Discovered model: {name} (type: llm, engine: batched, size: {size:.1f} GB)",
            )
        t += 5
        self.line(t, " - omlx.model_discovery - INFO - [-] - ", f"Discovered {len(MODELS)} models")
        self.line(t + 1, SERVER_INFO, f"Pinned model: {PINNED}")
        self.line(t + 2, POOL_INFO, "Memory guard tier: balanced (guard on)")
        self.line(t + 3, SERVER_INFO, f"Server initialized with {len(MODELS)} models")
        return self.load(t + rng.randint(200, 900), PINNED, preload=True)

    def load(self, ms: int, model: str, *, preload: bool = False) -> int:
        """A model load that ends in a started engine; returns the time after it."""
        size = next(m[1] for m in MODELS if m[0] == model)
        t = ms
        self.line(t, POOL_INFO, f"{'Preloading pinned model' if preload else 'Loading model'}: {model}")
        t += self.rng.randint(4000, 30000)
        self.line(
            t,
            POOL_INFO,
            f"Loaded model: {model} (actual: {size - 0.3:.1f}GB, estimated: {size:.1f}GB, total: {size:.1f}GB)",
        )
        self.line(t + 3, " - omlx.engine.batched - INFO - [-] - ", f"BatchedEngine loaded: {MODEL_ROOT}/{model}")
        self.line(t + 5, CORE_INFO, "Engine started", "engine_start")
        if preload:
            self.line(
                t + 9, ENFORCER_INFO, "Process memory enforcer started (tier=balanced, ceiling=460.0GB, interval=1.0s)"
            )
        return t + 50

    def unload(self, ms: int, model: str, idle_s: int) -> None:
        size = next(m[1] for m in MODELS if m[0] == model)
        self.line(ms, POOL_INFO, f"TTL expired for model '{model}' (idle {idle_s}s > ttl 3600s)")
        self.line(ms + 1, POOL_INFO, f"Unloading model: {model} (ttl)")
        self.line(ms + 40, CORE_INFO, "Engine stopped")
        self.line(
            ms + 900,
            POOL_INFO,
            f"Unloaded model: {model}, freed={size - 0.3:.1f}GB (expected>={size - 1.0:.1f}GB), "
            "active_memory: 0.4GB (settled)",
        )

    def shutdown(self, ms: int) -> int:
        """An orderly stop from ``ms``; the time of its last line, where the process ends."""
        self.line(ms, SCHED_INFO, "Scheduler shutdown initiated...")
        self.line(ms + 30, SCHED_INFO, "Scheduler shutdown completed")
        self.line(ms + 31, CORE_INFO, "Engine stopped")
        self.line(ms + 60, ENFORCER_INFO, "Process memory enforcer stopped")
        self.line(ms + 75, POOL_INFO, "Engine pool shutdown complete")
        return ms + 75

    def request(self, ms: int, slot: float) -> int:
        """One chat request arriving at ``ms``: its DEBUG lines and its ``Chat completion:`` line.
        It takes up to ``slot`` ms; returns the time the next thing may happen. The random draws
        are the same at either level, so an INFO log tells the same story as its DEBUG twin."""
        rng = self.rng
        r = rng.random
        st = self.stamp
        arrival = self.arrivals[int(r() * len(self.arrivals))]
        name, _size, tps, pps, _share = self.model_pick[int(r() * len(self.model_pick))]
        rid = f"{rng.getrandbits(64):016x}"
        prompt = self.prompt_sizes[int(r() * 4096)]
        tokens = self.output_sizes[int(r() * 4096)]
        rate = tps * (0.8 + 0.3 * r())
        prefill_ms = 1000.0 * prompt / pps
        room = 0.8 * slot - prefill_ms
        if 1000.0 * tokens / rate > room:  # a short slot: a short answer
            tokens = max(1, int(rate * max(room, 50.0) / 1000.0))
        decode_ms = 1000.0 * tokens / rate
        cached = int(prompt * r() * 0.9) // 64 * 64
        t0 = ms + 1 + int(r() * 4)
        t1 = t0 + 1 + int(r() * 6)
        reserve = r() < 0.5
        free = int(9000 + 5000 * r())
        t2 = t1 + int(prefill_ms)
        done = t2 + int(decode_ms) + 1
        poll = r() < 0.3
        active = 200 + 150 * r()
        seconds = (done - ms) / 1000.0
        completion = (
            f"{st(done)}{SERVER_INFO}Chat completion: model={name}, {tokens} tokens in {seconds:.2f}s "
            f"({tokens / seconds:.1f} tok/s), prompt: {prompt}, finish_reason=stop, max_tokens=32768, "
            f"request_max_tokens=32768\n"
        )
        if not self.debug:
            self.parts.append(completion)
            self.truth.lines += 1
        else:
            block = [
                f"{st(ms)}{SERVER_DEBUG}{arrival}\n",
                f"{st(t0)}{SCHED_DEBUG}Added request {rid} with {prompt} prompt tokens\n",
                f"{st(t1)}{PREFIX_DEBUG}Prefix lookup {rid}: {cached}/{prompt} tokens reused\n",
            ]
            if reserve:
                block.append(
                    f"{st(t1 + 1)}{PAGED_DEBUG}Reserved {(prompt + tokens) // 256 + 1} blocks for {rid} (free={free})\n"
                )
            block.append(f"{st(t2)}{SCHED_DEBUG}Prefill done for {rid}: {prompt - cached} tokens, first token ready\n")
            if tokens > 512:
                block.append(
                    f"{st(t2 + int(decode_ms / 2))}{SCHED_DEBUG}Decode {rid}: {tokens // 2} tokens so far, batch=1\n"
                )
            block.append(completion)
            block.append(f"{st(done + 1)}{SCHED_DEBUG}Request {rid} done, released its blocks\n")
            if poll:
                block.append(f"{st(done + 2)}{ENFORCER_DEBUG}Poll: active={active:.1f}GB, level=ok, next in 1.0s\n")
            self.parts.extend(block)
            self.truth.lines += len(block)
        self.truth.counts["request_complete"] += 1
        if len(self.parts) >= 50_000:
            self.flush()
        return done + 3

    def arrival_only(self, ms: int) -> None:
        """A request that arrives at a process that can no longer run it: it never finishes."""
        r = self.rng.random
        prompt = self.prompt_sizes[int(r() * 4096)]
        self.line(ms, SERVER_DEBUG, self.arrivals[int(r() * len(self.arrivals))])
        self.line(ms + 2, SCHED_DEBUG, f"Added request {self.rng.getrandbits(64):016x} with {prompt} prompt tokens")

    def rejected(self, ms: int) -> None:
        r = self.rng.random
        self.line(ms, SERVER_DEBUG, self.arrivals[int(r() * len(self.arrivals))])
        self.line(ms + 1, SERVER_WARNING, f"POST /v1/chat/completions → 400: {REJECTIONS[int(r() * 4)]}")

    def pressure(self, ms: int) -> None:
        """A memory-pressure episode of the enforcer: soft pressure, a hot-cache shrink and a
        reclaim request, then back to ok."""
        r = self.rng.random
        current = 401.0 + 30 * r()
        freed = 2.0 + 14 * r()
        limits = "soft=400.0GB, hard=440.0GB, ceiling=460.0GB"
        self.line(
            ms,
            ENFORCER_INFO,
            f"Memory pressure level: ok -> soft (current={current:.1f}GB, {limits})",
            "memory_pressure",
        )
        self.line(
            ms + 3,
            ENFORCER_WARNING,
            f"Shrank hot cache under memory pressure: freed={freed:.1f}GB protected={int(1 + 6 * r())}",
            "memory_pressure",
        )
        self.line(
            ms + 4,
            ENFORCER_INFO,
            f"Requested pressure cache reclaim on 1 scheduler(s) (freed_hot={freed:.1f}GB, pool={current - 60:.1f}GB)",
            "memory_pressure",
        )
        self.line(
            ms + 1100,
            ENFORCER_INFO,
            f"Memory pressure level: soft -> ok (current={current - freed - 4:.1f}GB, {limits})",
            "memory_pressure",
        )

    def engine_loop_error(self, ms: int, error: str) -> None:
        """oMLX's ``Engine loop error`` record: the message, the traceback, a blank line."""
        block = [f"{self.stamp(ms)}{CORE_ERROR}Engine loop error: {error}\n", "Traceback (most recent call last):\n"]
        for path, number, function, source in CLEAR_PATH:
            block.append(f'  File "{SITE}/{path}", line {number}, in {function}\n    {source}\n')
        block.append(f"RuntimeError: {error}\n\n")
        self.parts.extend(block)
        self.truth.lines += 4 + 2 * len(CLEAR_PATH)
        self.truth.counts["gpu_error"] += 1

    def recovery_clear_failed(self, ms: int) -> None:
        self.line(ms, SCHED_WARNING, f"Metal cache clear failed during error recovery: {IGNORED_ERROR}", "gpu_error")


# -- the plan -------------------------------------------------------------------------------


def plan(rng: random.Random, days: int) -> list[Lifetime]:
    """Process lifetimes over ``days`` days, with idle stretches and faults placed in them."""
    span_end = days * DAY_MS + FIRST_START_MS
    count = max(4, round(days * 1.1))
    width = (span_end - FIRST_START_MS) // count
    starts = [FIRST_START_MS] + [FIRST_START_MS + i * width + int(rng.random() * 0.3 * width) for i in range(1, count)]
    lives: list[Lifetime] = []
    for i, start in enumerate(starts):
        following = starts[i + 1] if i + 1 < count else None
        end = span_end if following is None else following - rng.randint(2, 30) * 60_000
        lives.append(Lifetime(start, end, following))
    for life in lives:
        if rng.random() < 0.35:
            begin = life.start + int((0.05 + 0.1 * rng.random()) * (life.end - life.start))
            life.idle = (begin, begin + rng.randint(3_700, 9_000) * 1000)
    # Faults only in lifetimes with one before and one after (the last one runs to the log's end).
    eligible = list(range(1, count - 1))
    boxed = rng.sample(eligible, min(len(eligible), max(1, round(days / 45))))
    for i in boxed:
        life = lives[i]
        assert life.next_start is not None
        life.end = life.next_start - rng.randint(8, 40) * 1000  # restarted at once, by hand
        life.faults.append(Fault(life.start + int((0.6 + 0.25 * rng.random()) * (life.end - life.start)), True))
    for _ in range(max(2, round(days / 12))):
        life = lives[rng.choice(eligible)]
        for _attempt in range(20):
            at = life.start + int((0.2 + 0.35 * rng.random()) * (life.end - life.start))
            clear_of_idle = life.idle is None or not (life.idle[0] - 600_000 <= at <= life.idle[1] + 600_000)
            if clear_of_idle and all(abs(at - f.ms) > 600_000 for f in life.faults):
                life.faults.append(Fault(at, False))
                break
    for life in lives:
        life.faults.sort(key=lambda f: f.ms)
    return lives


def live_ms(lives: list[Lifetime]) -> int:
    """The time the planned lifetimes spend serving (not idle, not in a dead window)."""
    total = 0
    for life in lives:
        end = next((f.ms for f in life.faults if f.penalty_box), life.end)
        total += end - life.start - (life.idle[1] - life.idle[0] if life.idle else 0)
    return total


def request_bytes(seed: int, *, debug: bool) -> float:
    """The mean size of one request's lines, measured on a throwaway sample."""
    truth = Truth()
    sample = Writer(sys.stdout, truth, random.Random(seed ^ 0x5EED), debug=debug)
    t = FIRST_START_MS
    for _ in range(3000):
        t = sample.request(t, 20_000.0) + 500
    size = sum(len(p.encode()) for p in sample.parts)
    return size / 3000


# -- writing --------------------------------------------------------------------------------


def write_log(path: Path, size_mib: float, days: int, seed: int = 1, level: str = "debug") -> dict[str, Any]:
    """Write a log of about ``size_mib`` MiB over ``days`` days to ``path`` at ``level`` ("debug"
    or "info": the same story without the DEBUG lines); return its truth (what ``main`` saves)."""
    if level not in ("debug", "info"):
        raise ValueError(f"level must be debug or info, not {level!r}")
    debug = level == "debug"
    rng = random.Random(seed)
    lives = plan(rng, days)
    per_request = request_bytes(seed, debug=debug)
    target = size_mib * 2**20
    truth = Truth()
    with path.open("w", encoding="utf-8", newline="\n", buffering=2**22) as out:
        log = Writer(out, truth, rng, debug=debug)
        for number, life in enumerate(lives, start=1):
            # The mean time between arrivals, set again before each lifetime from what is left to
            # write, so the log ends close to its size whatever the estimate missed.
            requests = max(20.0, (target - log.written - 3000 * (len(lives) - number + 1)) / per_request)
            slot = live_ms(lives[number - 1 :]) / requests
            write_lifetime(log, life, number, slot)
            log.flush()
    return {
        "generator": "bench/make_log.py",
        "seed": seed,
        "days": days,
        "size_mib": size_mib,
        "format": "file",
        "level": level,
        "lines": truth.lines,
        "bytes": path.stat().st_size,
        "counts": truth.counts,
        "process_starts": len(lives),
        "sessions": truth.sessions,
        "faults": truth.faults,
        "dead_windows": truth.dead_windows,
    }


def serve(log: Writer, t: int, until: int, slot: float) -> int:
    """Requests (and now and then a pressure episode or a rejected request) from ``t`` until
    ``until``; returns the time after the last one."""
    r = log.rng.random
    pressure = 0.002 + slot / 14_400_000  # per request: a few episodes a day even in a small log
    while True:
        gap = slot * min(6.0, max(0.02, -math.log(1.0 - r())))
        if t + gap + 2000 > until:
            return t
        draw = r()
        if draw < pressure:
            log.pressure(t)
            t += 1200
        elif draw < pressure + 0.001:
            log.rejected(t)
            t += 5
        t = max(log.request(t, gap), t + int(gap))


def write_lifetime(log: Writer, life: Lifetime, number: int, slot: float) -> None:
    rng = log.rng
    truth = log.truth
    t = log.startup(life.start)
    ending = "eof" if life.next_start is None else "shutdown"
    truth.sessions.append({"index": number, "start": iso(life.start), "end_reason": ending})
    events: list[tuple[int, str, Fault | None]] = [(f.ms, "fault", f) for f in life.faults]
    if life.idle:
        events.append((life.idle[0], "idle", None))
    events.sort(key=lambda e: e[0])
    for at, what, fault in events:
        t = serve(log, t, at, slot)
        if what == "idle" and life.idle:
            idle_s = 3600 + rng.randint(1, 59)  # the TTL runs out an hour after the last request
            log.unload(t + idle_s * 1000, PINNED, idle_s)
            t = log.load(life.idle[1], PINNED)
        elif fault is not None and not fault.penalty_box:
            log.arrival_only(t)
            when = t + rng.randint(600, 4000)
            log.engine_loop_error(when, TIMEOUT_ERROR)
            truth.faults.append({"time": iso(when), "kind": "timeout", "session": number, "outcome": "absorbed"})
            t = when + rng.randint(500, 3000)
        elif fault is not None:
            dead_window(log, t, life, number, slot)
            return
    t = serve(log, t, life.end, slot)
    if life.next_start is not None:
        log.shutdown(max(t, life.end))


def dead_window(log: Writer, t: int, life: Lifetime, number: int, slot: float) -> None:
    """A timeout whose recovery clear is ignored, then a SubmissionsIgnored repeat every five to
    seven minutes; requests keep arriving and never finish; then a restart (the next lifetime)."""
    rng = log.rng
    truth = log.truth
    log.arrival_only(t)
    entry = t + rng.randint(600, 4000)
    log.engine_loop_error(entry, TIMEOUT_ERROR)
    last_failure = entry + rng.randint(20, 90)
    log.recovery_clear_failed(last_failure)
    truth.faults.append({"time": iso(entry), "kind": "timeout", "session": number, "outcome": "penalty_box"})
    assert life.next_start is not None
    restart = life.end
    repeats = 0
    t = last_failure + 50
    repeat_at = entry + rng.randint(300_000, 420_000)
    while True:
        # Arrivals that will never be served, until the next repeat (or the restart).
        stop = min(repeat_at, restart)
        while True:
            t += int(slot * min(6.0, max(0.05, -math.log(1.0 - rng.random()))))
            if t + 5 >= stop:
                break
            log.arrival_only(t)
        if repeat_at + 60_000 > restart:
            break
        log.engine_loop_error(repeat_at, IGNORED_ERROR)
        last_failure = repeat_at + rng.randint(2, 15)
        log.recovery_clear_failed(last_failure)
        repeats += 1
        t = last_failure + 5
        repeat_at += rng.randint(300_000, 420_000)
    log.line(restart, " - omlx.admin.routes - WARNING - [-] - ", "Server restart requested (supervisor=menubar)")
    stopped = log.shutdown(restart + 500)  # the orderly stop ends the dead window, before the next start
    truth.dead_windows.append(
        {
            "start": iso(entry),
            "last_failure": iso(last_failure),
            "repeats": repeats,
            "end_reason": "shutdown",
            "end": iso(stopped),
            "session": number,
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the log to write")
    parser.add_argument("--size-mib", type=float, default=64.0, help="about how big the log is, in MiB (default 64)")
    parser.add_argument("--days", type=int, default=90, help="how many days the log spans (default 90)")
    parser.add_argument("--seed", type=int, default=1, help="the random seed: the same seed, the same bytes")
    parser.add_argument("--level", choices=("debug", "info"), default="debug", help="the log level (default debug)")
    parser.add_argument("--truth", type=Path, help="where the truth JSON goes (default: OUT with .truth.json)")
    args = parser.parse_args(argv)
    if args.days < 1 or args.size_mib <= 0:
        parser.error("--days and --size-mib must be positive")
    truth = write_log(args.out, args.size_mib, args.days, args.seed, args.level)
    (args.truth or args.out.with_suffix(".truth.json")).write_text(json.dumps(truth, indent=1) + "\n")
    print(
        f"{args.out}: {truth['bytes'] / 2**20:.1f} MiB, {truth['lines']} lines, "
        f"{truth['process_starts']} process starts, "
        f"{len(truth['faults'])} faults, {len(truth['dead_windows'])} dead windows",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
