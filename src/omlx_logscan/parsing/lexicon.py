"""The lexicon: every message oMLX can write, read from its own source history.

``tools/lexicon/generate.py`` writes ``lexicon.json.gz`` beside this module from oMLX's git history
(its header names the commits and oMLX's licence). Each :class:`Entry` is one message template:
its literal parts and typed placeholders, who writes it (a logger and level, ``print``, an HTTP
error's detail, an exception's text), where, and the first and last oMLX version that has it.

The file is read when :func:`lexicon` is first called, never on import: most runs never ask.
:meth:`Lexicon.match` finds the entries a message is an instance of; :func:`version_range` turns
the entries a log matched into the oMLX versions that could have written it all.

A missing or unreadable lexicon is an internal error (:class:`LexiconBroken`), never a silent
fallback: without it every oMLX line would be foreign text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from omlx_logscan.errors import EXIT_INTERNAL, LogscanError

PATH = Path(__file__).with_name("lexicon.json.gz")

# The kinds of site that write a message.
LOG, STDOUT, STDERR, HTTP, RAISE, TEXT = "log", "stdout", "stderr", "http", "raise", "text"

# What a placeholder stands for: digits (``%d``, ``{n:d}``), a number (``%.1f``, ``{x:.2f}``), any text.
INT, FLOAT, ANY = "int", "float", "any"

_PLACEHOLDER_PATTERNS = {
    INT: r" *[-+]?\d[\d,_]*",
    FLOAT: r" *[-+]?(?:(?:\d[\d,_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)%?",
    ANY: r".*?",
}

# The row layout the generator writes (its header repeats it; a different one is a different file).
_FIELDS = (
    "id", "kind", "level", "logger", "module", "function",
    "literals", "kinds", "in_handler", "first", "last", "source", "status", "exception",
)  # fmt: skip

_WORD = re.compile(r"\w+")


class LexiconBroken(LogscanError):
    """The packaged lexicon is missing or cannot be read: the installation is broken."""

    exit_code = EXIT_INTERNAL


@dataclass(frozen=True)
class Entry:
    """One message template oMLX writes, and where and since when it writes it."""

    id: str  # stable across regenerations: a hash of how and what it writes
    # LOG, STDOUT, STDERR, HTTP (an HTTP error's detail), RAISE (an exception's text) or TEXT (a
    # message built for a client or an exception: assigned to a ``message``/``detail`` name, say)
    kind: str
    level: str | None  # a log record's level (DEBUG ... CRITICAL, TRACE); None for other kinds
    logger: str | None  # the logger's name (``omlx.scheduler``); None for other kinds
    module: str  # where it is written (empty for entries from notes)
    function: str
    literals: tuple[str, ...]  # the text around the placeholders: one more than placeholders
    placeholders: tuple[str, ...]  # INT, FLOAT or ANY
    in_handler: bool  # written in an ``except`` block (or by ``logger.exception``)
    first: str  # the first oMLX version that has it
    last: str | None  # the last one; None when the newest version still has it
    source: str  # "code" (read from the source) or "notes" (a later build the history lacks)
    status: int | None = None  # an HTTP error's status code, when the source states it
    exception: str | None = None  # the exception class (RAISE) or HTTPException

    @property
    def template(self) -> str:
        """The message with its placeholders written ``{kind}``: ``Loaded model: {any}``."""
        parts = [self.literals[0]]
        for kind, text in zip(self.placeholders, self.literals[1:], strict=True):
            parts += ["{" + kind + "}", text]
        return "".join(parts)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Literals exactly, placeholders by their kind. A message of several lines (a traceback
        after it) is matched on its first line: the text up to the first line break."""
        parts = [re.escape(self.literals[0].split("\n", 1)[0])]
        ends = "\n" not in self.literals[0]
        for kind, text in zip(self.placeholders, self.literals[1:], strict=True):
            if not ends:
                break
            parts += [f"(?:{_PLACEHOLDER_PATTERNS[kind]})", re.escape(text.split("\n", 1)[0])]
            ends = "\n" not in text
        return re.compile("".join(parts) + (r"\s*\Z" if ends else ""))

    def sample(self, filler: str = "x") -> str:
        """A message this entry could write: ``filler`` for text, ``1`` and ``1.5`` for numbers."""
        values = {INT: "1", FLOAT: "1.5", ANY: filler}
        parts = [self.literals[0]]
        for kind, text in zip(self.placeholders, self.literals[1:], strict=True):
            parts += [values[kind], text]
        return "".join(parts)

    def key_words(self) -> list[str]:
        """The words every message of this entry holds whole (in a literal, not touching a
        placeholder): what :class:`Lexicon` indexes it by."""
        last = len(self.literals) - 1
        words = []
        for index, text in enumerate(self.literals):
            for word in _WORD.finditer(text.split("\n", 1)[0] if index == 0 else text):
                after_placeholder = word.start() == 0 and index > 0
                before_placeholder = word.end() == len(text) and index < last
                if not after_placeholder and not before_placeholder:
                    words.append(word[0])
            if "\n" in text:
                break
        return words


@dataclass(frozen=True)
class VersionRange:
    """The oMLX versions that could have written a set of messages: ``min`` to ``max`` (inclusive);
    ``max`` None when the newest version the lexicon knows still writes all of them."""

    min: str
    max: str | None
    entries: int  # how many distinct entries the range rests on


