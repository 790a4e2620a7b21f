"""The bulk scan: find the lines that matter without running Python on every line.

A source is read in blocks of whole lines; polars splits each block into lines and classifies
them with vectorised tests, two blocks at a time so both cores work. polars rejects text that
is not UTF-8; the Python reader, which decodes line by line, takes over then. Routine
single-line records (DEBUG records, and INFO records no catalog literal occurs in) are only
counted. Finished-request lines, the one dense kind, stay in a polars table. Everything else, a
small fraction of a big log, goes to the Python line grammar as ``KeptLine`` rows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from omlx_logscan.catalog import GPU_LITERALS, PREFILTER_LITERALS
from omlx_logscan.errors import InputError
from omlx_logscan.sources import (
    SNIFF_BYTES,
    Source,
    is_utf8,
    looks_binary,
    normalise,
    not_text,
    read_chunks,
    sniff_codec,
)

# ASCII digits: Python's re and polars' regex engine agree on them (not on every Unicode digit),
# and block edges are tested with the one, the block's other lines with the other.
_STAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}"
# The file/console record prefix up to the level: level tests are anchored, so a message that
# merely mentions " - DEBUG - " is never taken for a DEBUG record.
_RECORD_PREFIX = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+ - [\w.]+ - "
_LEVEL_RECORD = {level: f"{_RECORD_PREFIX}{level} - " for level in ("TRACE", "DEBUG", "INFO")}
# A finished chat completion, in ASCII classes (the regex engine runs them faster than Unicode
# ones). It only routes lines: one it rejects that the grammar would read as a request still
# reaches the grammar through the catalog literal "Chat completion: ", and so do the rare
# embedding requests ("Embedding: "), whose tokens the analysis does not count.
_REQUEST = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}[,.][0-9]+ - [A-Za-z0-9_.]+ - INFO - "
    r"(?:\[[^\]]*\] - )?(?:Chat completion: (?:model=[^,]*, )?[0-9]+ tokens in |Embedding: [0-9])"
)
_INTERESTING = "|".join(
    [r"WARN|ERROR|CRITICAL|FATAL"] + [re.escape(lit) for lit in (*PREFILTER_LITERALS, *GPU_LITERALS)]
)
_NOT_ROUTINE = "|".join([" - WARNING - ", " - ERROR - ", " - CRITICAL - ", *(re.escape(lit) for lit in GPU_LITERALS)])
# Reads stay under glibc's largest mmap threshold (32 MiB), so their buffers are reused rather
# than mapped afresh; two blocks in flight keep both cores busy and memory flat.
BLOCK_BYTES = 16 * 1024 * 1024
GROUP_BLOCKS = 2

# The dense request table. Two more columns come only when a run needs them, since a column of
# nulls still costs 8 to 16 bytes a row: "key" (UInt64, to drop the requests two sources share)
# and "text" (String, the line, for the events command).
REQUEST_SCHEMA: dict[str, Any] = {
    "source": pl.UInt32,
    "line": pl.UInt32,
    "time": pl.Datetime("ms"),
    "tokens": pl.Int32,
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
    requests: list[pl.DataFrame] = field(default_factory=list)
    problem: str | None = None  # why reading stopped early, if it did


@dataclass(slots=True)
class _Block:
    """Bytes read at once; with ``cut_tail`` the last line is unfinished and is read again next."""

    data: bytes
    cut_tail: bool = False  # stored, not size < len(data): mending bad bytes changes the length
    size: int = 0  # bytes of whole lines as read from the source (for progress)
    prev_timed: bool = False  # whether the line just before the block starts with a timestamp
    next_timed: bool = False  # whether the line just after it does

    def first_line(self) -> bytes:
        end = self.data.find(b"\n", 0, self.size)
        return self.data[: end if end >= 0 else self.size]

    def last_line(self) -> bytes:
        end = self.size - 1 if self.data[self.size - 1 : self.size] == b"\n" else self.size
        return self.data[self.data.rfind(b"\n", 0, end) + 1 : end]


_STAMP_AT_START = re.compile(_STAMP)


def _timed(line: bytes) -> bool:
    """The scan's timestamp test for one line, in Python: what the plan's ``ts`` gives that line."""
    # Undecodable bytes become U+FFFD, as they would become Windows-1252 letters: neither is a digit.
    return _STAMP_AT_START.match(line[:160].decode("utf-8", errors="replace")) is not None


def _file_blocks(path: Path) -> Iterator[_Block]:
    """A plain file in blocks of whole lines, by positioned reads (one copy, from the kernel)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        offset, size = 0, BLOCK_BYTES
        while True:
            data = os.pread(fd, size, offset)
            if len(data) < size:  # the end of the file: its last line may lack the newline
                if data:
                    yield _Block(data, size=len(data))
                return
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # one line longer than the block: read a larger block
                size *= 2
                continue
            if not is_utf8(data[cut:]):  # the unfinished line was cut inside a character: polars would reject it
                data = data[:cut]
            yield _Block(data, cut_tail=cut < len(data), size=cut)
            offset += cut
            size = BLOCK_BYTES
    finally:
        os.close(fd)


