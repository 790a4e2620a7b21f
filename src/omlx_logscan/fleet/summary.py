"""The fleet's answer, from the SQL run on its tables and what SQL cannot work out."""

from __future__ import annotations

from typing import Any

from omlx_logscan.analysis.pooled import Fleet, pooled_bounds
from omlx_logscan.fleet.tables import fleet_views, run_query
from omlx_logscan.timeutil import seconds


def summarize(con: Any) -> Fleet:
    """Run the SQL files on a connection whose views hold the fleet, and add what SQL cannot."""
    kinds: dict[str, dict[str, int]] = {}
    for row in run_query(con, "fault_kinds"):
        kinds.setdefault(row["host"], {})[row["kind"]] = int(row["faults"])
    hosts = [
        {
            "host": row["host"],
            "process_starts": int(row["process_starts"]),
            "process_hours": round(float(row["process_hours"]), 3),
            "faults": int(row["faults"]),
            "faults_by_kind": kinds.get(row["host"], {}),
            "penalty_box_entries": int(row["penalty_box_entries"]),
            "dead_hours": round(float(row["dead_hours"]), 3),
            "last_fault": row["last_fault"],
        }
        for row in run_query(con, "hosts")
    ]
    versions = []
    for row in run_query(con, "versions"):
        # Rounded first: an engine's parallel sums differ in the last bits from run to run.
        faults, starts, hours = int(row["faults"]), int(row["process_starts"]), round(float(row["process_hours"]), 6)
        versions.append(
            {
                "os_version": row["os_version"],
                "omlx_version": row["omlx_version"],
                "chip": row["chip"] or None,
                "hosts": int(row["hosts"]),
                "process_starts": starts,
                "process_hours": round(hours, 3),
                "faults": faults,
                "penalty_box_entries": int(row["penalty_box_entries"]),
                **pooled_bounds(faults, starts, hours),
            }
        )
    upgrades = [
        {**row, "hours_to_first_fault": _hours(row["first_start"], row["first_fault"])}
        for row in run_query(con, "upgrades")
    ]
    return Fleet(hosts, versions, upgrades)


def _hours(start: str | None, end: str | None) -> float | None:
    elapsed = seconds(start, end)
    return None if elapsed is None else round(elapsed / 3600, 3)


def read_fleet(sources: list[str]) -> Fleet:
    """The fleet's answer over export folders, globs, URLs and timeline documents."""
    with fleet_views(sources) as con:
        return summarize(con)
