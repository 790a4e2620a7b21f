"""Dense rows (finished requests, arrivals, dated records) as columns of stdlib arrays.

A big log has millions of finished-request lines: they stay numbers in ``array.array`` columns,
with no Python object per row, and a small log's run imports neither polars nor numpy for them.
A whole-column operation on more than ``BIG`` rows (a log of tens of megabytes) runs in numpy,
imported then: one vectorised pass there costs less than a Python loop. The few a timeline needs
run in the native scanner's module instead, on columns of any size, where it is built. polars is
only for what writes tables (``to_polars``) and for the blocks of the polars plan
(``from_polars``), which has it loaded already.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import operator
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

from omlx_logscan.parsing.catalog_arrivals import ARRIVAL_FORMS

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

    Column: TypeAlias = array[int] | list[Any]
    Rows: TypeAlias = Sequence[int] | np.ndarray[Any, Any]

NO_TIME = -(2**63)  # a null in a time column


NO_FORM = 255  # a null in a form column


# Above this many rows a whole-column operation runs in numpy; below it Python is quicker than
# importing numpy (a Python pass costs about 50 ns a row, importing numpy about 25 ms).
BIG = 100_000


# Below this many rows a polars column is read through a list: cheaper than importing numpy.
FEW = 2048


# Each table's columns and their ``array`` typecodes ("": a list, of text). A dense table may
# carry two more, only when a run needs them: "key" (to drop the rows two sources share) and
# "text" (the line, for the events command). Times are ms since the epoch of naive local times.
REQUEST_SCHEMA = {"source": "I", "line": "I", "time": "q", "tokens": "i"}
ARRIVAL_SCHEMA = {"source": "I", "line": "I", "time": "q", "form": "B"}
EXTRA_SCHEMA = {"key": "Q", "text": ""}


_NUMPY_TYPES = {"I": "=u4", "i": "=i4", "q": "=i8", "Q": "=u8", "B": "u1"}


_EPOCH = datetime(1970, 1, 1)


_MILLISECOND = timedelta(milliseconds=1)


def ms_of(moment: datetime) -> int:
    """A naive local time as a time column holds it: ms since the epoch, rounded down."""
    return (moment - _EPOCH) // _MILLISECOND


def moment_of(ms: int) -> datetime:
    """A time column's value as the naive local time it is."""
    return _EPOCH + timedelta(milliseconds=ms)


def numbers(typecode: str, values: bytes = b"") -> array[int]:
    """A column of ``typecode`` from native-endian ``values`` (a buffer a scanner filled)."""
    column = array(typecode)
    column.frombytes(values)
    return column


@dataclass(frozen=True, slots=True, eq=False)
class Dense:
    """Named columns of equal length: arrays of numbers, or lists (of text)."""

    columns: dict[str, Column]

    @staticmethod
    def empty(schema: dict[str, str]) -> Dense:
        return Dense({name: array(code) if code else [] for name, code in schema.items()})

    @property
    def height(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, name: str) -> Column:
        return self.columns[name]

    def ints(self, name: str) -> array[int]:
        """A column of numbers (every column but "text" and a records table's "time")."""
        column = self.columns[name]
        if not isinstance(column, array):
            raise TypeError(f"{name} is no column of numbers")
        return column

    def texts(self, name: str) -> list[Any]:
        column = self.columns[name]
        if isinstance(column, array):
            raise TypeError(f"{name} is a column of numbers")
        return column

    def __contains__(self, name: str) -> bool:
        return name in self.columns

    def slice(self, start: int, stop: int | None = None) -> Dense:
        return Dense({name: column[start:stop] for name, column in self.columns.items()})

    def take(self, rows: Rows) -> Dense:
        """The rows at these positions, in this order."""
        return Dense({name: take(column, rows) for name, column in self.columns.items()})

    def rows(self, *names: str) -> list[tuple[Any, ...]]:
        return list(zip(*(self.columns[name] for name in names or self.columns), strict=True))


def from_rows(rows: Sequence[tuple[Any, ...]], schema: dict[str, str]) -> Dense:
    """A table of ``schema``'s columns from rows of values in its order."""
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    pairs = zip(schema.items(), columns, strict=True)
    return Dense({name: array(code, values) if code else list(values) for (name, code), values in pairs})


