"""The fleet as plain text for a terminal or a file."""

from __future__ import annotations

from omlx_logscan.fleet.layout import SECTIONS
from omlx_logscan.fleet.summary import Fleet


def fleet_text(fleet: Fleet) -> str:
    """Plain aligned columns: no markup, so host names and versions print as they are."""
    out: list[str] = []
    for title, columns, cells in SECTIONS:
        rows = [list(columns), *cells(fleet)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
        out.append(title)
        out += [
            "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ]
        if len(rows) == 1:
            out.append("  (none)")
        out.append("")
    return "\n".join(out)
