"""Finished requests indexed by time: fast counts over windows of a log with millions of them."""

from __future__ import annotations

import bisect
from array import array
from datetime import datetime, timedelta

import polars as pl

from omlx_logscan.events import Event, EventStream
from omlx_logscan.timeutil import stamp_of

_EPSILON = timedelta(microseconds=1)
_STRIDE = 1024
_EPOCH = datetime(1970, 1, 1)
_MILLISECOND = timedelta(milliseconds=1)


class RequestIndex:
    """Sparse ``request_complete`` events and the dense request rows, sorted by time, with tokens."""

    def __init__(self, stream: EventStream) -> None:
        sparse = [
            (
                ev.source_index,
                ev.line,
                datetime.fromisoformat(ev.time),
                ev.fields.get("tokens", 0) if ev.fields.get("type") == "chat" else 0,
                ev.message,
            )
            for ev in stream.events
            if ev.kind == "request_complete" and ev.time
        ]
        schema: dict[str, pl.DataType] = {
            "source": pl.UInt32(),
            "line": pl.UInt32(),
            "time": pl.Datetime("ms"),
            "tokens": pl.Int64(),
            "text": pl.String(),
        }
        frames = [pl.DataFrame(sparse, schema=schema, orient="row")]
        if stream.requests.height:
            frames.append(stream.requests.select(list(schema)))
        table = pl.concat(frames).drop_nulls("time")
        self.table = table if table["time"].is_sorted() else table.sort("time")  # a log's usual order costs no sort
        self.times = self.table["time"]
        # ms since the epoch of the naive local times. Every _STRIDE-th one is a Python int, for
        # bisect; a query then bisects one stride of the column
        # (a polars search_sorted call costs ten times more). Converting all of a big log's
        # times to Python ints would cost more than all its queries.
        self._ms = self.times.dt.epoch("ms")
        self._coarse = array("q", self._ms.gather_every(_STRIDE).to_list())
        self.token_sums = pl.concat([pl.Series([0], dtype=pl.Int64), self.table["tokens"].cum_sum()])
        self.names = [s.name for s in stream.sources]

    def __len__(self) -> int:
        return self.table.height

    def _position(self, stamp: str | None, *, default: int, inclusive: bool = False) -> int:
        """Rows at or before ``stamp`` (before it when ``inclusive``, so it counts as inside)."""
        if not stamp:
            return default
        moment = datetime.fromisoformat(stamp) - (_EPSILON if inclusive else timedelta(0))
        ms = (moment - _EPOCH) // _MILLISECOND
        stride = bisect.bisect_right(self._coarse, ms)  # strides whose first time is at or before ms
        if stride == 0:
            return 0
        start = (stride - 1) * _STRIDE
        return start + bisect.bisect_right(self._ms.slice(start, _STRIDE).to_list(), ms)

    def count(
        self, start: str | None, end: str | None, *, include_start: bool = False, after: Event | None = None
    ) -> int:
        """Requests finished after ``start`` (or at it) and at or before ``end``.

        With ``after``, a request written before that event in the same file does not count
        even when its time is later: a request line can be timed at its start, so the file
        order is the truth about which came first.
        """
        lo = self._position(start, default=0, inclusive=include_start)
        hi = self._position(end, default=len(self))
        if hi <= lo:
            return 0
        count = hi - lo
        if after is not None:
            window = self.table.slice(lo, count)
            count -= window.filter((pl.col("source") == after.source_index) & (pl.col("line") < after.line)).height
        return count

    def last_between(self, start: str | None, end: str | None) -> str | None:
        """The time of the last request in ``[start, end]``, if any."""
        hi = self._position(end, default=len(self))
        if hi == 0:
            return None
        last = self.times[hi - 1]
        stamp = stamp_of(last) if isinstance(last, datetime) else None
        return stamp if stamp is None or start is None or stamp >= start else None

    def totals(self, edges: list[datetime]) -> tuple[list[int], list[int]]:
        """Requests and tokens in each ``(edges[i], edges[i + 1]]``."""
        positions = self.times.search_sorted(pl.Series(edges, dtype=pl.Datetime("ms")), side="right")
        requests = positions.cast(pl.Int64).diff().slice(1)
        tokens = self.token_sums.gather(positions).diff().slice(1)
        return requests.to_list(), tokens.to_list()

    def between(self, start: datetime, end: datetime) -> list[tuple[int, int, datetime, int, str | None]]:
        """(source, line, time, tokens, text) of the requests finished in ``[start, end]``."""
        lo = int(self.times.search_sorted(start, side="left"))
        hi = int(self.times.search_sorted(end, side="right"))
        return list(self.table.slice(lo, max(0, hi - lo)).iter_rows())
