"""Which oMLX message a text is: the one seam between the parsing and what knows oMLX's messages.

Recognition (is this input oMLX's?), record assembly (does a bare line open a record?) and
classification (the level and logger a paste dropped) all ask ``known``. The lexicon of every
message in oMLX's source (``parsing/lexicon.py``) answers: which entries a text is an instance of
(the identity), and from them the level and logger. The catalog stays the layer of meaning: a text
its rows know in a shape the lexicon's whole-message match does not see (a ``507: …`` before the
message) is the entries its row names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Protocol

from omlx_logscan.parsing.catalog import LOGGER_PREFIX, UVICORN_TAG
from omlx_logscan.parsing.catalog_evidence import PROCESS_LOGGER_PACKAGES
from omlx_logscan.parsing.catalog_lookup import catalog_match
from omlx_logscan.parsing.lexicon import Entry, Lexicon, lexicon
from omlx_logscan.parsing.template import Template


@dataclass(frozen=True, slots=True)
class Known:
    """What oMLX's source says of one message."""

    entry: str | None  # the lexicon entry's id (the likeliest, when several could have written it)
    template: str | None  # that entry's message as the source writes it, placeholders in braces
    level: str | None  # the level it is written at; None when not known (or its writers differ)
    logger: str | None  # the logger that writes it; None when not known (or several do)
    entries: tuple[str, ...] = ()  # every entry that could have written it (what a version range rests on)


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


# A text that is a message whole must hold this many letters and digits of its literal wording
# (``Engine started`` does; ``error``, ``stop``, ``{any} {any} → 503: {any}`` do not: a catalog row
# knows the HTTP answers).
MIN_WHOLE = 8


# A message found inside a line with a head no shape explains (``Error: {"detail":"…"}``) must hold
# this many letters and digits of literal text: ``{any}: {any}`` is found in every line.
MIN_SPECIFICITY = 16


_UNSEEN = Known(None, None, None, None)  # a text not asked of lately (``None`` is an answer: no message)
_RECENT = 1024  # texts whose answers are kept: a record is assembled a few lines after its head is read

_CLOSERS = "\"'`}] \t"


class LexiconMessages:
    """The messages of oMLX's source: a message whole, a catalog row's (its named entries), the
    opening of an elided one, or one inside a line with an unknown head."""

    def __init__(self, words: Lexicon) -> None:
        self.lexicon = words
        self._identities: dict[tuple[Entry, ...], Known] = {}  # few distinct: one per message template
        self._recent: dict[str, Known | None] = {}  # the answers for the texts asked last
        self._rows: dict[str, tuple[tuple[Entry, tuple[str, ...]], ...]] = {}  # by row pattern: _row_table

    def known(self, text: str) -> Known | None:
        recent = self._recent.get(text, _UNSEEN)  # the grammar asks of a pasted line, then its record's classification
        if recent is not _UNSEEN:
            return recent
        found = self._whole(text) or self.by_row(text) or self._elided(text) or self._inside(text)
        if len(self._recent) >= _RECENT:
            self._recent.clear()
        known = self._recent[text] = self._identity(found)
        return known

    def of_record(self, text: str, logger: str | None, level: str | None, row: Template | None) -> Known | None:
        """A full record's message, given the logger and level it names and the catalog row it matched
        (None: none): the row's entries when it has one, else the entries of that logger and level."""
        if foreign(logger):
            return None
        if row is None:
            found = self.lexicon.match(text, logger, level)
            if not (logger or "").startswith(LOGGER_PREFIX):  # another program's record: oMLX's text only if telling
                found = tuple(entry for entry in found if entry.specificity >= MIN_SPECIFICITY)
            return self._identity(found)
        if row.tag == UVICORN_TAG or not row.entries:
            return None
        table = self._row_table(row)
        if len(table) == 1:
            return self._identity((table[0][0],))
        return self._identity(_holding(table, text) or tuple(entry for entry, _ in table))

    def of_opening(self, text: str, logger: str | None, level: str | None) -> Known | None:
        """A full record's message whose first line is ``text`` (the message goes on over the lines
        after it): the calls of that logger and level a message may begin with it, else any entry's."""
        found = self.lexicon.beginning(text)
        agreeing = tuple(entry for entry in found if (entry.logger, entry.level) == (logger, level))
        return self._identity(agreeing or found)

    def _identity(self, entries: tuple[Entry, ...]) -> Known | None:
        if not entries:
            return None
        known = self._identities.get(entries)
        if known is None:
            known = self._identities[entries] = identity(entries)
        return known

    def by_row(self, text: str) -> tuple[Entry, ...]:
        """The entries of the catalog row ``text`` matches: those of them whose wording the text
        holds, or all of them (the row knows a shape the entries do not)."""
        matched = catalog_match(text)
        row = matched[0] if matched is not None else None
        if row is None or row.tag == UVICORN_TAG or not row.entries:
            return ()
        table = self._row_table(row)
        return _holding(table, text) or tuple(entry for entry, _ in table)

    def _row_table(self, row: Template) -> tuple[tuple[Entry, tuple[str, ...]], ...]:
        """A catalog row's entries, each with the literals of it the others do not all hold: what
        tells which of them a text the row matched is, by ``in`` alone."""
        table = self._rows.get(row.pattern)
        if table is None:
            named = [self.lexicon.entry(entry_id) for entry_id in row.entries]
            common = set.intersection(*(set(entry.pieces) for entry in named))
            table = tuple((entry, tuple(p for p in entry.pieces if p not in common)) for entry in named)
            self._rows[row.pattern] = table
        return table

    def _whole(self, text: str) -> tuple[Entry, ...]:
        """The entries ``text`` is an instance of whole, those that tell something: a bare ``error``
        or ``stop`` (words oMLX sends as a reason) is no sign of oMLX in a line of its own."""
        return tuple(entry for entry in self.lexicon.match(text) if entry.specificity >= MIN_WHOLE)

    def _elided(self, text: str) -> tuple[Entry, ...]:
        elision = ELISION.search(text) if ("…" in text or "..." in text or "<" in text) else None
        if elision is None:
            return ()
        opening = text[: elision.start()].rstrip()
        return self.lexicon.beginning(opening) if len(opening) >= _MIN_OPENING else ()

    def _inside(self, text: str) -> tuple[Entry, ...]:
        """A message inside a line: after a head no shape explains, before the quotes and braces
        that close what held it (``Error: {"detail":"…"}``, a client's report of oMLX's answer)."""
        found = self.lexicon.search(text.rstrip(_CLOSERS))
        return tuple(e for e in found if e.specificity >= MIN_SPECIFICITY)


