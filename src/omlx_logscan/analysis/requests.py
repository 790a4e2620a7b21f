"""Finished requests indexed by time: fast counts over windows of a log with millions of them."""

from __future__ import annotations

import bisect
import heapq
import itertools
from datetime import datetime, timedelta

from omlx_logscan.parsing.catalog import GENERATION_TYPES
from omlx_logscan.parsing.dense import (
    REQUEST_SCHEMA,
    Dense,
    FileRows,
    concat,
    count_before,
    from_rows,
    moment_of,
    ms_of,
    prefix_sums,
    timed_in_order,
)
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.timeutil import stamp_of

_EPSILON = timedelta(microseconds=1)


_COUNTED = 32  # faults whose earlier requests are counted in their window, before the file's rows are indexed


_TOKENS = range(-(2**31), 2**31)  # what the tokens column holds; a count beyond it reads as 0, as the scan's


RequestRow = tuple[int, int, datetime, int, str | None]  # source, line, time, tokens, text


class _Sorted:
    """Request rows in time order (untimed ones left out), with what window queries need: a
    bisect on the time column, and running sums of the tokens.

    A big log's dense rows are used as they are (no copy when, as usual, they are in time order
    already); the few requests the grammar read are a second, small part beside them.
    """

    def __init__(self, table: Dense) -> None:
        self.table = timed_in_order(table)
        self.times = self.table.ints("time")  # ms since the epoch of the naive local times
        self._token_sums = prefix_sums(self.table.ints("tokens"))  # [i]: tokens of the first i rows
        self._files: dict[int, FileRows | None] = {}  # by source, made once many faults ask
        self._asked = 0

    def __len__(self) -> int:
        return len(self.times)

    def position(self, ms: int | None, default: int) -> int:
        """Rows at or before ``ms``."""
        return default if ms is None else bisect.bisect_right(self.times, ms)

    def count(self, lo_ms: int | None, hi_ms: int | None, after: Event | None) -> int:
        lo = self.position(lo_ms, 0)
        hi = self.position(hi_ms, len(self))
        if hi <= lo:
            return 0
        count = hi - lo
        if after is not None:
            count -= self._written_before(lo, hi, after)
        return count

    def _written_before(self, lo: int, hi: int, after: Event) -> int:
        """Rows ``lo`` to ``hi - 1`` written before ``after`` in its file. Counted in the window for
        the first few faults; from the ``_COUNTED``-th on, bisected in that file's rows when its lines
        rise with time, as usual (a pass over the rest of the log for each of many absorbed faults
        would take quadratic time; the few of most logs do not pay for the file's rows)."""
        source = after.source_index
        self._asked += 1
        if self._asked > _COUNTED and source not in self._files:
            self._files[source] = FileRows.of(self.table.ints("source"), self.table.ints("line"), source)
        if (rows := self._files.get(source)) is not None:
            return rows.before(lo, hi, after.line)
        sources, lines = self.table.ints("source")[lo:hi], self.table.ints("line")[lo:hi]  # the two it needs
        return count_before(sources, lines, source, after.line)

    def last_at_or_before(self, hi_ms: int | None) -> datetime | None:
        hi = self.position(hi_ms, len(self))
        return moment_of(self.times[hi - 1]) if hi else None

    def totals(self, edges: list[int]) -> tuple[list[int], list[int]]:
        """Rows and tokens in each ``(edges[i], edges[i + 1]]`` (ms)."""
        ends = [self.position(ms, 0) for ms in edges]
        sums = [self._token_sums[end] for end in ends]
        return [b - a for a, b in itertools.pairwise(ends)], [b - a for a, b in itertools.pairwise(sums)]

    def between(self, start: datetime, end: datetime) -> list[tuple[int, int, datetime, int]]:
        lo = bisect.bisect_left(self.times, ms_of(start))
        hi = bisect.bisect_right(self.times, ms_of(end))
        rows = self.table.slice(lo, max(lo, hi)).rows(*REQUEST_SCHEMA)
        return [(source, line, moment_of(ms), tokens) for source, line, ms, tokens in rows]


