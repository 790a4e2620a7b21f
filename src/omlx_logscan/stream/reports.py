"""Times that reports of the system give: a kernel panic's own time, in the log's local time.

A panic report is no log line: its record has no time and is placed between its neighbours. Where
the report says when (``report_time``, with the offset it was written in), that time, turned into
the zone the log was written in once the stream knows it, becomes the event's time, as long as it
lies between those neighbours (file order and time order then agree); else the bounds stay.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.timeutil import parse, stamp_of, wall_clock


def date_panic_reports(stream: EventStream) -> None:
    """Give each untimed kernel panic the time its report states, in the stream's zone."""
    for event in stream.events:
        date_panic_report(event, stream.zone)


def date_panic_report(event: Event, zone: tzinfo | None) -> None:
    """An untimed kernel panic's time from its report (``zone``: the log's), when it lies between its neighbours."""
    stated = event.fields.get("report_time") if event.kind == "kernel_panic" else None
    if event.time is not None or not isinstance(stated, str):
        return
    local = stamp_of(wall_clock(datetime.fromisoformat(stated), zone))
    if (event.prev_time is None or parse(event.prev_time) <= parse(local)) and (
        event.next_time is None or parse(local) <= parse(event.next_time)
    ):
        event.time = local
