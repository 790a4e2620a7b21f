"""A plain file read in large blocks of whole lines, for the bulk scan."""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.decoding import is_utf8
from omlx_logscan.inputs.sources import Source, read_chunks

# A block's plan runs mostly on one core and touches its bytes several times: 8 MiB blocks stay
# in the caches better than larger ones and cost less per block in Python than smaller ones.
BLOCK_BYTES = 8 * 1024 * 1024


# Where it exists (Linux), MAP_POPULATE maps the window's pages in the mmap call, which does not hold
# the GIL: the copy that does (``Window.take``) then takes half as long, without a page fault.
_MAP_FLAGS = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)

_windows_lock = threading.Lock()
_windows_open = 0  # windows mapped and not yet closed, in every thread


def open_windows() -> int:
    """How many blocks' windows are mapped now: none once every block read has been run or dropped."""
    return _windows_open


class Window:
    """Bytes ``offset`` … ``offset + length`` of a file, mapped until they are taken or the window
    is closed. A map begins at a multiple of the allocation granularity: ``start`` is where the
    window's first byte is in it."""

    __slots__ = ("_base", "_map", "end", "start")

    def __init__(self, fd: int, offset: int, length: int) -> None:
        global _windows_open
        base = offset - offset % mmap.ALLOCATIONGRANULARITY
        self._base = base  # where the map begins in the file
        self._map: mmap.mmap | None = mmap.mmap(
            fd, offset - base + length, flags=_MAP_FLAGS, prot=mmap.PROT_READ, offset=base
        )
        self.start = offset - base
        self.end = self.start + length
        with _windows_lock:
            _windows_open += 1

    @property
    def view(self) -> mmap.mmap:
        if self._map is None:
            raise ValueError("the block's window is closed")
        return self._map

    def take(self) -> bytes:
        """The window's bytes (the one copy, in the thread that runs the block); the window closes.

        Touching a mapped page past the file's end kills the process (SIGBUS), so a file cut
        short since the window was mapped (truncated in place, as ``copytruncate`` rotation
        does) is an error here instead."""
        try:
            view = self.view
            if view.size() < self._base + self.end:  # the file's size now
                raise OSError("the file was cut short while it was read")
            return view[self.start : self.end]
        finally:
            self.close()

    def close(self) -> None:
        global _windows_open
        if self._map is None:
            return
        self._map.close()
        self._map = None
        with _windows_lock:
            _windows_open -= 1


@dataclass(slots=True)
class ByteBlock:
    """Bytes read at once; with ``cut_tail`` the last line is unfinished and is read again next.

    A plain file's block comes as a ``window`` of the file; ``load`` turns it into ``data``."""

    data: bytes = b""
    cut_tail: bool = False  # stored, not size < len(data): mending bad bytes changes the length
    size: int = 0  # bytes of whole lines as read from the source (for progress)
    prev_timed: bool = False  # whether the line just before the block is timed (``_DATED_LINE``)
    next_timed: bool = False  # whether the line just after it is
    window: Window | None = None  # the block's bytes, mapped from a plain file, until ``load``

    def load(self) -> None:
        """Copy a mapped block's bytes into ``data`` and close its window."""
        if self.window is not None:
            window, self.window = self.window, None
            self.data = window.take()

    def release(self) -> None:
        """Close the window of a block that will not be run."""
        if self.window is not None:
            window, self.window = self.window, None
            window.close()

    def first_line(self) -> bytes:
        buf, base = (self.window.view, self.window.start) if self.window is not None else (self.data, 0)
        end = buf.find(b"\n", base, base + self.size)
        return buf[base : end if end >= 0 else base + self.size]

    def last_line(self) -> bytes:
        buf, base = (self.window.view, self.window.start) if self.window is not None else (self.data, 0)
        end = base + self.size
        if buf[end - 1 : end] == b"\n":
            end -= 1
        before = buf.rfind(b"\n", base, end)  # the newline that ends the line before, if in the block
        return buf[before + 1 if before >= 0 else base : end]


def file_blocks(path: Path) -> Iterator[ByteBlock]:
    """A plain file in blocks of whole lines, each a window mapped from the file. Here only the
    end of a block's last whole line is looked for (its tail is all that is touched); the thread
    that runs the block copies its bytes out and closes the window (``ByteBlock.load``), so the
    blocks in flight are read in parallel, each by its own worker."""
    fd = os.open(path, os.O_RDONLY)
    try:
        offset, size = 0, BLOCK_BYTES
        while True:
            left = os.fstat(fd).st_size - offset  # a file that grows is read on, as it grows
            if left <= 0:
                return
            window = Window(fd, offset, min(size, left))
            if left < size:  # the end of the file: its last line may lack the newline
                yield ByteBlock(size=left, window=window)
                return
            try:
                cut = window.view.rfind(b"\n", window.start, window.end) + 1 - window.start
                if cut > 0 and not is_utf8(window.view[window.start + cut : window.end]):  # cut inside a character:
                    window.end = window.start + cut  # polars would reject the unfinished line
            except BaseException:
                window.close()
                raise
            if cut <= 0:  # one line longer than the block: map a larger window
                window.close()
                size *= 2
                continue
            yield ByteBlock(cut_tail=window.start + cut < window.end, size=cut, window=window)
            offset += cut
            size = BLOCK_BYTES
    finally:
        os.close(fd)


def linked(blocks: Iterator[ByteBlock], timed: Callable[[bytes], bool]) -> Generator[ByteBlock, None, None]:
    """Blocks that know whether the lines just before and after them are ``timed``, so that their
    first and last lines are classified as if the block had no edges. A block is handed on once
    the next one is read; a read that fails part-way hands on the last good block, then raises.
    A block not handed on when the blocks stop being taken (the consumer stopped) is released."""
    last: ByteBlock | None = None  # read, and not yet handed on
    try:
        for block in blocks:
            if last is not None:
                block.prev_timed = timed(last.last_line())
                last.next_timed = timed(block.first_line())
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
    """Blocks of whole lines, mapped from a plain file or from Python's decoded chunks."""
    if native and source.path is not None:
        try:
            yield from file_blocks(source.path)
        except OSError as exc:
            raise InputError(f"{source.name}: read error ({exc.strerror or exc})") from None
        return
    for data in read_chunks(source, BLOCK_BYTES):
        yield ByteBlock(data, size=len(data))
