"""Which oMLX message a text is: the one seam between the parsing and what knows oMLX's messages.

Recognition (is this input oMLX's?), record assembly (does a bare line open a record?) and
classification (the level and logger a paste dropped) all ask ``known``. Today the catalog and
its writers (``catalog_writers``) answer; the lexicon of every message in oMLX's source
(issue 27) answers through the same ``Messages`` protocol, by changing ``messages``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from omlx_logscan.parsing.catalog import UVICORN_TAG, candidates
from omlx_logscan.parsing.catalog_writers import CATALOG_WRITERS, MESSAGE_WRITERS, Writer


@dataclass(frozen=True, slots=True)
class Known:
    """What oMLX's source says of one message."""

    entry: str | None  # the lexicon entry's id; None while the catalog answers
    template: str | None  # the message as the source writes it, placeholders in braces; None likewise
    level: str | None  # the level it is written at; None when not known
    logger: str | None  # the logger that writes it; None when not known (or several do)


class Messages(Protocol):
    def known(self, text: str) -> Known | None:
        """The message ``text`` is (a record's message, without time, level or logger), or None
        when it is none of oMLX's. The text may be shortened where a paste elided a part of it
        (``…``, ``...``, ``<model>``) or cut at its end (a message wrapped over lines)."""
        ...


# Where a paste shortened a message: an ellipsis, three dots, or a placeholder in angle brackets.
ELISION = re.compile(r"…|\.\.\.|<[a-z_]+>")


# An elided message is matched by the text before its first elision when that holds this much.
_MIN_OPENING = 12


class CatalogMessages:
    """The messages the catalog has rows for (less uvicorn's own lines, which are no oMLX text) and
    those whose writers ``catalog_writers`` names."""

    def __init__(self) -> None:
        self._others = tuple((re.compile(pattern), writer) for pattern, writer in MESSAGE_WRITERS)

    def known(self, text: str) -> Known | None:
        found = self._known(text)
        if found is not None or ("…" not in text and "..." not in text and "<" not in text):
            return found
        elision = ELISION.search(text)
        opening = text[: elision.start()].rstrip() if elision is not None else ""
        return self._known(opening) if len(opening) >= _MIN_OPENING else None

    def _known(self, text: str) -> Known | None:
        for template in candidates(text):
            if template.literal in text and template.tag != UVICORN_TAG and template.regex.search(text):
                return _known(CATALOG_WRITERS.get(template.literal))
        for regex, writer in self._others:
            if regex.match(text):
                return _known(writer)
        return None


def _known(writer: Writer | None) -> Known:
    if writer is None:
        return Known(None, None, None, None)
    return Known(None, None, writer.level, writer.logger)


@cache
def messages() -> Messages:
    """The messages oMLX writes, loaded when first asked for."""
    return CatalogMessages()


def known(text: str) -> Known | None:
    """``messages().known(text)``: the message ``text`` is, or None."""
    return messages().known(text)
