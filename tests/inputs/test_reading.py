"""Reading: gzip through ISA-L (zlib where isal does not import), chunks of whole lines from a
reused buffer, and damage kept to the last whole line."""

from __future__ import annotations

import gzip
import io
import random
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from isal import isal_zlib
from typer.testing import CliRunner

from conftest import GENERATED, WARN, stream_of
from omlx_logscan.cli.app import app
from omlx_logscan.errors import InputError
from omlx_logscan.inputs import byte_blocks, decoding, sources
from omlx_logscan.inputs.sources import Source, read_chunks
from omlx_logscan.stream.event_stream import EventStream

runner = CliRunner()

GZ_CASES = sorted(p.parent.name for p in GENERATED.glob("*/omlx.log.gz"))


def _events(stream: EventStream) -> list[dict[str, Any]]:
    """The stream's events and request rows, without the source's name (``omlx.log`` or ``omlx.log.gz``)."""
    return [{**ev.as_dict(), "source": None} for ev in stream.events]


def _requests(stream: EventStream) -> dict[str, object]:
    return {name: column for name, column in stream.requests.columns.items() if name != "source"}


def test_gzip_is_inflated_through_isal(tmp_path: Path) -> None:
    log = tmp_path / "server.log.gz"
    log.write_bytes(gzip.compress(WARN.format(1, 1).encode()))
    stream = Source(log.name, log).open()
    try:
        assert stream.read(100) == WARN.format(1, 1).encode()
        assert decoding._zlib()[0] is isal_zlib
    finally:
        stream.close()


