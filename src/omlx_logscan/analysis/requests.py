"""Finished requests indexed by time: fast counts over windows of a log with millions of them."""

from __future__ import annotations

import bisect
import heapq
import itertools
from array import array
from datetime import datetime, timedelta

import polars as pl

from omlx_logscan.parsing.catalog import GENERATION_TYPES
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.scan import REQUEST_SCHEMA
from omlx_logscan.stream.model import EventStream
from omlx_logscan.timeutil import stamp_of

_EPSILON = timedelta(microseconds=1)


_STRIDE = 1024


# Up to this many window edges, a bisect per edge in Python answers sooner than one vectorised
# polars search, whose set-up costs about a tenth of a millisecond a call.
_FEW_EDGES = 16


_EPOCH = datetime(1970, 1, 1)


_MILLISECOND = timedelta(milliseconds=1)


RequestRow = tuple[int, int, datetime, int, str | None]  # source, line, time, tokens, text


class _Sorted:
    """Request rows in time order, with what window queries need.

    A big log's dense rows are used as they are (no copy when, as usual, they are in time order
    already); the few requests the grammar read are a second, small part beside them.
    """

    def __init__(self, table: pl.DataFrame) -> None:
        table = table.drop_nulls("time") if table["time"].null_count() else table
        self.table = table if table["time"].is_sorted() else table.sort("time")
        self.times = self.table["time"]
        # ms since the epoch of the naive local times (the column's own integers). Every
        # _STRIDE-th one is a Python int, for bisect; a query then bisects one stride of the
        # column (a polars search_sorted call costs ten times more). Converting all of a big
        # log's times to Python ints would cost more than all its queries.
        self._ms = self.times.to_physical()
        self._coarse = array("q", self._ms.gather_every(_STRIDE).to_list())
        self._token_sums = self.table["tokens"].cast(pl.Int64).cum_sum()  # [i]: tokens of rows 0..i

    def __len__(self) -> int:
        return self.table.height

    def position(self, ms: int | None, default: int) -> int:
        """Rows at or before ``ms``."""
        if ms is None:
            return default
        stride = bisect.bisect_right(self._coarse, ms)  # strides whose first time is at or before ms
        if stride == 0:
            return 0
        start = (stride - 1) * _STRIDE
        return start + bisect.bisect_right(self._ms.slice(start, _STRIDE).to_list(), ms)

    def count(self, lo_ms: int | None, hi_ms: int | None, after: Event | None) -> int:
        lo = self.position(lo_ms, 0)
        hi = self.position(hi_ms, len(self))
        if hi <= lo:
            return 0
        count = hi - lo
        if after is not None:
            window = self.table.slice(lo, count)
            count -= window.filter((pl.col("source") == after.source_index) & (pl.col("line") < after.line)).height
        return count

    def last_at_or_before(self, hi_ms: int | None) -> datetime | None:
        hi = self.position(hi_ms, len(self))
        last = self.times[hi - 1] if hi else None
        return last if isinstance(last, datetime) else None

    def tokens_before(self, position: int) -> int:
        """Tokens of the first ``position`` rows."""
        return int(self._token_sums[position - 1]) if position else 0

    def totals(self, edges: pl.Series) -> tuple[list[int], list[int]]:
        if len(edges) <= _FEW_EDGES:
            ends = [self.position(ms, 0) for ms in edges.to_physical().to_list()]
            sums = [self.tokens_before(end) for end in ends]
            return [b - a for a, b in itertools.pairwise(ends)], [b - a for a, b in itertools.pairwise(sums)]
        positions = self.times.search_sorted(edges, side="right").cast(pl.Int64)
        requests = positions.diff().slice(1).to_list()
        if not len(self):
            return requests, [0] * len(requests)
        # Tokens of the first p rows: the running sum at row p - 1, none before the first row.
        before = self._token_sums.gather((positions - 1).clip(lower_bound=0))
        upto = pl.select(pl.when(positions > 0).then(before).otherwise(0)).to_series()
        return requests, upto.diff().slice(1).to_list()

    def between(self, start: datetime, end: datetime) -> list[tuple[int, int, datetime, int]]:
        lo = int(self.times.search_sorted(start, side="left"))
        hi = int(self.times.search_sorted(end, side="right"))
        return list(self.table.slice(lo, max(0, hi - lo)).iter_rows())


def _ms(stamp: str | None, *, inclusive: bool = False) -> int | None:
    """ms since the epoch of an ISO local time; just under it when ``inclusive`` (so it counts as inside)."""
    if not stamp:
        return None
    moment = datetime.fromisoformat(stamp) - (_EPSILON if inclusive else timedelta(0))
    return (moment - _EPOCH) // _MILLISECOND


class RequestIndex:
    """Sparse ``request_complete`` events and the dense request rows, by time, with tokens."""

    def __init__(self, stream: EventStream) -> None:
        sparse = [ev for ev in stream.events if ev.kind == "request_complete" and ev.time]
        # The dense rows carry no text (a big log's request lines are not kept); the events do.
        self._texts = {(ev.source_index, ev.line): ev.message for ev in sparse}
        rows = [
            (
                ev.source_index,
                ev.line,
                datetime.fromisoformat(ev.time or ""),
                ev.fields.get("tokens", 0) if ev.fields.get("type") in GENERATION_TYPES else 0,
            )
            for ev in sparse
        ]
        events = pl.DataFrame(rows, schema={**REQUEST_SCHEMA, "tokens": pl.Int64}, orient="row").with_columns(
            pl.col("tokens").cast(REQUEST_SCHEMA["tokens"], strict=False).fill_null(0)  # as the dense rows read them
        )
        tables = [events, stream.requests.select(list(REQUEST_SCHEMA))]
        self._parts = [_Sorted(table) for table in tables if table.height]
        self.names = [s.name for s in stream.sources]

    def __len__(self) -> int:
        return sum(len(part) for part in self._parts)

    def rows(self) -> pl.DataFrame:
        """Every timed finished request: source, line, time (naive local) and tokens, in no set order."""
        if not self._parts:
            return pl.DataFrame(schema=REQUEST_SCHEMA)
        return pl.concat([part.table for part in self._parts])

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
        series = pl.Series(edges, dtype=pl.Datetime("ms"))
        requests, tokens = [0] * max(0, len(edges) - 1), [0] * max(0, len(edges) - 1)
        for part in self._parts:
            counts, sums = part.totals(series)
            requests = [a + b for a, b in zip(requests, counts, strict=True)]
            tokens = [a + b for a, b in zip(tokens, sums, strict=True)]
        return requests, tokens

    def between(self, start: datetime, end: datetime) -> list[RequestRow]:
        """(source, line, time, tokens, text) of the requests finished in ``[start, end]``."""
        rows = heapq.merge(*(part.between(start, end) for part in self._parts), key=lambda row: row[2])
        texts = self._texts
        return [(source, line, moment, tokens, texts.get((source, line))) for source, line, moment, tokens in rows]
