"""The bulk scan: find the lines that matter without running Python on every line.

A source is read in blocks of whole lines by worker threads, one more than there are cores;
each block is split into lines and classified (by the polars plan, ``parsing.plan``), and the
results come back in file order. Bytes that are not UTF-8 are first mended the way the Python
grammar reads them (as Windows-1252), since polars accepts UTF-8 only. Routine single-line
records are only counted. Finished-request lines and request arrivals, the dense kinds, stay
columns of numbers (``parsing.dense``). Everything else, a small fraction of a big log, goes to the Python line grammar
as ``KeptLine`` rows; the records next to those lines that it does not hand over say when a
process last wrote anything (``parsing.unkept``).
"""

from __future__ import annotations

import os
import re
import sys
import threading
from array import array
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.byte_blocks import ByteBlock, linked, read_blocks
from omlx_logscan.inputs.decoding import compression_of, file_head, normalise, refuse_binary, sniff_codec
from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.inputs.prefixes import line_shape
from omlx_logscan.inputs.sources import Source
from omlx_logscan.parsing.dense import ARRIVAL_SCHEMA, BIG, REQUEST_SCHEMA, Dense, repeated, shifted
from omlx_logscan.parsing.native import native_block, native_scanner
from omlx_logscan.parsing.shapes import DATED_LINE
from omlx_logscan.parsing.shapes import BlockOutput as _BlockOutput
from omlx_logscan.parsing.unkept import RECORD_SCHEMA, UnkeptRecords

if TYPE_CHECKING:
    from omlx_logscan.parsing.dense import Column

# One block more in flight than there are cores keeps them all busy while the next is read; the
# cap keeps memory flat on many-core machines.
IN_FLIGHT = min((os.cpu_count() or 2) + 1, 4)


# The longest the caller's thread waits for an output before it looks again. A Ctrl-C that lands
# while it waits (say, on a silent pipe) only marks the signal; Python raises it when this thread
# runs again, which an untimed wait would put off until the next output.
WAKE_S = 0.25


# How long a thread holds the GIL while another waits for it, during a native scan (Python's
# default is 5 ms). A worker whose block is scanned needs the GIL only briefly, to hand its output
# over; made to wait out the caller's grammar, it leaves its core idle: at 0.1 ms a 1 GiB DEBUG
# log's timeline took 0.59-0.60 s here instead of 0.64-0.67. The polars plan's workers convert
# tables under the GIL, and keep the default.
SWITCH_S = 0.0001


AHEAD = 4 * IN_FLIGHT  # outputs (small: request rows and the lines for the grammar) read ahead of the caller


@dataclass
class SourceScan:
    """What the scan of one source found."""

    source: Source
    index: int
    lines: int = 0
    routine_records: int = 0  # single-line INFO/DEBUG records of no kind, counted only
    levels: set[str] = field(default_factory=set)  # TRACE/DEBUG/INFO seen in the bulk scan
    # Finished-request rows (REQUEST_SCHEMA, then "key" and "text" when asked for), in file order.
    requests: Dense = field(default_factory=lambda: Dense.empty(REQUEST_SCHEMA))
    # Arrival rows (ARRIVAL_SCHEMA, then "key" and "text" when asked for), in file order.
    arrivals: Dense = field(default_factory=lambda: Dense.empty(ARRIVAL_SCHEMA))
    # Timed oMLX records the grammar never saw, at the edges of what it saw (RECORD_SCHEMA), in file order.
    records: Dense = field(default_factory=lambda: Dense.empty(RECORD_SCHEMA))
    problem: str | None = None  # why reading stopped early, if it did


class _Numbering:
    """One dense table of a source, gathered as its blocks come and numbered as lines of the source
    then, so that the scan's end has nothing left to do; its columns are ``schema``'s (and "key"
    and "text" when the blocks have them)."""

    def __init__(self, index: int, schema: dict[str, str]) -> None:
        self.index = index
        self.schema = schema
        self.columns: dict[str, Column] = {}

    def add(self, base: int, rows: Dense) -> Dense:
        """A block's rows, whose "n" counts from its first line, after ``base`` lines of the source:
        filed, and returned numbered."""
        gathered = len(self.columns["line"]) if self.columns else 0
        lines = shifted(rows.ints("n"), base, vectorised=gathered > BIG)
        columns: dict[str, Column] = {"source": repeated("I", self.index, rows.height), "line": lines}
        numbered = Dense(columns | {name: column for name, column in rows.columns.items() if name != "n"})
        if not self.columns:
            self.columns = {name: _empty_like(column) for name, column in numbered.columns.items()}
        for name, column in numbered.columns.items():
            self.columns[name].extend(column)
        return numbered

    def table(self) -> Dense:
        return Dense(self.columns) if self.columns else Dense.empty(self.schema)


