"""Where log text comes from: files, folders of rotated logs, compressed files and stdin.

Everything here hands out *bytes in bounded chunks* that end on a line break, already
normalised to UTF-8, so the scanner never holds a whole file and never sees a broken line.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import select
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.decoding import SNIFF_BYTES, damaged_data, normalise, open_input, refuse_binary, sniff_codec
from omlx_logscan.inputs.prefixes import line_shape

CHUNK_BYTES = 32 * 1024 * 1024

# Bytes asked of a stream at once: a compressed file damaged part-way still gives every whole
# line it held up to this much before the damage.
READ_STEP = 1024 * 1024

# How long a pipe may stay silent before the whole lines read from it are handed on: a log fed
# slowly (``tail -f``, a live server) then shows while it is written, and a fast writer, whose pipe
# is never silent this long, is still read in large chunks.
QUIET_S = 0.05
# A writer silent this long after a pause is idle: it has written each record whole (a logger writes a
# record, traceback and all, at once), so the last record read is complete (``events`` writes its row).
IDLE_S = 1.0


# Names oMLX (and the app / Homebrew) give their logs, and how they and logrotate rotate and
# compress them: server.log.2026-09-16 (oMLX's own), server.log.1, server.log-20260916, .gz … .zst.
_LOG_NAME = re.compile(
    r"^(?P<base>server\.log|crash\.log|omlx(?:_app)?(?:\.err)?\.log)"
    r"(?:[.-](?P<day>\d{4}-?\d\d-?\d\d))?(?:\.(?P<number>\d+))?(?:\.(?:gz|bz2|xz|zst))?$"
)
# Any other .log (and its rotations): a log saved under a name of the user's (``omlx-3706.log``), read
# when its head is oMLX text (``Source.unsure``).
_OTHER_LOG_NAME = re.compile(r"\.log(?:[.-]\d{4}-?\d\d-?\d\d)?(?:\.\d+)?(?:\.(?:gz|bz2|xz|zst))?$")
LOG_NAMES = (
    "server.log and its rotations (.1, .YYYY-MM-DD, .gz, .zst), crash.log, omlx.log, omlx.err.log, "
    "or any other .log that holds oMLX text"
)
HEAD_BYTES = 1024 * 1024  # what is read of a file's head to tell whether it is an oMLX log


class Stream(Protocol):
    """An input opened for reading: a file, a decompressing file, or stdin."""

    def read(self, size: int, /) -> bytes: ...

    def readinto(self, buffer: memoryview, /) -> int | None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Source:
    """One input stream; ``name`` is what outputs print as ``source``."""

    name: str
    path: Path | None  # None for stdin
    skipped: str | None = field(default=None, kw_only=True)  # why a file is not read (named in the accounting)
    # A folder's file named as oMLX names none of its files: read only when its head is oMLX text.
    unsure: bool = field(default=False, kw_only=True)

    def open(self) -> Stream:
        """The source's bytes, decompressed when they begin as compressed data (whatever the name)."""
        if self.path is None and sys.stdin is None:  # started with stdin closed (``<&-``)
            raise InputError("stdin is closed: give a log file, or pipe the log in")
        return cast(Stream, open_input(self.path, sys.stdin.buffer, self.name))


@dataclass(frozen=True)
class HeadSource(Source):
    """The first ``HEAD_BYTES`` of a file (decompressed, up to its last whole line), read as a stream of
    their own: enough to tell whether it is an oMLX log without reading it all."""

    file: Path = Path()

    def open(self) -> Stream:
        stream = open_input(self.file, sys.stdin.buffer, self.name)
        try:
            head = stream.read(HEAD_BYTES)
        finally:
            stream.close()
        return io.BytesIO(head[: head.rfind(b"\n") + 1] if len(head) == HEAD_BYTES else head)


