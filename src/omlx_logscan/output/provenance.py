"""Which oMLX wrote the input, in words: the versions its messages allow, beside the versions a
banner or a Homebrew path states, and whether the two disagree. Every format takes them from here."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from omlx_logscan.analysis.stated import is_version
from omlx_logscan.parsing.provenance import WriterVersions, writer_versions
from omlx_logscan.stream.event_stream import EventStream

if TYPE_CHECKING:
    from omlx_logscan.analysis.results import Analysis


def input_versions(stream: EventStream) -> WriterVersions | None:
    """The versions that could have written the whole input: its events and every record read."""
    return _stating_versions(writer_versions(stream.events, stream.messages))


def session_versions(analysis: Analysis) -> list[WriterVersions | None]:
    """Each session's versions, one computation for the sessions table, its JSON and the header: a
    session's own messages; in a log of one process, every record read (the header's)."""
    if len(analysis.sessions) == 1:
        return [input_versions(analysis.stream)]
    return [_stating_versions(writer_versions(session.events)) for session in analysis.sessions]


def an_upgrade(analysis: Analysis) -> bool:
    """Whether messages that fit no single version tell of an upgrade: several processes, each of
    whose own lines fit one. One process's lines that fit none are read wrong, not upgraded."""
    each = session_versions(analysis)
    return len(each) > 1 and all(found is None or found.range is not None for found in each)


def _stating_versions(found: WriterVersions | None) -> WriterVersions | None:
    """``found`` without the stated "versions" that are none (a keg named by a commit)."""
    if found is None:
        return None
    stated = tuple(filter(is_version, found.stated))
    return replace(found, stated=stated, disagreeing=tuple(v for v in found.disagreeing if v in stated))


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


def versions_phrase(found: WriterVersions | None, stated: str | None = None, *, upgrade: bool = True) -> str:
    """The header's words: ``0.5.7 stated; its messages are of 0.4.0rc1 – 0.5.8.dev3 (26 messages of
    oMLX's source)``, and when the stated version is outside that, that they disagree. ``stated`` is
    what the input states when ``found`` is None (no message to tell by); ``upgrade``: whether messages
    of no single version can be an upgrade (``an_upgrade``)."""
    if found is None:
        said = f"{stated} stated" if stated else "not stated"
        return f"{said}; no message of oMLX's source to tell the version by"
    said = f"{', '.join(found.stated)} stated; " if found.stated else ""
    count = f"{found.entries} message{'s' if found.entries != 1 else ''} of oMLX's source"
    if found.range is None and upgrade:
        return f"{said}its messages are of no single version ({count}): an upgrade? each session has its own"
    if found.range is None:
        return f"{said}its messages fit no single version ({count}), though one process wrote them: a line misread"
    text = f"{said}its messages are of {range_text(found)} ({count})"
    if found.disagreeing:
        text += f"; they disagree with the stated {', '.join(found.disagreeing)}"
    return text
