"""Following a log while oMLX writes it, the way ``tail -F`` does: rotation, truncation, late creation."""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from omlx_logscan.inputs.decoding import decode_line
from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.inputs.sources import file_status, refuse_unreadable

READ_BYTES = 1 << 20


POLL_BYTES = 8 << 20  # read at most this much per poll, so a long backlog is processed in steps


MAX_LINE_BYTES = 1 << 20  # a "line" this long without a newline is data, not a line being written


@dataclass(frozen=True)
class FileChange:
    """Something that happened to the followed file rather than in it."""

    kind: str  # following, waiting, unreadable, rotated, truncated
    message: str


class Follower:
    """Read a log as it grows, like ``tail -F``: across rotation (a new inode), truncation, late creation."""

    def __init__(self, path: Path, *, from_start: bool) -> None:
        self.path = path
        self.caught_up = False  # what the file held when watching began has been read
        self.skipped = 0  # bytes of whole lines it held then, skipped (watching from its end)
        self._from_start = from_start
        self._started = False
        self._handle: IO[bytes] | None = None
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._line = 0
        self._partial = b""
        self._utf8_announced = False  # the file began with a UTF-8 byte-order mark
        self._said: str | None = None  # the last waiting/unreadable notice, so it is said once

    def check(self) -> None:
        """Refuse, before watching starts, a path that exists but can never be followed."""
        info = file_status(self.path, str(self.path))
        if info is not None:  # a file that is not there yet is waited for
            refuse_unreadable(self.path, str(self.path), info, pipes=False)

    def poll(self) -> list[KeptLine | FileChange]:
        """What was appended since the last poll, in file order, with changes of file in between."""
        out: list[KeptLine | FileChange] = []
        if self._handle is None:
            self._open(out)
            self._started = True  # a file that appears later is new: all of it is read
            if self._handle is None:
                self.caught_up = True  # nothing there yet, so nothing to catch up on
                return out
        if os.fstat(self._handle.fileno()).st_size < self._offset:
            self._rewind()
            out.append(FileChange("truncated", f"{self.path} was truncated: reading it again from the start"))
        if not self._read(out):
            return out  # more is waiting: the next poll goes on
        self.caught_up = True
        if self._replaced():
            self._read(out)  # the last lines written to the old file before it was renamed
            self._emit_partial(out)
            self.close()
            out.append(FileChange("rotated", f"{self.path} was rotated: following the new file"))
            self._open(out)
            if self._handle is not None:
                self._read(out)
        return out

    def take_unfinished(self) -> list[KeptLine]:
        """The last line without its newline, as a line: for a file known to be complete.

        While a file grows, such a line is still being written and waits for its newline; when no
        more will come (``watch --exit-at-end``), the batch reader counts it as a line, and so must we.
        """
        out: list[KeptLine | FileChange] = []
        self._emit_partial(out)
        return [item for item in out if isinstance(item, KeptLine)]

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _open(self, out: list[KeptLine | FileChange]) -> None:
        try:
            handle = open(self.path, "rb", buffering=0)  # noqa: SIM115 - kept open while following
        except FileNotFoundError:
            self._say(out, FileChange("waiting", f"waiting for {self.path} to appear"))
            return
        except OSError as exc:
            self._say(out, FileChange("unreadable", f"{self.path}: cannot open ({exc.strerror or exc}); retrying"))
            return
        info = os.fstat(handle.fileno())
        self._handle = handle
        self._identity = (info.st_dev, info.st_ino)
        self._offset = self._line = 0
        self._partial = b""
        if not self._started and not self._from_start:
            self._skip_existing()
        self._said = None
        out.append(FileChange("following", f"following {self.path} from line {self._line + 1}"))

    def _say(self, out: list[KeptLine | FileChange], change: FileChange) -> None:
        if self._said != change.message:
            out.append(change)
            self._said = change.message

    def _skip_existing(self) -> None:
        """Start after the last complete line, counting lines so events keep their true line numbers."""
        assert self._handle is not None
        position = last_break = lines = 0
        while data := self._handle.read(READ_BYTES):
            if position == 0:
                self._utf8_announced = data.startswith(codecs.BOM_UTF8)  # line 1 is skipped, its mark still counts
            lines += data.count(b"\n")
            cut = data.rfind(b"\n")
            if cut >= 0:
                last_break = position + cut + 1
            position += len(data)
        self._handle.seek(last_break)
        self._offset, self._line = last_break, lines
        self.skipped = last_break

    def _rewind(self) -> None:
        assert self._handle is not None
        self._handle.seek(0)
        self._offset = self._line = 0
        self._partial = b""

    def _replaced(self) -> bool:
        """A different file now has the name (rotation); a missing name means the new one is not there yet."""
        try:
            info = os.stat(self.path)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) != self._identity

    def _read(self, out: list[KeptLine | FileChange]) -> bool:
        """Read complete lines; True when the end of the file was reached."""
        assert self._handle is not None
        budget = POLL_BYTES
        while budget > 0:
            data = self._handle.read(min(READ_BYTES, budget))
            if not data:
                return True
            budget -= len(data)
            self._offset += len(data)
            pieces = (self._partial + data).split(b"\n")
            self._partial = pieces.pop()
            for raw in pieces:
                self._emit(raw, out)
            if len(self._partial) > MAX_LINE_BYTES:
                self._emit_partial(out)
        return False

    def _emit_partial(self, out: list[KeptLine | FileChange]) -> None:
        if self._partial:
            self._emit(self._partial, out)
            self._partial = b""

    def _emit(self, raw: bytes, out: list[KeptLine | FileChange]) -> None:
        self._line += 1
        out.append(KeptLine(self._line, self._decode(raw)))

    def _decode(self, raw: bytes) -> str:
        """A line's text exactly as the batch reader gives it, so watch and timeline see the same records.

        A file that opens with a UTF-8 byte-order mark is read as UTF-8 throughout, bad bytes
        replaced, as ``sources.read_chunks`` does; any other line goes through ``decode_line``.
        """
        if self._line == 1:
            self._utf8_announced = raw.startswith(codecs.BOM_UTF8)
            raw = raw.removeprefix(codecs.BOM_UTF8)
        if self._utf8_announced:
            return raw.decode("utf-8", errors="replace")
        return decode_line(raw)
