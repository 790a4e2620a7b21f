"""``logscan fleet`` on DuckDB: per-host numbers equal each host's timeline, pooled bounds by hand, sources."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE
from fleet_data import Fleet, invoke
from fleet_data import fleet as fleet  # the fixture
from omlx_logscan.analysis.pooled import pooled_bounds
from omlx_logscan.cli.app import app
from omlx_logscan.errors import InputError
from omlx_logscan.fleet.summary import read_fleet
from omlx_logscan.fleet.tables import fleet_views

runner = CliRunner()


def fleet_json(*sources: str) -> dict[str, Any]:
    result = runner.invoke(app, ["fleet", *sources, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def own_numbers(timeline: dict[str, Any]) -> dict[str, Any]:
    """What one host's own timeline says: faults, by kind, penalty-box entries, dead hours, last fault."""
    faults = timeline["faults"]
    kinds: dict[str, int] = {}
    for fault in faults:
        kinds[fault["kind"]] = kinds.get(fault["kind"], 0) + 1
    return {
        "faults": len(faults),
        "faults_by_kind": kinds,
        "penalty_box_entries": sum(1 for fault in faults if fault["outcome"] == "penalty_box"),
        "dead_hours": round(sum(w["dead_at_least_s"] for w in timeline["dead_windows"]) / 3600, 3),
        "last_fault": faults[-1]["time"],
        "process_starts": sum(1 for s in timeline["sessions"] if s["start_in_log"]),
    }


@pytest.mark.slow
def test_per_host_numbers_equal_each_hosts_own_timeline(fleet: Fleet) -> None:
    doc = fleet_json(str(fleet.tables))
    assert doc["schema"] == "omlx-logscan/fleet/2"
    assert [row["host"] for row in doc["hosts"]] == ["mac-01", "mac-02"]
    for row in doc["hosts"]:
        assert {key: row[key] for key in own_numbers(fleet.timelines[row["host"]])} == own_numbers(
            fleet.timelines[row["host"]]
        )
    assert doc["hosts"][0]["faults"] == 6 > doc["hosts"][1]["faults"] > 0  # the cut log has fewer faults


@pytest.mark.slow
def test_timeline_documents_give_the_same_answer_as_exports(fleet: Fleet) -> None:
    exported, documented = fleet_json(str(fleet.tables)), fleet_json(*map(str, fleet.documents))
    assert documented["hosts"] == exported["hosts"]
    assert len(documented["versions"]) == len(exported["versions"])
    for mine, theirs in zip(documented["versions"], exported["versions"], strict=True):
        # hours from zoned text or from local times: the same to 1e-9; every other field exactly
        floats = {key for key, value in theirs.items() if isinstance(value, float)}
        exact = [key for key in theirs if key not in floats]
        assert {k: mine[k] for k in exact} == {k: theirs[k] for k in exact} and mine.keys() == theirs.keys()
        assert {k: mine[k] for k in floats} == pytest.approx({k: theirs[k] for k in floats}, rel=1e-9)
    assert documented["upgrades"] == exported["upgrades"]
    globbed = fleet_json(str(fleet.root / "reports" / "*.json"))
    assert globbed["hosts"] == exported["hosts"]
    assert fleet_json(str(fleet.root / "tab*"))["hosts"] == exported["hosts"]  # a glob of export folders


def test_versions_pool_the_hosts_with_bounds_by_hand(fleet: Fleet) -> None:
    versions = {row["os_version"]: row for row in fleet_json(str(fleet.tables))["versions"]}
    old, new = versions["26.5.1"], versions["27.0"]
    assert (old["hosts"], old["process_starts"], old["faults"]) == (2, 312, 0)
    every_fault = sum(len(timeline["faults"]) for timeline in fleet.timelines.values())  # all came on 27.0
    assert (new["hosts"], new["faults"], new["penalty_box_entries"]) == (2, every_fault, 4)
    # Zero faults: P(X = 0; μ) = e^-μ = 0.05, so μ = ln 20.
    assert old["upper95_faults_per_start"] == pytest.approx(math.log(20) / 312, rel=1e-9)
    assert old["upper95_faults_per_hour"] == pytest.approx(math.log(20) / old["process_hours"], rel=1e-4)
    assert new["faults_per_start"] == pytest.approx(every_fault / new["process_starts"])


