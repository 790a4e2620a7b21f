"""Markdown building blocks that every Markdown writer shares (timeline, bounds, report, CI summary).

Log text goes into Markdown only inside code: a code span or block shows it as it is, whatever
characters it holds (``__call__`` stays ``__call__``). Pipes are escaped only in table cells, the
one place where ``\\|`` means a pipe; elsewhere it would show its backslash.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable, Sequence

from omlx_logscan.output.wrap import cell_len, verbatim_lines, wrap_spans

CODE_WIDTH = 88  # characters of a code block's line: what a GitHub comment (760 px) shows without scrolling


_BACKTICKS = re.compile(r"`+")


_INLINE_MARKUP = re.compile(r"([\\`*_\[\]<>~])")


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def code_span(text: str) -> str:
    """``text`` as inline code, fenced by more backticks than any run inside it (newlines folded)."""
    text = text.replace("\r", " ").replace("\n", " ")
    fence = "`" * (_longest_backticks(text) + 1)
    if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ") and text.strip()):
        text = f" {text} "  # CommonMark strips one space each side, so a backtick at an end stays content
    return f"{fence}{text}{fence}"


def md_text(text: str) -> str:
    """Prose that may name log things (a ``__call__`` frame, a file): the characters that would start
    emphasis, code, links or HTML are backslash-escaped, which Markdown shows as the plain character."""
    return _INLINE_MARKUP.sub(r"\\\1", text)


def md_cell(text: str) -> str:
    """Text safe inside a Markdown table cell: pipes escaped (also inside code spans, as GFM reads tables
    first), newlines folded."""
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def fence_for(lines: Sequence[str]) -> str:
    """A code fence longer than any backtick run inside, so log text cannot close it."""
    return "`" * max(3, max((_longest_backticks(line) for line in lines), default=0) + 1)


def code_block(lines: Sequence[str], lang: str = "") -> list[str]:
    """``lines`` between fences that no backtick run inside can close."""
    fence = fence_for(lines)
    return [fence + lang, *lines, fence]


def fit_code(
    lines: Iterable[str], width: int = CODE_WIDTH, quoting: str | None = None, hang: int | None = None
) -> list[str]:
    """The tool's own lines for a code block, each wrapped at ``width`` characters: continuation lines
    are indented ``hang`` spaces (by default two past the line's own indent), so a reader sees where each
    line goes on. Lines that start with ``quoting`` quote the log and are left whole here: they are
    wrapped word for word once masked (``fit_blocks``), so no secret is split before it is found."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width or (quoting and line.startswith(quoting)):
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip(" "))]
        out += textwrap.wrap(
            line,
            width,
            initial_indent="",
            subsequent_indent=" " * hang if hang is not None else indent + "  ",
            break_long_words=True,
            break_on_hyphens=False,
            drop_whitespace=True,
        )
    return out


_FENCE = re.compile(r"(`{3,})(\S*)")


def fit_blocks(document: str, plain: Callable[[str], str], width: int = CODE_WIDTH) -> tuple[str, int]:
    """``document`` with every line of its code blocks at most ``width`` cells, charts aside (GitHub draws
    them, it does not show their text); and how many log lines had to be wrapped.

    A line that ``plain`` changes holds text copied from the log (``plain`` removes the marks around it):
    it is wrapped word for word (``verbatim_lines``), nothing cut. The tool's own lines are wrapped at
    spaces two past their indent. Lines that fit keep their marks; wrapped ones are returned plain.
    """
    out: list[str] = []
    fence: str | None = None
    chart = False
    wrapped = 0
    for line in document.split("\n"):
        opening = _FENCE.match(line) if fence is None else None
        if opening:
            fence, chart = opening.group(1), opening.group(2) == "mermaid"
        elif fence is not None and line.rstrip() == fence:
            fence = None
        elif fence is not None and not chart:
            text = plain(line)
            if cell_len(text) > width:
                if text != line:
                    wrapped += 1
                    out += verbatim_lines(text, width)
                    continue
                indent = len(text) - len(text.lstrip(" ")) + 2
                out += [
                    (" " * indent if number else "") + text[start:end]
                    for number, (start, end) in enumerate(wrap_spans(text, width, indent))
                ]
                continue
        out.append(line)
    return "\n".join(out), wrapped
