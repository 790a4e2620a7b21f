"""What a watch that starts at the end of a log skips: its lifetimes, counted by the batch reader,
and what the probe needs of the running process.

A watch numbers lifetimes as ``logscan sessions`` numbers them in the whole file, so the session
of an alert or of ``LOGSCAN_SESSION`` is the one the timeline of the same file names. Counting the
skipped part costs one batch read of it when the watch begins, the cost of ``logscan sessions``.
The same read tells ``--probe`` whether the process logged its end last (no probe then), the log
levels (a DEBUG log shows arrivals) and the default model oMLX named at its last start.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path

from omlx_logscan.analysis.lifetimes import lifetimes_of
from omlx_logscan.errors import InputError
from omlx_logscan.inputs.sources import Source, Stream
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.read import read_events
from omlx_logscan.watch.probe_schedule import STOP_KINDS


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


@dataclass
class Head:
    """What the skipped part of a log says: how many lifetimes, the last stop, fatal exit or crash of
    the running one (None: it runs, as far as the log tells), the levels, the last default model."""

    sessions: int = 0
    ended: Event | None = None
    levels: frozenset[str] = frozenset()
    default_model: str | None = None


def read_head(path: Path, size: int) -> Head:
    """The batch reading of the first ``size`` bytes (whole lines) of ``path``."""
    try:
        stream = read_events([_HeadOf(str(path), None, path, size)])
    except (InputError, OSError):  # the follower reports a file it cannot read
        return Head()
    last = next((ev for ev in reversed(stream.events) if ev.kind in STOP_KINDS or ev.kind == "process_start"), None)
    start = next((ev for ev in reversed(stream.events) if ev.kind == "process_start"), None)
    return Head(
        len(lifetimes_of(stream)),
        last if last is not None and last.kind in STOP_KINDS else None,
        frozenset(stream.levels),
        start.fields.get("default_model") if start is not None else None,
    )
