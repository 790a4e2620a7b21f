"""The bulk scan: find the lines that matter without running Python on every line.

A source is read in blocks of whole lines by worker threads, one more than there are cores;
polars splits each block into lines and classifies them with vectorised tests, and the results
come back in file order. Bytes that are not UTF-8 are first mended the way the Python grammar
reads them (as Windows-1252), since polars accepts UTF-8 only. Routine single-line records
(DEBUG records, and INFO records no catalog literal occurs in) are only counted. Finished-request
lines, the one dense kind, stay in a polars table. Everything else, a small fraction of a big
log, goes to the Python line grammar as ``KeptLine`` rows; the records next to those lines that
it does not hand over say when a process last wrote anything (``parsing.unkept``).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

import polars as pl

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.blocks import ByteBlock, linked, read_blocks
from omlx_logscan.inputs.decoding import compression_of, file_head, normalise, refuse_binary, sniff_codec
from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.inputs.sources import Source
from omlx_logscan.parsing.catalog import (
    CHAT_COMPLETION,
    CHAT_COUNTS,
    GPU_LITERALS,
    GPU_MARKERS,
    NO_REQUEST_ID,
    PREFILTER_LITERALS,
    REQUEST_LOGGER,
)
from omlx_logscan.parsing.grammar import MAX_LINE_CHARS, PLAUSIBLE_YEARS
from omlx_logscan.parsing.unkept import RECORD_SCHEMA, Unkept, UnkeptRecords, unkept_records

# A line the grammar reads as a dated record, not as the continuation of the one before: a date
# and time (with up to six digits of fraction) and a separator after them. In ASCII digits and
# blanks, on which Python's re and polars' regex engine agree (not on every Unicode digit or
# space): block edges are tested with the one, the block's other lines with the other.
_DATED_LINE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[,.][0-9]{1,6})?(?:[ \t]*[-—][ \t]*|[ \t]+)"


# The file/console record prefix up to the level: level tests are anchored, so a message that
# merely mentions " - DEBUG - " is never taken for a DEBUG record.
_RECORD_PREFIX = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+ - [\w.]+ - "


_LEVEL_RECORD = {level: f"{_RECORD_PREFIX}{level} - " for level in ("TRACE", "DEBUG", "INFO")}


# A finished chat completion in the shape oMLX writes it (the catalog's parts of that shape),
# tested piece by piece because a regex over the whole line costs a few nanoseconds a byte: the
# stamp by the time parse, the fixed head by comparing slices, the counts by a short anchored
# regex that also captures the tokens. The test only routes lines: one it rejects still reaches
# the grammar through the catalog literal CHAT_COMPLETION, and so do the rare embedding requests,
# whose tokens the analysis does not count.
_STAMP_FORMAT = "%Y-%m-%d %H:%M:%S,%3f"


_STAMP_LEN = 23


_REQUEST_HEAD = f" - {REQUEST_LOGGER} - INFO - "


def _tokens_captured(pattern: str) -> str:
    """``pattern`` anchored, its digits ASCII (on which Python's re and polars' regex engine
    agree, as they do not on every Unicode digit), and only its ``tokens`` group capturing, so
    that the tokens are group 1. Applied once, to the catalog's CHAT_COUNTS."""

    def ascii_digits(match: re.Match[str]) -> str:
        in_class = match[1]  # a character class, or None for a \d outside one
        return "[0-9]" if in_class is None else "[" + in_class.replace(r"\d", "0-9") + "]"

    def tokens_only(match: re.Match[str]) -> str:
        return "(" if match[1] == "tokens" else "(?:"

    ascii_pattern = re.sub(r"\[([^\]]*)\]|\\d", ascii_digits, pattern)
    return "^" + re.sub(r"\(\?P<(\w+)>", tokens_only, ascii_pattern)


_CHAT_TAIL = _tokens_captured(CHAT_COUNTS)


# Text the grammar reads otherwise: a GPU error anywhere in the record makes it a gpu_error, and
# colour codes are removed before the message is matched.
_NOT_DENSE = "|".join([*(re.escape(marker) for marker in GPU_MARKERS), r"\x1b"])


# The grammar's own limits on a time: years it finds plausible, and no leap second (which the
# time parse would roll over into the next minute).
_FIRST_TIME = datetime(PLAUSIBLE_YEARS.start, 1, 1)


_END_TIME = datetime(PLAUSIBLE_YEARS.stop, 1, 1)


_INTERESTING = "|".join(
    [r"WARN|ERROR|CRITICAL|FATAL"] + [re.escape(lit) for lit in (*PREFILTER_LITERALS, *GPU_LITERALS)]
)


