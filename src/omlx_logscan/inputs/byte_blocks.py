"""A plain file read in large blocks of whole lines, for the bulk scan."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.sources import Source, read_views

# A block's plan runs mostly on one core and touches its bytes several times: 8 MiB blocks stay
# in the caches better than larger ones and cost less per block in Python than smaller ones.
BLOCK_BYTES = 8 * 1024 * 1024

# Bytes read at once, from the back, to find where a block's last whole line ends.
PROBE_BYTES = 64 * 1024

# Of the lines at a block's edges, the bytes kept for ``linked`` (its test looks at a line's head).
EDGE_BYTES = 4096

CUT_SHORT = "the file was cut short while it was read"


def _pread_all(fd: int, length: int, offset: int) -> bytes:
    """Exactly ``length`` bytes at ``offset``; a file that now ends before them (truncated in
    place, as ``copytruncate`` rotation does) is an error, never a short block."""
    data = os.pread(fd, length, offset)
    while len(data) < length:  # one call gives at most about 2 GiB
        more = os.pread(fd, length - len(data), offset + len(data))
        if not more:
            raise OSError(CUT_SHORT)
        data += more
    return data


# Each worker thread's buffer for the blocks it reads, reused from block to block: a fresh 8 MiB
# bytes object a block costs the kernel a page fault per 4 KiB (a third of the reading time).
_buffers = threading.local()


def _pread_into(fd: int, length: int, offset: int) -> memoryview:
    """``_pread_all`` into this thread's reused buffer: valid until the thread's next read."""
    buffer: bytearray | None = getattr(_buffers, "buffer", None)
    if buffer is None or len(buffer) < length:
        buffer = _buffers.buffer = bytearray(max(length, BLOCK_BYTES))
    view = memoryview(buffer)[:length]
    done = 0
    while done < length:
        got = os.preadv(fd, [view[done:]], offset + done)
        if not got:
            raise OSError(CUT_SHORT)
        done += got
    return view


# Positioned reads into a buffer are not on every platform (``os.preadv``): else a copy a block.
REUSES_BUFFERS = hasattr(os, "preadv")


def _line_end_before(fd: int, lo: int, hi: int) -> int:
    """Just after the last newline in the file's bytes ``lo`` … ``hi``, or ``lo`` if there is none;
    read from the back, ``PROBE_BYTES`` at a time."""
    at = hi
    while at > lo:
        start = max(lo, at - PROBE_BYTES)
        found = _pread_all(fd, at - start, start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        at = start
    return lo


class SharedFile:
    """A file open for the reader and for every block of it not yet read: each block's worker
    reads its own bytes after the reader may have reached the end, so the file closes only
    when the last of them lets go."""

    __slots__ = ("_file", "_holders", "_lock")

    def __init__(self, path: Path) -> None:
        self._file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by the last let_go
        self._holders = 1  # the reader
        self._lock = threading.Lock()

    @property
    def fd(self) -> int:
        return self._file.fileno()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def hold(self) -> SharedFile:
        with self._lock:
            self._holders += 1
        return self

    def let_go(self) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0:
                self._file.close()


class BufferPool:
    """The buffers a stream's chunks are read into (a compressed file, stdin), each given back by
    the worker that ran its block: a fresh 8 MiB buffer a chunk would cost a page fault per 4 KiB.
    It holds no more buffers than there were blocks in flight at once."""

    __slots__ = ("_free", "_lock", "made")

    def __init__(self) -> None:
        self._free: list[bytearray] = []
        self._lock = threading.Lock()
        self.made = 0  # buffers made, not taken again

    def take(self, size: int) -> bytearray:
        """A buffer of at least ``size`` bytes: a free one, or a new one."""
        with self._lock:
            for index, buffer in enumerate(self._free):
                if len(buffer) >= size:
                    return self._free.pop(index)
            self.made += 1
        return bytearray(size)

    def give(self, buffer: bytearray) -> None:
        with self._lock:
            self._free.append(buffer)


@dataclass(slots=True)
class FileSpan:
    """Where a plain file's block is: the worker that runs the block reads it (``ByteBlock.load``)."""

    file: SharedFile
    offset: int


@dataclass(slots=True)
class ByteBlock:
    """Whole lines read at once. A plain file's block comes as a ``span`` of the file; ``load``
    reads it into ``data``."""

    data: bytes | memoryview = b""  # a memoryview: of the worker's reused buffer (``load(reuse=True)``)
    size: int = 0  # bytes of whole lines as read from the source (for progress)
    first: bytes = b""  # the head of the block's first line (``EDGE_BYTES`` at most), for ``linked``
    last: bytes = b""  # the head of its last line
    prev_timed: bool = False  # whether the line just before the block is timed (``_DATED_LINE``)
    next_timed: bool = False  # whether the line just after it is
    span: FileSpan | None = None  # where the block's bytes are, until ``load``
    pool: BufferPool | None = None  # where ``data``'s buffer goes back to once the block is done with
    idle: bool = False  # an empty block: the pipe's writer has stayed silent for ``sources.IDLE_S``

    def load(self, *, reuse: bool = False) -> None:
        """Read a plain file's block into ``data``; raises OSError if the file was cut short. With
        ``reuse``, ``data`` is a view of the worker thread's buffer, good until its next block."""
        if self.span is not None:
            span, self.span = self.span, None
            try:
                read = _pread_into if reuse and REUSES_BUFFERS else _pread_all
                self.data = read(span.file.fd, self.size, span.offset)
            finally:
                span.file.let_go()

    def free(self) -> None:
        """Let go of the block's bytes once it has been run: a pooled buffer is read into again."""
        data, self.data = self.data, b""
        if self.pool is not None and isinstance(data, memoryview) and isinstance(data.obj, bytearray):
            self.pool.give(data.obj)

    def release(self) -> None:
        """Let go of the file of a block that will not be run."""
        if self.span is not None:
            span, self.span = self.span, None
            span.file.let_go()


