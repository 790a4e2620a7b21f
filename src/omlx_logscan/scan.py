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
_LOW_LEVELS = ("TRACE", "DEBUG", "INFO")
BATCH_ROWS = 400_000
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


def _classify(df: pl.DataFrame, keep_all: bool) -> pl.DataFrame:
    """Mark the rows Python must see (``keep``) and the dense finished-request rows (``request``).

    A timed line is kept when an untimed line touches it (it heads or follows a multi-line
    record, so the grammar can join records and date untimed lines from their neighbours), when
    it could match the catalog, or when it is a chunk's first or last line (so records and
    neighbour times carry across chunks).
    """
    line = pl.col("line")
    ts = line.str.contains(_STAMP).fill_null(False)
    df = df.with_columns(ts=ts)
    touches_untimed = (~pl.col("ts").shift(-1)).fill_null(True) | (~pl.col("ts").shift(1)).fill_null(True)
    if keep_all:
        candidate: pl.Expr = pl.lit(True)
    else:
        candidate = line.str.contains(_INTERESTING).fill_null(False)
    request = (
        pl.col("ts")
        & ~touches_untimed
        & line.str.contains(" - INFO - ", literal=True).fill_null(False)
        & line.str.contains(_REQUEST).fill_null(False)
    )
    return df.with_columns(request=request).with_columns(
        keep=(~pl.col("ts") | touches_untimed | candidate) & ~pl.col("request")
    )


def _batches(source: Source) -> Iterator[pl.DataFrame]:
    """Frames of consecutive lines: polars reads plain files itself; other inputs go through Python."""
    path = source.path
    if path is not None and path.suffix not in (".gz", ".bz2", ".xz") and path.is_file():
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
        if not head:
            return
        if sniff_codec(head) is None:
            if looks_binary(head):
                raise InputError(f"{source.name}: not a text log (binary data)")
            yield from pl.scan_csv(path, **_CSV_OPTIONS).collect_batches(chunk_size=BATCH_ROWS)
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
    result = SourceScan(source, index)
    try:
        for batch in _batches(source):
            if progress is not None:  # bytes of this batch, for the progress bar
                progress(int(batch.select(pl.col("line").str.len_bytes().sum()).item() or 0) + batch.height)
            df = _classify(batch.with_row_index("n", offset=result.lines + 1), keep_all)
            for level in _LOW_LEVELS:
                if (
                    level not in result.levels
                    and df.select(pl.col("line").str.contains(f" - {level} - ", literal=True).any()).item()
                ):
                    result.levels.add(level)
            kept_rows = df.filter("keep").select("n", pl.col("line").fill_null(""))
            result.kept.extend(KeptLine(n, text) for n, text in kept_rows.iter_rows())
            requests = df.filter("request")
            if requests.height:
                result.requests.append(_request_rows(requests, index, keep_request_text))
            result.routine_records += df.height - kept_rows.height - requests.height
            result.lines += df.height
    except InputError as exc:
        result.problem = str(exc)
    except pl.exceptions.PolarsError as exc:
        result.problem = f"{source.name}: unreadable ({type(exc).__name__})"
    return result


def _request_rows(requests: pl.DataFrame, index: int, keep_text: bool) -> pl.DataFrame:
    """The dense table of finished requests: time, position and a key for de-duplication."""
    line = pl.col("line")
    columns = [
        pl.lit(index, dtype=pl.UInt32).alias("source"),
        pl.col("n").cast(pl.UInt32).alias("line"),
        line.str.slice(0, 19).str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False).dt.cast_time_unit("ms").alias("time"),
        line.str.replace(" - [-] - ", " - ", literal=True).hash().alias("key"),
        (line if keep_text else pl.lit(None, dtype=pl.String)).alias("text"),
    ]
    return requests.select(columns)