_NOT_ROUTINE = "|".join([" - WARNING - ", " - ERROR - ", " - CRITICAL - ", *(re.escape(lit) for lit in GPU_LITERALS)])


# One block more in flight than there are cores keeps them all busy while the next is read; the
# cap keeps memory flat on many-core machines.
IN_FLIGHT = min((os.cpu_count() or 2) + 1, 4)


AHEAD = 4 * IN_FLIGHT  # outputs (small: request rows and the lines for the grammar) read ahead of the caller


# The dense request table. Two more columns come only when a run needs them, since a column of
# nulls still costs 8 to 16 bytes a row: "key" (UInt64, to drop the requests two sources share)
# and "text" (String, the line, for the events command).
REQUEST_SCHEMA: dict[str, Any] = {
    "source": pl.UInt32,
    "line": pl.UInt32,
    "time": pl.Datetime("ms"),
    "tokens": pl.Int32,
}


@dataclass
class SourceScan:
    """What the scan of one source found."""

    source: Source
    index: int
    lines: int = 0
    routine_records: int = 0  # single-line INFO/DEBUG records of no kind, counted only
    levels: set[str] = field(default_factory=set)  # TRACE/DEBUG/INFO seen in the bulk scan
    # Finished-request rows (REQUEST_SCHEMA, then "key" and "text" when asked for), in file order.
    requests: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=REQUEST_SCHEMA))
    # Timed oMLX records the grammar never saw, at the edges of what it saw (RECORD_SCHEMA), in file order.
    records: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=RECORD_SCHEMA))
    problem: str | None = None  # why reading stopped early, if it did


def _numbered(index: int, blocks: list[tuple[int, pl.DataFrame]]) -> pl.DataFrame:
    """Blocks' request rows as lines of the source, in one table: (lines before the block, rows
    whose "n" counts from the block's first line) each. Numbering them once, at the end, costs
    the scan's caller no polars work per block."""
    if not blocks:
        return pl.DataFrame(schema=REQUEST_SCHEMA)
    extra = [c for c in ("key", "text") if c in blocks[0][1].columns]
    source = pl.lit(index, dtype=pl.UInt32).alias("source")
    numbered = [
        frame.select(source, (pl.col("n") + base).cast(pl.UInt32).alias("line"), "time", "tokens", *extra)
        for base, frame in blocks
    ]
    # The blocks' time and tokens are used as they are, not copied into one buffer: a big log's
    # request table then costs no second copy of itself at its peak.
    return pl.concat(numbered, rechunk=False)


@dataclass(slots=True)
class _BlockOutput:
    """What one block's plan found; its line numbers ``n`` count from the block's first line."""

    size: int  # bytes read from the source, for progress
    lines: int
    requests: pl.DataFrame  # n, time, tokens, and key/text when asked for
    kept: list[tuple[int, str]]  # (n, text) of the lines for the grammar
    levels: set[str]
    records: Unkept  # records not handed over, next to lines that were


_DATED_LINE_AT_START = re.compile(_DATED_LINE)


def _timed(line: bytes) -> bool:
    """The scan's timestamp test for one line, in Python: what the plan's ``ts`` gives that line."""
    # Undecodable bytes become U+FFFD, as they would become Windows-1252 letters: neither is a digit.
    return _DATED_LINE_AT_START.match(line[:160].decode("utf-8", errors="replace")) is not None


def _lines(block: ByteBlock) -> pl.LazyFrame:
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


def _plan(block: ByteBlock, keep_all: bool, keep_key: bool) -> pl.LazyFrame:
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
        .with_columns(total=pl.len(), ts=line.str.contains(_DATED_LINE).fill_null(False))
        .with_columns(single=ts & ts.shift(-1).fill_null(block.next_timed) & ts.shift(1).fill_null(block.prev_timed))
    )
    if keep_all:
        return marked.with_columns(
            prev=pl.lit(None, pl.String),
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
        marked.with_columns(debug=debug, prev=line.shift(1))  # the line before: a record's stamp, if not kept
        .with_columns(any_debug=pl.col("debug").any())
        .with_columns(routine=single & pl.col("debug") & ~line.str.contains(_NOT_ROUTINE).fill_null(False))
        .filter(~routine | (pl.col("n") == pl.col("total")) | (pl.col("n") == 1))
        .with_columns(_request_columns(keep_key))
        .with_columns(request=single & ~routine & pl.col("tokens").is_not_null())
    )