@pytest.fixture
def without_isal(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """isal as on a platform it has no wheel for: its import fails."""
    monkeypatch.setitem(sys.modules, "isal", None)
    decoding._zlib.cache_clear()
    yield
    decoding._zlib.cache_clear()


@pytest.mark.usefixtures("without_isal")
def test_without_isal_gzip_goes_through_zlib(tmp_path: Path) -> None:
    log = tmp_path / "server.log.gz"
    log.write_bytes(gzip.compress(_warnings(5000)))
    assert decoding._zlib()[0] is zlib
    assert stream_of(log).accounting.lines == 5000


@pytest.mark.slow
@pytest.mark.usefixtures("without_isal")
def test_without_isal_damaged_gzip_is_the_same_one_line_problem(tmp_path: Path) -> None:
    whole = gzip.compress(_warnings(200_000))
    log = tmp_path / "server.log.gz"
    log.write_bytes(whole[: len(whole) // 2])
    stream = stream_of(log)
    problem = stream.sources[0].problem
    assert problem is not None and "compressed data is truncated or corrupt" in problem and "\n" not in problem
    assert 0 < stream.accounting.lines < 200_000


@pytest.mark.slow
@pytest.mark.parametrize("block_bytes", [byte_blocks.BLOCK_BYTES, 4096])
@pytest.mark.parametrize("case", GZ_CASES)
def test_gzip_gives_the_events_of_its_plain_twin(
    case: str, block_bytes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A generator fixture read from its .gz (ISA-L, chunks from the reused buffer) and from the
    same bytes as a plain file (blocks read by the workers) gives the same events, requests and line count."""
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", block_bytes)  # small blocks: many chunks of the .gz
    packed = GENERATED / case / "omlx.log.gz"
    plain = tmp_path / "omlx.log"
    plain.write_bytes(gzip.decompress(packed.read_bytes()))
    from_gz, from_plain = stream_of(packed), stream_of(plain)
    assert from_gz.accounting.lines == from_plain.accounting.lines > 0
    assert from_gz.sources[0].problem is None
    assert _events(from_gz) == _events(from_plain)
    assert _requests(from_gz) == _requests(from_plain)
    assert from_gz.kind_counts == from_plain.kind_counts


def _warnings(count: int) -> bytes:
    return "".join(WARN.format(i % 60, i) for i in range(count)).encode()


_STEP_LINES = sources.READ_STEP // len(WARN.format(0, 0)) + 1  # the most lines one read gives


@pytest.mark.slow
def test_a_truncated_gzip_keeps_every_whole_line_before_the_damage(tmp_path: Path) -> None:
    """Not only the first chunk: every whole line that decompresses, but for the last read's worth."""
    text = _warnings(200_000)  # about 14 MB, so several chunks and many reads
    whole = gzip.compress(text)
    log = tmp_path / "server.log.gz"
    log.write_bytes(whole[: len(whole) // 2])
    readable = zlib.decompressobj(31).decompress(whole[: len(whole) // 2])
    stream = stream_of(log)
    problem = stream.sources[0].problem
    assert problem is not None and "compressed data is truncated or corrupt" in problem
    assert "\n" not in problem
    lines_before = readable.count(b"\n")
    assert lines_before - _STEP_LINES <= stream.accounting.lines <= lines_before
    assert stream.accounting.lines == stream.accounting.accounted
    result = runner.invoke(app, ["timeline", str(log)])
    assert result.exit_code == 0
    assert [line for line in result.stderr.splitlines() if "truncated or corrupt" in line]
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_gzip_damaged_in_the_middle_is_one_line_error_and_keeps_what_came_before(tmp_path: Path) -> None:
    text = _warnings(200_000)
    whole = bytearray(gzip.compress(text))
    rng = random.Random(16)
    middle = len(whole) // 2
    for at in range(middle, middle + 64):  # garbage in the deflate stream: ISA-L's own error
        whole[at] = rng.randrange(256)
    log = tmp_path / "server.log.gz"
    log.write_bytes(bytes(whole))
    stream = stream_of(log)
    problem = stream.sources[0].problem
    assert problem is not None and "compressed data is truncated or corrupt" in problem
    assert "\n" not in problem
    assert 100_000 - 2 * _STEP_LINES < stream.accounting.lines < 200_000


@pytest.mark.slow
def test_garbage_after_the_gzip_stream_is_damage(tmp_path: Path) -> None:
    log = tmp_path / "server.log.gz"
    log.write_bytes(gzip.compress(_warnings(100_000)) + b"junk")
    stream = stream_of(log)
    assert stream.sources[0].problem is not None and "truncated or corrupt" in stream.sources[0].problem
    assert 100_000 - _STEP_LINES <= stream.accounting.lines <= 100_000  # the last read's lines may go


def test_concatenated_gzip_members_are_one_input(tmp_path: Path) -> None:
    log = tmp_path / "server.log.gz"
    log.write_bytes(gzip.compress(_warnings(700)) + gzip.compress(_warnings(300)))
    stream = stream_of(log)
    assert stream.sources[0].problem is None and stream.accounting.lines == 1000


class _Trickle:
    """A stream that gives at most ``most`` bytes a read, as a pipe may, and can fail after ``fail_after`` bytes."""

    def __init__(self, data: bytes, most: int, fail_after: int | None = None) -> None:
        self._data = io.BytesIO(data)
        self._most = most
        self._fail_after = fail_after

    def read(self, size: int, /) -> bytes:
        return self._data.read(min(size, self._most))

    def readinto(self, buffer: memoryview, /) -> int | None:
        most = self._most
        if self._fail_after is not None:
            if self._data.tell() >= self._fail_after:
                raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            most = min(most, self._fail_after - self._data.tell())
        return self._data.readinto(buffer[:most])

    def close(self) -> None:
        pass


_LINES = st.lists(st.binary(max_size=90).map(lambda b: b.replace(b"\n", b"")), max_size=60)


@settings(deadline=None, max_examples=80)
@given(_LINES, st.booleans(), st.integers(1, 700), st.integers(1, 300))
def test_line_chunks_are_whole_lines_of_the_input(
    lines: list[bytes], last_newline: bool, chunk: int, most: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    data = data.decode("utf-8", errors="replace").encode()  # valid UTF-8: normalise leaves it alone
    head, rest = data[:most], data[most:]
    chunks = [bytes(v) for v in sources._line_views(_Trickle(rest, most), head, chunk, sources._reusing())]
    assert b"".join(chunks) == data
    assert all(c.endswith(b"\n") for c in chunks[:-1])
    assert all(c for c in chunks)


@settings(deadline=None, max_examples=40)
@given(_LINES, st.integers(1, 700), st.integers(1, 300), st.integers(0, 6000))
def test_a_failing_read_hands_on_the_whole_lines_before_it(
    lines: list[bytes], chunk: int, most: int, fail_after: int
) -> None:
    data = (b"\n".join(lines) + b"\n").decode("utf-8", errors="replace").encode()
    stream = _Trickle(data, most, fail_after)
    got: list[bytes] = []
    with pytest.raises(EOFError):
        for piece in sources._line_views(stream, b"", chunk, sources._reusing()):
            got.append(bytes(piece))
        raise EOFError("the input was read to its end")  # the failure was not reached: same check
    read = b"".join(got)
    if fail_after < len(data):  # every whole line before the failure, and nothing after it
        assert read == data[: data.rfind(b"\n", 0, fail_after) + 1]
    else:
        assert read == data


def test_a_line_longer_than_the_buffer_grows_it(tmp_path: Path) -> None:
    long = b"2026-09-15 20:00:01,000 - omlx.scheduler - WARNING - [-] - " + b"x" * 3_000_000 + b"\n"
    log = tmp_path / "server.log.gz"
    log.write_bytes(gzip.compress(_warnings(10) + long + _warnings(10)))
    chunks = list(read_chunks(Source(log.name, log), 1000))
    assert b"".join(chunks) == _warnings(10) + long + _warnings(10)


def test_a_compressed_read_error_is_an_input_error(tmp_path: Path) -> None:
    log = tmp_path / "server.log.gz"
    log.write_bytes(gzip.compress(_warnings(10))[:12])
    with pytest.raises(InputError, match="compressed data is truncated or corrupt"):
        list(read_chunks(Source(log.name, log)))
