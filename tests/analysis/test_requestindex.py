"""Window queries over the request index agree with looking at the requests one by one.

Requests come as dense rows (the bulk scan) and as events (lines the grammar read); the index
keeps them apart, so every case here splits its requests between the two at random.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlx_logscan.analysis.requests import RequestIndex
from omlx_logscan.parsing.dense import REQUEST_SCHEMA, from_rows, ms_of
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.event_stream import Accounting, EventStream

T0 = datetime(2026, 9, 15, 20, 0, 0)

# (ms after T0, tokens, read by the grammar?): many duplicate times and long runs, so queries land
# on runs of ties and on ties between the two parts.
requests_st = st.lists(st.tuples(st.integers(0, 3_000), st.integers(0, 50_000), st.booleans()), max_size=3_000)
moment_st = st.integers(-10, 3_010)


def moment(ms: int) -> datetime:
    return T0 + timedelta(milliseconds=ms)


def stamp(ms: int) -> str:
    return moment(ms).isoformat(timespec="milliseconds")


def index_of(requests: list[tuple[int, int, bool]]) -> RequestIndex:
    rows = enumerate(requests, 1)
    dense = [(0, line, ms_of(moment(ms)), tokens) for line, (ms, tokens, sparse) in rows if not sparse]
    events = [
        Event(
            "request_complete",
            stamp(ms),
            "server.log",
            line,
            "INFO",
            "omlx.server",
            f"Chat completion: {tokens} tokens in 1.00s",
            {"tokens": tokens, "type": "chat"},
        )
        for line, (ms, tokens, sparse) in enumerate(requests, 1)
        if sparse
    ]
    table = from_rows(sorted(dense, key=lambda row: row[2]), REQUEST_SCHEMA)
    return RequestIndex(EventStream([], events, table, Accounting(), Counter(), [], []))


@pytest.mark.slow
@settings(deadline=None, max_examples=60)
@given(requests_st, moment_st, moment_st, st.booleans())
def test_counts_match_a_plain_count(requests: list[tuple[int, int, bool]], a: int, b: int, inclusive: bool) -> None:
    start, end = min(a, b), max(a, b)
    index = index_of(requests)
    times = [ms for ms, _, _ in requests]
    expected = sum(1 for t in times if (start <= t if inclusive else start < t) and t <= end)
    assert index.count(stamp(start), stamp(end), include_start=inclusive) == expected
    assert index.count(None, stamp(end)) == sum(1 for t in times if t <= end)
    last = max((t for t in times if start <= t <= end), default=None)
    assert index.last_between(stamp(start), stamp(end)) == (None if last is None else stamp(last))
    found = index.between(moment(start), moment(end))
    assert sorted(line for _, line, _, _, _ in found) == [
        line for line, (ms, _, _) in enumerate(requests, 1) if start <= ms <= end
    ]
    assert [row[2] for row in found] == sorted(row[2] for row in found)
    assert all((text is not None) == requests[line - 1][2] for _, line, _, _, text in found)


def test_counts_at_every_stride_edge() -> None:
    index = index_of([(t // 3, 1, False) for t in range(6_000)])  # 2,000 distinct times, three requests each
    for edge in range(0, 2_000, 97):
        assert index.count(None, stamp(edge)) == 3 * (edge + 1)
        assert index.count(stamp(edge), None) == 6_000 - 3 * (edge + 1)
        assert index.count(stamp(edge), None, include_start=True) == 6_000 - 3 * edge


@settings(deadline=None, max_examples=60)
@given(requests_st, st.lists(moment_st, max_size=40))
def test_window_totals_match_plain_sums(requests: list[tuple[int, int, bool]], edges: list[int]) -> None:
    index = index_of(requests)
    bounds = sorted(set(edges))
    counts, tokens = index.totals([moment(ms) for ms in bounds])
    pairs = list(pairwise(bounds))
    assert counts == [sum(1 for t, _, _ in requests if lo < t <= hi) for lo, hi in pairs]
    assert tokens == [sum(n for t, n, _ in requests if lo < t <= hi) for lo, hi in pairs]
