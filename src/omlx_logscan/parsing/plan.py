"""The polars plan for one block: the scan's reference path, and its fallback when the native
scanner is not built.

polars splits a block into lines and classifies them with vectorised tests. Routine single-line
records (DEBUG records, and INFO records no catalog literal occurs in) are only counted.
Finished-request lines and request arrivals, the dense kinds, become dense tables (``parsing.dense``). Everything
else goes to the Python line grammar; the records next to those lines that it does not hand over
say when a process last wrote anything (``parsing.unkept``).
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import cache

import polars as pl

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.byte_blocks import ByteBlock
from omlx_logscan.parsing.catalog import CHAT_COMPLETION, CHAT_COUNTS, NO_REQUEST_ID
from omlx_logscan.parsing.catalog_arrivals import ARRIVAL_FORMS, ARRIVALS
from omlx_logscan.parsing.dense import as_numbers, from_polars
from omlx_logscan.parsing.grammar import MAX_LINE_CHARS, PLAUSIBLE_YEARS
from omlx_logscan.parsing.shapes import (
    DATED_LINE,
    INTERESTING_LITERALS,
    LEVEL_RECORD,
    NOT_DENSE,
    NOT_ROUTINE,
    REQUEST_HEAD,
    STAMP_LEN,
    BlockOutput,
    arrival_head,
    arrival_levels,
)
from omlx_logscan.parsing.unkept import unkept_records

# A dense line (a finished chat completion, an arrival) in the shape oMLX writes it (the catalog's
# parts of that shape), tested piece by piece because a regex over the whole line costs a few
# nanoseconds a byte: the stamp by the time parse, the fixed head by comparing slices, a chat
# line's counts by a short anchored regex that also captures the tokens. The test only routes
# lines: one it rejects still reaches the grammar through the catalog literal, and so do the rare
# embedding requests, whose tokens the analysis does not count.
_STAMP_FORMAT = "%Y-%m-%d %H:%M:%S,%3f"


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


_NOT_DENSE = "|".join(re.escape(text) for text in NOT_DENSE)


# The grammar's own limits on a time: years it finds plausible, and no leap second (which the
# time parse would roll over into the next minute).
_FIRST_TIME = datetime(PLAUSIBLE_YEARS.start, 1, 1)


_END_TIME = datetime(PLAUSIBLE_YEARS.stop, 1, 1)


_INTERESTING = "|".join(re.escape(lit) for lit in INTERESTING_LITERALS)


_NOT_ROUTINE = "|".join(re.escape(lit) for lit in NOT_ROUTINE)


def _lines(block: ByteBlock) -> pl.LazyFrame:
    """A block's lines, numbered from 1 within the block.

    polars takes bytes that begin like a zlib stream ("x^", "x\\x01") for compressed data: such a
    block is handed over behind an empty line, which is numbered 0 and dropped.
    """
    raw = bytes(block.data)  # the same object: the plan's blocks are bytes, never views of a buffer
    shielded = raw[:1] == b"x"
    data = b"\n" + raw if shielded else raw
    lines = pl.scan_lines(data, name="line").with_row_index("n", offset=0 if shielded else 1)
    return lines.filter(pl.col("n") > 0) if shielded else lines


def _plan(block: ByteBlock, keep_all: bool, keep_key: bool) -> pl.LazyFrame:
    """The vectorised work on one block, as a lazy plan so that blocks run in parallel.

    A timed line is kept when an untimed line touches it (it heads or follows a multi-line
    record, so the grammar can join records and date untimed lines from their neighbours) or
    when it could match the catalog. The lines around the block count as its neighbours, so
    where blocks begin and end changes nothing. DEBUG records that no untimed line touches are
    routine and only counted: they are most of a DEBUG log, so they are dropped before the
    dense tests run on what is left. The plan's rows are the block's other lines, each marked
    ``request`` or ``arrival`` or neither, with the dense columns computed, and its last line,
    which carries ``total`` (the block's line count) even when it is routine.
    """
    line = pl.col("line")
    ts = pl.col("ts")
    single = pl.col("single")  # a timed line no untimed line touches: a one-line record
    marked = (
        _lines(block)
        .with_columns(total=pl.len(), ts=line.str.contains(DATED_LINE).fill_null(False))
        .with_columns(single=ts & ts.shift(-1).fill_null(block.next_timed) & ts.shift(1).fill_null(block.prev_timed))
    )
    if keep_all:
        return marked.with_columns(
            prev=pl.lit(None, pl.String),
            single=pl.lit(False),
            routine=pl.lit(False),
            request=pl.lit(False),
            arrival=pl.lit(False),
            any_debug=pl.lit(False),
            time=pl.lit(None, pl.Datetime("ms")),
            tokens=pl.lit(0, pl.Int32),
            form=pl.lit(None, pl.String),
            **({"key": pl.lit(None, pl.UInt64)} if keep_key else {}),
        )
    # " - DEBUG - " anywhere is cheap to find; a line that also holds a NOT_ROUTINE text is never routine.
    debug = line.str.contains(" - DEBUG - ", literal=True).fill_null(False)
    routine = pl.col("routine")
    dense = single & ~routine
    return (
        marked.with_columns(debug=debug, prev=line.shift(1))  # the line before: a record's stamp, if not kept
        .with_columns(any_debug=pl.col("debug").any())
        .with_columns(routine=single & pl.col("debug") & ~line.str.contains(_NOT_ROUTINE).fill_null(False))
        .filter(~routine | (pl.col("n") == pl.col("total")) | (pl.col("n") == 1))
        .with_columns(_dense_columns(keep_key))
        .with_columns(request=dense & pl.col("tokens").is_not_null(), arrival=dense & pl.col("form").is_not_null())
    )


def _opens(start: int, opening: str) -> pl.Expr:
    """Whether the line goes on at byte ``start`` with ``opening``, after the request-id field of a
    record outside a request or without one."""
    line = pl.col("line")
    with_id = NO_REQUEST_ID + opening
    return (line.str.slice(start, len(opening)) == opening) | (line.str.slice(start, len(with_id)) == with_id)


@cache  # built once: a block's plan is made on a worker thread while holding the GIL
def _dense_columns(keep_key: bool) -> tuple[pl.Expr, ...]:
    """Time, tokens, arrival form and de-duplication key of the dense lines.

    These run on every line the dense tests look at, millions in a big log, so each is the
    cheapest that is exact. "tokens" is null on any line that is no finished chat completion in
    oMLX's own shape (a time with another fraction than ",mmm", another logger, 2026-13-45), and
    "form" on any that is no arrival in its own: the grammar reads those. No cache for the time
    parse: request times are nearly all distinct.
    """
    line = pl.col("line")
    time = line.str.head(STAMP_LEN).str.to_datetime(_STAMP_FORMAT, strict=False, time_unit="ms", cache=False)
    head_end = STAMP_LEN + len(REQUEST_HEAD)
    with_id = NO_REQUEST_ID + CHAT_COMPLETION
    tokens = (
        pl.when(line.str.slice(head_end, len(with_id)) == with_id)
        .then(line.str.slice(head_end + len(with_id)).str.extract(_CHAT_TAIL, 1))
        .when(line.str.slice(head_end, len(CHAT_COMPLETION)) == CHAT_COMPLETION)
        .then(line.str.slice(head_end + len(CHAT_COMPLETION)).str.extract(_CHAT_TAIL, 1))
        .cast(pl.Int32, strict=False)  # more digits than fit: the grammar reads the line
    )
    form: pl.Expr = pl.lit(None, pl.String)
    for arrival in reversed(ARRIVALS):  # the first form whose head and opening the line has
        head = arrival_head(arrival.logger, arrival.level)
        shape = (line.str.slice(STAMP_LEN, len(head)) == head) & _opens(STAMP_LEN + len(head), arrival.opening)
        form = pl.when(shape).then(pl.lit(arrival.form)).otherwise(form)
    shaped = (
        time.is_between(_FIRST_TIME, _END_TIME, closed="left")
        & (line.str.slice(17, 2) != "60")  # the seconds
        & (line.str.len_bytes() <= MAX_LINE_CHARS)  # the grammar would read a cut line
        & ~line.str.contains(_NOT_DENSE)
    )
    request = line.str.slice(STAMP_LEN, len(REQUEST_HEAD)) == REQUEST_HEAD
    columns = [
        time.alias("time"),
        pl.when(shaped & request).then(tokens).alias("tokens"),
        pl.when(shaped).then(form).alias("form"),
    ]
    if keep_key:
        columns.append(line.str.replace(f" - {NO_REQUEST_ID}", " - ", literal=True).hash().alias("key"))
    return tuple(columns)


def _levels(df: pl.DataFrame, known: set[str]) -> set[str]:
    """``known`` plus whichever of TRACE/DEBUG/INFO the file-format records of ``df`` show."""
    missing = [level for level in LEVEL_RECORD if level not in known]
    if not missing or not df.height:
        return set(known)
    line = pl.col("line")
    found = set(known)
    for level in missing:
        # A literal finds the few candidate lines; the anchored test confirms them, so a message
        # quoting " - TRACE - " is no TRACE record.
        candidates = df.filter(line.str.contains(f" - {level} - ", literal=True).fill_null(False))
        if candidates.height and candidates.select(line.str.contains(LEVEL_RECORD[level]).any()).item():
            found.add(level)
    return found


def plan_block(block: ByteBlock, source_name: str, keep_all: bool, keep_key: bool, keep_text: bool) -> BlockOutput:
    """One block's plan, collected on a worker thread, and the small frames it gives filed."""
    size = block.size
    try:
        requests, arrivals, others, summary = pl.collect_all(
            _outputs(_plan(block, keep_all, keep_key), keep_key, keep_text),
            engine="in-memory",  # a block is small: the streaming engine's threads only cost here
        )
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError):
        raise InputError(f"{source_name}: unreadable text") from None
    block.free()  # now, not when the last reference to the block goes
    lines = summary["total"][0] or 0
    kept = others.filter("kept")
    # Request rows are INFO records (the request test fixes the level): that leaves less to look for.
    known = {level for level, seen in (("DEBUG", summary["any_debug"][0]), ("INFO", requests.height)) if seen}
    known |= arrival_levels({ARRIVAL_FORMS[code] for code in arrivals["form"].unique().to_list()})
    levels = _levels(others, known)
    rows = list(kept.select("n", "line", "prev").iter_rows())
    unkept = unkept_records(rows, summary["first"][0], summary["last"][0], lines)
    kept_lines = [(n, text or "") for n, text, _ in rows]
    return BlockOutput(size, lines, from_polars(requests), kept_lines, levels, unkept, from_polars(arrivals))


def _outputs(
    plan: pl.LazyFrame, keep_key: bool, keep_text: bool
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """A block's finished-request and arrival rows, the rows Python may look at, its line count,
    levels and edges."""
    request, arrival, line = pl.col("request"), pl.col("arrival"), pl.col("line")
    extra = [pl.col("key")] if keep_key else []
    if keep_text:
        extra.append(pl.col("line").alias("text"))
    requests = plan.filter(request).select("n", as_numbers("time"), "tokens", *extra)
    arrivals = plan.filter(arrival).select("n", as_numbers("time"), as_numbers("form"), *extra)
    others = plan.filter(~request & ~arrival & ~pl.col("routine")).select(
        "n", "line", "prev", kept=~pl.col("single") | pl.col("line").str.contains(_INTERESTING).fill_null(False)
    )
    summary = plan.select(pl.col("total", "any_debug").first(), first=line.first(), last=line.last())
    return requests, arrivals, others, summary
