"""A pipe is read as its writer sends: the whole lines it holds go on once it falls silent, not when
a chunk is full or the writer closes it."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from omlx_logscan.inputs import sources
from omlx_logscan.inputs.sources import Source, Stream, read_chunks, read_views


@dataclass(frozen=True)
class _PipeSource(Source):
    """stdin as a test gives it: the reading end of a pipe."""

    stream: Any = None

    def open(self) -> Stream:
        return self.stream  # type: ignore[no-any-return]


def _next_within(chunks: Iterator[bytes], seconds: float = 60.0) -> bytes | None:
    """The next chunk, or None if none came in ``seconds`` (the pipe is still open: a wait would hang)."""
    got: list[bytes] = []
    taker = threading.Thread(target=lambda: got.append(next(chunks)), daemon=True)
    taker.start()
    taker.join(seconds)
    return got[0] if got else None


def test_the_lines_of_a_silent_pipe_go_on_while_it_is_open() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as stream, os.fdopen(write_end, "wb", buffering=0) as writer:
        writer.write(b"2026-01-01 one\n2026-01-01 two\n2026-01-01 three\n2026-01-01 fo")
        views = read_views(_PipeSource("<stdin>", None, stream), sources.CHUNK_BYTES, sources._reusing())
        chunks = (bytes(view) for view in views)
        # The whole lines, then an empty chunk: the block reader holds a block until the next one
        # comes, and the pause tells it that none is coming yet.
        assert _next_within(chunks) == b"2026-01-01 one\n2026-01-01 two\n2026-01-01 three\n"
        assert _next_within(chunks) == b""
        writer.write(b"ur\n")
        writer.close()
        assert b"".join(chunks) == b"2026-01-01 four\n"


def test_the_pauses_of_a_pipe_are_no_chunks_of_text() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as stream, os.fdopen(write_end, "wb", buffering=0) as writer:
        writer.write(b"2026-01-01 one\n")
        chunks = read_chunks(_PipeSource("<stdin>", None, stream))
        assert _next_within(chunks) == b"2026-01-01 one\n"
        writer.write(b"2026-01-01 two\n")
        writer.close()
        assert list(chunks) == [b"2026-01-01 two\n"]


def test_a_file_is_no_pipe(tmp_path: Any) -> None:
    log = tmp_path / "server.log"
    log.write_bytes(b"a\n")
    with open(log, "rb") as handle:
        assert sources._pipe_quiet(handle) is None
    assert sources._pipe_quiet(io.BytesIO(b"a\n")) is None


class _Pipe:
    """A pipe that gives at most ``most`` bytes a read (``readinto1``), as a pipe may."""

    def __init__(self, data: bytes, most: int) -> None:
        self._data = io.BytesIO(data)
        self._most = most

    def read(self, size: int, /) -> bytes:
        return self._data.read(size)

    def readinto(self, buffer: memoryview, /) -> int:
        return self._data.readinto(buffer)

    def readinto1(self, buffer: memoryview, /) -> int:
        return self._data.readinto(buffer[: self._most])

    def close(self) -> None:
        pass


_LINES = st.lists(st.binary(max_size=90).map(lambda b: b.replace(b"\n", b"")), max_size=60)


@settings(deadline=None, max_examples=80)
@given(_LINES, st.integers(1, 700), st.integers(1, 300), st.lists(st.booleans(), min_size=1))
def test_chunks_of_a_pipe_that_falls_silent_are_whole_lines_of_the_input(
    lines: list[bytes], chunk: int, most: int, silences: list[bool]
) -> None:
    data = (b"\n".join(lines) + b"\n").decode("utf-8", errors="replace").encode()
    head, rest = data[:most], data[most:]
    silent = iter(silences * (2 * len(data) + 2))
    pipe = _Pipe(rest, most)
    chunks = [
        bytes(view) for view in sources._line_views(pipe, head, chunk, sources._reusing(), lambda seconds: next(silent))
    ]
    assert b"".join(chunks) == data
    assert all(piece.endswith(b"\n") for piece in chunks if piece)  # an empty chunk: a pause
