"""Lines as oMLX wrote them, out of the shapes other tools give them: line ends of a bare CR (or
CRLF), and a prefix every line carries (a shipper's or ``kubectl logs --timestamps``' time, a
syslog head, a container's ``name | `` or ``[pod/NAME/CONTAINER]``, an indent, a list marker).
Found on a sample of the first lines, so a plain log costs one look at its head; a shaped one is
reshaped a block at a time by C-speed byte operations, before any grammar."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# The prefixes a whole log may carry, each as it begins a line (after it: a space, or the line's end).
PREFIXES: tuple[tuple[str, bytes], ...] = (
    ("RFC 3339 timestamp", rb"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:[Zz]|[+-]\d\d:?\d\d)?"),
    ("syslog head", rb"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [^\s:]+ [^\s:\[]+(?:\[\d+\])?:"),
    ("container name", rb"[\w.-]+ *\|"),
    ("kubectl --prefix", rb"\[[\w.-]+/[\w./-]+\]"),
    ("list marker", rb"(?:[-*+]|\d+[.)])"),
)
_ENDS = rb"(?: |$)"
SAMPLE_LINES = 200  # the first lines of the head a prefix must begin, every one of them
_LEAST_LINES = 3  # fewer lines than this say nothing of a whole log's shape


@dataclass(frozen=True)
class LineShape:
    """How an input's lines differ from oMLX's: bare CR line ends, a prefix on every line."""

    cr: bool
    prefix: re.Pattern[bytes] | None
    name: str  # what the prefix is, for messages

    def lines(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """``chunks`` of any size as chunks of whole lines ending in LF, without the prefix; an empty
        chunk (a pipe's pause) is passed on after the whole lines before it."""
        pending = b""
        for chunk in chunks:
            if not chunk:
                yield chunk
                continue
            data = pending + chunk
            if self.cr:
                held = data.endswith(b"\r")  # its LF may be in the next chunk
                data, pending = (data[:-1], b"\r") if held else (data, b"")
                data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
                cut = data.rfind(b"\n") + 1
                data, pending = data[:cut], data[cut:] + pending
            else:
                cut = data.rfind(b"\n") + 1
                data, pending = data[:cut], data[cut:]
            if data:
                yield self.strip(data)
        if pending:  # the last line, ended here so a prefix that is the whole line leaves it a line
            last = pending.replace(b"\r", b"\n") if self.cr else pending
            yield self.strip(last if last.endswith(b"\n") else last + b"\n")

    def strip(self, block: bytes) -> bytes:
        return block if self.prefix is None else self.prefix.sub(b"", block)


def line_shape(head: bytes) -> LineShape | None:
    """The shape of an input whose first bytes are ``head``, or None for lines as oMLX writes them."""
    cr = b"\r" in head and b"\n" not in head
    text = head.replace(b"\r", b"\n") if cr else head
    sample = [line.rstrip(b"\r") for line in text.split(b"\n")[:-1] if line.strip()][:SAMPLE_LINES]
    prefix, name = _common_prefix(sample) if len(sample) >= _LEAST_LINES else (None, "")
    return LineShape(cr, prefix, name) if cr or prefix is not None else None


def _common_prefix(sample: list[bytes]) -> tuple[re.Pattern[bytes] | None, str]:
    for name, pattern in PREFIXES:
        whole = re.compile(pattern + _ENDS)
        if all(whole.match(line) for line in sample):
            return re.compile(rb"(?m)^" + pattern + _ENDS), name
    indent = min(len(line) - len(line.lstrip(b" \t")) for line in sample)
    if indent:
        return re.compile(rb"(?m)^[ \t]{1,%d}" % indent), "indent"
    return None, ""