def _empty_like(column: Column) -> Column:
    return array(column.typecode) if isinstance(column, array) else []


_DATED_LINE_AT_START = re.compile(DATED_LINE)


def _timed(line: bytes) -> bool:
    """The scan's timestamp test for one line, in Python: what the plan's ``ts`` gives that line."""
    # Undecodable bytes become U+FFFD, as they would become Windows-1252 letters: neither is a digit.
    return _DATED_LINE_AT_START.match(line[:160].decode("utf-8", errors="replace")) is not None


def _native(source: Source) -> bool:
    """Plain files of oMLX's lines are read in blocks by positioned reads; compressed ones (by their
    first bytes, whatever their name), lines of another shape (``inputs.prefixes``) and streams go
    through Python's decoders."""
    path = source.path
    if path is None or not path.is_file():
        return False
    head = file_head(path)
    plain = bool(head) and sniff_codec(head) is None and compression_of(head) is None
    if plain:
        refuse_binary(source.name, head)
    return plain and line_shape(head) is None


def scan_source(
    source: Source,
    index: int,
    *,
    keep_all: bool = False,
    keep_request_text: bool = False,
    dedup_keys: bool = False,
    progress: Callable[[int], None] | None = None,
    on_kept: Callable[[list[KeptLine]], None],
    on_dense: Callable[[Dense, Dense], None] | None = None,
    on_idle: Callable[[], None] | None = None,
) -> SourceScan:
    """Scan one source block by block, handing each block's lines for the grammar to ``on_kept``
    as they come: what is held grows with the request rows only. ``on_dense`` also gets each block's
    request and arrival rows, numbered, after its lines (for ``events`` while the input is read);
    ``on_idle`` is called when a pipe's writer has gone idle after the lines handed on."""
    try:
        native = _native(source)
    except InputError as exc:
        return SourceScan(source, index, problem=str(exc))
    callbacks = on_kept, on_dense, on_idle
    return _scan(source, index, native, keep_all, keep_request_text, dedup_keys, progress, *callbacks)


def _scan(
    source: Source,
    index: int,
    native: bool,
    keep_all: bool,
    keep_request_text: bool,
    dedup_keys: bool,
    progress: Callable[[int], None] | None,
    on_kept: Callable[[list[KeptLine]], None],
    on_dense: Callable[[Dense, Dense], None] | None = None,
    on_idle: Callable[[], None] | None = None,
) -> SourceScan:
    result = SourceScan(source, index)
    scanner = native_scanner()
    if keep_all or dedup_keys or keep_request_text:  # what the native scanner does not give: the plan's
        scanner = None
    requests, arrivals = _Numbering(index, REQUEST_SCHEMA), _Numbering(index, ARRIVAL_SCHEMA)
    records = UnkeptRecords()

    def run(block: ByteBlock) -> _BlockOutput:
        output = _run(block, source.name, keep_all, dedup_keys, keep_request_text, scanner)
        output.idle = block.idle
        return output

    blocks = linked(read_blocks(source, native), _timed)
    outputs = _in_order(
        run, blocks, waits=source.path is None or not source.path.is_file(), switch_s=SWITCH_S if scanner else None
    )
    try:
        for output in outputs:
            base = result.lines
            on_kept(_take(result, output, records))
            numbered = requests.add(base, output.requests), arrivals.add(base, output.arrivals)
            if on_dense is not None:
                on_dense(*numbered)
            if output.idle and on_idle is not None:
                on_idle()
            if progress is not None:
                progress(output.size)
    except InputError as exc:
        result.problem = str(exc)
    finally:
        outputs.close()  # the workers stop, then the blocks close, also when Ctrl-C lands between two blocks
    result.requests = requests.table()
    result.arrivals = arrivals.table()
    result.records = records.table()
    if result.lines == 0 and result.problem is None:
        result.problem = f"{source.name}: empty file"
    return result


