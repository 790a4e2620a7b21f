"""Bytes to text: byte-order marks, binary data, and lines that are not UTF-8."""

from __future__ import annotations

import codecs
from pathlib import Path

from omlx_logscan.errors import InputError

SNIFF_BYTES = 64 * 1024  # bytes read from an input's head to tell its encoding and whether it is text


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
    """The one-line refusal for binary input, with a hint when it is merely compressed."""
    if head.startswith(b"\x1f\x8b"):
        return f"{name}: gzip-compressed data in a file not named .gz (rename it, or: zcat {name} | logscan … -)"
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


def _decode_lines_mixed(block: bytes) -> bytes:
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
    return block if is_utf8(block) else _decode_lines_mixed(block)