def concat(tables: Sequence[Dense], schema: dict[str, str]) -> Dense:
    """The tables' rows one after the other (the first table's columns); an empty ``schema`` table for none."""
    if not tables:
        return Dense.empty(schema)
    if len(tables) == 1:
        return tables[0]
    out: dict[str, Column] = {}
    for name, first in tables[0].columns.items():
        column: Column = array(first.typecode) if isinstance(first, array) else []
        for table in tables:
            column.extend(table[name])  # arrays of one type: a copy of their buffers
        out[name] = column
    return Dense(out)


def _numpy(column: array[int]) -> np.ndarray[Any, Any]:
    import numpy as np

    return np.frombuffer(column, dtype=_NUMPY_TYPES[column.typecode])


def _array(values: np.ndarray[Any, Any], typecode: str) -> array[int]:
    import numpy as np

    column = array(typecode)
    column.frombytes(np.ascontiguousarray(values, dtype=_NUMPY_TYPES[typecode]).data.cast("B"))  # one copy
    return column


def take(column: Column, rows: Rows) -> Column:
    """A column's values at these positions."""
    if not isinstance(rows, Sequence):  # a numpy array of positions
        if isinstance(column, array):
            return _array(_numpy(column)[rows], column.typecode) if len(rows) else array(column.typecode)
        rows = rows.tolist()
    if isinstance(column, array):
        return array(column.typecode, map(column.__getitem__, rows))
    return [column[row] for row in rows]


@cache
def _native() -> ModuleType | None:
    """The native scanner's module, built or not: its loops for the few whole-column operations a
    timeline needs beat Python's on any column, and spare a big log's run the numpy import
    (about 30 ms)."""
    try:
        from omlx_logscan import _scanner
    except ImportError:
        return None
    module: ModuleType = _scanner
    return module


def is_sorted(column: array[int]) -> bool:
    if (native := _native()) is not None:
        return bool(native.is_sorted(column))
    if len(column) > BIG:
        values = _numpy(column)
        return bool((values[1:] >= values[:-1]).all())
    return all(map(operator.le, column, itertools.islice(column, 1, None)))


def timed_in_order(table: Dense) -> Dense:
    """``table``'s timed rows in time order: as it is when, as usual, it is in order already and
    every row is timed (no copy), else sorted once, and its untimed rows (which sort first) left out."""
    if not is_sorted(table.ints("time")):  # several sources, or a clock that went back
        table = table.take(order(table["time"]))
    untimed = bisect.bisect_right(table.ints("time"), NO_TIME)
    return table.slice(untimed) if untimed else table


def order(*columns: Column) -> Rows:
    """The positions that sort the rows by these columns, first to last, ties in their order."""
    height = len(columns[0])
    if height > BIG and all(isinstance(column, array) for column in columns):
        import numpy as np

        return np.lexsort([_numpy(column) for column in reversed(columns)])  # type: ignore[arg-type]
    key: Callable[[int], Any] = columns[0].__getitem__ if len(columns) == 1 else lambda row: [c[row] for c in columns]
    return sorted(range(height), key=key)


def prefix_sums(column: array[int]) -> array[int]:
    """[i]: the sum of the first i values (so one more item than ``column``)."""
    if (native := _native()) is not None:
        sums = array("q")
        sums.frombytes(native.prefix_sums(column))
        return sums
    if len(column) > BIG:
        import numpy as np

        return _array(np.concatenate(([0], np.cumsum(_numpy(column), dtype=np.int64))), "q")
    return array("q", itertools.accumulate(column, initial=0))


def timed_within(times: array[int], lo: int | None, hi: int | None) -> Rows:
    """Positions, in order, of the times (ms) at or after ``lo`` and at or before ``hi`` (None: open);
    never a null one."""
    low = NO_TIME + 1 if lo is None else max(lo, NO_TIME + 1)
    high = hi if hi is not None else 2**63 - 1
    if len(times) > BIG:
        import numpy as np

        values = _numpy(times)
        return np.flatnonzero((values >= low) & (values <= high))
    return [row for row, ms in enumerate(times) if low <= ms <= high]