@cache  # built once: a block's plan is made on a worker thread while holding the GIL
def _request_columns(keep_key: bool) -> tuple[pl.Expr, ...]:
    """Time, tokens and de-duplication key of a finished chat completion, for the dense table.

    These run on every line the request test looks at, millions in a big log, so each is the
    cheapest that is exact. "tokens" is null on any line that is no finished chat completion in
    oMLX's own shape (a time with another fraction than ",mmm", another logger, 2026-13-45): the
    grammar reads those. No cache for the time parse: request times are nearly all distinct.
    """
    line = pl.col("line")
    time = line.str.head(_STAMP_LEN).str.to_datetime(_STAMP_FORMAT, strict=False, time_unit="ms", cache=False)
    head_end = _STAMP_LEN + len(_REQUEST_HEAD)
    with_id = NO_REQUEST_ID + CHAT_COMPLETION
    tokens = (
        pl.when(line.str.slice(head_end, len(with_id)) == with_id)
        .then(line.str.slice(head_end + len(with_id)).str.extract(_CHAT_TAIL, 1))
        .when(line.str.slice(head_end, len(CHAT_COMPLETION)) == CHAT_COMPLETION)
        .then(line.str.slice(head_end + len(CHAT_COMPLETION)).str.extract(_CHAT_TAIL, 1))
        .cast(pl.Int32, strict=False)  # more digits than fit: the grammar reads the line
    )
    shaped = (
        (line.str.slice(_STAMP_LEN, len(_REQUEST_HEAD)) == _REQUEST_HEAD)
        & time.is_between(_FIRST_TIME, _END_TIME, closed="left")
        & (line.str.slice(17, 2) != "60")  # the seconds
        & (line.str.len_bytes() <= MAX_LINE_CHARS)  # the grammar would read a cut line
        & ~line.str.contains(_NOT_DENSE)
    )
    columns = [time.alias("time"), pl.when(shaped).then(tokens).alias("tokens")]
    if keep_key:
        columns.append(line.str.replace(f" - {NO_REQUEST_ID}", " - ", literal=True).hash().alias("key"))
    return tuple(columns)


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
    """Plain files are read in blocks by positioned reads; compressed ones and streams go through Python's decoders."""
    path = source.path
    if path is None or path.suffix in (".gz", ".bz2", ".xz") or not path.is_file():
        return False
    head = file_head(path)
    plain = bool(head) and sniff_codec(head) is None and compression_of(head) is None
    if plain:
        refuse_binary(source.name, head)
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
    request_blocks: list[tuple[int, pl.DataFrame]] = []
    records = UnkeptRecords()

    def run(block: ByteBlock) -> _BlockOutput:
        return _run(block, source.name, keep_all, dedup_keys, keep_request_text)

    blocks = linked(read_blocks(source, native), _timed)
    outputs = _in_order(run, blocks)
    try:
        for output in outputs:
            on_kept(_take(result, output, request_blocks, records))
            if progress is not None:
                progress(output.size)
    except InputError as exc:
        result.problem = str(exc)
    finally:
        outputs.close()  # the workers stop before the blocks close, also when Ctrl-C lands between two blocks
        blocks.close()  # the file, held by a block read but never run
    result.requests = _numbered(index, request_blocks)
    result.records = records.table()
    if result.lines == 0 and result.problem is None:
        result.problem = f"{source.name}: empty file"
    return result


