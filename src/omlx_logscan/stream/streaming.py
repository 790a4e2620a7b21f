"""``events`` while the input is still being read: the rows of a batch read, in its order, each
written as soon as nothing still to come can go before it.

The batch order (``read.all_events``) merges four sequences: the grammar's events in file order
(after startup markers fold into their start), and the finished-request rows, the arrival rows
and the arrivals the grammar read, each sorted by time. ``StreamedOrder`` runs that same merge on
what has been read so far and lets a row out only while it sorts before the *bound*: the time of
the records the assembler still holds open (they were read after every event made so far), or,
when it holds none, the latest time read. As long as the log's clock goes forward, nothing read
later can sort before the bound, so the rows come out as the batch read gives them. A start
waits while a later marker could still change it; rows the sink is not shown (``-k``, a window)
are passed over without waiting for them. The whole input must show something oMLX's before the
first row (else it is refused, as in a batch read). A row that arrives sorting before one
already written (the clock went back) is noted, not hidden.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import Any, Protocol

from omlx_logscan.parsing.dense import Dense
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.recognition import is_omlx
from omlx_logscan.stream.reports import date_panic_report
from omlx_logscan.stream.starts import StartCollapser

# The sequences in the order ``read.all_events`` merges them: on equal times the first one's goes first.
GRAMMAR, REQUESTS, ARRIVALS, ARRIVAL_EVENTS = range(4)


class EnoughRows(Exception):
    """Raised by a sink that has written all the rows it was asked for: reading stops there."""


@dataclass
class _Sorted:
    """Events kept in one sort order (``(sort key, event)`` pairs), taken from the front."""

    items: list[tuple[tuple[Any, ...], Event]] = field(default_factory=list)
    start: int = 0

    def push(self, key: tuple[Any, ...], event: Event) -> None:
        bisect.insort(self.items, (key, event), lo=self.start, key=lambda item: item[0])

    def head(self) -> Event | None:
        return self.items[self.start][1] if self.start < len(self.items) else None

    def pop(self) -> Event:
        event = self.items[self.start][1]
        self.start += 1
        if self.start > 1024 and self.start * 2 > len(self.items):
            del self.items[: self.start]
            self.start = 0
        return event


class RowSink(Protocol):
    """Where the rows go, one at a time."""

    def can_write(self, event: Event) -> bool:
        """Whether the row can be written before the input ends (a machine format's fall-back-hour
        time cannot: which offset it has depends on the lines after it)."""
        ...

    def write(self, event: Event) -> None: ...

    def flush(self) -> None:
        """The rows written so far, out now (called after each run of rows)."""
        ...


class StreamedOrder:
    """The merge of ``read.all_events`` over an input still being read: ``sink`` gets each event
    ``shown`` lets through once its place is certain; ``zone`` is the log's, which dates panic reports."""

    def __init__(
        self,
        sink: RowSink,
        zone: tzinfo | None,
        *,
        recognised: bool = False,
        shown: Callable[[Event], bool] | None = None,
    ) -> None:
        self._sink = sink
        self._shown = shown or _every  # the rows the sink is given (-k, a window): no other row is waited for
        self._zone = zone
        self._starts = StartCollapser(keep_routine=False)
        self._grammar: deque[Event] = deque()
        self._sorted = {REQUESTS: _Sorted(), ARRIVALS: _Sorted(), ARRIVAL_EVENTS: _Sorted()}
        self._seq = 0  # arrival order, which keeps the grammar's arrivals of one time in file order
        self._latest = ""  # the latest time read
        self._recognised = recognised  # something oMLX's was read (or --force): rows may go out
        self._held = False  # a row that must wait for the end was reached: the rest waits too
        self._written: tuple[str, int] | None = None  # the latest place of a row written
        self._since_grammar_empty: tuple[str, int] | None = None  # the last written while no grammar event waited
        self.went_back: Event | None = None  # the first row read after one that sorts after it was written

    def take(
        self,
        events: Iterable[Event],
        requests: Iterable[tuple[int, int, list[Event]]],
        arrivals: Iterable[tuple[int, int, list[Event]]],
        arrival_events: Iterable[Event],
        *,
        recognised: bool,
        floor: str | None,
    ) -> None:
        """One block's share: the grammar's new events (file order), the dense rows (time, line,
        events), the grammar's arrivals; ``recognised``: the input showed itself oMLX's (dense rows,
        with or without text, or what ``parsing.recognition`` saw); ``floor``: the earliest time an
        event still to come may sort at (the records held open; None: none is). Then write what can go."""
        self._recognised = self._recognised or recognised
        for event in events:
            if event.kind == "process_start":  # the start folds markers into itself: a copy, the batch read has its own
                event = replace(event, fields=dict(event.fields))
            date_panic_report(event, self._zone)
            if self._starts.feed(event):
                self._arrive(GRAMMAR, event)
                if not self._grammar:
                    self._since_grammar_empty = None
                self._grammar.append(event)
        for queue, rows in ((REQUESTS, requests), (ARRIVALS, arrivals)):
            for time, line, produced in rows:
                for part, event in enumerate(produced):
                    self._arrive(queue, event)
                    self._sorted[queue].push((time, line, part), event)  # the batch order: time (ms), then line
        for event in arrival_events:
            self._recognised = True
            self._arrive(ARRIVAL_EVENTS, event)
            self._seq += 1
            self._sorted[ARRIVAL_EVENTS].push((event.sort_time, event.source_index, self._seq), event)
        # A record held open was read after every event taken: what comes later sorts from its time on.
        self._flush(self._latest if floor is None else floor)

    def finish(self) -> None:
        """The input ended (and was not refused): write everything left, in the merge's order."""
        self._flush(None)

    def _arrive(self, queue: int, event: Event) -> None:
        place = (event.sort_time, queue)
        self._latest = max(self._latest, event.sort_time)
        self._recognised = self._recognised or is_omlx(event)
        # A sorted row goes before every row written after its place; the grammar's next event
        # before those written while none of its events waited. Either way, it came too late.
        before = self._written if queue != GRAMMAR else None if self._grammar else self._since_grammar_empty
        if before is not None and place < before and self.went_back is None:
            self.went_back = event

    def _head(self, queue: int) -> Event | None:
        if queue == GRAMMAR:
            return self._grammar[0] if self._grammar else None
        return self._sorted[queue].head()

    def _flush(self, bound: str | None) -> None:
        """Write the merge's next events while each sorts before ``bound`` (None: all, the input ended)."""
        if bound is not None and (not self._recognised or self._held):
            return
        try:
            self._write_while(bound)
        finally:
            self._sink.flush()

    def _start_may_change(self, event: Event, bound: str) -> bool:
        """Whether ``event`` is a start that is shown and that a marker still to come may change."""
        return event.kind == "process_start" and self._shown(event) and self._starts.may_change(event, bound)

    def _write_while(self, bound: str | None) -> None:
        while True:
            heads = [(ev.sort_time, ev.source_index, queue, ev) for queue in range(4) if (ev := self._head(queue))]
            if not heads:
                return
            time, _, queue, event = min(heads, key=lambda head: head[:3])
            if bound is not None:
                first = self._head(GRAMMAR)
                if first is not None and self._start_may_change(first, bound):
                    return
                if time > bound or (time == bound and queue != GRAMMAR):  # nothing to come sorts before
                    return  # the grammar's events of one time (file order), so only the others wait on a tie
                if self._shown(event) and not self._sink.can_write(event):
                    self._held = True
                    return
            if queue == GRAMMAR:
                self._grammar.popleft()
            else:
                self._sorted[queue].pop()
            place = (time, queue)
            self._written = max(self._written or place, place)
            if queue != GRAMMAR and not self._grammar:
                self._since_grammar_empty = max(self._since_grammar_empty or place, place)
            if self._shown(event):
                self._sink.write(event)


def _every(event: Event) -> bool:
    return True


def keyed_rows(table: Dense, events_of: Callable[[str, int, int], list[Event]]) -> list[tuple[int, int, list[Event]]]:
    """A block's dense rows that carry their text as (time in ms, line, events), ``events_of(text,
    line, source)`` making a row's events."""
    if "text" not in table or not table.height:
        return []
    rows = table.rows("source", "line", "time", "text")
    return [(time, line, events_of(text, line, source)) for source, line, time, text in rows if text is not None]
