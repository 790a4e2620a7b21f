"""The dense tables' column operations: the Python loops (small columns), numpy and the native
module's loops (big ones) give the same as a plain reading of the rows, and polars round trips keep every value."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import bench_module, stream_of, timeline_json
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.parsing import dense
from omlx_logscan.parsing.catalog_arrivals import ARRIVAL_FORMS
from omlx_logscan.parsing.dense import (
    ARRIVAL_SCHEMA,
    NO_TIME,
    REQUEST_SCHEMA,
    Dense,
    concat,
    from_polars,
    from_rows,
    inserted,
    moment_of,
    ms_of,
    to_polars,
)
from omlx_logscan.stream.window import within

times_st = st.lists(st.one_of(st.integers(-5, 40), st.just(NO_TIME)), max_size=60)


NATIVE = dense._native()
PATHS = ["python", "numpy", *(["native"] if NATIVE is not None else [])]


def _take_path(patch: pytest.MonkeyPatch, path: str) -> None:
    """Every column small (Python), or every column big, in numpy or in the native module's loops."""
    patch.setattr(dense, "BIG", 10**9 if path == "python" else -1)
    patch.setattr(dense, "_native", lambda: NATIVE if path == "native" else None)


@pytest.fixture(params=PATHS)
def column_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each case runs on every path."""
    _take_path(monkeypatch, request.param)
    yield request.param


def _both(test):  # type: ignore[no-untyped-def]
    """A hypothesis test run on every path (the fixture cannot be used inside ``given``)."""
    return pytest.mark.parametrize("path", PATHS)(test)


@_both
@settings(deadline=None, max_examples=40)
@given(times_st)
def test_sorted_order_and_span(path: str, values: list[int]) -> None:
    column = array("q", values)
    with pytest.MonkeyPatch.context() as patch:
        _take_path(patch, path)
        assert dense.is_sorted(column) == (values == sorted(values))
        assert list(dense.order(column)) == sorted(range(len(values)), key=values.__getitem__)
        timed = [v for v in values if v != NO_TIME]
        assert dense.time_span(column) == ((min(timed), max(timed)) if timed else None)
        assert list(dense.prefix_sums(array("q", [max(v, 0) for v in values]))) == list(
            itertools.accumulate((max(v, 0) for v in values), initial=0)
        )


@_both
@settings(deadline=None, max_examples=40)
@given(times_st, st.one_of(st.none(), st.integers(-5, 40)), st.one_of(st.none(), st.integers(-5, 40)))
def test_times_within_a_window(path: str, values: list[int], lo: int | None, hi: int | None) -> None:
    with pytest.MonkeyPatch.context() as patch:
        _take_path(patch, path)
        found = list(dense.timed_within(array("q", values), lo, hi))
    expected = [
        row for row, v in enumerate(values) if v != NO_TIME and (lo is None or v >= lo) and (hi is None or v <= hi)
    ]
    assert found == expected


@_both
@settings(deadline=None, max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 30)), max_size=50), st.integers(0, 2), st.integers(0, 31))
def test_rows_before_a_line(path: str, rows: list[tuple[int, int]], source: int, line: int) -> None:
    sources, lines = array("I", [s for s, _ in rows]), array("I", [n for _, n in rows])
    with pytest.MonkeyPatch.context() as patch:
        _take_path(patch, path)
        assert dense.count_before(sources, lines, source, line) == sum(1 for s, n in rows if s == source and n < line)


@settings(deadline=None, max_examples=40)
@given(st.lists(st.integers(0, 2**31 - 1), max_size=40), st.integers(0, 2**31))  # sums fit in 32 bits
def test_a_column_is_shifted_the_same_in_numpy_and_in_python(values: list[int], by: int) -> None:
    column = array("I", values)
    python, vectorised = (dense.shifted(column, by, vectorised=flag) for flag in (False, True))
    assert list(python) == list(vectorised) == [v + by for v in values]
    assert python.typecode == vectorised.typecode == "I"


@_both
@settings(deadline=None, max_examples=40)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 100_000)), max_size=40, unique_by=lambda row: row[0]),
    st.lists(st.tuples(st.integers(61, 120), st.integers(0, 100_000)), max_size=10, unique_by=lambda row: row[0]),
)
def test_falls_of_two_merged_tables(path: str, first: list[tuple[int, int]], second: list[tuple[int, int]]) -> None:
    first.sort()
    second = sorted((line - 60 + (60 if line % 2 else 0), ms) for line, ms in second)  # lines between and after
    second = [row for row in second if row[0] not in {line for line, _ in first}]
    with pytest.MonkeyPatch.context() as patch:
        _take_path(patch, path)
        found = dense.falls(
            array("I", [n for n, _ in first]),
            array("q", [t for _, t in first]),
            [n for n, _ in second],
            [t for _, t in second],
            1000,
        )
    merged = sorted(first + second)
    assert found == [
        (line, before, now) for (_, before), (line, now) in itertools.pairwise(merged) if before - now > 1000
    ]


def test_timed_rows_in_order_leave_the_untimed_out_and_an_ordered_table_as_it_is(column_path: str) -> None:
    rows = [(0, 1, 30, 0), (0, 2, NO_TIME, 0), (0, 3, 10, 5), (1, 1, 20, 7)]
    table = from_rows(rows, REQUEST_SCHEMA)
    assert dense.timed_in_order(table).rows("line", "time") == [(3, 10), (1, 20), (1, 30)]
    ordered = from_rows(sorted((r for r in rows if r[2] != NO_TIME), key=lambda r: r[2]), REQUEST_SCHEMA)
    assert dense.timed_in_order(ordered) is ordered


def test_taking_rows_by_position_on_both_paths(column_path: str) -> None:
    table = from_rows([(0, n, n * 10, n % 3) for n in range(1, 8)], ARRIVAL_SCHEMA)
    picked = table.take(dense.order(array("B", [n % 3 for n in range(1, 8)])))
    assert picked.rows() == sorted(table.rows(), key=lambda row: row[3])
    assert list(picked["form"]) == [0, 0, 1, 1, 1, 2, 2]


def test_rows_put_in_their_places_keep_every_column() -> None:
    table = from_rows([(0, 1, 10, 0), (0, 4, 40, 1)], ARRIVAL_SCHEMA)
    table = Dense({**table.columns, "text": ["a", "d"]})
    rows = from_rows([(0, 0, 5, 2), (0, 2, 20, 2), (0, 9, 90, 2)], ARRIVAL_SCHEMA)
    both = inserted(table, rows, [0, 1, 2])
    assert both.rows("line", "text") == [(0, None), (1, "a"), (2, None), (4, "d"), (9, None)]


def test_concat_keeps_the_first_tables_columns() -> None:
    a = from_rows([(0, 1, 10, 5)], REQUEST_SCHEMA)
    b = from_rows([(1, 2, 20, 7)], REQUEST_SCHEMA)
    assert concat([a, b], REQUEST_SCHEMA).rows() == [(0, 1, 10, 5), (1, 2, 20, 7)]
    assert concat([], REQUEST_SCHEMA).height == 0


@pytest.mark.parametrize("rows", [3, dense.FEW + 5])  # read through lists, and through numpy
def test_polars_round_trip(rows: int) -> None:
    base = ms_of(datetime(2026, 9, 15, 20))
    table = Dense(
        {
            "source": array("I", [n % 2 for n in range(rows)]),
            "line": array("I", range(1, rows + 1)),
            "time": array("q", [NO_TIME if n == 1 else base + n for n in range(rows)]),
            "form": array("B", [n % 3 for n in range(rows)]),
            "key": array("Q", [2**64 - 1 - n for n in range(rows)]),
            "text": [None if n == 2 else f"line {n}" for n in range(rows)],
        }
    )
    frame = to_polars(table)
    assert frame["time"].null_count() == 1
    assert frame["time"][0] == moment_of(base)
    assert frame["form"].to_list() == [ARRIVAL_FORMS[n % 3] for n in range(rows)]
    back = from_polars(frame)
    assert back.columns == table.columns


def test_a_whole_timeline_is_the_same_on_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A DEBUG log's stream, window and timeline with every column worked on in numpy and in Python."""
    path = tmp_path / "server.log"
    bench_module("make_log").write_log(path, 0.3, 2, seed=5)

    def document() -> dict[str, object]:
        stream = stream_of(path)
        window = within(stream, datetime(2026, 6, 20, 12), datetime(2026, 6, 21, 12))
        found = timeline_json(analyze(stream))
        found["window"] = timeline_json(analyze(window))
        found["jumps"] = stream.clock_jumps
        return found

    monkeypatch.setattr(dense, "BIG", 10**9)
    in_python = document()
    monkeypatch.setattr(dense, "BIG", -1)
    assert document() == in_python
    events = in_python["header"]["events"]  # type: ignore[index]
    assert events["request_arrival"] > events["request_complete"] > 0  # both dense kinds are there
    assert in_python["window"]["header"]["events"] != events  # type: ignore[index]  # and the window cut some


