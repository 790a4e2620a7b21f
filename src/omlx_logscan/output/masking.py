"""``--redact`` for machine formats and exports: the host's name and personal data in log text masked.

Host names become a pseudonym, ``host-`` and ten hex digits of an HMAC-SHA-256 of the name keyed by
a secret: stable across runs and, with one key file shared (``--redact-key``), across the Macs of
a fleet, so pooled exports still tell their hosts apart; without the key nobody can confirm a
guessed name by hashing it. The key is made on first use, mode 0600; only its fingerprint is
written anywhere (an export's metadata). Log text (messages, fields, source paths) is masked as
``report`` masks it (``redact.py``), with the names learnt from all of the stream first; a field
that holds text a user wrote or a model answered is masked whole; the host's own name is replaced
wherever it appears (a folder named after the Mac, say).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import os
import re
import secrets
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omlx_logscan.errors import LogscanError
from omlx_logscan.inputs.sources import Source, read_chunks
from omlx_logscan.output.redact import PLACEHOLDERS, Masker, Names, learn
from omlx_logscan.output.usertext import is_text_field
from omlx_logscan.parsing.dense import Dense

if TYPE_CHECKING:
    from omlx_logscan.parsing.event import Event
    from omlx_logscan.stream.event_stream import EventStream

KEY_FILE = "redact.key"


LEARN_CHUNK_BYTES = 1 << 20  # the input files are read again for names a chunk at a time: memory stays flat


# A key file holds 32 random bytes as hex; one of at least 16 bytes is taken.
_KEY_TEXT = re.compile(r"(?:[0-9a-f]{2}){16,}")


def mask_host_name(text: str, host: str | None) -> str:
    """``text`` with the host's name, as a word of its own (a folder named after the Mac, say), as ``[host]``."""
    return _own_name(host).sub(PLACEHOLDERS["host"], text) if host else text


def _own_name(host: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(host)}(?![\w-])")


@dataclass(frozen=True)
class RedactionKey:
    """The secret the host pseudonyms are keyed by."""

    secret: bytes

    def pseudonym(self, host: str) -> str:
        return "host-" + hmac.new(self.secret, host.encode(), hashlib.sha256).hexdigest()[:10]

    @property
    def fingerprint(self) -> str:
        """Which key made the pseudonyms, without giving it away: two exports pool when theirs agree."""
        return "sha256:" + hashlib.sha256(b"omlx-logscan redact key\0" + self.secret).hexdigest()[:16]


def redaction_key(path: Path) -> RedactionKey:
    """The key in ``path``; made there (mode 0600, its folder 0700) when there is none."""
    try:
        text = path.read_text(encoding="ascii").strip().lower()
    except FileNotFoundError:
        return _make_key(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise LogscanError(f"{path}: cannot read the redaction key ({exc})") from None
    if not _KEY_TEXT.fullmatch(text):
        raise LogscanError(f"{path}: not a redaction key (64 hex digits, as logscan makes one)")
    return RedactionKey(bytes.fromhex(text))


def _make_key(path: Path) -> RedactionKey:
    """A new key, written whole beside ``path`` and linked into place: a run that makes one at the same
    time gets the same key, never half of one."""
    key = RedactionKey(secrets.token_bytes(32))
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".redact-key-")  # mode 0600
        try:
            with os.fdopen(handle, "w", encoding="ascii") as out:
                out.write(key.secret.hex() + "\n")
            os.link(temporary, path)
        finally:
            os.unlink(temporary)
    except FileExistsError:
        return redaction_key(path)
    except OSError as exc:
        raise LogscanError(f"{path}: cannot make the redaction key ({exc.strerror or exc})") from None
    sys.stderr.write(f"logscan: made the redaction key {path} (give every Mac of a fleet a copy: --redact-key)\n")
    return key


class _Mask:
    def __init__(self, host: str | None, key: RedactionKey, names: Names) -> None:
        self.pseudonym = key.pseudonym(host) if host else None
        self.own_name = _own_name(host) if host else None
        self.masker = Masker(names)

    def text(self, value: str) -> str:
        masked = self.masker.redact(value)
        if self.own_name is not None and self.pseudonym is not None:
            masked = self.own_name.sub(self.pseudonym, masked)
        return masked

    def value(self, value: Any, *, user_text: bool = False) -> Any:
        """A field's value masked: all of it when the field holds user text (a prompt, a tool call's arguments)."""
        if isinstance(value, str):
            return self.masker.mask("text") if user_text and value else self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item, user_text=user_text or is_text_field(key)) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item, user_text=user_text) for item in value]
        return value

    def event(self, event: Event) -> None:
        """An event masked in place. Its message and continuation lines are masked as the one text
        they were logged as, so that a value that runs on (a prompt's second line) is masked whole."""
        continuation = event.fields.get("continuation")
        event.source = self.text(event.source)
        event.fields = self.value({key: value for key, value in event.fields.items() if key != "continuation"})
        if not isinstance(continuation, str):
            event.message = self.text(event.message)
            return
        head = event.message.count("\n") + 1
        lines = self.text(f"{event.message}\n{continuation}").split("\n", head)
        event.message = "\n".join(lines[:head])
        event.fields["continuation"] = lines[head] if len(lines) > head else ""

    def rows(self, table: Dense) -> Dense:
        """A dense table whose rows keep their line's text (``events``), the text masked."""
        if "text" not in table:
            return table
        texts = [None if text is None else self.text(text) for text in table.texts("text")]
        return Dense({**table.columns, "text": texts})


def _texts(stream: EventStream) -> Iterator[str]:
    """Every string of the stream that redaction masks, to learn the names from."""
    for event in (*stream.events, *stream.arrival_events):
        yield event.message
        yield event.source
        yield from _strings(event.fields)
    for table in (stream.requests, stream.arrivals):
        if "text" in table:
            yield from (text for text in table.texts("text") if text is not None)
    for source in stream.sources:
        yield source.name
    yield from _strings(stream.clock_jumps)
    for name, _, text in (*stream.unparsed, *stream.unmatched):
        yield name
        yield text


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def file_texts(sources: Iterable[Source]) -> Iterator[str]:
    """Every line of the input files, also those no event keeps (a startup line's home folder), in
    chunks of whole lines, to learn names from. Standard input is read once: its names come from
    what the stream keeps."""
    for source in sources:
        if source.path is not None:
            with suppress(LogscanError, OSError):  # the read itself has said what it could not read
                yield from (chunk.decode("utf-8", "replace") for chunk in read_chunks(source, LEARN_CHUNK_BYTES))


def mask_stream(stream: EventStream, key: RedactionKey, sources: Iterable[Source] = ()) -> None:
    """Mask a stream in place, before it is analysed or written: every output then shows only the masks.
    The names to mask everywhere are learnt from all of the stream and every line of ``sources``."""
    mask = _Mask(stream.host, key, learn(itertools.chain(_texts(stream), file_texts(sources))))
    for event in (*stream.events, *stream.arrival_events):
        mask.event(event)
    stream.requests, stream.arrivals = mask.rows(stream.requests), mask.rows(stream.arrivals)
    for source in stream.sources:
        source.name = mask.text(source.name)
    stream.clock_jumps = mask.value(stream.clock_jumps)
    stream.unparsed = [(mask.text(name), line, mask.text(text)) for name, line, text in stream.unparsed]
    stream.unmatched = [(mask.text(name), line, mask.text(text)) for name, line, text in stream.unmatched]
    if mask.pseudonym:
        stream.host = mask.pseudonym
