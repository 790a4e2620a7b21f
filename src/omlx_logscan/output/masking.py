"""``--redact`` for machine formats and exports: the host's name and personal data in log text masked.

Host names become a stable pseudonym (``host-`` and ten hex digits of the name's SHA-256): the same
on every Mac and every run, so a pooled fleet still tells its hosts apart without naming them.
Log text (messages, fields, source paths) is masked as ``report`` masks it (``redact.py``), and
the host's own name is replaced wherever it appears (a folder named after the Mac, say).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from omlx_logscan.output.redact import PLACEHOLDERS, redact

if TYPE_CHECKING:
    from omlx_logscan.stream.model import EventStream


def mask_host_name(text: str, host: str | None) -> str:
    """``text`` with the host's name, as a word of its own (a folder named after the Mac, say), as ``[host]``."""
    if not host:
        return text
    return re.sub(rf"(?<![\w-]){re.escape(host)}(?![\w-])", PLACEHOLDERS["host"], text)


def host_pseudonym(host: str) -> str:
    return "host-" + hashlib.sha256(host.encode()).hexdigest()[:10]


class _Mask:
    def __init__(self, host: str | None) -> None:
        self.host = host
        self.pseudonym = host_pseudonym(host) if host else None

    def text(self, value: str) -> str:
        masked = redact(value).text
        if self.host and self.pseudonym:
            masked = masked.replace(self.host, self.pseudonym)
        return masked

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value


def mask_stream(stream: EventStream) -> None:
    """Mask a stream in place, before it is analysed or written: every output then shows only the masks."""
    mask = _Mask(stream.host)
    for event in stream.events:
        event.message = mask.text(event.message)
        event.source = mask.text(event.source)
        event.fields = mask.value(event.fields)
    for source in stream.sources:
        source.name = mask.text(source.name)
    stream.clock_jumps = mask.value(stream.clock_jumps)
    stream.unparsed = [(mask.text(name), line, mask.text(text)) for name, line, text in stream.unparsed]
    stream.unmatched = [(mask.text(name), line, mask.text(text)) for name, line, text in stream.unmatched]
    if mask.pseudonym:
        stream.host = mask.pseudonym