def _in_order(
    run: Callable[[ByteBlock], _BlockOutput],
    blocks: Generator[ByteBlock, None, None],
    *,
    waits: bool = False,
    switch_s: float | None = None,
) -> Generator[_BlockOutput]:
    """Each block's output, in the blocks' order, the blocks read and run by ``IN_FLIGHT`` worker
    threads. The workers take the next block in turn, under a lock; for a plain file that is only
    finding where its last line ends, and each worker reads its own block (``ByteBlock.load``) as
    it runs it, so the blocks in flight are read in parallel. Reads and collects release the GIL,
    so the caller's Python work on one block overlaps polars' work on the next ones; the workers
    go on to the next blocks while the caller is busy, up to ``AHEAD`` outputs ahead of it. A
    read or a block that fails ends the output there: what the blocks before it found comes
    first, then the error. Once the workers have stopped, the blocks are closed (a block read but
    never run holds its file). A read of a pipe (``waits``) can wait for its writer for ever: when
    the caller stops early (``-n``, Ctrl-C) while a worker is held in one, the workers are not
    waited for, and the blocks are left to them; they end with the process. ``switch_s``: the
    GIL's switch interval while the workers run (None: as it is)."""
    changed = threading.Condition()  # guards everything below; signalled when any of it changes
    reading = threading.Lock()  # blocks are taken in order, one at a time, and numbered as taken
    ready: dict[int, _BlockOutput] = {}
    read = taken = 0  # blocks read by the workers; outputs handed to the caller
    end: int | None = None  # the number of the first block that is not there, or failed
    failure: BaseException | None = None
    stopping = False
    reader: threading.Thread | None = None  # the worker inside ``next(blocks)``, if one is

    def finish(seq: int, problem: BaseException | None) -> None:
        nonlocal end, failure
        with changed:
            if end is None or seq < end or (seq == end and failure is None):
                end, failure = seq, problem  # a failed read outranks "no more blocks" at its place
            changed.notify_all()

    def work() -> None:
        nonlocal read, reader
        seq = 0
        try:
            while True:
                with changed:
                    while not stopping and end is None and read - taken >= AHEAD:
                        changed.wait()
                    if stopping or end is not None:
                        return
                with reading:
                    if stopping:  # the caller stopped while this worker waited for its turn
                        return
                    seq, reader = read, threading.current_thread()
                    try:
                        block = next(blocks, None)
                    finally:
                        reader = None
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
    switching = sys.getswitchinterval()
    sys.setswitchinterval(switch_s or switching)
    try:
        for worker in workers:
            worker.start()
        while True:
            with changed:
                while taken not in ready and (end is None or taken < end):
                    changed.wait(WAKE_S)  # not for ever: Ctrl-C is handled only once this thread wakes
                if end is not None and taken >= end:
                    break
                output = ready.pop(taken)
                taken += 1
                changed.notify_all()
            yield output
    finally:  # the end, or a consumer that stopped early: the workers finish their block and stop
        sys.setswitchinterval(switching)
        with changed:
            stopping = True
            changed.notify_all()
        if not (waits and reader is not None):
            for worker in workers:
                if worker.ident is not None:  # started
                    worker.join()
            blocks.close()
        # else a worker waits in a read of a pipe, and the others may wait for their turn after it:
        # none is waited for (each ends when its read or its turn comes, or with the process), and
        # the blocks stay open for them
    if failure is not None:
        raise failure


def _run(
    block: ByteBlock,
    source_name: str,
    keep_all: bool,
    keep_key: bool,
    keep_request_text: bool,
    scanner: ModuleType | None = None,
) -> _BlockOutput:
    """One block's scan, on a worker thread: by the native ``scanner``, or else by the polars plan."""
    try:
        block.load(reuse=scanner is not None)  # a plain file's block is read here, in parallel with the others
    except OSError as exc:
        raise InputError(f"{source_name}: read error ({exc.strerror or exc})") from None
    if scanner is not None:  # it mends bytes that are not UTF-8 itself, finding them faster
        return native_block(scanner, block, source_name)
    # polars must not fail while another plan runs (a failing plan can crash its threads), so
    # bytes that are not UTF-8 are mended first: Python reads those lines as Windows-1252. ASCII
    # blocks, nearly all, cost one quick check.
    mended = normalise(bytes(block.data))
    block.free()  # the plan reads the copy: a pooled buffer can be read into again
    block.data = mended
    from omlx_logscan.parsing.plan import plan_block  # polars: only the plan's runs import it

    return plan_block(block, source_name, keep_all, keep_key, keep_request_text)


def _take(result: SourceScan, output: _BlockOutput, records: UnkeptRecords) -> list[KeptLine]:
    """File one block's output (but its dense rows) under the source's line numbers; return its
    lines for the grammar."""
    if not output.lines:  # a block of no lines (an empty input)
        return []
    base = result.lines
    result.levels |= output.levels
    result.routine_records += output.lines - len(output.kept) - output.requests.height - output.arrivals.height
    result.lines += output.lines
    records.take(output.records, base, output.lines, bool(output.kept) and output.kept[0][0] == 1)
    return [KeptLine(base + n, text) for n, text in output.kept]