def path_name(path: Path | str) -> str:
    """A path as text every output can hold: bytes of a file name that are not UTF-8 (which Python
    keeps as lone surrogates, and JSON, Parquet and XML refuse) are written as ``\\xff``."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _rotation_key(path: Path) -> tuple[int, str, int, str, int, str]:
    """Oldest first: server.log's rotations, then the others by name; within each, dated rotations
    by date, numbered ones from the highest number (logrotate's oldest), and the current file last."""
    match = _LOG_NAME.match(path.name)
    assert match is not None  # only log names are sorted
    base, day, number = match["base"], match["day"] or "", int(match["number"] or 0)
    current = not (day or number)
    return (base != "server.log", base, current, day.replace("-", ""), -number, path.name)


def resolve(paths: list[str]) -> list[Source]:
    """Turn the user's arguments into sources, refusing what cannot be read; a folder's files that
    are not read are sources too, ``skipped`` saying why, so the accounting names every one."""
    if not paths:
        raise InputError("no input: give a log file, a folder of logs, or - for stdin")
    sources: list[Source] = []
    for arg in paths:
        if arg == "-":
            sources.append(Source("<stdin>", None))
            continue
        path = Path(arg).expanduser()
        info = file_status(path, arg)
        if info is None:
            raise InputError(f"{arg}: no such file or folder")
        if stat.S_ISDIR(info.st_mode):
            sources.extend(_folder(path, arg))
        else:
            refuse_unreadable(path, arg, info, pipes=True)
            empty = stat.S_ISREG(info.st_mode) and info.st_size == 0  # a log just rotated at midnight, say
            sources.append(Source(path_name(path), path, skipped="empty" if empty else None))
    if all(source.skipped for source in sources):  # nothing to read: the empty files given are the error
        raise InputError("; ".join(f"{source.name}: empty file" for source in sources if source.skipped == "empty"))
    return _unique(sources)


def _folder(folder: Path, arg: str) -> list[Source]:
    """Every entry of a log folder: its logs, oldest first, to read; the rest named as skipped."""
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise InputError(f"{arg}: cannot read the folder ({exc.strerror or exc})") from None
    logs: list[Path] = []
    unsure: list[Path] = []
    skipped: list[Source] = []
    for entry in entries:
        info = file_status(entry, str(entry))
        reason = _skip_reason(entry, info)
        if reason is None:
            assert info is not None
            refuse_unreadable(entry, str(entry), info, pipes=False)
            (logs if _LOG_NAME.match(entry.name) else unsure).append(entry)
        else:
            skipped.append(Source(path_name(entry), entry, skipped=reason))
    if not logs and not unsure:
        empty = [source.path.name for source in skipped if source.path and source.skipped == "empty"]
        held = f"its logs are empty ({', '.join(empty)})" if empty else f"holds no oMLX logs ({LOG_NAMES})"
        raise InputError(f"{arg}: {held}")
    return [
        *(Source(path_name(p), p) for p in sorted(logs, key=_rotation_key)),
        *(Source(path_name(p), p, unsure=True) for p in unsure),
        *skipped,
    ]


def _skip_reason(entry: Path, info: os.stat_result | None) -> str | None:
    """Why a folder's entry is not read (None: it is a log to read)."""
    if info is None:
        return "gone while the folder was read"
    if stat.S_ISDIR(info.st_mode):
        return "a folder (folders are not read inside a folder)"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if not (_LOG_NAME.match(entry.name) or _OTHER_LOG_NAME.search(entry.name)):
        return "not an oMLX log name"
    if info.st_size == 0:
        return "empty"
    return None


def file_status(path: Path, name: str) -> os.stat_result | None:
    """``path``'s status, or None when nothing is there (which each reader answers in its own way);
    a status that cannot be read is refused, ``name`` being how the user gave the path."""
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except PermissionError:
        raise InputError(f"{name}: permission denied") from None
    except OSError as exc:  # e.g. a symlink loop
        raise InputError(f"{name}: cannot open ({exc.strerror or exc})") from None


def refuse_unreadable(path: Path, name: str, info: os.stat_result, *, pipes: bool) -> None:
    """Refuse what is no file to read: a device, a socket, a folder (and, unless ``pipes``, a named
    pipe, which is read once and cannot be followed), or a file without read permission."""
    if not (stat.S_ISREG(info.st_mode) or (pipes and stat.S_ISFIFO(info.st_mode))):
        raise InputError(f"{name}: not a regular file")
    if not os.access(path, os.R_OK):
        raise InputError(f"{name}: permission denied")


def _unique(sources: list[Source]) -> list[Source]:
    """Each file once, however it was named (a folder and a file inside it, a path and a symlink)."""
    seen: set[Path] = set()
    out: list[Source] = []
    for source in sources:
        real = source.path.resolve() if source.path is not None else None
        if real is not None and real in seen:
            continue
        if real is not None:
            seen.add(real)
        out.append(source)
    return out


class _Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


def _raw_chunks(stream: _Readable, codec: str, chunk_bytes: int) -> Iterator[bytes]:
    """Text in another encoding, transcoded to UTF-8, in chunks."""
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    while True:
        data = stream.read(chunk_bytes)
        text = decoder.decode(data, final=not data)
        if text:
            yield text.encode("utf-8")
        if not data:
            return


def _transcoded(stream: _Readable, codec: str, chunk_bytes: int) -> Iterator[bytes]:
    """Chunks of whole lines of text in another encoding, as UTF-8."""
    pending = b""
    for data in _raw_chunks(stream, codec, chunk_bytes):
        data = pending + data
        cut = data.rfind(b"\n")
        if cut < 0:
            pending = data
            continue
        pending = data[cut + 1 :]
        yield normalise(data[: cut + 1])
    if pending:
        yield normalise(pending)


# Where ``_line_views`` reads its next chunk into: a buffer of at least the size asked for. It may
# be the buffer of the chunk before, when its consumer has copied that chunk out (``_reusing``).
Take = Callable[[int], bytearray]


def _reusing() -> Take:
    """One buffer for every chunk, replaced only by a larger one."""
    held: list[bytearray] = []

    def take(size: int) -> bytearray:
        if not held or len(held[0]) < size:
            held[:] = [bytearray(size)]
        return held[0]

    return take


def _moved(take: Take, view: memoryview, start: int, filled: int) -> tuple[bytearray, memoryview]:
    """A buffer from ``take`` (the same again, for a consumer done with it) that begins with the
    bytes ``view`` holds after a chunk handed on: from ``start`` to ``filled``."""
    buf = take(len(view))
    following = memoryview(buf)
    following[: filled - start] = view[start:filled]
    return buf, following


def _line_views(
    stream: Stream, head: bytes, chunk_bytes: int, take: Take, quiet: Callable[[float], bool] | None = None
) -> Iterator[memoryview]:
    """Chunks of whole lines, each read (decompressed) straight into a buffer from ``take``; the
    unfinished line after a chunk moves to the front of the next buffer. The buffer grows to
    ``chunk_bytes`` as the input goes on, and beyond only for a line longer than that. A read
    that fails hands on the whole lines read before it, then raises.

    With ``quiet`` (a pipe: see ``_pipe_quiet``) each read takes what is there, and when a short read
    finds the pipe silent the whole lines held go on at once, followed by an empty chunk: the block
    reader hands a block on once the next one is read (it must know whether the line after it is
    timed), and a pause tells it that none is coming yet. A second empty chunk follows when the
    pipe then stays silent for ``IDLE_S``: the writer is idle."""
    buf = take(max(min(chunk_bytes, READ_STEP), len(head), 1))
    view = memoryview(buf)
    view[: len(head)] = head
    filled = len(head)
    read = stream.readinto if quiet is None else cast(_Partial, stream).readinto1
    silent = quiet is not None and 0 < filled < SNIFF_BYTES  # the head stopped short: the pipe fell silent
    while True:
        if silent and (cut := buf.rfind(b"\n", 0, filled) + 1):
            yield view[:cut]
            buf, view = _moved(take, view, cut, filled)
            filled -= cut
            yield view[:0]  # a pause
            if quiet is not None and quiet(IDLE_S):
                yield view[:0]  # and the writer is idle
        if filled == len(view):
            cut = buf.rfind(b"\n", 0, filled) + 1
            if len(view) < chunk_bytes or not cut:  # grow: a small input never needs a large buffer
                buf = take(2 * len(view))
                grown = memoryview(buf)
                grown[:filled] = view[:filled]
                view = grown
            else:
                yield view[:cut]
                buf, view = _moved(take, view, cut, filled)
                filled -= cut
        wanted = min(len(view), filled + READ_STEP) - filled
        try:
            got = read(view[filled : filled + wanted])
        except Exception:
            cut = buf.rfind(b"\n", 0, filled) + 1
            if cut:
                yield view[:cut]
            raise
        if not got:
            if filled:
                yield view[:filled]
            return
        filled += got
        silent = quiet is not None and got < wanted and quiet(QUIET_S)


class _Partial(Protocol):
    """A stream that can give what it holds now (one read of the pipe at most)."""

    def read1(self, size: int, /) -> bytes: ...

    def readinto1(self, buffer: memoryview, /) -> int: ...


def _pipe_quiet(stream: Stream) -> Callable[[float], bool] | None:
    """For a pipe, socket or terminal (its writer decides when data comes): a test of whether it
    stays silent for so many seconds; None for anything else (a file is read in full-sized chunks)."""
    fileno = getattr(stream, "fileno", None)
    if fileno is None or not hasattr(stream, "readinto1"):
        return None
    try:
        fd = fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):  # no descriptor (an in-memory stream), or a closed one
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return None
    return lambda seconds: not select.select([fd], [], [], seconds)[0]


