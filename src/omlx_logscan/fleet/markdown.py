"""The fleet as Markdown, ready to paste into an issue."""

from __future__ import annotations

from omlx_logscan.fleet.layout import SECTIONS
from omlx_logscan.fleet.summary import Fleet


def fleet_markdown(fleet: Fleet) -> str:
    """GitHub-flavoured tables, cells escaped."""
    out: list[str] = ["# Fleet", ""]
    for title, columns, cells in SECTIONS:
        rows = cells(fleet)
        out += [f"## {title}", ""]
        if not rows:  # a table of headings alone reads as a rendering fault
            out += ["None.", ""]
            continue
        out += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        out.append("")
    return "\n".join(out)