def _blocks(source: Source, native: bool) -> Iterator[_Block]:
    """Blocks of whole lines, straight from a plain file or from Python's decoded chunks."""
    if native and source.path is not None:
        try:
            yield from _file_blocks(source.path)
        except OSError as exc:
            raise InputError(f"{source.name}: read error ({exc.strerror or exc})") from None
        return
    for data in read_chunks(source):
        yield _Block(data, size=len(data))


def _lines(block: _Block) -> pl.LazyFrame:
    """A block's lines, numbered from 1 within the block, without the unfinished last one.

    polars takes bytes that begin like a zlib stream ("x^", "x\\x01") for compressed data: such a
    block is handed over behind an empty line, which is numbered 0 and dropped.
    """
    shielded = block.data[:1] == b"x"
    data = b"\n" + block.data if shielded else block.data
    lines = pl.scan_lines(data, name="line").with_row_index("n", offset=0 if shielded else 1)
    if block.cut_tail:
        lines = lines.filter(pl.col("n") < pl.len() - (1 if shielded else 0))
    return lines.filter(pl.col("n") > 0) if shielded else lines


def _plan(block: _Block, keep_all: bool, keep_key: bool) -> pl.LazyFrame:
    """The vectorised work on one block, as a lazy plan so that blocks run in parallel.

    A timed line is kept when an untimed line touches it (it heads or follows a multi-line
    record, so the grammar can join records and date untimed lines from their neighbours) or
    when it could match the catalog. The lines around the block count as its neighbours, so
    where blocks begin and end changes nothing. DEBUG records that no untimed line touches are
    routine and only counted: they are most of a DEBUG log, so they are dropped before the
    request test runs on what is left. The plan's rows are the block's other lines, each marked
    ``request`` or not, with the request columns computed, and its last line, which carries
    ``total`` (the block's line count) even when it is routine.
    """
    line = pl.col("line")
    ts = pl.col("ts")
    single = pl.col("single")  # a timed line no untimed line touches: a one-line record
    marked = (
        _lines(block)
        .with_columns(total=pl.len(), ts=line.str.contains(_STAMP).fill_null(False))
        .with_columns(single=ts & ts.shift(-1).fill_null(block.next_timed) & ts.shift(1).fill_null(block.prev_timed))
    )
    if keep_all:
        return marked.with_columns(
            single=pl.lit(False),
            routine=pl.lit(False),
            request=pl.lit(False),
            any_debug=pl.lit(False),
            time=pl.lit(None, pl.Datetime("ms")),
            tokens=pl.lit(0, pl.Int32),
            **({"key": pl.lit(None, pl.UInt64)} if keep_key else {}),
        )
    # " - DEBUG - " anywhere is cheap to find; a line that also names a higher level (a warning
    # quoting a DEBUG line) or carries a GPU error is never routine.
    debug = line.str.contains(" - DEBUG - ", literal=True).fill_null(False)
    routine = pl.col("routine")
    return (
        marked.with_columns(debug=debug)
        .with_columns(any_debug=pl.col("debug").any())
        .with_columns(routine=single & pl.col("debug") & ~line.str.contains(_NOT_ROUTINE).fill_null(False))
        .filter(~routine | (pl.col("n") == pl.col("total")))
        .with_columns(_request_columns(keep_key))
        # A request whose time the fast parse cannot read (2026-13-45, no ",mmm") goes to the grammar.
        .with_columns(
            request=single & ~routine & line.str.contains(_REQUEST).fill_null(False) & pl.col("time").is_not_null()
        )
    )


