"""What a user wrote or a model answered, in log text: the values of fields that hold it, found
and masked whole for ``--redact`` and ``report`` (``redact.py``).

A field is one named ``content``, ``prompt``, ``arguments``, ``reasoning``… or a name that ends in
one (``reasoning_content``, ``system_prompt``). Its value is masked in whatever form it is logged:
a quoted string up to its closing quote over any number of lines, a list or table up to its
closing bracket, bare text after ``=`` to the end of the text (a record with its continuation
lines). A count or a flag (``messages=1``) stays. Every scan is linear: strings and brackets are
read piece by piece, each piece once.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# A field that holds what a user wrote or a model answered, also as the end of a longer name
# (``reasoning_content``, ``system_prompt``, ``user_input``) but not its start (``prompt_tokens``).
TEXT_WORDS = "content|prompt|text|input|instructions|messages?|arguments|reasoning|query|thinking"


_TEXT_NAME = rf"(?:[A-Za-z0-9]+_)*+(?:{TEXT_WORDS})"


# The name and its ``=`` or ``:``; after a ``:`` only a quoted or bracketed value is text, since oMLX's
# own words end in one (``Anthropic message: model=…``).
_TEXT_KEY = re.compile(rf"""(?<![\w\-])["']?{_TEXT_NAME}["']?\s*(?P<sign>[:=])[ \t]*""", re.IGNORECASE)


_TEXT_FIELD_NAME = re.compile(_TEXT_NAME, re.IGNORECASE)


# A value of a text field that is no text: a count or a flag (``messages=1, stream=True``).
_SCALAR = re.compile(r"(?:-?\d[\d._]*|true|false|none|null)(?=[\s,;)\]}]|$)", re.IGNORECASE)


# A quoted string, closed or running to the end of the text, its backslash escapes skipped.
_STRING = {quote: re.compile(rf"{quote}(?:[^{quote}\\]|\\.)*+(?P<close>{quote})?", re.DOTALL) for quote in "\"'"}


_DEPTH = {"[": 1, "{": 1, "(": 1, "]": -1, "}": -1, ")": -1}


# What a bracketed value is read as, piece by piece, to find where it closes.
_BRACKET_PIECE = re.compile(r""""(?:[^"\\]|\\.)*+"?|'(?:[^'\\]|\\.)*+'?|[\[\]{}()]|[^"'\[\]{}()]++""", re.DOTALL)


def is_text_field(name: str) -> bool:
    """Whether a field of that name holds what a user wrote or a model answered (``reasoning_content``)."""
    return _TEXT_FIELD_NAME.fullmatch(name) is not None


def mask_text_values(text: str, mask: Callable[[], str]) -> str:
    """``text`` with every text field's value replaced by what ``mask`` gives (it counts them)."""
    out: list[str] = []
    done = at = 0  # text before ``done`` is in ``out``; the next key is searched from ``at``
    while (key := _TEXT_KEY.search(text, at)) is not None:
        end = _value_end(text, key.end(), bare=key["sign"] == "=")
        if end is None:
            at = key.end()
            continue
        start, close = end
        out += (text[done : key.end()], _masked(text, key.end(), close, mask))
        done = at = start
    out.append(text[done:])
    return "".join(out)


def _masked(text: str, start: int, close: str, mask: Callable[[], str]) -> str:
    """The mask of a value, its quotes kept around it."""
    first = text[start]
    return first + mask() + close if first in _STRING else mask()


def _value_end(text: str, start: int, *, bare: bool) -> tuple[int, str] | None:
    """Where the value at ``start`` ends, and its closing quote (if a closed string); None when it is
    no text: empty quotes, a count or a flag, or (``bare`` False) a value neither quoted nor bracketed."""
    first = text[start : start + 1]
    if first in _STRING:
        string = _STRING[first].match(text, start)
        assert string is not None  # the quote itself matches
        close = string["close"] or ""
        return None if close and string.end() - start == 2 else (string.end(), close)
    if first and first in "[{(":
        depth = 0
        for piece in _BRACKET_PIECE.finditer(text, start):
            depth += _DEPTH.get(piece.group(0), 0)
            if depth <= 0:
                return piece.end(), ""
        return len(text), ""
    if not bare or not first or first.isspace() or _SCALAR.match(text, start):
        return None
    return len(text), ""
