"""The live wedge: a growing DEBUG log whose requests keep arriving and never finish."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from test_parity import EventKeeper
from test_watch import Watch, _following, _line, append, fatal_exit, watches  # noqa: F401 - watches is a fixture

from omlx_logscan.watch.loop import Watcher, WatchOptions

WEDGE_AFTER_S = 2.0


def _arrival(at: datetime, number: int) -> str:
    return _line(
        at, "omlx.server", "DEBUG", "Chat completion request received: model=m, messages=2, stream=True, max_tokens=8"
    ) + _line(at, "omlx.scheduler", "DEBUG", f"Added request r{number:04d} with 812 prompt tokens")


def _completion(at: datetime) -> str:
    return _line(at, "omlx.server", "INFO", "Chat completion: model=m, 12 tokens in 0.40s (30.0 tok/s), prompt: 812")


def _start(at: datetime) -> str:
    return _line(at, "omlx.server", "INFO", "Server initialized with 1 models")


@pytest.mark.slow
def test_a_wedge_alerts_once_and_runs_on_dead_once(tmp_path: Path, watches: list[Watch]) -> None:  # noqa: F811
    log = tmp_path / "server.log"
    now = datetime.now()
    log.write_text(_start(now) + _arrival(now, 0) + _completion(now))
    runs = tmp_path / "runs.txt"
    on_dead = f'printf "%s|%s\\n" "$LOGSCAN_SESSION" "$LOGSCAN_HOOK" >> {runs}'
    watch = Watch(str(log), "--interval", "0.05", "-f", "ndjson", "--wedge-after", "2s", "--on-dead", on_dead)
    watches.append(watch)
    _following(watch)
    append(log, _completion(datetime.now()))  # the last request that finishes
    quiet_from = time.monotonic()
    alerted_at = None
    for number in range(1, 60):  # arrivals go on, nothing finishes
        append(log, _arrival(datetime.now(), number))
        time.sleep(0.1)
        if alerted_at is None and any(r.get("watch") == "wedge" for r in watch.rows()):
            alerted_at = time.monotonic()
        if alerted_at is not None and time.monotonic() - alerted_at > 1.5:
            break
    assert alerted_at is not None, watch.out[-10:]
    assert WEDGE_AFTER_S <= alerted_at - quiet_from <= WEDGE_AFTER_S + 3.0  # within a few seconds of the threshold
    watch.row(lambda r: r.get("watch") == "command" and r["hook"] == "on-dead")
    time.sleep(0.5)
    alerts = [r for r in watch.rows() if r.get("watch") == "wedge"]
    assert len(alerts) == 1 and alerts[0]["session"] == 1 and alerts[0]["unfinished"] >= 3
    assert "ALERT engine wedged" in alerts[0]["message"]
    assert runs.read_text().splitlines() == ["1|on-dead"]  # once, however many arrivals followed


def test_a_start_rearms_and_a_fatal_exit_disarms(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    sink = EventKeeper()
    watcher = Watcher(WatchOptions(log, wedge_after=60.0), sink)
    clock = iter(range(1, 10_000, 5))
    watcher.step(0.0)
    t0 = datetime(2026, 9, 15, 20, 0)

    def wedges() -> int:
        return sum(1 for notice in sink.notices if notice.kind == "wedge")

    def written(text: str) -> None:
        append(log, text)
        now = next(clock)
        watcher.step(now)
        watcher.step(now + 3)  # past the hold: the last record is complete

    def arrivals(first: datetime, count: int) -> list[bool]:
        seen = []
        for i in range(count):
            before = wedges()
            written(_arrival(first + timedelta(seconds=40 * i), i))
            seen.append(wedges() > before)
        return seen

    written(_start(t0))
    assert arrivals(t0, 4) == [False, False, True, False]  # the third waiting request, 80 s on; then no more
    written(_start(t0 + timedelta(hours=1)))
    assert arrivals(t0 + timedelta(hours=1), 3) == [False, False, True]  # the next lifetime is watched again
    later = t0 + timedelta(hours=2)
    written(_start(later) + fatal_exit(later))
    assert arrivals(later, 5) == [False] * 5  # the supervisor restarts an exited process: nothing is wedged
    written(_start(later + timedelta(hours=1)))
    assert arrivals(later + timedelta(hours=1), 2) == [False, False]
    written(_completion(later + timedelta(hours=1, seconds=70)))
    assert arrivals(later + timedelta(hours=1, seconds=80), 3) == [False, False, True]  # counted from the finish
    watcher.follower.close()


def test_a_watch_that_begins_mid_lifetime_counts_from_its_first_line(tmp_path: Path) -> None:
    """Nothing settled since the watch began: the wait is counted from the first line it read."""
    log = tmp_path / "server.log"
    t0 = datetime(2026, 9, 15, 20, 0)
    log.write_text(_start(t0) + _completion(t0 + timedelta(minutes=1)))
    sink = EventKeeper()
    watcher = Watcher(WatchOptions(log, wedge_after=60.0), sink)
    watcher.step(0.0)  # opens the file at its end
    append(log, "".join(_arrival(t0 + timedelta(minutes=5, seconds=40 * n), n) for n in range(4)))
    for now in (1.0, 4.0, 8.0):
        watcher.step(now)
    watcher.follower.close()
    wedges = [notice for notice in sink.notices if notice.kind == "wedge"]
    assert len(wedges) == 1 and wedges[0].data["session"] == 1
    assert wedges[0].data["since"] == "2026-09-15T20:05:00.000"