class Lexicon:
    """The entries, the order of oMLX's versions, and an index to find a message's entries."""

    def __init__(self, header: dict[str, object], entries: Sequence[Entry]) -> None:
        self.header = header
        self.entries = tuple(entries)
        versions = header["versions"]
        if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
            raise ValueError("the header's versions are not a list of names")
        self.versions: tuple[str, ...] = tuple(versions)
        self._order = {version: index for index, version in enumerate(self.versions)}
        self._by_id = {entry.id: entry for entry in self.entries}
        for entry in self.entries:
            self.order(entry.first)
            if entry.last is not None:
                self.order(entry.last)

    def order(self, version: str) -> int:
        """A version's place among those the lexicon knows (older first)."""
        try:
            return self._order[version]
        except KeyError:
            raise ValueError(f"version {version!r} is not in the lexicon's order") from None

    def entry(self, entry_id: str) -> Entry:
        return self._by_id[entry_id]

    @cached_property
    def _index(self) -> tuple[dict[str, tuple[Entry, ...]], tuple[Entry, ...]]:
        """Each entry under its rarest whole word; the entries with none, which every text may match."""
        words = [entry.key_words() for entry in self.entries]
        counts: dict[str, int] = {}
        for found in words:
            for word in set(found):
                counts[word] = counts.get(word, 0) + 1
        index: dict[str, list[Entry]] = {}
        unindexed = []
        for entry, found in zip(self.entries, words, strict=True):
            if found:
                index.setdefault(min(found, key=lambda w: (counts[w], -len(w), w)), []).append(entry)
            else:
                unindexed.append(entry)
        return {word: tuple(group) for word, group in index.items()}, tuple(unindexed)

    def candidates(self, text: str) -> list[Entry]:
        """The entries whose key word ``text`` holds: the only ones that can match it."""
        index, unindexed = self._index
        found = [entry for word in set(_WORD.findall(text)) for entry in index.get(word, ())]
        return [*found, *unindexed]

    def match(self, message: str, logger: str | None = None, level: str | None = None) -> tuple[Entry, ...]:
        """The entries ``message`` is an instance of, whole (a record's text after its head).

        Given the record's ``logger`` and ``level``, the log calls that agree with them; when none
        does, every entry the text matches (a call may log an exception's text or a detail whole)."""
        found = self._ordered(e for e in self.candidates(message) if e.regex.match(message))
        agreeing = tuple(
            entry
            for entry in found
            if entry.kind == LOG
            and (logger is None or entry.logger in (logger, None))
            and (level is None or entry.level in (level, None))
        )
        return agreeing if agreeing and (logger or level) else found

    def search(self, text: str) -> tuple[Entry, ...]:
        """The entries whose message appears anywhere in ``text`` (a line with an unknown head)."""
        return self._ordered(e for e in self.candidates(text) if e.regex.search(text))

    def _ordered(self, entries: Iterable[Entry]) -> tuple[Entry, ...]:
        return tuple(sorted(set(entries), key=lambda entry: entry.id))

    def version_range(self, matches: Iterable[Sequence[Entry]]) -> VersionRange | None:
        """The versions that could have written every message, given the entries each one matched
        (any of a message's entries may be the one that wrote it). None when no message matched or
        no single version writes them all (a log that spans an upgrade, say)."""
        low, high = 0, len(self.versions) - 1
        seen: set[str] = set()
        for entries in matches:
            if not entries:
                continue
            seen.update(entry.id for entry in entries)
            low = max(low, min(self.order(entry.first) for entry in entries))
            lasts = [len(self.versions) - 1 if e.last is None else self.order(e.last) for e in entries]
            high = min(high, max(lasts))
        if not seen or low > high:
            return None
        newest = high == len(self.versions) - 1
        return VersionRange(self.versions[low], None if newest else self.versions[high], len(seen))


def load(path: Path = PATH) -> Lexicon:
    """Read a lexicon file; any fault in it is :class:`LexiconBroken`."""
    import gzip
    import json

    try:
        with gzip.open(path) as packed:
            data = json.load(packed)
        header = data["header"]
        if tuple(header["fields"]) != _FIELDS:
            raise ValueError("its rows have another layout")
        entries = [_entry(row) for row in data["entries"]]
        return Lexicon(header, entries)
    except (OSError, EOFError, ValueError, KeyError, TypeError, IndexError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LexiconBroken(f"the lexicon of oMLX messages {path} cannot be read ({reason}); reinstall") from None


_TYPES: dict[str, type | tuple[type, ...]] = {
    "id": str, "kind": str, "level": (str, type(None)), "logger": (str, type(None)), "module": str,
    "function": str, "literals": list, "kinds": list, "in_handler": bool, "first": str,
    "last": (str, type(None)), "source": str, "status": (int, type(None)), "exception": (str, type(None)),
}  # fmt: skip


def _entry(row: list[object]) -> Entry:
    values = dict(zip(_FIELDS, row, strict=True))
    wrong = [name for name, value in values.items() if not isinstance(value, _TYPES[name])]
    literals, kinds = values.pop("literals"), values.pop("kinds")
    assert isinstance(literals, list) and isinstance(kinds, list)
    if wrong or len(literals) != len(kinds) + 1 or not set(kinds) <= set(_PLACEHOLDER_PATTERNS):
        raise ValueError(f"entry {values['id']} is malformed ({', '.join(wrong) or 'its template'})")
    return Entry(**values, literals=tuple(map(str, literals)), placeholders=tuple(kinds))  # type: ignore[arg-type]


@cache
def lexicon() -> Lexicon:
    """The packaged lexicon, read once when first needed."""
    return load()
