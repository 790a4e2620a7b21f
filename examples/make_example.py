#!/usr/bin/env python3
"""Write the example inputs for omlx-logscan into this directory.

The log is synthetic: it rebuilds the timeline of oMLX issue #3706 (GPU
watchdog timeouts after a macOS 27 upgrade, then the driver's
SubmissionsIgnored state) as a Homebrew stdout+stderr capture written at
WARNING level. Every run produces the same bytes.

Usage: python examples/make_example.py
"""

import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 3706

OMLX = "/opt/homebrew/Cellar/omlx/0.5.7/libexec/lib/python3.11/site-packages/omlx"
PYLIB = "/opt/homebrew/Cellar/python@3.11/3.11.15_1/Frameworks/Python.framework/Versions/3.11/lib/python3.11"

# Exception text as quoted in the report (MLX message + NSError description).
TIMEOUT = (
    "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)."
)
IGNORED = (
    "[METAL] Command buffer execution failed: Ignored (for causing prior/excessive GPU errors) "
    "(00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)."
)

BANNER = [
    "\x1b[33moMLX - LLM inference, optimized for your Mac\x1b[0m",
    "\x1b[33m├─ https://github.com/jundot/omlx\x1b[0m",
    "\x1b[33m└─ Version: 0.5.7\x1b[0m",
    "",
    "Log directory: /Users/alice/.omlx/logs",
    "Starting server at http://127.0.0.1:8000",
]

# Python 3.11 frames of the failing periodic clear: (file, line, function, source, caret span).
FRAMES: list[tuple[str, int, str, str, str]] = [
    (
        f"{OMLX}/engine_core.py",
        394,
        "_engine_loop",
        "step_outputs = await loop.run_in_executor(",
        "await loop.run_in_executor(",
    ),
    (
        f"{PYLIB}/concurrent/futures/thread.py",
        58,
        "run",
        "result = self.fn(*self.args, **self.kwargs)",
        "self.fn(*self.args, **self.kwargs)",
    ),
    (
        f"{OMLX}/engine_core.py",
        344,
        "_step_burst",
        "outputs = [self.scheduler.step()]",
        "self.scheduler.step()",
    ),
    (
        f"{OMLX}/scheduler.py",
        10732,
        "step",
        "_sync_and_clear_cache(self._stream)",
        "_sync_and_clear_cache(self._stream)",
    ),
    (
        f"{OMLX}/utils/metal_sync.py",
        62,
        "_sync_and_clear_cache",
        "mx.synchronize()  # default stream",
        "mx.synchronize()",
    ),
]

OS_HISTORY = [("2026-05-12 10:03:00", "26.5.1"), ("2026-09-15 17:41:00", "27.0")]
OVERLAY = ("2026-09-15T18:10:00", "2026-09-16T03:30:00")


def at(text: str) -> datetime:
    """Parse a local 'YYYY-MM-DD HH:MM:SS[.ffffff]' time."""
    return datetime.fromisoformat(text)


def stamp(when: datetime) -> str:
    """Format a time the way Python logging's asctime does."""
    return f"{when:%Y-%m-%d %H:%M:%S},{when.microsecond // 1000:03d}"


def record(when: datetime, logger: str, level: str, message: str) -> str:
    """One console-format record (no request-id field)."""
    return f"{stamp(when)} - {logger} - {level} - {message}"


def traceback_lines(error: str) -> list[str]:
    """The untimed traceback continuation of an 'Engine loop error' record."""
    lines = ["Traceback (most recent call last):"]
    for path, lineno, func, source, span in FRAMES:
        lines.append(f'  File "{path}", line {lineno}, in {func}')
        lines.append(f"    {source}")
        if span != source:  # 3.11 omits carets when the span is the whole line
            lines.append("    " + " " * source.index(span) + "^" * len(span))
    lines.append(f"RuntimeError: {error}")
    lines.append("")
    return lines


@dataclass(order=True)
class Event:
    """A block of output lines that starts at a given moment."""

    when: datetime
    seq: int
    lines: list[str] = field(compare=False)


