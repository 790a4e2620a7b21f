"""Bytes to text: compressed data, byte-order marks, binary data, and lines that are not UTF-8."""

from __future__ import annotations

import bz2
import codecs
import gzip
import importlib
import io
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
def _zlib() -> tuple[Any, tuple[type[Exception], ...]]:
    """The inflater gzip members are read with: ISA-L's (python-isal), which inflates about 2.5 times
    as fast, or the standard library's where isal does not import; and what it raises for damage."""
    try:
        from isal import isal_zlib
    except ImportError:
        return zlib, (zlib.error,)
    return isal_zlib, (cast(type[Exception], isal_zlib.error),)


def damaged_data() -> tuple[type[Exception], ...]:
    """What the decompressors raise for data that is truncated or corrupt (bz2 raises OSError)."""
    return (EOFError, lzma.LZMAError, gzip.BadGzipFile, *_zlib()[1])


# Past this much output, data that decompresses to more than RATIO_LIMIT times its compressed size
# is refused: text logs compress 10 to 20 times (a 20 MiB DEBUG log: gzip 9.5, xz and bzip2 13),
# a compression bomb about 1,000 times (gzip's most) or far more (bzip2, xz, zstd).
RATIO_LIMIT = 200
RATIO_AFTER = 64 * 1024 * 1024
_RAW_STEP = 256 * 1024  # compressed bytes read at a time
_OUT_STEP = 64 * 1024  # bytes asked of a decompressor at once: what a failing read may lose with it


class _Counted:
    """A stream read through, counting the bytes taken from it (the compressed side of the ratio)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw, self.taken = raw, 0

    def read(self, size: int = -1, /) -> bytes:
        data = self.raw.read(size)
        self.taken += len(data)
        return data

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.raw.close()


class _Guarded(io.RawIOBase):
    """Decompressed bytes, refused once they outgrow the compressed ones ``RATIO_LIMIT`` times over;
    a read that fails after some bytes gives those first and raises on the next read, so every
    whole line before damage is read (as ``zcat`` gives it)."""

    def __init__(self, inner: Any, counted: _Counted, name: str) -> None:
        super().__init__()
        self._inner, self._counted, self._name = inner, counted, name
        self._given = 0
        self._failure: BaseException | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        filled = 0
        while filled < len(view) and self._failure is None:
            try:
                got = self._inner.readinto(view[filled : filled + _OUT_STEP])
            except Exception as exc:  # damage: hand on what came before it first
                self._failure = exc
                break
            if not got:
                break
            filled += got
        self._given += filled
        if self._given > RATIO_AFTER and self._given > RATIO_LIMIT * max(self._counted.taken, 1):
            raise InputError(
                f"{self._name}: decompresses to over {RATIO_LIMIT} times its size ({self._given >> 20} MiB from "
                f"{self._counted.taken >> 10} KiB so far), which no text log does: refused as a compression bomb"
            )
        if not filled and self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        return filled

    def close(self) -> None:
        self._inner.close()  # a bz2 or xz reader leaves the file it was given open
        self._counted.close()
        super().close()


class _Inflating:
    """gzip members inflated as they are read: on truncation every byte inflated so far is given
    before the error (``gzip.open`` loses up to a whole read's worth); NUL padding between members
    is skipped, as gzip does."""

    def __init__(self, raw: _Counted) -> None:
        self._raw = raw
        self._module, _ = _zlib()
        self._inflater = self._module.decompressobj(wbits=31)
        self._pending = b""  # compressed bytes not yet given to the inflater
        self._held = b""
        self._started = self._flushed = False

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while True:
            if self._held:  # inflated bytes that did not fit the last read
                size = min(len(view), len(self._held))
                view[:size], self._held = self._held[:size], self._held[size:]
                return size
            if not self._pending:
                self._pending = self._raw.read(_RAW_STEP)
                if not self._pending:
                    if self._started and not self._inflater.eof:
                        if not self._flushed:  # isal keeps some inflated bytes back until asked for them
                            self._held, self._flushed = self._inflater.flush(), True
                            continue
                        raise EOFError("compressed file ended before the end-of-stream marker was reached")
                    return 0
            if self._inflater.eof:  # the next member, after any NUL padding
                rest = self._pending.lstrip(b"\0")
                if rest and not rest.startswith(MAGIC["gzip"]):
                    raise gzip.BadGzipFile("trailing garbage after a gzip member")
                self._pending, self._started = rest, False
                self._inflater = self._module.decompressobj(wbits=31)
                continue
            out = self._inflater.decompress(self._pending, len(view))
            self._started = True
            self._pending = self._inflater.unconsumed_tail or self._inflater.unused_data
            if out:
                view[: len(out)] = out
                return len(out)

    def close(self) -> None:
        self._raw.close()


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
            return lambda source: cast(BinaryIO, _Inflating(cast(_Counted, source)))
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
    peeked, not read, so a named pipe is opened once. Decompressed data is guarded (``_Guarded``)."""
    raw = stdin if path is None else open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    opener = _opener(compression_of(_peek(raw)), name)
    if opener is None:
        return raw
    counted = _Counted(raw)
    return cast(BinaryIO, _Guarded(opener(cast(BinaryIO, counted)), counted, name))


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


_ASCII = bytes(range(128))


def looks_binary(head: bytes) -> bool:
    """True for data that is no text log: many NULs or control bytes in the first block; or some
    control bytes among mostly bytes above ASCII that are not UTF-8. Random or encrypted data has a
    tenth of its bytes control bytes (so about one random block in ten passes that test alone) and
    half above ASCII; text in a code page (Cyrillic in cp1251) has as many above ASCII but no control
    bytes, text in UTF-8 as many that decode."""
    if not head:
        return False
    sample = head[:SNIFF_BYTES]
    suspicious = len(sample.translate(None, _TEXT_BYTES))  # NULs and control bytes other than \t \n \v \f \r ESC
    if suspicious > 0.1 * len(sample):
        return True
    high = len(sample.translate(None, _ASCII))
    if suspicious < 0.02 * len(sample) or high < 0.35 * len(sample):
        return False
    undecodable = sample[: len(sample) - 3].decode("utf-8", "replace").count("\ufffd")  # a cut character at the end
    return undecodable > 0.5 * high


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