def _holding(table: tuple[tuple[Entry, tuple[str, ...]], ...], text: str) -> tuple[Entry, ...]:
    """The entries of a catalog row's table whose own literals ``text`` holds (a loop: it runs on
    every record a row matches)."""
    found = []
    for entry, marks in table:
        for mark in marks:
            if mark not in text:
                break
        else:
            found.append(entry)
    return tuple(found)


def identity(entries: Sequence[Entry]) -> Known:
    """What the entries a message matched say of it: the likeliest entry (the one whose literals
    hold the most text, then the newest), and the level and logger they agree on."""
    best = max(entries, key=lambda e: (e.specificity, e.last is None, e.id))
    levels = {e.level for e in entries}
    loggers = {e.logger for e in entries}
    return Known(
        best.id,
        best.template,
        levels.pop() if len(levels) == 1 else None,
        loggers.pop() if len(loggers) == 1 else None,
        tuple(e.id for e in entries),
    )


@cache
def foreign(logger: str | None) -> bool:
    """Whether a record's logger is another program's: a dotted name whose package is neither oMLX's
    (``omlx``, ``omlx_app``, or one of ``omlx``'s packages a paste wrote without the prefix:
    ``cache.paged_ssd_cache``) nor one oMLX's process writes through (uvicorn, httpx). oMLX names
    its loggers ``__name__``; a name without a dot (``scheduler``, ``root``) may be oMLX's, shortened."""
    if logger is None or "." not in logger or logger.startswith(LOGGER_PREFIX):
        return False
    package = logger.split(".", 1)[0]
    return package not in PROCESS_LOGGER_PACKAGES and package not in _omlx_packages()


@cache
def _omlx_packages() -> frozenset[str]:
    """The packages of ``omlx`` its loggers are named in (``cache``, ``engine``, ``admin``, ...)."""
    parts = (entry.logger.split(".") for entry in messages().lexicon.entries if entry.logger)
    return frozenset(names[1] for names in parts if len(names) > 2 and names[0] == LOGGER_PREFIX)


@cache
def messages() -> LexiconMessages:
    """The messages oMLX writes, loaded when first asked for."""
    return LexiconMessages(lexicon())


def known(text: str) -> Known | None:
    """``messages().known(text)``: the message ``text`` is, or None."""
    return messages().known(text)