@dataclass
class Story:
    """Collects output blocks and the moments worth reporting."""

    rng: random.Random
    events: list[Event] = field(default_factory=list)
    starts: list[datetime] = field(default_factory=list)
    faults: list[tuple[datetime, str]] = field(default_factory=list)

    def add(self, when: datetime, lines: list[str]) -> None:
        """Queue lines to appear at `when`."""
        self.events.append(Event(when, len(self.events), lines))

    def ms(self, when: datetime, low: int = 0, high: int = 999) -> datetime:
        """Give a whole-second time a random millisecond part."""
        return when.replace(microsecond=0) + timedelta(milliseconds=self.rng.randint(low, high))

    def warn(self, when: datetime, kind: str | None = None) -> None:
        """Queue one ordinary WARNING record (a short burst for prefill/SSD kinds)."""
        rng = self.rng
        kind = kind or rng.choice(["http", "http", "prefill", "evict", "ssd"])
        if kind == "http":
            detail = rng.choice(
                [
                    "max_tokens must be at least 1, got 0",
                    f"Prompt is too long: {rng.randint(262200, 300000)} tokens exceeds the 262144-token context",
                    "Unsupported content part type: 'input_audio'",
                    "messages: at least one message is required",
                ]
            )
            message = f"POST /v1/chat/completions → 400: {detail}"
            self.add(when, [record(when, "omlx.server", "WARNING", message)])
        elif kind == "prefill":
            tokens = rng.randrange(8192, 131072, 2048)
            t = when
            lines = []
            for _ in range(rng.randint(1, 4)):
                used = 452.0 + rng.uniform(0.0, 1.6)
                lines.append(
                    record(
                        t,
                        "omlx.scheduler",
                        "WARNING",
                        f"Chunked prefill above max_bytes at {tokens} tokens: "
                        f"{used:.1f}GB > 452.0GB (ceiling: 481.3GB)",
                    )
                )
                tokens += 2048
                t += timedelta(milliseconds=rng.randint(800, 1900))
            self.add(when, lines)
        elif kind == "evict":
            rid = uuid.UUID(int=rng.getrandbits(128), version=4)
            self.add(
                when,
                [
                    record(
                        when,
                        "omlx.engine_core",
                        "WARNING",
                        f"No idle model evicted for request {rid}; scheduler will fall back to throttling",
                    )
                ],
            )
        else:
            self.add(
                when,
                [
                    record(
                        when,
                        "omlx.cache.paged_ssd_cache",
                        "WARNING",
                        f"SSD write queue full, dropping evicted block {rng.getrandbits(64):016x}",
                    )
                    for _ in range(rng.randint(2, 5))
                ],
            )

    def start(self, when: datetime, first_record: datetime | None = None) -> datetime:
        """A process start: the banner, then one WARNING 1-3 min later."""
        self.starts.append(when)
        self.add(when, list(BANNER))
        follow = first_record or self.ms(when + timedelta(seconds=self.rng.randint(60, 180)))
        self.warn(follow, "http")
        return follow

    def fault(self, when: datetime, error: str, recovery_ms: tuple[int, int] | None = None) -> None:
        """An 'Engine loop error' with traceback, optionally followed by the failed recovery clear."""
        self.faults.append((when, "Timeout" if error == TIMEOUT else "SubmissionsIgnored"))
        self.add(
            when,
            [
                record(when, "omlx.engine_core", "ERROR", f"Engine loop error: {error}"),
                *traceback_lines(error),
            ],
        )
        if recovery_ms is not None:
            later = when + timedelta(milliseconds=self.rng.randint(*recovery_ms))
            assert later.second == when.second, "recovery must land in the same second"
            self.faults.append((later, "recovery clear failed"))
            self.add(
                later,
                [
                    record(
                        later,
                        "omlx.scheduler",
                        "WARNING",
                        f"Metal cache clear failed during error recovery: {IGNORED}",
                    )
                ],
            )

    def dead_window(self, first: datetime, gaps: list[int]) -> datetime:
        """SubmissionsIgnored repeats (+ failed recovery clear) at `first` and after each gap."""
        t = first
        for gap in [0, *gaps]:
            t += timedelta(seconds=gap)
            self.fault(self.ms(t, 0, 899), IGNORED, (2, 15))
        return t


def split_gaps(rng: random.Random, total: int, count: int) -> list[int]:
    """`count` gaps of 5-7 minutes (seconds) that add up to `total`."""
    while True:
        gaps = [rng.randint(320, 400) for _ in range(count - 1)]
        last = total - sum(gaps)
        if 300 <= last <= 420:
            return [*gaps, last]


def sprinkle(story: Story, begin: datetime, end: datetime, count: int, kind: str | None = None) -> None:
    """Put `count` WARNING records at random times in [begin, end)."""
    span = int((end - begin).total_seconds())
    for offset in sorted(story.rng.randrange(span) for _ in range(count)):
        story.warn(story.ms(begin + timedelta(seconds=offset)), kind)