def _in_order(run: Callable[[ByteBlock], _BlockOutput], blocks: Iterator[ByteBlock]) -> Generator[_BlockOutput]:
    """Each block's output, in the blocks' order, the blocks read and run by ``IN_FLIGHT`` worker
    threads. The workers take the next block in turn, under a lock; for a plain file that is only
    finding where its last line ends, and each worker reads its own block (``ByteBlock.load``) as
    it runs it, so the blocks in flight are read in parallel. Reads and collects release the GIL,
    so the caller's Python work on one block overlaps polars' work on the next ones; the workers
    go on to the next blocks while the caller is busy, up to ``AHEAD`` outputs ahead of it. A
    read or a block that fails ends the output there: what the blocks before it found comes
    first, then the error."""
    changed = threading.Condition()  # guards everything below; signalled when any of it changes
    reading = threading.Lock()  # blocks are taken in order, one at a time, and numbered as taken
    ready: dict[int, _BlockOutput] = {}
    read = taken = 0  # blocks read by the workers; outputs handed to the caller
    end: int | None = None  # the number of the first block that is not there, or failed
    failure: BaseException | None = None
    stopping = False

    def finish(seq: int, problem: BaseException | None) -> None:
        nonlocal end, failure
        with changed:
            if end is None or seq < end or (seq == end and failure is None):
                end, failure = seq, problem  # a failed read outranks "no more blocks" at its place
            changed.notify_all()

    def work() -> None:
        nonlocal read
        seq = 0
        try:
            while True:
                with changed:
                    while not stopping and end is None and read - taken >= AHEAD:
                        changed.wait()
                    if stopping or end is not None:
                        return
                with reading:
                    seq = read
                    block = next(blocks, None)
                    if block is None:
                        finish(seq, None)
                        return
                    read += 1
                output = run(block)
                with changed:
                    ready[seq] = output
                    changed.notify_all()
        except BaseException as exc:  # a failed read, an unreadable block, or a bug: the caller raises it
            finish(seq, exc)

    workers = [threading.Thread(target=work, name="logscan-scan", daemon=True) for _ in range(IN_FLIGHT)]
    try:
        for worker in workers:
            worker.start()
        while True:
            with changed:
                while taken not in ready and (end is None or taken < end):
                    changed.wait()
                if end is not None and taken >= end:
                    break
                output = ready.pop(taken)
                taken += 1
                changed.notify_all()
            yield output
    finally:  # the end, or a consumer that stopped early: the workers finish their block and stop
        with changed:
            stopping = True
            changed.notify_all()
        for worker in workers:
            if worker.ident is not None:  # started
                worker.join()
    if failure is not None:
        raise failure


def _run(block: ByteBlock, source_name: str, keep_all: bool, keep_key: bool, keep_request_text: bool) -> _BlockOutput:
    """One block's plan, collected on a worker thread, and the small frames it gives filed."""
    size = block.size
    try:
        block.load()  # a plain file's block is read here, in parallel with the others
    except OSError as exc:
        raise InputError(f"{source_name}: read error ({exc.strerror or exc})") from None
    # polars must not fail while another plan runs (a failing plan can crash its threads), so
    # bytes that are not UTF-8 are mended first: Python reads those lines as Windows-1252. ASCII
    # blocks, nearly all, cost one quick check.
    block.data = normalise(block.data)
    try:
        requests, others, summary = pl.collect_all(
            _outputs(_plan(block, keep_all, keep_key), keep_key, keep_request_text),
            engine="in-memory",  # a block is small: the streaming engine's threads only cost here
        )
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError):
        raise InputError(f"{source_name}: unreadable text") from None
    block.data = b""  # free the bytes now, not when the last reference to the block goes
    lines = summary["total"][0] or 0
    kept = others.filter("kept")
    # Request rows are INFO records (the request test fixes the level): that leaves less to look for.
    known = {level for level, seen in (("DEBUG", summary["any_debug"][0]), ("INFO", requests.height)) if seen}
    levels = _levels(others, known)
    rows = list(kept.select("n", "line", "prev").iter_rows())
    unkept = unkept_records(rows, summary["first"][0], summary["last"][0], lines)
    return _BlockOutput(size, lines, requests.rechunk(), [(n, text or "") for n, text, _ in rows], levels, unkept)


def _outputs(
    plan: pl.LazyFrame, keep_key: bool, keep_request_text: bool
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """A block's finished-request rows, the rows Python may look at, its line count, levels and edges."""
    request, line = pl.col("request"), pl.col("line")
    extra = [pl.col("key")] if keep_key else []
    if keep_request_text:
        extra.append(pl.col("line").alias("text"))
    requests = plan.filter(request).select("n", "time", "tokens", *extra)
    others = plan.filter(~request & ~pl.col("routine")).select(
        "n", "line", "prev", kept=~pl.col("single") | pl.col("line").str.contains(_INTERESTING).fill_null(False)
    )
    summary = plan.select(pl.col("total", "any_debug").first(), first=line.first(), last=line.last())
    return requests, others, summary


def _take(
    result: SourceScan, output: _BlockOutput, requests: list[tuple[int, pl.DataFrame]], records: UnkeptRecords
) -> list[KeptLine]:
    """File one block's output under the source's line numbers; return its lines for the grammar."""
    if not output.lines:  # a block of no lines (an empty input)
        return []
    base = result.lines
    if output.requests.height:
        requests.append((base, output.requests))
    result.levels |= output.levels
    result.routine_records += output.lines - len(output.kept) - output.requests.height
    result.lines += output.lines
    records.take(output.records, base, output.lines, bool(output.kept) and output.kept[0][0] == 1)
    return [KeptLine(base + n, text) for n, text in output.kept]
