"""The fleet as text and Markdown: the same columns and cells, laid out by each format."""

from __future__ import annotations

from typing import Any

from omlx_logscan.analysis.pooled import Fleet
from omlx_logscan.timeutil import human_duration

HOST_COLUMNS = ("host", "starts", "process time", "faults", "by kind", "penalty box", "dead time", "last fault")
VERSION_COLUMNS = (
    "macOS",
    "oMLX",
    "chip",
    "hosts",
    "starts",
    "process time",
    "faults",
    "per start (95 % ≤)",
    "per hour (95 % ≤)",
)
UPGRADE_COLUMNS = ("host", "upgrade", "first start", "first fault", "after")


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:,.{digits}g}" if value < 1 else f"{value:,.{min(digits, 1)}f}"


def _hours(hours: float) -> str:
    """Hours in the one duration style of every output: ``2 h 05 min``, ``86 d 22 h``."""
    return human_duration(hours * 3600)


def _rate(row: dict[str, Any], per: str) -> str:
    return f"{_number(row[f'faults_per_{per}'])} (≤ {_number(row[f'upper95_faults_per_{per}'])})"


def host_cells(fleet: Fleet) -> list[list[str]]:
    return [
        [
            row["host"],
            str(row["process_starts"]),
            _hours(row["process_hours"]),
            str(row["faults"]),
            ", ".join(f"{kind} {count}" for kind, count in row["faults_by_kind"].items()) or "–",
            str(row["penalty_box_entries"]),
            _hours(row["dead_hours"]) if row["dead_hours"] else "0",
            (row["last_fault"] or "–")[:19].replace("T", " ") + (row["last_fault"] or "")[23:],
        ]
        for row in fleet.hosts
    ]


def version_cells(fleet: Fleet) -> list[list[str]]:
    return [
        [
            row["os_version"],
            row["omlx_version"],
            row["chip"] or "–",
            str(row["hosts"]),
            str(row["process_starts"]),
            _hours(row["process_hours"]),
            str(row["faults"]),
            _rate(row, "start"),
            _rate(row, "hour"),
        ]
        for row in fleet.versions
    ]


def upgrade_cells(fleet: Fleet) -> list[list[str]]:
    return [
        [
            row["host"],
            f"{row['from_version']} → {row['to_version']}",
            (row["first_start"] or "–")[:19].replace("T", " "),
            (row["first_fault"] or "none yet")[:19].replace("T", " "),
            "–" if row["hours_to_first_fault"] is None else _hours(row["hours_to_first_fault"]),
        ]
        for row in fleet.upgrades
    ]


FLEET_TABLES = (
    ("Hosts", HOST_COLUMNS, host_cells),
    ("Versions (pooled; exact one-sided 95 % upper bounds)", VERSION_COLUMNS, version_cells),
    ("First fault after each macOS upgrade", UPGRADE_COLUMNS, upgrade_cells),
)


def fleet_text(fleet: Fleet) -> str:
    """Plain aligned columns: no markup, so host names and versions print as they are."""
    out: list[str] = []
    for title, columns, cells in FLEET_TABLES:
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


def fleet_markdown(fleet: Fleet) -> str:
    """GitHub-flavoured tables, cells escaped."""
    out: list[str] = ["# Fleet", ""]
    for title, columns, cells in FLEET_TABLES:
        rows = cells(fleet)
        out += [f"## {title}", ""]
        if not rows:  # a table of headings alone reads as a rendering fault
            out += ["None.", ""]
            continue
        out += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        out.append("")
    return "\n".join(out)
