"""Documents and rows with their times zoned (``2026-09-15T20:19:38.663+02:00``) by the stream's
clock (``stream.zone_clock``), labelled with the zone and the host they were read in."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omlx_logscan.parsing.event import Event
    from omlx_logscan.stream.event_stream import EventStream
    from omlx_logscan.stream.zone_clock import ZoneClock


# The rows of a document that each belong to one host's server.
HOST_ROWS = ("sessions", "faults", "dead_windows", "events")


def event_rows(stream: EventStream, events: Iterable[Event]) -> Iterator[dict[str, Any]]:
    """Each event's row with its times zoned, labelled with the stream's host when it has one."""
    clock = stream.clock()
    for event in events:
        yield host_row(clock, event, stream.host)


def host_row(clock: ZoneClock, event: Event, host: str | None) -> dict[str, Any]:
    """One event's row with its times zoned, labelled with ``host`` when there is one."""
    row = clock.row(event)
    if host is not None:
        row["host"] = host
    return row


def zone_document(document: dict[str, Any], stream: EventStream) -> dict[str, Any]:
    """A document with every time zoned, the zone it was read in (``tz``) and its notes (``time_notes``)
    after its ``generator``; with a host, ``host`` there too and on every row of its server."""
    clock = stream.clock()
    labels: dict[str, Any] = {"tz": clock.name, "time_notes": clock.notes()}
    if stream.host is not None:
        labels = {"host": stream.host, **labels}
        for key in HOST_ROWS:
            for row in document.get(key) or []:
                row.setdefault("host", stream.host)
    zoned: dict[str, Any] = {}
    for key, value in clock.convert(document).items():
        zoned[key] = value
        if key == "generator":
            zoned |= labels
    return zoned