def time_span(times: array[int]) -> tuple[int, int] | None:
    """The earliest and latest time of a column, nulls aside; None when it has none."""
    if (native := _native()) is not None:
        span: tuple[int, int] | None = native.time_span(times, NO_TIME)
        return span
    if len(times) > BIG:
        values = _numpy(times)
        values = values[values != NO_TIME]
        return (int(values.min()), int(values.max())) if len(values) else None
    timed = [ms for ms in times if ms != NO_TIME]
    return (min(timed), max(timed)) if timed else None


def count_before(sources: array[int], lines: array[int], source: int, line: int) -> int:
    """How many rows are of ``source`` and come before ``line`` in it."""
    if (native := _native()) is not None:
        counted: int = native.count_before(sources, lines, source, line)
        return counted
    if len(sources) > BIG:
        return int(((_numpy(sources) == source) & (_numpy(lines) < line)).sum())
    return sum(1 for s, n in zip(sources, lines, strict=True) if s == source and n < line)


class FileRows:
    """One source's rows of a table in time order, for counting those of a window that come before
    a line of that file with three bisections (not a pass over the window for each question)."""

    def __init__(self, positions: Sequence[int], lines: Sequence[int]) -> None:
        self._positions, self._lines = positions, lines

    @staticmethod
    def of(sources: array[int], lines: array[int], source: int) -> FileRows | None:
        """``source``'s rows when their lines rise with the rows, as a log written in time order
        has them; else None (then count with ``count_before``). In numpy past ``BIG`` rows."""
        if len(sources) > BIG:
            import numpy as np

            positions = np.flatnonzero(_numpy(sources) == source)
            own = _numpy(lines)[positions]
            rising = bool(np.all(own[1:] >= own[:-1]))
            return FileRows(positions, own) if rising else None  # type: ignore[arg-type]
        rows = [row for row, of in enumerate(sources) if of == source]
        numbers = [lines[row] for row in rows]
        return FileRows(rows, numbers) if all(a <= b for a, b in itertools.pairwise(numbers)) else None

    def before(self, lo: int, hi: int, line: int) -> int:
        """How many of rows ``lo`` to ``hi - 1`` are of this source and come before ``line`` in it."""
        first, last = bisect.bisect_left(self._positions, lo), bisect.bisect_left(self._positions, hi)
        return max(0, min(last, bisect.bisect_left(self._lines, line)) - first)


def shifted(column: array[int], by: int, *, vectorised: bool) -> array[int]:
    """``column`` (uint32: a block's line numbers) with ``by`` added to each row: in the native
    module where it is built, else in numpy when ``vectorised`` (the blocks of a table already past
    ``BIG`` rows: numpy is imported once, while the scan goes on), else in Python."""
    if (native := _native()) is not None and column.typecode == "I":
        lines = array("I")
        lines.frombytes(native.shifted(column, by))
        return lines
    if vectorised:
        return _array(_numpy(column) + by, column.typecode)
    return array(column.typecode, [n + by for n in column])


def inserted(table: Dense, rows: Dense, places: Sequence[int]) -> Dense:
    """``table`` with each of ``rows`` put before the row at its place (``places`` in order); a
    column ``rows`` lack is 0 or None there. The table's columns are copied once, not sorted."""
    out: dict[str, Column] = {}
    for name, column in table.columns.items():
        extra = rows.columns.get(name)
        spans = list(itertools.pairwise([0, *places, len(column)]))
        if isinstance(column, array):  # copied once, through views of its buffer: it may have millions of rows
            numbers = list(extra) if extra is not None else [0] * rows.height
            view, size, copy = memoryview(column).cast("B"), column.itemsize, array(column.typecode)
            copy.frombytes(view[: spans[0][1] * size])
            for number, (start, stop) in zip(numbers, spans[1:], strict=True):
                copy.append(number)
                copy.frombytes(view[start * size : stop * size])
            out[name] = copy
            continue
        texts = column[: spans[0][1]]
        for text, (start, stop) in zip(
            list(extra) if extra is not None else [None] * rows.height, spans[1:], strict=True
        ):
            texts.append(text)
            texts.extend(column[start:stop])
        out[name] = texts
    return Dense(out)


