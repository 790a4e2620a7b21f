"""Bytes to text: compressed data, byte-order marks, binary data, and lines that are not UTF-8."""

from __future__ import annotations

import bz2
import codecs
import gzip
import importlib
import lzma
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, cast

from omlx_logscan.errors import InputError

# The first bytes each compressed format begins with: data is recognised by them, whatever its name.
MAGIC = {
    "gzip": b"\x1f\x8b",
    "bzip2": b"BZh",
    "xz": b"\xfd7zXZ\x00",
    "zstd": b"\x28\xb5\x2f\xfd",
}
MAGIC_BYTES = max(len(magic) for magic in MAGIC.values())
SNIFF_BYTES = 64 * 1024  # bytes read from an input's head to tell its encoding and whether it is text


def compression_of(head: bytes) -> str | None:
    """The compressed format ``head`` begins with, if any (checked before any test for binary data)."""
    return next((name for name, magic in MAGIC.items() if head.startswith(magic)), None)


@cache  # imported on the first gzip input only: a run on plain files never loads it
def _gzip() -> tuple[Callable[..., Any], tuple[type[Exception], ...]]:
    """gzip's opener and what it raises for damaged data: ISA-L's (python-isal), which inflates
    about 2.5 times as fast, or the standard library's zlib where isal does not import."""
    try:
        from isal import igzip, igzip_lib
    except ImportError:
        return gzip.open, (gzip.BadGzipFile, zlib.error)
    return igzip.open, (igzip.BadGzipFile, cast(type[Exception], igzip_lib.IsalError))  # the stub calls it an instance


def damaged_data() -> tuple[type[Exception], ...]:
    """What the decompressors raise for data that is truncated or corrupt (bz2 raises OSError)."""
    return (EOFError, lzma.LZMAError, *_gzip()[1])


def _zstd(source: BinaryIO | Path, name: str) -> BinaryIO:
    """zstd by the standard library's module (Python 3.14) or the ``zstandard`` package, if either is there."""
    for module_name in ("compression.zstd", "zstandard"):
        try:
            module: Any = importlib.import_module(module_name)
        except ImportError:
            continue
        return cast(BinaryIO, module.open(source, "rb"))
    raise InputError(f"{name}: zstd-compressed data (pip install zstandard, or: zstd -dc {name} | logscan … -)")


def _opener(kind: str | None, name: str) -> Callable[[BinaryIO | Path], BinaryIO] | None:
    """What reads a file or stream of ``kind`` decompressed; None for data that is not compressed."""
    match kind:
        case "gzip":
            return lambda source: cast(BinaryIO, _gzip()[0](source, "rb"))
        case "bzip2":
            return lambda source: cast(BinaryIO, bz2.open(source, "rb"))
        case "xz":
            return lambda source: cast(BinaryIO, lzma.open(source, "rb"))
        case "zstd":
            return lambda source: _zstd(source, name)
        case _:
            return None


def _peek(stream: BinaryIO) -> bytes:
    """A stream's first bytes, left unread: peeked where it buffers (stdin), else read and sought back."""
    peek = getattr(stream, "peek", None)
    if peek is not None:
        return bytes(peek(MAGIC_BYTES))[:MAGIC_BYTES]
    head = stream.read(MAGIC_BYTES)
    stream.seek(-len(head), 1)
    return head


def open_input(path: Path | None, stdin: BinaryIO, name: str) -> BinaryIO:
    """The bytes of a file (or of ``stdin`` when ``path`` is None), decompressed when they begin with a
    compressed format's magic bytes: with or without the file's suffix, and on stdin. The head is
    peeked, not read, so a named pipe is opened once."""
    raw = stdin if path is None else open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    opener = _opener(compression_of(_peek(raw)), name)
    if opener is None:
        return raw
    if path is not None and raw.seekable():  # a file: its decompressor opens it by name and closes it too
        raw.close()
        return opener(path)
    return opener(raw)  # stdin or a named pipe: the decompressor reads the open stream


def sniff_codec(head: bytes) -> str | None:
    """The codec a byte-order mark (or a UTF-16 NUL pattern) announces, if any."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    sample = head[:4096]
    if len(sample) >= 8:
        odd_nuls = sample[1::2].count(0)
        even_nuls = sample[0::2].count(0)
        half = len(sample) // 2
        if odd_nuls > 0.4 * half and even_nuls < 0.05 * half:
            return "utf-16-le"
        if even_nuls > 0.4 * half and odd_nuls < 0.05 * half:
            return "utf-16-be"
    return None


def not_text(name: str, head: bytes) -> str:
    """The one-line refusal for binary input, naming the compression when it is compressed data
    that could not be opened as such (e.g. compressed twice)."""
    compression = compression_of(head)
    if compression is not None:
        return f"{name}: {compression}-compressed data inside the decompressed input (decompress it first)"
    return f"{name}: not a text log (binary data)"


_TEXT_BYTES = bytes(b for b in range(256) if b >= 32 or 9 <= b <= 13 or b == 27)


def looks_binary(head: bytes) -> bool:
    """True for data that is no text log: many NULs or control bytes in the first block."""
    if not head:
        return False
    sample = head[:SNIFF_BYTES]
    suspicious = len(sample.translate(None, _TEXT_BYTES))  # NULs and control bytes other than \t \n \v \f \r ESC
    return suspicious > 0.1 * len(sample)


def file_head(path: Path) -> bytes:
    """The first ``SNIFF_BYTES`` of a file: enough to tell its encoding and whether it is text."""
    with open(path, "rb") as handle:
        return handle.read(SNIFF_BYTES)


def refuse_binary(name: str, head: bytes) -> None:
    """Refuse input whose head is binary, with the same message whichever reader finds it."""
    if looks_binary(head):
        raise InputError(not_text(name, head))


def decode_line(raw: bytes) -> str:
    """One line as text, by the rule every reader follows: UTF-8, else Windows-1252 for that line.

    oMLX writes UTF-8, but a pasted or re-saved log may hold a line in a Windows code page; reading
    only that line as Windows-1252 keeps its neighbours exact and its own words readable. The batch
    reader and the live follower both call this, so a line reads the same in ``timeline`` and ``watch``.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def mend_lines(block: bytes) -> bytes:
    """Re-encode a block whose bytes are not all UTF-8: each bad line is read by ``decode_line``."""
    return "\n".join(decode_line(raw) for raw in block.split(b"\n")).encode("utf-8")


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (ASCII, nearly every log, is found out at once)."""
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def normalise(block: bytes) -> bytes:
    """Valid UTF-8: lines that are not are read as Windows-1252."""
    return block if is_utf8(block) else mend_lines(block)
