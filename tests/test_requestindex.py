"""Window counts over the request index agree with counting the rows one by one."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from omlx_logscan.events import Accounting, EventStream
from omlx_logscan.requestindex import RequestIndex
from omlx_logscan.scan import REQUEST_SCHEMA

T0 = datetime(2026, 9, 15, 20, 0, 0)


def index_of(offsets_ms: list[int]) -> RequestIndex:
    rows = {
        "source": [0] * len(offsets_ms),
        "line": list(range(1, len(offsets_ms) + 1)),
        "time": [T0 + timedelta(milliseconds=ms) for ms in offsets_ms],
        "key": [None] * len(offsets_ms),
        "tokens": [1] * len(offsets_ms),
        "text": [None] * len(offsets_ms),
    }
    requests = pl.DataFrame(rows, schema=REQUEST_SCHEMA)
    return RequestIndex(EventStream([], [], requests, Accounting(), Counter(), [], []))


def stamp(ms: int) -> str:
    return (T0 + timedelta(milliseconds=ms)).isoformat(timespec="milliseconds")


# Many duplicates and long runs, so queries land on stride edges (the stride is 1,024 rows).
offsets = st.lists(st.integers(0, 3_000), min_size=0, max_size=5_000)


@settings(deadline=None, max_examples=40)
@given(offsets, st.integers(-10, 3_010), st.integers(-10, 3_010), st.booleans())
def test_counts_match_a_plain_count(times: list[int], a: int, b: int, include_start: bool) -> None:
    start, end = min(a, b), max(a, b)
    index = index_of(times)
    expected = sum(1 for t in times if (start <= t if include_start else start < t) and t <= end)
    assert index.count(stamp(start), stamp(end), include_start=include_start) == expected
    assert index.count(None, stamp(end)) == sum(1 for t in times if t <= end)
    last = max((t for t in times if start <= t <= end), default=None)
    assert index.last_between(stamp(start), stamp(end)) == (None if last is None else stamp(last))


def test_counts_at_every_stride_edge() -> None:
    times = [t // 3 for t in range(6_000)]  # 2,000 distinct times, three requests each
    index = index_of(times)
    for edge in range(0, 2_000, 97):
        assert index.count(None, stamp(edge)) == 3 * (edge + 1)
        assert index.count(stamp(edge), None) == len(times) - 3 * (edge + 1)
        assert index.count(stamp(edge), None, include_start=True) == len(times) - 3 * edge