def _request_columns(keep_key: bool) -> list[pl.Expr]:
    """Time, tokens and de-duplication key of a finished request, for the dense table.

    These run on every line the request test looked at, millions in a big log, so each is the
    cheapest that is exact for the line shape ``_REQUEST`` selects; only the rows that passed
    are read. A time with another fraction than ",mmm" comes out null, and the grammar reads
    that line instead. No cache: request times are nearly all distinct.
    """
    line = pl.col("line")
    time = line.str.head(23).str.to_datetime("%Y-%m-%d %H:%M:%S,%3f", strict=False, time_unit="ms", cache=False)
    tokens_at = line.str.find(" tokens in ", literal=True)
    tokens = line.str.slice(tokens_at - 12, 12).str.split(" ").list.last().cast(pl.Int32, strict=False)
    chat = line.str.contains("Chat completion: ", literal=True)
    columns = [time.alias("time"), pl.when(chat).then(tokens).otherwise(0).fill_null(0).alias("tokens")]
    if keep_key:
        columns.append(line.str.replace(" - [-] - ", " - ", literal=True).hash().alias("key"))
    return columns


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


def scan_source(
    source: Source,
    index: int,
    *,
    keep_all: bool = False,
    keep_request_text: bool = False,
    dedup_keys: bool = False,
    progress: Callable[[int], None] | None = None,
    on_kept: Callable[[list[KeptLine]], None],
) -> SourceScan:
    """Scan one source block by block, handing each block's lines for the grammar to ``on_kept``
    as they come: what is held grows with the request rows only."""
    try:
        native = _native(source)
    except InputError as exc:
        return SourceScan(source, index, problem=str(exc))
    return _scan(source, index, native, keep_all, keep_request_text, dedup_keys, progress, on_kept)


def _scan(
    source: Source,
    index: int,
    native: bool,
    keep_all: bool,
    keep_request_text: bool,
    dedup_keys: bool,
    progress: Callable[[int], None] | None,
    on_kept: Callable[[list[KeptLine]], None],
) -> SourceScan:
    result = SourceScan(source, index)
    try:
        groups = _groups(_blocks(source, native))
        for sizes, frames in _collected(source.name, groups, keep_all, keep_request_text, dedup_keys):
            for i, size in enumerate(sizes):
                on_kept(_take(result, *frames[3 * i : 3 * i + 3]))
                if progress is not None:
                    progress(size)
    except InputError as exc:
        result.problem = str(exc)
    if result.lines == 0 and result.problem is None:
        result.problem = f"{source.name}: empty file"
    return result


