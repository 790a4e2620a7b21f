"""Lines fitted to a terminal: broken at spaces with a hanging indent, a word split only when it alone
is wider than the line (a hash, a path), so a timeline at 80 columns reads like one at 200."""

from __future__ import annotations

import re
import unicodedata
from functools import cache

NARROW_COLUMNS = 100  # at this width or less, tables give their key fields one line and let the rest wrap


MIN_TEXT = 40  # cells a wrapped line keeps for its text, however deep its hanging indent


def hang_room(hang: int, width: int) -> int:
    """The hanging indent a line of ``width`` cells can afford: ``hang``, unless that leaves less than
    ``MIN_TEXT`` cells (or half the line, on a narrow one) for the text."""
    return min(hang, max(width // 2, width - MIN_TEXT))


_WORD = re.compile(r"\S+")


def cell_len(text: str) -> int:
    """The terminal cells ``text`` takes: two for a wide (East Asian) character, none for a combining
    mark. Counted here rather than by rich, so that a report written to a pipe or a file loads none of it."""
    return len(text) if text.isascii() else sum(_cells(char) for char in text)


@cache
def _cells(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def wrap_spans(text: str, width: int, hang: int) -> list[tuple[int, int]]:
    """Where to cut ``text`` into lines of at most ``width`` cells: (start, end) offsets of each
    line's text. Every line after the first is printed after ``hang`` spaces (``hang_room`` caps it);
    the spaces at a break are dropped, the first line keeps its own leading spaces."""
    hang = hang_room(hang, width)
    lead = len(text) - len(text.lstrip(" "))
    spans: list[tuple[int, int]] = []
    start, end, used, empty = 0, lead, cell_len(text[:lead]), True
    for word in _WORD.finditer(text):
        position, stop = word.span()
        size = cell_len(word.group())
        gap = 0 if empty else cell_len(text[end:position])
        if used + gap + size <= width:
            used, end, empty = used + gap + size, stop, False
            continue
        if not empty:  # the word goes to the next line
            spans.append((start, end))
            start, end, used, empty = position, position, hang, True
            if used + size <= width:
                used, end, empty = used + size, stop, False
                continue
        while True:  # a word wider than a whole line: split where each line is full
            cut = _fit(text, position, stop, max(width - used, 1))
            if cut >= stop:
                used, end, empty = used + cell_len(text[position:stop]), stop, False
                break
            spans.append((start, cut))
            start, end, position, used = cut, cut, cut, hang
    spans.append((start, end))
    return spans


def _fit(text: str, start: int, stop: int, room: int) -> int:
    """The end of the longest piece of ``text[start:stop]`` that fits ``room`` cells (at least one character)."""
    end = start + 1
    while end < stop and cell_len(text[start : end + 1]) <= room:
        end += 1
    return end


_BREAK_AFTER = (" ", "/", ":", ",")


CONTINUED = "↪ "  # starts each further line of a log line wrapped word for word


def verbatim_lines(text: str, width: int) -> list[str]:
    """``text`` copied from a log, in lines of at most ``width`` cells that lose nothing: each further
    line starts with the line's own indent and ``CONTINUED``, and removing those gives the text back.
    A line breaks after a space or a path's slash in its last third, else where it is full (a hash)."""
    indent = " " * min(len(text) - len(text.lstrip(" ")), width // 2)
    lines: list[str] = []
    start, lead = 0, ""
    while True:
        room = max(width - cell_len(lead), 1)
        if cell_len(text[start:]) <= room:
            lines.append(lead + text[start:])
            return lines
        end = _fit(text, start, len(text), room)
        after = max(text.rfind(mark, start, end) for mark in _BREAK_AFTER)
        if after >= start + (end - start) * 2 // 3 and text[start:after].strip():
            end = after + 1  # the space or slash stays at the end of the line, so nothing is lost
        lines.append(lead + text[start:end])
        start, lead = end, indent + CONTINUED