def _ms(stamp: str | None, *, inclusive: bool = False) -> int | None:
    """ms since the epoch of an ISO local time; just under it when ``inclusive`` (so it counts as inside)."""
    if not stamp:
        return None
    return ms_of(datetime.fromisoformat(stamp) - (_EPSILON if inclusive else timedelta(0)))


def _tokens(event: Event) -> int:
    """A request event's generated tokens as a dense row holds them: 0 for none, or for a count beyond the column."""
    count = event.fields.get("tokens") if event.fields.get("type") in GENERATION_TYPES else 0
    return count if isinstance(count, int) and count in _TOKENS else 0


def request_row(event: Event) -> tuple[int, int, int, int]:
    """A timed request event as a dense row holds it (REQUEST_SCHEMA)."""
    return event.source_index, event.line, ms_of(datetime.fromisoformat(event.time or "")), _tokens(event)


class RequestIndex:
    """Sparse ``request_complete`` events and the dense request rows, by time, with tokens."""

    def __init__(self, stream: EventStream) -> None:
        sparse = [ev for ev in stream.events if ev.kind == "request_complete" and ev.time]
        # The dense rows carry no text (a big log's request lines are not kept); the events do.
        self._texts = {(ev.source_index, ev.line): ev.message for ev in sparse}
        rows = [request_row(ev) for ev in sparse]
        events = from_rows(rows, REQUEST_SCHEMA)
        dense = Dense({name: stream.requests[name] for name in REQUEST_SCHEMA})
        self._parts = [_Sorted(table) for table in (events, dense) if table.height]
        self.names = [s.name for s in stream.sources]

    def __len__(self) -> int:
        return sum(len(part) for part in self._parts)

    def rows(self) -> Dense:
        """Every timed finished request: source, line, time (ms of the naive local time) and tokens, in no set order."""
        return concat([part.table for part in self._parts], REQUEST_SCHEMA)

    def count(
        self, start: str | None, end: str | None, *, include_start: bool = False, after: Event | None = None
    ) -> int:
        """Requests finished after ``start`` (or at it) and at or before ``end``.

        With ``after``, a request written before that event in the same file does not count
        even when its time is later: a request line can be timed at its start, so the file
        order is the truth about which came first.
        """
        lo, hi = _ms(start, inclusive=include_start), _ms(end)
        return sum(part.count(lo, hi, after) for part in self._parts)

    def last_between(self, start: str | None, end: str | None) -> str | None:
        """The time of the last request in ``[start, end]``, if any."""
        hi = _ms(end)
        last = max((t for part in self._parts if (t := part.last_at_or_before(hi)) is not None), default=None)
        stamp = stamp_of(last) if last is not None else None
        return stamp if stamp is None or start is None or stamp >= start else None

    def totals(self, edges: list[datetime]) -> tuple[list[int], list[int]]:
        """Requests and tokens in each ``(edges[i], edges[i + 1]]``."""
        edges_ms = [ms_of(edge) for edge in edges]
        requests, tokens = [0] * max(0, len(edges) - 1), [0] * max(0, len(edges) - 1)
        for part in self._parts:
            counts, sums = part.totals(edges_ms)
            requests = [a + b for a, b in zip(requests, counts, strict=True)]
            tokens = [a + b for a, b in zip(tokens, sums, strict=True)]
        return requests, tokens

    def between(self, start: datetime, end: datetime) -> list[RequestRow]:
        """(source, line, time, tokens, text) of the requests finished in ``[start, end]``."""
        rows = heapq.merge(*(part.between(start, end) for part in self._parts), key=lambda row: row[2])
        texts = self._texts
        return [(source, line, moment, tokens, texts.get((source, line))) for source, line, moment, tokens in rows]