def test_pooled_bounds_for_known_counts() -> None:
    # One fault: (1 + μ) e^-μ = 0.05 at μ = 4.743865; two: (1 + μ + μ²/2) e^-μ = 0.05 at μ = 6.295794.
    assert pooled_bounds(1, 4, 2.0)["upper95_faults_per_start"] == pytest.approx(4.743865 / 4, rel=1e-6)
    assert pooled_bounds(2, 10, 8.0)["upper95_faults_per_hour"] == pytest.approx(6.295794 / 8, rel=1e-6)
    assert pooled_bounds(0, 0, 0.0) == {
        "faults_per_start": None,
        "upper95_faults_per_start": None,
        "faults_per_hour": None,
        "upper95_faults_per_hour": None,
    }


def test_first_fault_after_each_upgrade_per_host(fleet: Fleet) -> None:
    upgrades = fleet_json(str(fleet.tables))["upgrades"]
    assert [(row["host"], row["from_version"], row["to_version"]) for row in upgrades] == [
        ("mac-01", "26.5.1", "27.0"),
        ("mac-02", "26.5.1", "27.0"),
    ]
    first = fleet.timelines["mac-02"]["faults"][0]
    assert upgrades[1]["first_fault"] == first["time"] and upgrades[1]["first_fault"].endswith("-04:00")
    assert upgrades[0]["hours_to_first_fault"] == pytest.approx(2.383, abs=1e-3)


def test_text_and_markdown(fleet: Fleet) -> None:
    text = runner.invoke(app, ["fleet", str(fleet.tables)])
    assert text.exit_code == 0 and "mac-02" in text.stdout and "26.5.1 → 27.0" in text.stdout
    markdown = runner.invoke(app, ["fleet", str(fleet.tables), "-f", "markdown"])
    assert "| macOS | oMLX | chip |" in markdown.stdout


@pytest.mark.slow
def test_a_real_subprocess(fleet: Fleet) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "fleet", str(fleet.tables), "-f", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["hosts"][0]["host"] == "mac-01"


def test_a_source_that_is_neither_is_a_one_line_error(fleet: Fleet) -> None:
    result = runner.invoke(app, ["fleet", str(fleet.root / "logs")])
    assert result.exit_code == 2
    assert "neither an export folder" in result.output
    result = runner.invoke(app, ["fleet", str(fleet.root / "nothing-*")])
    assert result.exit_code == 2 and "matches nothing" in result.output


def test_remote_sources_without_httpfs_fail_clearly(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "duckdb_extension_httpfs", None)  # as if the package were not installed
    with pytest.raises(InputError, match=r"s3://fleet/tables: remote sources need DuckDB's httpfs extension"):
        read_fleet(["s3://fleet/tables"])
    assert read_fleet([str(fleet.tables)]).hosts  # local sources still work


def test_a_fleet_without_dead_windows_reads_empty_tables(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("2026-09-15 20:00:00,000 - omlx.server - WARNING - [-] - POST /v1/chat/completions → 400: bad\n")
    invoke("export", str(log), "--host", "quiet-mac", "-o", str(tmp_path / "tables"))
    with fleet_views([str(tmp_path / "tables")]) as con:
        assert con.execute("SELECT COUNT(*) FROM dead_windows").fetchone() == (0,)
        assert con.execute("SELECT COUNT(*) FROM faults").fetchone() == (0,)
    assert read_fleet([str(tmp_path / "tables")]).hosts[0]["faults"] == 0


def test_an_empty_section_in_markdown_says_none_not_a_bare_heading_row(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("2026-09-15 20:00:00,000 - omlx.server - WARNING - [-] - POST /v1/chat/completions → 400: bad\n")
    invoke("export", str(log), "--host", "quiet-mac", "-o", str(tmp_path / "tables"))
    shown = runner.invoke(app, ["fleet", str(tmp_path / "tables"), "-f", "markdown"]).stdout
    part = shown.split("## First fault after each macOS upgrade", 1)[1].split("\n## ", 1)[0]
    assert part.strip() == "None." and "| host | starts |" in shown


@pytest.mark.slow
def test_an_export_without_host_says_it_took_this_machines_name(tmp_path: Path) -> None:
    from omlx_logscan.inputs.hosts import this_host

    unnamed = runner.invoke(app, ["export", str(EXAMPLE), "-o", str(tmp_path / "a")])
    assert unnamed.exit_code == 0
    assert f"exported {this_host()} (this machine's name: --host names the machine" in unnamed.stderr
    named = runner.invoke(app, ["export", str(EXAMPLE), "--host", "mac-07", "-o", str(tmp_path / "b")])
    assert named.exit_code == 0 and "exported mac-07: " in named.stderr and "this machine's" not in named.stderr
