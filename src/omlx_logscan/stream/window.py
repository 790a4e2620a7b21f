"""The ``--since``/``--until`` window applied to a stream."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from omlx_logscan.parsing.dense import Dense, ms_of, timed_within
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import ARRIVAL_KIND
from omlx_logscan.stream.event_stream import EventStream, SourceInfo
from omlx_logscan.timeutil import parse


def in_window(since: datetime | None, until: datetime | None) -> Callable[[Event], bool]:
    """Whether an event is between two naive local times, either end open when None (an untimed
    event goes by the time before it)."""

    def inside(event: Event) -> bool:
        stamp = event.time or event.prev_time
        if not stamp:
            return since is None
        moment = parse(stamp)
        return (since is None or moment >= since) and (until is None or moment <= until)

    return inside


def within(stream: EventStream, since: datetime | None, until: datetime | None) -> EventStream:
    """The part of the stream between two naive local times, either end open when None."""
    if since is None and until is None:
        return stream
    inside = in_window(since, until)
    events = [ev for ev in stream.events if inside(ev)]
    requests = _between(stream.requests, since, until)
    arrivals = _between(stream.arrivals, since, until)
    counts = Counter(ev.kind for ev in events)
    if requests.height:
        counts["request_complete"] += requests.height
    if arrivals.height:
        counts[ARRIVAL_KIND] += arrivals.height
    records = _records_within(stream.records, since, until)
    sources = [_clip(info, since, until) for info in stream.sources]
    return replace(
        stream,
        sources=sources,
        events=events,
        requests=requests,
        arrivals=arrivals,
        arrival_events=[ev for ev in stream.arrival_events if inside(ev)],
        kind_counts=counts,
        records=records,
        cut_from=stream.cut_from or stream,
    )


def _between(rows: Dense, since: datetime | None, until: datetime | None) -> Dense:
    """Dense rows (finished requests, arrivals) timed inside the window, compared at the ms
    their times have."""
    if since is None and until is None:
        return rows
    bounds = (None if moment is None else ms_of(moment) for moment in (since, until))
    return rows.take(timed_within(rows.ints("time"), *bounds))


def _records_within(records: Dense, since: datetime | None, until: datetime | None) -> Dense:
    """Dated records inside the window: ISO times are in order as text; an undated record goes
    with an open start."""
    start = since.isoformat() if since is not None else None
    end = until.isoformat() if until is not None else None
    times = records.texts("time")
    return records.take(
        [
            row
            for row, time in enumerate(times)
            if (start is None or (time is not None and time >= start)) and (end is None or time is None or time <= end)
        ]
    )


def is_empty(stream: EventStream) -> bool:
    """Whether a window holds no record at all: no event, no finished request or arrival, no routine record."""
    return not (stream.events or stream.requests.height or stream.arrivals.height or stream.records.height)


def span(stream: EventStream) -> tuple[str, str] | None:
    """The first and last dated record of the stream's sources, or None when none is dated."""
    firsts = [s.first for s in stream.sources if s.first]
    lasts = [s.last for s in stream.sources if s.last]
    return (min(firsts), max(lasts)) if firsts and lasts else None


def _clip(info: SourceInfo, since: datetime | None, until: datetime | None) -> SourceInfo:
    """A source's span inside the window; no span at all when they do not overlap."""
    first = max(info.first, since.isoformat()) if info.first and since else info.first
    last = min(info.last, until.isoformat()) if info.last and until else info.last
    if first and last and parse(first) > parse(last):
        first = last = None
    return replace(info, first=first, last=last)
