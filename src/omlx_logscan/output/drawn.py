"""A Markdown document (the report) drawn for a terminal, where its raw text would read badly."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


REPORT_HINT = (
    "This is the report drawn for a terminal; to paste it into a GitHub issue, write its Markdown with "
    "`logscan report LOG -o report.md` (or pipe it: `logscan report LOG | pbcopy`)."
)


_CHART = re.compile(r"^```mermaid\n.*?^```$", re.MULTILINE | re.DOTALL)


def markdown_on_terminal(text: str, con: Console) -> None:
    """A Markdown document drawn by rich: headings, lists, tables and code blocks fitted to the
    terminal. A Mermaid chart is GitHub's to draw: a line stands in for its source."""
    from rich.markdown import Markdown

    con.print(Markdown(_CHART.sub("*(A chart: GitHub draws it from the report's Markdown.)*", text), hyperlinks=False))
