"""Which oMLX wrote an input: the versions whose source writes every message it holds, beside the
version a banner or an install path states.

Each event the grammar read carries the lexicon entries its message could be (``Event.entries``);
the versions that could have written the input are those that have, for every such message, one
of its entries (``Lexicon.version_range``). Routine records the scanner only counts carry none:
the range rests on the records the grammar reads, which is why it is a range and not a version.
The request-id field of the file format (``[-]``) is in every version of oMLX's logging setup since
its first commit, so a line's shape narrows nothing here.

When no single version writes every message (a log that spans an upgrade), the input has no range:
``spans`` says so, and each process lifetime gets its own (the sessions).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from typing import Any

from omlx_logscan.parsing.classify import cellar_version
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.lexicon import VersionRange, lexicon

_RELEASE = re.compile(r"\d+(?:\.\d+)*")


@dataclass(frozen=True)
class WriterVersions:
    """The oMLX versions whose messages an input holds, and what a banner or path states."""

    range: VersionRange | None  # None when no single version writes every message (``spans``)
    entries: int  # distinct lexicon entries the messages matched
    stated: tuple[str, ...]  # the versions banners or install paths state, in order
    disagreeing: tuple[str, ...]  # those of them no version of the range is

    @property
    def spans(self) -> bool:
        return self.range is None

    def as_dict(self) -> dict[str, Any]:
        """``{"min", "max", "entries", "spans", "stated", "disagrees"}``: ``max`` null when the newest
        version oMLX's history holds still writes every message; ``min`` and ``max`` null when ``spans``."""
        return {
            "min": self.range.min if self.range else None,
            "max": self.range.max if self.range else None,
            "entries": self.entries,
            "spans": self.spans,
            "stated": list(self.stated),
            "disagrees": list(self.disagreeing),
        }


def writer_versions(events: Iterable[Event], messages: Iterable[tuple[str, ...]] = ()) -> WriterVersions | None:
    """The versions that could have written ``events`` and ``messages`` (the entries of records read
    but not kept as events), and which of the versions the events state (a banner's, a Homebrew
    path's) disagree; None when no message is one the lexicon knows."""
    matched = set(messages)
    stated: dict[str, None] = {}
    for event in events:
        if event.entries:
            matched.add(event.entries)
        version = stated_version(event)
        if version is not None:
            stated[version] = None
    if not matched:
        return None
    words = lexicon()
    found = words.version_range(tuple(map(words.entry, ids)) for ids in matched)
    disagreeing = tuple(version for version in stated if found is not None and not _within(version, found))
    return WriterVersions(found, len(set(chain.from_iterable(matched))), tuple(stated), disagreeing)


def stated_version(event: Event) -> str | None:
    """The oMLX version an event states: a start banner's, or a Homebrew keg's in its traceback."""
    if event.kind == "process_start" and event.fields.get("omlx_version"):
        return str(event.fields["omlx_version"])
    return cellar_version(event) if "traceback" in event.fields else None


def _within(version: str, found: VersionRange) -> bool:
    """Whether ``version`` is in the range: by the lexicon's order when it knows the version, else by
    its release numbers (a build the history has not seen: ``0.6.5``, ``0.3.6_1`` of a Homebrew keg)."""
    words = lexicon()
    if version in words.versions:
        place = words.order(version)
        return words.order(found.min) <= place and (found.max is None or place <= words.order(found.max))
    release = _release(version)
    return _release(found.min) <= release and (found.max is None or release <= _release(found.max))


def _release(version: str) -> tuple[int, ...]:
    match = _RELEASE.match(version)
    return tuple(int(part) for part in match[0].split(".")) if match else ()
