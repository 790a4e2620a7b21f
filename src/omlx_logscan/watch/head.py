"""What a watch that starts at the end of a log skips: its lifetimes, counted by the batch reader.

A watch numbers lifetimes as ``logscan sessions`` numbers them in the whole file, so the session
of an alert or of ``LOGSCAN_SESSION`` is the one the timeline of the same file names. Counting the
skipped part costs one batch read of it when the watch begins, the cost of ``logscan sessions``.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path

from omlx_logscan.analysis.lifetimes import lifetimes_of
from omlx_logscan.errors import InputError
from omlx_logscan.inputs.sources import Source, Stream
from omlx_logscan.stream.read import read_events


class _Head:
    """The first ``size`` bytes of a file as a stream, closed once read to their end."""

    def __init__(self, file: BufferedReader, size: int) -> None:
        self._file = file
        self._left = size

    def read(self, size: int, /) -> bytes:
        data = self._file.read(min(size, self._left))
        self._took(len(data))
        return data

    def readinto(self, buffer: memoryview, /) -> int | None:
        got = self._file.readinto(buffer[: self._left]) if self._left else 0
        self._took(got or 0)
        return got

    def _took(self, count: int) -> None:
        self._left -= count
        if not count:
            self.close()

    def close(self) -> None:
        self._file.close()


@dataclass(frozen=True)
class _HeadOf(Source):
    """A file's head as a source of its own (no path: the bulk reader would read the whole file)."""

    file: Path = Path()
    size: int = 0

    def open(self) -> Stream:
        return _Head(open(self.file, "rb"), self.size)


def sessions_in_head(path: Path, size: int) -> int:
    """How many lifetimes the batch analysis finds in the first ``size`` bytes (whole lines) of ``path``."""
    try:
        return len(lifetimes_of(read_events([_HeadOf(str(path), None, path, size)])))
    except (InputError, OSError):  # the follower reports a file it cannot read
        return 0
