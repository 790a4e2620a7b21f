"""Outages on every surface: timeline (text, JSON, Markdown), report, check, bounds; in-process and as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from omlx_logscan.cli import app
from omlx_logscan.output.outages import POSSIBLE_WEDGE_CAVEAT
from outage_logs import outage_log

runner = CliRunner()
FAIL_ON = ["--fail-on", "wedge,possible_wedge,fatal_exit,retry_loop"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("outage-cli")
    return {level: outage_log(folder, 6, "file", level)[0] for level in ("debug", "info", "warning")}


@pytest.mark.slow
def test_timeline_json_lists_the_outages_and_keeps_the_dead_windows(logs: dict[str, Path]) -> None:
    result = runner.invoke(app, ["timeline", "-q", "-f", "json", str(logs["debug"])])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    kinds = [o["kind"] for o in document["outages"]]
    assert sorted(kinds) == sorted(["wedge", "fatal_exit", "fatal_exit", "retry_loop", "reboot"])
    assert document["dead_windows"] == [] and document["outage_notes"] == []
    wedge = next(o for o in document["outages"] if o["kind"] == "wedge")
    assert wedge["certain"] and wedge["title"] == "wedge" and wedge["unfinished_requests"] > 2
    assert wedge["evidence"] and all({"source", "line", "time"} <= set(e) for e in wedge["evidence"])
    assert any("scheduler stopped stepping" in sentence for sentence in wedge["cannot_show"])
    reboot = next(o for o in document["outages"] if o["kind"] == "reboot")
    assert document["crashes"][reboot["crash"]]["kind"] == "kernel_panic"  # a reboot points to its crash row


@pytest.mark.slow
def test_info_and_warning_say_what_the_level_hides(logs: dict[str, Path]) -> None:
    info = json.loads(runner.invoke(app, ["timeline", "-q", "-f", "json", str(logs["info"])]).stdout)
    (wedge,) = [o for o in info["outages"] if o["kind"] == "wedge"]
    assert not wedge["certain"] and wedge["title"] == "possible wedge" and POSSIBLE_WEDGE_CAVEAT in wedge["text"]
    assert POSSIBLE_WEDGE_CAVEAT in info["outage_notes"][0]
    warning = json.loads(runner.invoke(app, ["timeline", "-q", "-f", "json", str(logs["warning"])]).stdout)
    assert not [o for o in warning["outages"] if o["kind"] == "wedge"]
    assert "hides all traffic" in warning["outage_notes"][0]


def test_text_and_markdown_have_an_outages_section(logs: dict[str, Path]) -> None:
    text = runner.invoke(app, ["timeline", "-q", str(logs["info"])], env={"COLUMNS": "200"}).stdout
    assert "Outages" in text and "possible wedge" in text and "fatal exit" in text
    summary = text.split("Summary", 1)[1]
    assert " Outages: 1 possible wedge (at least " in summary and "2 fatal exits (at least " in summary
    markdown = runner.invoke(app, ["timeline", "-q", "-f", "markdown", str(logs["debug"])]).stdout
    section = markdown.split("### Outages")[1].split("###")[0]
    assert "session" in section and "retry loop" in section and "The log cannot show" in section


def test_report_has_its_section_and_bars_in_the_chart(logs: dict[str, Path]) -> None:
    report = runner.invoke(app, ["report", "-q", str(logs["debug"])]).stdout
    assert "### Outages" in report
    chart = report.split("```mermaid")[1].split("```")[0]
    assert " wedge :crit, " in chart and " fatal exit :crit, " in chart
    assert " reboot :" not in chart  # it began some time after the last record: not placed on the chart
    reboot = next(line for line in report.splitlines() if " reboot — " in line)
    assert reboot.startswith("after ") and "(up to " in reboot


def test_check_fails_on_each_outage_rule(logs: dict[str, Path]) -> None:
    result = runner.invoke(app, ["check", "-q", "-f", "json", *FAIL_ON, str(logs["debug"])])
    assert result.exit_code == 1, result.output
    counts = {rule["rule"]: rule["findings"] for rule in json.loads(result.stdout)["rules"]}
    assert counts == {"wedge": 1, "possible_wedge": 0, "fatal_exit": 2, "retry_loop": 1}
    info = runner.invoke(app, ["check", "-q", "-f", "json", "--fail-on", "wedge,possible_wedge", str(logs["info"])])
    assert {r["rule"]: r["findings"] for r in json.loads(info.stdout)["rules"]} == {"wedge": 0, "possible_wedge": 1}


def test_max_outage_counts_every_kind_and_max_dead_stays_the_penalty_box(logs: dict[str, Path]) -> None:
    args = ["check", "-q", "-f", "json", "--fail-on", "", str(logs["debug"])]
    longest = runner.invoke(app, [*args, "--max-outage", "1h"])
    assert longest.exit_code == 1
    found = json.loads(longest.stdout)["findings"]
    assert [f["rule"] for f in found] == ["outage"] and "wedge" in found[0]["message"]
    assert runner.invoke(app, [*args, "--max-outage", "30d"]).exit_code == 0
    assert runner.invoke(app, [*args, "--max-dead", "1m"]).exit_code == 0  # no penalty box in this log
    bad = runner.invoke(app, [*args, "--max-outage", "soon"])
    assert bad.exit_code == 2 and "--max-outage 'soon': not a duration" in bad.stderr


def test_bounds_gives_outage_hours_by_kind(logs: dict[str, Path]) -> None:
    result = runner.invoke(app, ["bounds", "-q", "-f", "json", "--by", "omlx", str(logs["debug"])])
    assert result.exit_code == 0, result.output
    hours: dict[str, float] = {}
    for row in json.loads(result.stdout)["rows"]:
        for kind, value in row["outage_hours"].items():
            hours[kind] = hours.get(kind, 0.0) + value
    assert set(hours) == {"wedge", "fatal_exit", "retry_loop", "reboot"} and hours["wedge"] > 1.0


@pytest.mark.slow
def test_as_a_subprocess_a_quiet_night_passes_and_a_wedge_fails(tmp_path: Path, logs: dict[str, Path]) -> None:
    quiet, _ = outage_log(tmp_path, 7, "console", "info", ("quiet-night",))
    command = [sys.executable, "-m", "omlx_logscan", "check", "-q", *FAIL_ON]
    passed = subprocess.run([*command, str(quiet)], capture_output=True, text=True, check=False)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    failed = subprocess.run([*command, "--wedge-after", "20m", str(logs["info"])], capture_output=True, text=True)
    assert failed.returncode == 1 and "possible_wedge" in failed.stdout
    timeline = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "timeline", "-q", "-f", "json", str(logs["debug"])],
        capture_output=True,
        text=True,
        check=True,
    )
    assert any(o["kind"] == "wedge" for o in json.loads(timeline.stdout)["outages"])