def falls(
    lines: array[int], times: array[int], more_lines: Sequence[int], more_times: Sequence[int], more_than: int
) -> list[tuple[int, int, int]]:
    """Where times go back by more than ``more_than``: (line, time before, time) of each row after
    such a fall, the rows of two tables (lines and times, each in line order) merged in line order."""
    if (native := _native()) is not None:
        found: list[tuple[int, int, int]] = native.falls(
            lines, times, array("q", more_lines), array("q", more_times), more_than
        )
        return found
    if len(lines) > BIG:
        import numpy as np

        places = np.searchsorted(_numpy(lines), np.array(more_lines, dtype=np.int64))
        merged_lines = np.insert(_numpy(lines).astype(np.int64), places, np.array(more_lines, dtype=np.int64))
        merged = np.insert(_numpy(times), places, np.array(more_times, dtype=np.int64))
        after = np.flatnonzero(merged[:-1] - merged[1:] > more_than) + 1
        return list(zip(merged_lines[after].tolist(), merged[after - 1].tolist(), merged[after].tolist(), strict=True))
    rows = heapq.merge(zip(lines, times, strict=True), zip(more_lines, more_times, strict=True))
    return [(line, before, time) for (_, before), (line, time) in itertools.pairwise(rows) if before - time > more_than]


def repeated(typecode: str, value: int, rows: int) -> array[int]:
    return array(typecode, [value]) * rows


def form_code(form: str | None) -> int:
    return ARRIVAL_FORMS.index(form) if form in ARRIVAL_FORMS else NO_FORM


def forms_of(codes: Iterable[int]) -> Iterator[str | None]:
    return (ARRIVAL_FORMS[code] if code < len(ARRIVAL_FORMS) else None for code in codes)


# polars loads numpy on first use through a proxy that fails when two threads load it at once (the
# plan's blocks are converted on worker threads): one conversion to numpy at a time.
_FIRST_NUMPY = threading.Lock()


def as_numbers(name: str) -> pl.Expr:
    """A polars column as a dense table holds it: a time as its ms (nulls as NO_TIME), a form as its
    code (its place in the catalog's ARRIVAL_FORMS), anything else as it is. The polars plan computes
    these inside its own run, so turning its frames into arrays costs no polars call of its own."""
    import polars as pl

    column = pl.col(name)
    if name == "time":
        return column.cast(pl.Datetime("ms")).to_physical().fill_null(NO_TIME)
    if name == "form":
        return column.cast(pl.String).cast(pl.Enum(ARRIVAL_FORMS)).to_physical().fill_null(NO_FORM)
    return column


def from_polars(frame: pl.DataFrame) -> Dense:
    """A polars frame's rows as a dense table (``as_numbers`` applied where the frame's columns are not
    numbers yet): on the plan's worker threads, already numbers."""
    if any(name in ("time", "form") and not dtype.is_integer() for name, dtype in frame.schema.items()):
        frame = frame.select(as_numbers(name) for name in frame.columns)
    out: dict[str, Column] = {}
    for name, series in zip(frame.columns, frame.get_columns(), strict=True):
        typecode = _TYPECODES[name]
        if not typecode:
            out[name] = series.to_list()
        elif series.len() < FEW:
            out[name] = array(typecode, series.to_list())
        else:
            with _FIRST_NUMPY:
                values = series.to_numpy()
            out[name] = _array(values, typecode)
    return Dense(out)


_TYPECODES = {**REQUEST_SCHEMA, **ARRIVAL_SCHEMA, **EXTRA_SCHEMA, "n": "I"}


def to_polars(table: Dense) -> pl.DataFrame:
    """A dense table as a polars frame, for what writes tables: times as Datetime("ms"), forms as text."""
    import polars as pl

    columns: dict[str, pl.Series] = {}
    for name, column in table.columns.items():
        if not isinstance(column, array):
            columns[name] = pl.Series(name, column, dtype=pl.String)
            continue
        dtype = getattr(pl, _POLARS_TYPES[column.typecode])
        series = pl.Series(name, _numpy(column) if len(column) else [], dtype=dtype)
        if name == "time":
            series = series.set(series == NO_TIME, None).cast(pl.Datetime("ms"))
        elif name == "form":
            series = pl.Series(name, list(forms_of(column)), dtype=pl.String)
        columns[name] = series
    return pl.DataFrame(columns)


_POLARS_TYPES = {"I": "UInt32", "i": "Int32", "q": "Int64", "Q": "UInt64", "B": "UInt8"}
