"""The bulk scan: find the lines that matter without running Python on every line.

Each chunk of a source is split into lines by polars' CSV reader (one column, no quoting)
and classified with vectorised regexes. Routine single-line records (INFO/DEBUG lines no
catalog template can match) are only counted. Finished-request lines, the one dense kind,
stay in a polars table. Everything else, a small fraction of a big log, goes to the Python
line grammar as ``KeptLine`` rows.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from omlx_logscan.catalog import GPU_LITERALS, PREFILTER_LITERALS
from omlx_logscan.errors import InputError
from omlx_logscan.sources import SNIFF_BYTES, Source, looks_binary, read_chunks, sniff_codec

_STAMP = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d"
_INTERESTING = "|".join(
    [r"WARN|ERROR|CRITICAL|FATAL"] + [re.escape(lit) for lit in (*PREFILTER_LITERALS, *GPU_LITERALS)]
)
_REQUEST = r"Chat completion: |Embedding: \d"
_GPU = "|".join(re.escape(lit) for lit in GPU_LITERALS)
_LOW_LEVELS = ("TRACE", "DEBUG", "INFO")
BATCH_ROWS = 100_000
_CSV_OPTIONS: dict[str, Any] = {
    "has_header": False,
    "separator": "\x1f",
    "quote_char": None,
    "new_columns": ["line"],
    "infer_schema": False,
    "encoding": "utf8-lossy",
    "truncate_ragged_lines": True,
}

REQUEST_SCHEMA: dict[str, Any] = {
    "source": pl.UInt32,
    "line": pl.UInt32,
    "time": pl.Datetime("ms"),
    "key": pl.UInt64,
    "tokens": pl.Int64,
    "text": pl.String,
}


@dataclass(slots=True)
class KeptLine:
    """A line for the Python grammar: its 1-based number and its text."""

    line: int
    text: str


@dataclass
class SourceScan:
    """What the scan of one source found."""

    source: Source
    index: int
    lines: int = 0
    routine_records: int = 0  # single-line INFO/DEBUG records of no kind, counted only
    levels: set[str] = field(default_factory=set)  # TRACE/DEBUG/INFO seen in the bulk scan
    kept: list[KeptLine] = field(default_factory=list)
    requests: list[pl.DataFrame] = field(default_factory=list)
    problem: str | None = None  # why reading stopped early, if it did


def _read_lines(data: bytes) -> pl.DataFrame:
    return pl.read_csv(io.BytesIO(data), **_CSV_OPTIONS)


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _split(df: pl.DataFrame, keep_all: bool, known: set[str]) -> tuple[pl.DataFrame, pl.DataFrame, set[str]]:
    """A batch's rows Python must see, its dense finished-request rows, and the low levels it shows.

    A timed line is kept when an untimed line touches it (it heads or follows a multi-line
    record, so the grammar can join records and date untimed lines from their neighbours), when
    it could match the catalog, or when it is a batch's first or last line (so records and
    neighbour times carry across batches). Everything else is a routine record, only counted.
    The cheap tests run on every row; the costly catalog regex only on what survives them:
    in a DEBUG log most lines are DEBUG records that no untimed line touches.
    """
    line = pl.col("line")
    ts = pl.col("ts")
    marked = (
        df.lazy()
        .with_columns(ts=line.str.contains(_STAMP).fill_null(False))
        .with_columns(
            touches=(~ts.shift(-1)).fill_null(True) | (~ts.shift(1)).fill_null(True),
            debug=line.str.contains(" - DEBUG - ", literal=True).fill_null(False),
        )
    )
    if keep_all:
        kept = marked.collect()
        return kept.select("n", "line"), kept.clear().select("n", "line"), _levels(kept, known)
    routine_debug = ts & ~pl.col("touches") & pl.col("debug") & ~line.str.contains(_GPU).fill_null(False)
    rest = (
        marked.with_columns(any_debug=pl.col("debug").any())
        .filter(~routine_debug)
        .with_columns(info=line.str.contains(" - INFO - ", literal=True).fill_null(False))
        .with_columns(request=ts & ~pl.col("touches") & pl.col("info") & line.str.contains(_REQUEST).fill_null(False))
        .with_columns(
            keep=(~ts | pl.col("touches") | line.str.contains(_INTERESTING).fill_null(False)) & ~pl.col("request")
        )
        .collect()
    )
    if rest.height and rest["any_debug"][0]:
        known = known | {"DEBUG"}
    levels = _levels(rest, known)
    return rest.filter("keep").select("n", "line"), rest.filter("request"), levels


def _levels(df: pl.DataFrame, known: set[str]) -> set[str]:
    """``known`` plus whichever of TRACE/DEBUG/INFO the file-format lines of ``df`` show."""
    found = set(known)
    for level in _LOW_LEVELS:
        if level not in found and df.select(pl.col("line").str.contains(f" - {level} - ", literal=True).any()).item():
            found.add(level)
    return found


def _native(source: Source) -> bool:
    """Plain UTF-8/ASCII files are read by polars itself (multi-threaded, no copies through Python)."""
    path = source.path
    if path is None or path.suffix in (".gz", ".bz2", ".xz") or not path.is_file():
        return False
    with open(path, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if head and sniff_codec(head) is None and looks_binary(head):
        raise InputError(f"{source.name}: not a text log (binary data)")
    return bool(head) and sniff_codec(head) is None


def _batches(source: Source, native: bool) -> Iterator[pl.DataFrame]:
    """Frames of consecutive lines, from polars' own reader or from Python's decoded chunks."""
    if native and source.path is not None:
        yield from pl.scan_csv(source.path, **_CSV_OPTIONS).collect_batches(chunk_size=BATCH_ROWS)
        return
    for data in read_chunks(source):
        df = _read_lines(data)
        if df.height != _line_count(data):  # the CSV reader and the byte count must agree
            raise InputError(f"{source.name}: could not split the text into lines")
        yield df


def scan_source(
    source: Source,
    index: int,
    *,
    keep_all: bool = False,
    keep_request_text: bool = False,
    progress: Callable[[int], None] | None = None,
) -> SourceScan:
    """Scan one source batch by batch; memory stays bounded by the batch size."""
    try:
        native = _native(source)
    except InputError as exc:
        return SourceScan(source, index, problem=str(exc))
    try:
        return _scan(source, index, native, keep_all, keep_request_text, progress)
    except pl.exceptions.PolarsError:
        if not native:
            return SourceScan(source, index, problem=f"{source.name}: unreadable text")
        # Bytes polars' own reader rejects (a field separator inside a line): Python decodes instead.
        return _scan(source, index, False, keep_all, keep_request_text, progress)


def _scan(
    source: Source,
    index: int,
    native: bool,
    keep_all: bool,
    keep_request_text: bool,
    progress: Callable[[int], None] | None,
) -> SourceScan:
    result = SourceScan(source, index)
    try:
        for batch in _batches(source, native):
            if progress is not None:  # bytes of this batch, for the progress bar
                progress(int(batch.select(pl.col("line").str.len_bytes().sum()).item() or 0) + batch.height)
            batch = batch.with_row_index("n", offset=result.lines + 1)
            kept_rows, requests, result.levels = _split(batch, keep_all, result.levels)
            result.kept.extend(KeptLine(n, text or "") for n, text in kept_rows.iter_rows())
            if requests.height:
                result.requests.append(_request_rows(requests, index, keep_request_text))
            result.routine_records += batch.height - kept_rows.height - requests.height
            result.lines += batch.height
    except InputError as exc:
        result.problem = str(exc)
    if result.lines == 0 and result.problem is None:
        result.problem = f"{source.name}: empty file"
    return result


def _request_rows(requests: pl.DataFrame, index: int, keep_text: bool) -> pl.DataFrame:
    """The dense table of finished requests: position, time, tokens, and a key for de-duplication.

    Every expression here runs on millions of rows in a big log, so each is the cheapest that is
    exact for the line shape ``_split`` selected (a file- or console-format INFO record).
    """
    line = pl.col("line")
    seconds = line.str.slice(0, 19).str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False, time_unit="ms")
    millis = pl.duration(milliseconds=line.str.slice(20, 3).cast(pl.Int64, strict=False).fill_null(0))
    tokens_at = line.str.find(" tokens in ", literal=True)
    tokens = line.str.slice(tokens_at - 12, 12).str.split(" ").list.last().cast(pl.Int64, strict=False)
    chat = line.str.contains("Chat completion: ", literal=True)
    columns = [
        pl.lit(index, dtype=pl.UInt32).alias("source"),
        pl.col("n").cast(pl.UInt32).alias("line"),
        (seconds + millis).alias("time"),
        line.str.replace(" - [-] - ", " - ", literal=True).hash().alias("key"),
        pl.when(chat).then(tokens).otherwise(0).fill_null(0).alias("tokens"),
        (line if keep_text else pl.lit(None, dtype=pl.String)).alias("text"),
    ]
    return requests.select(columns)
