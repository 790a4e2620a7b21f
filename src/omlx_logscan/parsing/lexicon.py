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

_PLACEHOLDER_REGEXES = {kind: re.compile(pattern) for kind, pattern in _PLACEHOLDER_PATTERNS.items() if kind != ANY}

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

    @cached_property
    def opening(self) -> str:
        """The text every message of this entry begins with (up to its first placeholder or line break)."""
        return self.literals[0].split("\n", 1)[0]

    @cached_property
    def needle(self) -> str:
        """The longest literal text every message of this entry holds on its first line: a message
        without it cannot match, and ``in`` is far cheaper than a regex search."""
        return max(_first_line_literals(self.literals), key=len)

    @cached_property
    def specificity(self) -> int:
        """How many letters and digits its literals hold: a template of a few letters around
        placeholders (``{any}: {any}``) says little about a text found inside a line of another program."""
        return sum(1 for text in _first_line_literals(self.literals) for char in text if char.isalnum())

    def agreement(self, text: str) -> tuple[int, bool]:
        """How a message of this entry may begin with ``text`` (a message a paste cut short, or
        shortened inside): how many characters of its literals ``text`` shows in order, and whether
        all of ``text`` is such a beginning. A placeholder takes the text up to the next literal."""
        position = shown = 0
        for index, literal in enumerate(_first_line_literals(self.literals)):
            if index:
                kind = self.placeholders[index - 1]
                if kind != ANY:
                    number = _PLACEHOLDER_REGEXES[kind].match(text, position)
                    if number is None:
                        return shown, position == len(text)
                    position = number.end()
                elif literal:
                    found = text.find(literal, position)
                    if (
                        found < 0
                    ):  # the text ends inside the placeholder (a name cut off), or with a part of the literal
                        length, found = _longest_opening(literal, text, position)
                        cut_name = not length and not any(char.isspace() for char in text[position:])
                        return shown + length, cut_name or (length > 0 and found + length == len(text))
                    position = found
            common = _common_opening(text, position, literal)
            shown += common
            if common < len(literal):
                return shown, position + common == len(text)
            position += common
        return shown, position == len(text) or not self.literals[-1] or "\n" in "".join(self.literals)

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
        return key_words(self.literals)


def key_words(literals: Sequence[str]) -> list[str]:
    """The words of a template's literals that no placeholder touches (see :meth:`Entry.key_words`)."""
    pieces = _first_line_literals(literals)
    last = len(literals) - 1
    words = []
    for index, text in enumerate(pieces):
        found = _WORD.findall(text)
        if found and index > 0 and _WORD.match(text):
            found = found[1:]  # touches the placeholder before it
        if found and index < last and _WORD.match(text[-1:]) and "\n" not in literals[index]:
            found = found[:-1]  # touches the placeholder after it
        words += found
    return words


def _common_opening(text: str, start: int, literal: str) -> int:
    """How many characters of ``literal`` ``text`` shows from ``start``."""
    count = 0
    for char, expected in zip(text[start : start + len(literal)], literal, strict=False):
        if char != expected:
            break
        count += 1
    return count


def _longest_opening(literal: str, text: str, start: int) -> tuple[int, int]:
    """The longest opening of ``literal`` found in ``text`` from ``start``: its length and where (0, -1: none)."""
    low, high, where = 0, len(literal), -1
    while low < high:
        middle = (low + high + 1) // 2
        found = text.find(literal[:middle], start)
        if found < 0:
            high = middle - 1
        else:
            low, where = middle, found
    return low, where


# A text that shows this much of a message's literal wording in order is that message, though the
# paste changed it after that (``(current=…)`` where oMLX writes ``(reason=…, current=…)``).
_SHOWN_ENOUGH = 24
_SHOWN_WHOLE = 12  # and a text all of which may begin it must show this much of its wording


def _begins(shown: int, whole: bool) -> bool:
    return (whole and shown >= _SHOWN_WHOLE) or shown >= _SHOWN_ENOUGH


def _first_line_literals(literals: Sequence[str]) -> list[str]:
    """The literals up to the first line break: what a message's first line holds (a traceback or
    the lines of a message of several lines follow it)."""
    pieces = []
    for text in literals:
        head, newline, _ = text.partition("\n")
        pieces.append(head)
        if newline:
            break
    return pieces


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
        found = self._ordered(
            e for e in self.candidates(message) if message.startswith(e.opening) and e.regex.match(message)
        )
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
        return self._ordered(e for e in self.candidates(text) if e.needle in text and e.regex.search(text))

    def beginning(self, text: str) -> tuple[Entry, ...]:
        """The entries a message of which may begin with ``text`` (a message cut short by a paste)."""
        first = _WORD.match(text)
        found = self._by_first_word.get(first[0], ()) if first is not None else ()
        return self._ordered(e for e in found if _begins(*e.agreement(text)))

    @cached_property
    def _by_first_word(self) -> dict[str, tuple[Entry, ...]]:
        """The entries whose message begins with a whole word, under that word."""
        index: dict[str, list[Entry]] = {}
        for entry in self.entries:
            first = _WORD.match(entry.opening)
            if first is not None and (first.end() < len(entry.opening) or len(entry.literals) == 1):
                index.setdefault(first[0], []).append(entry)
        return {word: tuple(group) for word, group in index.items()}

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