def _edge_lines(view: memoryview) -> tuple[bytes, bytes]:
    """The heads of the first and the last line of a chunk read whole."""
    size = len(view)
    data = (
        view.obj if isinstance(view.obj, bytes | bytearray) else bytes(view)
    )  # read_views' chunks start their buffers
    end = data.find(b"\n", 0, size)
    first = bytes(view[: min(end if end >= 0 else size, EDGE_BYTES)])
    end = size - 1 if data[size - 1 : size] == b"\n" else size
    start = data.rfind(b"\n", 0, end) + 1
    return first, bytes(view[start : min(end, start + EDGE_BYTES)])


def _file_block(file: SharedFile, offset: int, size: int) -> ByteBlock:
    """A block of the file, not yet read, with the heads of its edge lines: read from its first
    ``EDGE_BYTES`` and its last ``PROBE_BYTES`` (further back only for a longer last line)."""
    fd = file.fd
    head = _pread_all(fd, min(size, EDGE_BYTES), offset)
    first = head[: head.find(b"\n")] if b"\n" in head else head
    tail_at = offset + max(0, size - PROBE_BYTES)
    tail = head[tail_at - offset :] if size <= EDGE_BYTES else _pread_all(fd, offset + size - tail_at, tail_at)
    end = len(tail) - 1 if tail.endswith(b"\n") else len(tail)
    start = tail.rfind(b"\n", 0, end) + 1
    if start == 0 and tail_at > offset:  # the last line may begin before the tail: look further back
        line_start = _line_end_before(fd, offset, tail_at + end)
        last = _pread_all(fd, min(tail_at + end - line_start, EDGE_BYTES), line_start)
    else:
        last = tail[start : min(end, start + EDGE_BYTES)]
    return ByteBlock(size=size, first=first, last=last, span=FileSpan(file.hold(), offset))


def file_blocks(path: Path) -> Iterator[ByteBlock]:
    """A plain file in blocks of whole lines. Only where a block ends is found here, by reading
    its tail, and the heads of its edge lines; the worker that runs the block reads its bytes
    (``ByteBlock.load``), so the blocks in flight are read in parallel, each by its own worker,
    with positioned reads (no shared file position, one copy from the kernel). A file truncated
    in place while it is read ends the blocks with an OSError, never with a crash."""
    file = SharedFile(path)
    fd = file.fd
    try:
        offset, size, searched = 0, BLOCK_BYTES, 0  # no newline in the block's first ``searched`` bytes
        while True:
            left = os.fstat(fd).st_size - offset  # a file that grows is read on, as it grows
            if left < 0:
                raise OSError(CUT_SHORT)
            if left == 0:
                return
            if left <= size:  # the end of the file: its last line may lack the newline
                yield _file_block(file, offset, left)
                return
            cut = _line_end_before(fd, offset + searched, offset + size) - offset
            if cut == searched:  # one line longer than the block: a larger block
                searched, size = size, size * 2
                continue
            yield _file_block(file, offset, cut)
            offset += cut
            size, searched = BLOCK_BYTES, 0
    finally:
        file.let_go()


def linked(blocks: Iterator[ByteBlock], timed: Callable[[bytes], bool]) -> Generator[ByteBlock, None, None]:
    """Blocks that know whether the lines just before and after them are ``timed``, so that their
    first and last lines are classified as if the block had no edges. A block is handed on once
    the next one is read; a read that fails part-way hands on the last good block, then raises.
    A block not handed on when the blocks stop being taken (the consumer stopped) is released."""
    last: ByteBlock | None = None  # read, and not yet handed on
    try:
        for block in blocks:
            if not block.size:  # a pipe's pause: no line comes yet, so the block held goes on, then the pause
                if last is not None:
                    handed, last = last, None
                    yield handed
                yield block
                continue
            if last is not None:
                block.prev_timed = timed(last.last)
                last.next_timed = timed(block.first)
                handed, last = last, block
                yield handed
            else:
                last = block
        if last is not None:
            handed, last = last, None
            yield handed
    except InputError:
        if last is not None:
            handed, last = last, None
            yield handed
        raise
    finally:
        if last is not None:  # the consumer stopped before it
            last.release()


def read_blocks(source: Source, native: bool) -> Iterator[ByteBlock]:
    """Blocks of whole lines, read by the workers from a plain file or from Python's decoded chunks."""
    if native and source.path is not None:
        try:
            yield from file_blocks(source.path)
        except OSError as exc:
            raise InputError(f"{source.name}: read error ({exc.strerror or exc})") from None
        return
    pool = BufferPool()
    paused = False
    for view in read_views(source, BLOCK_BYTES, pool.take):
        if not view:  # a pipe fell silent: an empty block, so that ``linked`` hands on the one it holds
            yield ByteBlock(idle=paused)  # a second pause in a row: the writer is idle
            paused = True
            continue
        paused = False
        first, last = _edge_lines(view)
        yield ByteBlock(view, size=len(view), first=first, last=last, pool=pool)