def _read_head(stream: Stream, quiet: Callable[[float], bool] | None) -> bytes:
    """The first ``SNIFF_BYTES`` (fewer at the end); of a pipe, what came before it fell silent
    after a whole line, so a log written slowly is not held until that much of it is there."""
    if quiet is None:
        return stream.read(SNIFF_BYTES)
    head = b""
    while len(head) < SNIFF_BYTES:
        more = cast(_Partial, stream).read1(SNIFF_BYTES - len(head))
        if not more:
            break
        head += more
        if b"\n" in head and quiet(QUIET_S):
            break
    return head


def read_chunks(source: Source, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """UTF-8 chunks of whole lines (the last line of the input may lack its newline)."""
    for view in read_views(source, chunk_bytes, _reusing()):
        if view:  # not a pipe's pause
            yield normalise(bytes(view))


def read_views(source: Source, chunk_bytes: int, take: Take) -> Iterator[memoryview]:
    """Chunks of whole lines, as read: views of buffers from ``take``, each good until the next
    chunk is asked for, or for as long as ``take`` does not hand its buffer out again; an empty one
    where a pipe fell silent. Text in another encoding comes as UTF-8; bytes that are not UTF-8 are
    left for the consumer to mend."""
    try:
        stream = source.open()
    except OSError as exc:
        raise InputError(f"{source.name}: cannot open ({exc.strerror or exc})") from None
    try:
        quiet = _pipe_quiet(stream)
        head = _read_head(stream, quiet)
        codec = sniff_codec(head)
        if codec is None:  # text in UTF-16 is full of NULs, and no binary data
            refuse_binary(source.name, head)
        # CR line ends, a prefix on every line: reshaped as oMLX's lines, in any encoding
        shape = line_shape(head if codec is None else head.decode(codec, errors="ignore").encode())
        if codec is None and shape is None:
            yield from _line_views(stream, head, chunk_bytes, take, quiet)
            return
        whole = _Prepend(head, stream)
        if codec is not None:
            chunks = _transcoded(whole, codec, chunk_bytes)
        elif quiet is not None:  # a prefixed log through a pipe (docker compose logs -f): as it comes
            chunks = _arrivals(whole, quiet, chunk_bytes)
        else:
            chunks = iter(lambda: whole.read(chunk_bytes), b"")
        yield from (memoryview(chunk) for chunk in (chunks if shape is None else shape.lines(chunks)))
    except damaged_data() as exc:
        raise InputError(f"{source.name}: compressed data is truncated or corrupt ({exc})") from None
    except OSError as exc:  # bz2 reports damage as OSError; so does a disk that fails mid-read
        kind = "read error" if isinstance(stream, io.BufferedReader) else "compressed data is truncated or corrupt"
        raise InputError(f"{source.name}: {kind} ({exc})") from None
    finally:
        if source.path is not None:
            stream.close()


class _Prepend:
    """A read()-able stream that first returns bytes already sniffed from its head."""

    def __init__(self, head: bytes, rest: Stream) -> None:
        self._head = head
        self._rest = rest

    def read(self, size: int) -> bytes:
        return self._first(size) or self._rest.read(size)

    def read1(self, size: int) -> bytes:
        """What there is now (of a pipe: one read at most)."""
        return self._first(size) or cast(_Partial, self._rest).read1(size)

    def _first(self, size: int) -> bytes:
        out, self._head = self._head[:size], self._head[size:]
        return out


def _arrivals(stream: _Prepend, quiet: Callable[[float], bool], chunk_bytes: int) -> Iterator[bytes]:
    """A pipe's bytes in chunks of ``chunk_bytes``, or of what came before it fell silent; an empty
    chunk where it did, and a second one when its writer then stays idle (as ``_line_views``)."""
    held: list[bytes] = []
    size = 0
    while data := stream.read1(chunk_bytes - size):
        held.append(data)
        size += len(data)
        silent = size < chunk_bytes and quiet(QUIET_S)
        if size < chunk_bytes and not silent:
            continue
        yield b"".join(held)
        held, size = [], 0
        if silent:
            yield b""
            if quiet(IDLE_S):
                yield b""
    if held:
        yield b"".join(held)