def _collected(
    source_name: str, groups: Iterator[list[_Block]], keep_all: bool, keep_request_text: bool, dedup_keys: bool
) -> Iterator[tuple[list[int], list[pl.DataFrame]]]:
    """Each group's block sizes and output frames, the next group read and collected on a worker
    thread while the caller files this one: reads and collects release the GIL, so Python's
    share of the work overlaps polars' instead of waiting for it."""

    def collect(group: list[_Block]) -> list[pl.DataFrame]:
        plans: list[pl.LazyFrame] = []
        for block in group:
            plans.extend(_outputs(_plan(block, keep_all, dedup_keys), dedup_keys, keep_request_text))
        return pl.collect_all(plans)  # a block's three outputs share its plan: polars runs it once

    def collect_next() -> tuple[list[int], list[pl.DataFrame]] | None:
        group = next(groups, None)
        if group is None:
            return None
        sizes = [block.size for block in group]
        # polars must not fail part-way through a group (a plan that fails beside a running one
        # can crash its threads), so bytes that are not UTF-8 are mended first: Python reads
        # those lines as Windows-1252. ASCII blocks, nearly all, cost one quick check.
        for block in group:
            block.data = normalise(block.data)
        try:
            frames = collect(group)
        except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError):
            raise InputError(f"{source_name}: unreadable text") from None
        group.clear()  # free the blocks before the next read, so their memory is reused
        return sizes, frames

    with ThreadPoolExecutor(max_workers=1) as worker:
        pending = worker.submit(collect_next)
        while (done := pending.result()) is not None:
            pending = worker.submit(collect_next)
            yield done


def _outputs(
    plan: pl.LazyFrame, keep_key: bool, keep_request_text: bool
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """A block's finished-request rows, the rows Python must look at, and its line count and levels."""
    request = pl.col("request")
    extra = [c for c, wanted in (("key", keep_key), ("line", keep_request_text)) if wanted]
    requests = plan.filter(request).select("n", "time", "tokens", *extra)
    others = plan.filter(~request & ~pl.col("routine")).select("n", "line", "single")
    summary = plan.select(pl.col("total").first(), pl.col("any_debug").first())
    return requests, others, summary


def _groups(blocks: Iterator[_Block]) -> Iterator[list[_Block]]:
    """Blocks a few at a time, so that polars runs their plans on all cores at once.

    Each block learns whether the lines just before and after it are timed, so its first and
    last lines are classified as if the block had no edges.
    """
    group: list[_Block] = []
    last: _Block | None = None
    try:
        for block in blocks:
            if last is not None:
                block.prev_timed = _timed(last.last_line())
                last.next_timed = _timed(block.first_line())
            if len(group) == GROUP_BLOCKS:
                yield group
                group = []
            group.append(block)
            last = block
    except InputError:  # a read that failed part-way (truncated gzip): scan what came before it
        if group:
            yield group
        raise
    if group:
        yield group


def _take(result: SourceScan, requests: pl.DataFrame, others: pl.DataFrame, summary: pl.DataFrame) -> list[KeptLine]:
    """File one block's outputs (request rows, routine counts); return its lines for the grammar."""
    block_lines = summary["total"][0]
    if not block_lines:  # a block of no lines (an empty input)
        return []
    base = result.lines
    kept = others.filter(~pl.col("single") | pl.col("line").str.contains(_INTERESTING).fill_null(False))
    if requests.height:
        extra = [pl.col(c) for c in ("key",) if c in requests.columns]
        if "line" in requests.columns:
            extra.append(pl.col("line").alias("text"))
        result.requests.append(
            requests.select(
                pl.lit(result.index, dtype=pl.UInt32).alias("source"),
                (pl.col("n") + base).cast(pl.UInt32).alias("line"),
                "time",
                "tokens",
                *extra,
            ).rechunk()  # one buffer per column, not the plan's dozens of slivers: less to keep, less to fragment
        )
        result.levels = result.levels | {"INFO"}  # the request test is anchored on an INFO record's prefix
    if summary["any_debug"][0]:
        result.levels = result.levels | {"DEBUG"}
    result.levels = _levels(others, result.levels)
    result.routine_records += block_lines - kept.height - requests.height
    result.lines += block_lines
    return [KeptLine(base + n, text or "") for n, text in kept.select("n", "line").iter_rows()]