@pytest.mark.skipif(NATIVE is None, reason="the native scanner's module is not built here")
@settings(deadline=None, max_examples=60)
@given(st.sampled_from("bBhHiIqQ"), st.lists(st.integers(0, 127), max_size=30), st.booleans())
def test_the_native_loops_read_every_integer_typecode(code: str, values: list[int], negate: bool) -> None:
    assert NATIVE is not None
    column = array(code, [-v if negate and code in "bhiq" else v for v in values])
    items = list(column)
    assert NATIVE.is_sorted(column) == (items == sorted(items))
    sums = array("q")
    sums.frombytes(NATIVE.prefix_sums(column))
    assert list(sums) == list(itertools.accumulate(items, initial=0))
    other = [v for v in items if v != 3]
    assert NATIVE.time_span(column, 3) == ((min(other), max(other)) if other else None)
    assert NATIVE.count_before(column, column, 3, 5) == items.count(3)


def test_the_native_loops_refuse_what_is_no_column() -> None:
    if NATIVE is None:
        pytest.skip("the native scanner's module is not built here")
    with pytest.raises(TypeError):
        NATIVE.is_sorted(array("d", [1.0]))
    with pytest.raises(TypeError):
        NATIVE.is_sorted("text")
    with pytest.raises(ValueError):
        NATIVE.falls(array("I", [1]), array("q", [1]), array("q"), array("q"), -1)
    with pytest.raises(ValueError):
        NATIVE.falls(array("I", [1, 2]), array("q", [1]), array("q"), array("q"), 5)
    with pytest.raises(ValueError):
        NATIVE.count_before(array("I", [1, 2]), array("I", [1]), 1, 5)
    # a buffer that is not aligned to its items is read as well
    odd = memoryview(bytearray(b"\x00" + array("q", [1, 2, 3]).tobytes()))[1:].cast("q")
    assert NATIVE.is_sorted(odd) and NATIVE.time_span(odd, -1) == (1, 3)
    # a fall is measured exactly, also between the extremes of the time type
    assert NATIVE.falls(array("I", [1, 2]), array("q", [2**63 - 1, -(2**63)]), array("q"), array("q"), 0) == [
        (2, 2**63 - 1, -(2**63))
    ]
