"""Startup blocks: the many markers oMLX prints when it starts become one ``process_start``."""

from __future__ import annotations

from collections.abc import Iterator

from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import RUNNING_PROCESS_KINDS
from omlx_logscan.timeutil import seconds

STARTUP_JOIN_SECONDS = 120.0


class StartCollapser:
    """One ``process_start`` per startup block, decided one event at a time (batch and live alike).

    Each banner opens a start; other markers join the open start unless more than
    STARTUP_JOIN_SECONDS passed or an event showed a running process in between.
    """

    def __init__(self) -> None:
        self._open: Event | None = None
        self._last_marker_time: str | None = None

    def feed(self, event: Event) -> bool:
        """True when the event stands on its own; False when it was folded into the open start."""
        if event.kind == "process_start":
            marker = event.fields.get("marker")
            gap = seconds(self._last_marker_time, event.time or event.prev_time)
            if self._open is not None and marker != "banner" and (gap is None or gap <= STARTUP_JOIN_SECONDS):
                _join_start(self._open, event)
                self._last_marker_time = event.time or self._last_marker_time
                return False
            event.fields["markers"] = [marker]
            event.fields.pop("marker", None)
            self._open = event
            self._last_marker_time = event.time
            return True
        if event.kind in RUNNING_PROCESS_KINDS:
            self._open = None
        return True


def collapse_starts(events: Iterator[Event]) -> list[Event]:
    """One ``process_start`` per startup block, however many markers it printed."""
    collapser = StartCollapser()
    return [event for event in events if collapser.feed(event)]


def _join_start(start: Event, marker: Event) -> None:
    """Fold one more startup marker into the start it belongs to."""
    if marker.fields.get("marker") not in start.fields["markers"]:
        start.fields["markers"].append(marker.fields.get("marker"))
    start.lines += marker.lines
    for key in ("pid", "omlx_version"):
        if marker.fields.get(key) is not None and start.fields.get(key) is None:
            start.fields[key] = marker.fields[key]
    if start.time is None and marker.time is not None:
        start.time = marker.time
        start.fields["time_from"] = "startup_block"
    start.next_time = start.next_time or marker.next_time
