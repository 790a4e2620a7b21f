#!/usr/bin/env python3
"""What running the batch analysis costs ``logscan watch``: alert latency, one poll, memory over a day.

Run on demand, never as a test:

    python bench/watch_bench.py                      # /work/main against this checkout
    python bench/watch_bench.py --base /work/main --head . --rounds 3

- latency: a ``logscan watch`` subprocess of each build follows a log; a penalty box is appended,
  with a later record (closed by log time) or alone (closed by the two quiet seconds), and a wedge
  (arrivals with nothing finishing, ``--wedge-after 2s``); the seconds from the append to the alert
  row are measured (median of the rounds).
- poll: the state of a 1 GiB DEBUG log is loaded into the watch's state, and the analysis one poll
  runs is timed (median of 5): what the watch keeps after following it (its last lifetime), and the
  whole log as one lifetime (every event, request and arrival row of it: the worst case). Only this
  checkout: the old watch had no such step.
- memory: a day of a busy server at DEBUG level (``make_log.py --days 1``) is appended to a
  followed file in 1 MiB pieces, one poll each, in process; peak RSS, the rows the state keeps
  at the end, and how long the day took to follow.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import queue
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(tempfile.gettempdir()) / "analyzer-bench"
sys.path.insert(0, str(ROOT / "tests"))
from synthetic import busy, ignored, record, start, timeout  # noqa: E402 - the tests' small logs


def _text(*lines: str) -> str:
    return "".join(line + "\n" for line in lines)


def _arrivals(minute: float, count: int) -> str:
    """``count`` requests arriving five seconds apart, none finishing."""
    added = "Added request r{:04d} with 812 prompt tokens"
    return _text(*(record(minute + n / 12, "DEBUG", "omlx.scheduler", added.format(n)) for n in range(count)))


HEAD = _text(start(0), record(1, "INFO", "omlx.server", "Chat completion: 12 tokens in 3.00s (4.0 tok/s), prompt: 9"))
SCENARIOS: dict[str, tuple[str, str, list[str]]] = {  # what is appended, the alert row, more options
    "penalty box, a later record": (_text(timeout(2), ignored(2), busy(3)), "dead", []),
    "penalty box alone (2 s timer)": (_text(timeout(2), ignored(2)), "dead", []),
    "wedge": (_arrivals(2, 4), "wedge", ["--wedge-after", "2s"]),
}


def _lines(pipe: IO[str]) -> queue.Queue[str]:
    """The lines of ``pipe`` as they come, read by a thread of their own."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in pipe:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _wait_for(lines: queue.Queue[str], wanted: Callable[[str], bool], within: float = 30.0) -> float:
    """Take lines until one is ``wanted``; the moment it came (an error after ``within`` seconds)."""
    deadline = time.monotonic() + within
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=left)
        except queue.Empty:
            break
        if wanted(line):
            return time.monotonic()
    raise RuntimeError(f"nothing wanted within {within} s")


