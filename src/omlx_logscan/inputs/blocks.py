"""A plain file read in large blocks of whole lines, for the bulk scan."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.decoding import is_utf8
from omlx_logscan.inputs.sources import Source, read_chunks

# A block's plan runs mostly on one core and touches its bytes several times: 8 MiB blocks stay
# in the caches better than larger ones and cost less per block in Python than smaller ones.
BLOCK_BYTES = 8 * 1024 * 1024


@dataclass(slots=True)
class ByteBlock:
    """Bytes read at once; with ``cut_tail`` the last line is unfinished and is read again next."""

    data: bytes
    cut_tail: bool = False  # stored, not size < len(data): mending bad bytes changes the length
    size: int = 0  # bytes of whole lines as read from the source (for progress)
    prev_timed: bool = False  # whether the line just before the block is timed (``_DATED_LINE``)
    next_timed: bool = False  # whether the line just after it is

    def first_line(self) -> bytes:
        end = self.data.find(b"\n", 0, self.size)
        return self.data[: end if end >= 0 else self.size]

    def last_line(self) -> bytes:
        end = self.size - 1 if self.data[self.size - 1 : self.size] == b"\n" else self.size
        return self.data[self.data.rfind(b"\n", 0, end) + 1 : end]


def file_blocks(path: Path) -> Iterator[ByteBlock]:
    """A plain file in blocks of whole lines, by positioned reads (one copy, from the kernel)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        offset, size = 0, BLOCK_BYTES
        while True:
            data = os.pread(fd, size, offset)
            if len(data) < size:  # the end of the file: its last line may lack the newline
                if data:
                    yield ByteBlock(data, size=len(data))
                return
            cut = data.rfind(b"\n") + 1
            if cut == 0:  # one line longer than the block: read a larger block
                size *= 2
                continue
            if not is_utf8(data[cut:]):  # the unfinished line was cut inside a character: polars would reject it
                data = data[:cut]
            yield ByteBlock(data, cut_tail=cut < len(data), size=cut)
            offset += cut
            size = BLOCK_BYTES
    finally:
        os.close(fd)


def read_blocks(source: Source, native: bool) -> Iterator[ByteBlock]:
    """Blocks of whole lines, straight from a plain file or from Python's decoded chunks."""
    if native and source.path is not None:
        try:
            yield from file_blocks(source.path)
        except OSError as exc:
            raise InputError(f"{source.name}: read error ({exc.strerror or exc})") from None
        return
    for data in read_chunks(source):
        yield ByteBlock(data, size=len(data))