def before_upgrade(story: Story) -> None:
    """156 uneventful process starts on macOS 26.5.1 (2026-06-20 .. 2026-09-14)."""
    rng = story.rng
    first, last, n = at("2026-06-20 09:00:00"), at("2026-09-14 20:00:00"), 156
    slot = (last - first) / n
    starts = [story.ms(first + slot * i + slot * rng.uniform(0.0, 0.5)) for i in range(n)]
    ends = [s - timedelta(minutes=10) for s in starts[1:]] + [at("2026-09-15 17:30:00")]
    for begin, end in zip(starts, ends, strict=True):
        follow = story.start(begin)
        sprinkle(story, follow + timedelta(minutes=10), end, rng.randint(1, 4))


def incident(story: Story) -> None:
    """The macOS 27 evening and night of 2026-09-15/16, as the report tells it."""
    rng = story.rng
    # The engine was close to idle around the faults: only rejected requests in between.
    # First start on macOS 27: 2 h 23 m before the first fault.
    story.start(at("2026-09-15 17:56:02"), at("2026-09-15 17:56:38.412"))
    sprinkle(story, at("2026-09-15 18:20:00"), at("2026-09-15 20:05:00"), 2, "http")
    story.fault(story.ms(at("2026-09-15 20:19:38"), 100, 899), TIMEOUT)
    sprinkle(story, at("2026-09-15 20:40:00"), at("2026-09-15 21:30:00"), 1, "http")
    story.fault(story.ms(at("2026-09-15 21:44:31"), 100, 899), TIMEOUT)
    sprinkle(story, at("2026-09-15 21:55:00"), at("2026-09-15 22:10:00"), 1, "http")
    story.fault(story.ms(at("2026-09-15 22:20:21"), 100, 850), TIMEOUT, (20, 90))
    # Generation-dead: repeats every 5-7 min from 22:25:21 to 23:07:36, then a restart.
    story.dead_window(at("2026-09-15 22:25:21"), split_gaps(rng, 2535, 7))
    story.start(at("2026-09-15 23:12:04"))
    story.fault(story.ms(at("2026-09-15 23:26:38"), 100, 899), TIMEOUT)
    sprinkle(story, at("2026-09-15 23:50:00"), at("2026-09-16 01:30:00"), 2, "http")
    # Restart; one timeout right after it tips the new process over.
    story.start(at("2026-09-16 01:55:17"))
    story.fault(story.ms(at("2026-09-16 02:07:02"), 100, 850), TIMEOUT, (20, 90))
    t, gaps = at("2026-09-16 02:07:02"), []
    while True:
        gap = rng.randint(300, 420)
        if t + timedelta(seconds=gap) > at("2026-09-16 02:45:00"):
            break
        t += timedelta(seconds=gap)
        gaps.append(gap)
    last = story.dead_window(at("2026-09-16 02:07:02") + timedelta(seconds=gaps[0]), gaps[1:])
    story.start(story.ms(last + timedelta(seconds=rng.randint(180, 360))))
    story.fault(story.ms(at("2026-09-16 03:22:40"), 100, 899), TIMEOUT)
    # Absorbed: the process keeps serving until the log ends.
    for moment in ("2026-09-16 04:10:00", "2026-09-16 06:30:00", "2026-09-16 09:20:00"):
        story.warn(story.ms(at(moment) + timedelta(seconds=rng.randint(0, 59))))
    story.warn(story.ms(at("2026-09-16 09:29:00") + timedelta(seconds=rng.randint(0, 59))), "http")


def write_log(story: Story, path: Path) -> int:
    """Write the capture log in time order; return its line count."""
    lines = [line for event in sorted(story.events) for line in event.lines]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    return len(lines)


def write_side_files() -> None:
    """Write os-history.txt and gpu-overlay.csv."""
    history = "".join(f"{when} {version}\n" for when, version in OS_HISTORY)
    (HERE / "os-history.txt").write_text(history, encoding="utf-8", newline="\n")
    overlay = f"start,end\n{OVERLAY[0]},{OVERLAY[1]}\n"
    (HERE / "gpu-overlay.csv").write_text(overlay, encoding="utf-8", newline="\n")


def main() -> None:
    """Build the story, write all example files and print a short summary."""
    story = Story(random.Random(SEED))
    before_upgrade(story)
    incident(story)
    count = write_log(story, HERE / "omlx-3706.log")
    write_side_files()
    upgrade = at(OS_HISTORY[1][0])
    early = [s for s in story.starts if s < upgrade]
    print(
        f"omlx-3706.log: {count} lines, {len(story.starts)} process starts ({len(early)} before the macOS 27 upgrade)"
    )
    for s in story.starts:
        if s >= at("2026-09-15 00:00:00"):
            print(f"  start   {stamp(s)}")
    for when, what in story.faults:
        print(f"  {what:<22} {stamp(when)}")


if __name__ == "__main__":
    main()