def latency(build: Path, scenario: str) -> float:
    """Seconds from appending the scenario's lines to the watch's alert row."""
    text, alert, options = SCENARIOS[scenario]
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        log.write_text(HEAD)
        env = os.environ | {"PYTHONPATH": str(build / "src"), "TZ": "UTC"}
        argv = [sys.executable, "-m", "omlx_logscan", "watch", str(log), "--interval", "0.1", "-f", "ndjson"]
        process = subprocess.Popen(
            [*argv, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        try:
            assert process.stderr is not None and process.stdout is not None
            errors, rows = _lines(process.stderr), _lines(process.stdout)
            _wait_for(errors, lambda line: line.startswith("following "))
            with log.open("a") as handle:
                handle.write(text)
            appended = time.monotonic()
            shown = _wait_for(rows, lambda line: json.loads(line).get("watch") == alert)
        finally:
            process.terminate()
            process.communicate(timeout=30)
    return shown - appended


def poll_cost(log: Path, rounds: int) -> dict[str, Any]:
    """The state of ``log`` read whole, in this checkout's watch state; the analysis of one poll, timed."""
    sys.path.insert(0, str(ROOT / "src"))
    from omlx_logscan.inputs.sources import resolve
    from omlx_logscan.stream.read import read_events
    from omlx_logscan.watch.growing import _RecordTable
    from omlx_logscan.watch.state import WatchState

    stream = read_events(resolve([str(log)]))
    records = stream.records.rows("source", "line", "time")
    last = max(i for i, event in enumerate(stream.events) if event.kind == "process_start")
    one = [e for e in stream.events if e.kind not in ("process_start", "shutdown", "process_exit")]
    cases = {  # what the watch keeps after following the log, and the log as one lifetime (the worst)
        "kept_ms": (stream.events[last:], stream.events[last].time),
        "one_lifetime_ms": ([stream.events[0], *one], None),
    }
    figures: dict[str, float] = {}
    for name, (events, since) in cases.items():
        times = []
        for _ in range(rounds):
            state = WatchState(str(log), 600.0)
            growing = state.growing
            growing.stream.events = list(events)
            growing.stream.requests = _rows_from(stream.requests, since)
            growing.stream.arrivals = _rows_from(stream.arrivals, since)
            growing._records = [row for row in records if since is None or (row[2] or "") >= since]
            growing._table = _RecordTable(growing._records)
            growing._levels = set(stream.levels)
            growing._marks = [(0, 0, 0)] * len(events)  # where a cut falls: at the tables' heads
            growing.info.first, growing.info.last = since or stream.sources[0].first, stream.sources[0].last
            started = time.perf_counter()
            state.refresh(1e9)
            times.append(time.perf_counter() - started)
        figures[name] = round(statistics.median(times) * 1000, 1)
    return {
        "events": len(stream.events),
        "requests": stream.requests.height,
        "arrivals": stream.arrivals.height,
        "records": stream.records.height,
        **figures,
    }


def _rows_from(table: Any, since: str | None) -> Any:
    """The rows of a dense table (in time order) timed at or after ``since``."""
    from omlx_logscan.parsing.dense import ms_of
    from omlx_logscan.timeutil import parse

    if since is None:
        return table
    times = table.ints("time")
    return table.slice(bisect.bisect_left(times, ms_of(parse(since))))


class _Quiet:
    def event(self, event: object) -> None: ...
    def notice(self, notice: object) -> None: ...
    def info(self, message: str) -> None: ...
    def unparsed(self, line: object) -> None: ...


def memory(log: Path, size: int = 1 << 20) -> dict[str, Any]:
    """Follow ``log`` as it is written, a piece a poll, with the build on ``sys.path``."""
    from omlx_logscan.watch.loop import Watcher, WatchOptions

    with tempfile.TemporaryDirectory() as folder, log.open("rb") as source:
        followed = Path(folder) / "server.log"
        followed.write_bytes(b"")
        watcher = Watcher(WatchOptions(followed), _Quiet())
        started = time.perf_counter()
        now = 0.0
        watcher.step(now)
        with followed.open("ab") as handle:
            while piece := source.read(size) + source.readline():  # whole lines, read as they are written
                handle.write(piece)
                handle.flush()
                now += 1.0
                watcher.step(now)
        for extra in (3.0, 6.0):
            watcher.step(now + extra)
        took = time.perf_counter() - started
        watcher.follower.close()
    state = watcher.state
    kept = {}
    growing = getattr(state, "growing", None)
    if growing is not None:
        kept = {
            "events_kept": len(growing.stream.events),
            "request_rows_kept": growing.stream.requests.height,
            "arrival_rows_kept": growing.stream.arrivals.height,
            "record_rows_kept": len(growing._records),
        }
    return {
        "lines": watcher.lines,
        "events_shown": watcher.events,
        "sessions": len(state.sessions),
        "faults": len(state.faults),
        "seconds": round(took, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        **kept,
    }


def _in_build(build: Path, what: str, *args: str) -> dict[str, Any]:
    env = os.environ | {"PYTHONPATH": str(build / "src"), "TZ": "UTC"}
    done = subprocess.run(
        [sys.executable, __file__, "--run", what, *args], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _log(name: str, size_mib: int, days: int, seed: int) -> Path:
    path = CACHE / f"{name}.log"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        maker = [sys.executable, str(ROOT / "bench" / "make_log.py"), str(path)]
        subprocess.run(
            [*maker, "--size-mib", str(size_mib), "--days", str(days), "--seed", str(seed)],
            check=True,
            capture_output=True,
        )
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base", type=Path, default=Path("/work/main"))
    parser.add_argument("--head", type=Path, default=ROOT)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--run", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        what, *rest = args.run
        print(json.dumps(memory(Path(rest[0])) if what == "memory" else poll_cost(Path(rest[0]), 5)))
        return 0
    builds = {"before": args.base.resolve(), "after": args.head.resolve()}
    for scenario in SCENARIOS:
        figures = {
            name: statistics.median(latency(build, scenario) for _ in range(args.rounds))
            for name, build in builds.items()
        }
        print(f"latency, {scenario}: " + ", ".join(f"{name} {s:.2f} s" for name, s in figures.items()))
    gib = _log("gib", 1024, 90, 1)
    print("one poll with a 1 GiB log's state:", _in_build(builds["after"], "poll", str(gib)))
    day = _log("day-busy", 256, 1, 3)
    for name, build in builds.items():
        print(f"24 h DEBUG replay, {name}:", _in_build(build, "memory", str(day)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
