"""The bulk scan: find the lines that matter without running Python on every line.

Each batch of a source is split into lines by polars' line reader and classified with
vectorised regexes. polars rejects text that is not UTF-8; the Python reader, which decodes
line by line, takes over then. Routine single-line records (DEBUG records, and INFO records no
catalog literal occurs in) are only counted. Finished-request lines, the one dense kind, stay
in a polars table. Everything else, a small fraction of a big log, goes to the Python line
grammar as ``KeptLine`` rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from omlx_logscan.catalog import GPU_LITERALS, PREFILTER_LITERALS
from omlx_logscan.errors import InputError
from omlx_logscan.sources import SNIFF_BYTES, Source, looks_binary, not_text, read_chunks, sniff_codec

_STAMP = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d"
# The file/console record prefix up to the level: level tests are anchored, so a message that
# merely mentions " - DEBUG - " is never taken for a DEBUG record.
_RECORD_PREFIX = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+ - [\w.]+ - "
_LEVEL_RECORD = {level: f"{_RECORD_PREFIX}{level} - " for level in ("TRACE", "DEBUG", "INFO")}
_REQUEST = (
    _RECORD_PREFIX + r"INFO - (?:\[[^\]]*\] - )?(?:Chat completion: (?:model=[^,]*, )?\d+ tokens in |Embedding: \d)"
)
_INTERESTING = "|".join(
    [r"WARN|ERROR|CRITICAL|FATAL"] + [re.escape(lit) for lit in (*PREFILTER_LITERALS, *GPU_LITERALS)]
)
_NOT_ROUTINE = "|".join([" - WARNING - ", " - ERROR - ", " - CRITICAL - ", *(re.escape(lit) for lit in GPU_LITERALS)])
BATCH_ROWS = 50_000

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
    return pl.scan_lines(data, name="line").collect()


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _split(df: pl.DataFrame, keep_all: bool, known: set[str]) -> tuple[pl.DataFrame, pl.DataFrame, set[str]]:
    """A batch's rows Python must see, its dense finished-request rows, and the low levels it shows.

    A timed line is kept when an untimed line touches it (it heads or follows a multi-line
    record, so the grammar can join records and date untimed lines from their neighbours), when
    it could match the catalog, or when it is a batch's first or last line (so records and
    neighbour times carry across batches). DEBUG records that no untimed line touches are
    routine and only counted: they are most of a DEBUG log, so they are dropped before the
    costly catalog regex runs on what is left.
    """
    line = pl.col("line")
    ts = pl.col("ts")
    single = pl.col("single")  # a timed line no untimed line touches: a one-line record
    marked = (
        df.lazy()
        .with_columns(ts=line.str.contains(_STAMP).fill_null(False))
        .with_columns(single=ts & pl.col("ts").shift(-1).fill_null(False) & pl.col("ts").shift(1).fill_null(False))
    )
    if keep_all:
        everything = marked.collect()
        return everything.select("n", "line"), everything.clear().select("n", "line"), _levels(everything, known)
    # " - DEBUG - " anywhere is cheap to find; a line that also names a higher level (a warning
    # quoting a DEBUG line) or carries a GPU error is never routine.
    debug = line.str.contains(" - DEBUG - ", literal=True).fill_null(False)
    routine_debug = single & debug & ~line.str.contains(_NOT_ROUTINE).fill_null(False)
    rest = (
        marked.with_columns(any_debug=debug.any())
        .filter(~routine_debug)
        .with_columns(request=single & line.str.contains(_REQUEST).fill_null(False))
        .with_columns(keep=(~single | line.str.contains(_INTERESTING).fill_null(False)) & ~pl.col("request"))
        .collect()
    )
    if rest.height and rest["any_debug"][0]:
        known = known | {"DEBUG"}
    return rest.filter("keep").select("n", "line"), rest.filter("request"), _levels(rest, known)


def _levels(df: pl.DataFrame, known: set[str]) -> set[str]:
    """``known`` plus whichever of TRACE/DEBUG/INFO the file-format records of ``df`` show."""
    missing = [level for level in _LEVEL_RECORD if level not in known]
    if not missing or not df.height:
        return set(known)
    line = pl.col("line")
    found = set(known)
    for level in missing:
        # A literal finds the few candidate lines; the anchored test confirms them, so a message
        # quoting " - TRACE - " is no TRACE record.
        candidates = df.filter(line.str.contains(f" - {level} - ", literal=True).fill_null(False))
        if candidates.height and candidates.select(line.str.contains(_LEVEL_RECORD[level]).any()).item():
            found.add(level)
    return found


def _native(source: Source) -> bool:
    """Plain UTF-8/ASCII files are read by polars itself (multi-threaded, no copies through Python)."""
    path = source.path
    if path is None or path.suffix in (".gz", ".bz2", ".xz") or not path.is_file():
        return False
    with open(path, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
    plain = bool(head) and sniff_codec(head) is None
    if plain and looks_binary(head):
        raise InputError(not_text(source.name, head))
    return plain


def _batches(source: Source, native: bool) -> Iterator[pl.DataFrame]:
    """Frames of consecutive lines, from polars' own reader or from Python's decoded chunks."""
    if native and source.path is not None:
        yield from pl.scan_lines(source.path, name="line").collect_batches(chunk_size=BATCH_ROWS)
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
    dedup_keys: bool = False,
    progress: Callable[[int], None] | None = None,
) -> SourceScan:
    """Scan one source batch by batch: what is held grows with the kept lines and request rows only."""
    try:
        native = _native(source)
    except InputError as exc:
        return SourceScan(source, index, problem=str(exc))
    try:
        return _scan(source, index, native, keep_all, keep_request_text, dedup_keys, progress)
    except (pl.exceptions.PolarsError, OSError):
        if not native:
            return SourceScan(source, index, problem=f"{source.name}: unreadable text")
    # Bytes polars' own reader rejects (bad UTF-8; data that looks compressed): Python decodes instead.
    try:
        return _scan(source, index, False, keep_all, keep_request_text, dedup_keys, progress)
    except (pl.exceptions.PolarsError, OSError):
        return SourceScan(source, index, problem=f"{source.name}: unreadable text")


def _scan(
    source: Source,
    index: int,
    native: bool,
    keep_all: bool,
    keep_request_text: bool,
    dedup_keys: bool,
    progress: Callable[[int], None] | None,
) -> SourceScan:
    result = SourceScan(source, index)
    try:
        for batch in _batches(source, native):
            if progress is not None:  # bytes of this batch, for the progress bar
                progress(int(batch.select(pl.col("line").str.len_bytes().sum()).item() or 0) + batch.height)
            batch = batch.with_row_index("n", offset=result.lines + 1)
            kept_rows, requests, result.levels = _split(batch, keep_all, result.levels)
            if requests.height:
                rows = _request_rows(requests, index, keep_request_text, dedup_keys)
                timeless = rows["time"].is_null()
                if timeless.any():  # a date such as 2026-13-45: the grammar decides what the line is
                    kept_rows = pl.concat([kept_rows, requests.filter(timeless).select("n", "line")]).sort("n")
                    rows, requests = rows.filter(~timeless), requests.filter(~timeless)
                result.requests.append(rows)
            result.kept.extend(KeptLine(n, text or "") for n, text in kept_rows.iter_rows())
            result.routine_records += batch.height - kept_rows.height - requests.height
            result.lines += batch.height
    except InputError as exc:
        result.problem = str(exc)
    if result.lines == 0 and result.problem is None:
        result.problem = f"{source.name}: empty file"
    return result


def _request_rows(requests: pl.DataFrame, index: int, keep_text: bool, keep_key: bool) -> pl.DataFrame:
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
        (line.str.replace(" - [-] - ", " - ", literal=True).hash() if keep_key else pl.lit(None, pl.UInt64)).alias(
            "key"
        ),
        pl.when(chat).then(tokens).otherwise(0).fill_null(0).alias("tokens"),
        (line if keep_text else pl.lit(None, dtype=pl.String)).alias("text"),
    ]
    return requests.select(columns)
