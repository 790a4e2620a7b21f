"""Which oMLX wrote the input, in words: the versions its messages allow, beside the versions a
banner or a Homebrew path states, and whether the two disagree. Every format takes them from here."""

from __future__ import annotations

from omlx_logscan.parsing.provenance import WriterVersions, writer_versions
from omlx_logscan.stream.event_stream import EventStream


def input_versions(stream: EventStream) -> WriterVersions | None:
    """The versions that could have written the whole input: its events and every record read."""
    return writer_versions(stream.events, stream.messages)


def range_text(found: WriterVersions) -> str:
    """``0.4.0rc1 – 0.5.4.dev1``, ``0.6.0.dev1 or later``, or ``no single version``."""
    if found.range is None:
        return "no single version"
    if found.range.max is None:
        return f"{found.range.min} or later"
    if found.range.max == found.range.min:
        return found.range.min
    return f"{found.range.min} – {found.range.max}"


def short_range(found: WriterVersions | None) -> str:
    """A sessions table's cell: ``0.4.0rc1–0.5.4.dev1``, ``0.6.0.dev1+``, ``several`` or ``?``."""
    if found is None:
        return "?"
    if found.range is None:
        return "several"
    if found.range.max is None:
        return f"{found.range.min}+"
    return found.range.min if found.range.max == found.range.min else f"{found.range.min}–{found.range.max}"


def versions_phrase(found: WriterVersions | None, stated: str | None = None) -> str:
    """The header's words: ``0.5.7 stated; its messages are of 0.4.0rc1 – 0.5.8.dev3 (26 messages of
    oMLX's source)``, and when the stated version is outside that, that they disagree. ``stated`` is
    what the input states when ``found`` is None (no message to tell by)."""
    if found is None:
        said = f"{stated} stated" if stated else "not stated"
        return f"{said}; no message of oMLX's source to tell the version by"
    said = f"{', '.join(found.stated)} stated; " if found.stated else ""
    count = f"{found.entries} message{'s' if found.entries != 1 else ''} of oMLX's source"
    if found.range is None:
        return f"{said}its messages are of no single version ({count}): an upgrade? each session has its own"
    text = f"{said}its messages are of {range_text(found)} ({count})"
    if found.disagreeing:
        text += f"; they disagree with the stated {', '.join(found.disagreeing)}"
    return text
