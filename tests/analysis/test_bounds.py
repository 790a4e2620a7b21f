"""Version bounds: OS history formats, session assignment, exact Poisson limits, the report's sentence."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, FIXTURES, ROOT, analysis_of
from omlx_logscan.analysis.bounds import (
    Grouping,
    TimeBounds,
    build_bounds,
    poisson_cdf,
    poisson_upper,
    session_os_versions,
)
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.cli.app import app
from omlx_logscan.cli.values import parse_os_flag, zone
from omlx_logscan.errors import LogscanError
from omlx_logscan.inputs import oshistory
from omlx_logscan.inputs.oshistory import OsHistory, load_history, parse_history
from omlx_logscan.output.markdown import bounds_markdown
from omlx_logscan.output.versions import bounds_sentence, time_bounds_phrase

runner = CliRunner()
HISTORY = FIXTURES / "oshistory"
UPGRADE_LOG = HISTORY / "upgrade.log"
BERLIN = zone("Europe/Berlin")
INSTALLS = [("2026-03-30T14:00:00", "26.4"), ("2026-05-12T10:03:12", "26.5.1"), ("2026-09-15T17:41:00", "27.0")]
OS_FLAGS = ["--os", "26.4@2026-03-30 14:00", "--os", "26.5.1@2026-05-12 10:03:12", "--os", "27.0@2026-09-15 17:41"]


def installs_of(history: OsHistory | None) -> list[tuple[str, str]]:
    assert history is not None
    return [(install.time, install.version) for install in history.installs]


def bounds_json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["bounds", *args, "-f", "json", "-q"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def error_of(*args: str) -> str:
    result = runner.invoke(app, ["bounds", *args, "-q"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1
    return result.stderr


# -- exact Poisson upper limits -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "published"),
    [(0, 2.9957), (1, 4.7439), (2, 6.2958), (3, 7.7537), (10, 16.9622)],  # χ²(0.95; 2k+2) / 2
)
def test_poisson_upper_matches_published_tables(k: int, published: float) -> None:
    assert poisson_upper(k) == pytest.approx(published, abs=1e-4)


@pytest.mark.parametrize("k", [0, 4, 50, 2000])
def test_poisson_upper_solves_the_cdf_equation_without_overflow(k: int) -> None:
    upper = poisson_upper(k)
    assert poisson_cdf(k, upper) == pytest.approx(0.05, rel=1e-9)
    assert upper > k and math.isfinite(upper)


def test_poisson_cdf_small_cases() -> None:
    assert poisson_cdf(0, 0.0) == 1.0
    assert poisson_cdf(0, 2.0) == pytest.approx(math.exp(-2))
    assert poisson_cdf(2, 1.5) == pytest.approx(math.exp(-1.5) * (1 + 1.5 + 1.5**2 / 2))


# -- OS history formats -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["InstallHistory.plist", "InstallHistory-binary.plist"])
def test_plist_keeps_macos_entries_in_local_time(name: str) -> None:
    history = load_history([HISTORY / name], [], BERLIN, use_system=False)
    assert installs_of(history) == INSTALLS  # Safari, XProtect, MRT, Xcode 27.0 and the duplicate dropped
    assert history is not None and history.installs[2].name == "macOS 27"


def test_plist_dates_follow_the_machine_zone_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        history = load_history([HISTORY / "InstallHistory.plist"], [], None, use_system=False)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert installs_of(history)[2] == ("2026-09-15T11:41:00", "27.0")


def test_softwareupdate_text_os_flags_and_plain_lines_agree(tmp_path: Path) -> None:
    text = load_history([HISTORY / "softwareupdate-history.txt"], [], BERLIN, use_system=False)
    flags = load_history([], [parse_os_flag(flag, BERLIN) for flag in OS_FLAGS[1::2]], BERLIN, use_system=False)
    plain = tmp_path / "history.txt"
    plain.write_text("# my Mac\n2026-03-30 14:00 26.4\n\n2026-05-12T10:03:12 macOS 26.5.1\n2026-09-15 15:41:00Z 27.0\n")
    assert installs_of(text) == installs_of(flags) == installs_of(load_history([plain], [], BERLIN, use_system=False))
    assert installs_of(text) == INSTALLS


SOFTWAREUPDATE_HEAD = "Display Name         Version    Date\n------------         -------    ----\n"


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("06/01/2026, 10:03:12", "09/05/2026, 5:41:00 PM", ["2026-06-01T10:03:12", "2026-09-05T17:41:00"]),
        ("01/06/2026, 10:03:12", "15/09/2026, 17:41:00", ["2026-06-01T10:03:12", "2026-09-15T17:41:00"]),
        ("01.06.2026, 10:03:12", "05.09.2026, 17:41:00", ["2026-06-01T10:03:12", "2026-09-05T17:41:00"]),
    ],
    ids=["us", "a-day-above-12", "dots"],
)
def test_softwareupdate_date_order(first: str, second: str, expected: list[str]) -> None:
    text = f"{SOFTWAREUPDATE_HEAD}macOS Tahoe 26.5.1   26.5.1     {first}\nmacOS 27             27.0       {second}\n"
    assert [(i.time, i.version) for i in parse_history(text.encode(), "su.txt", None)] == list(
        zip(expected, ["26.5.1", "27.0"], strict=True)
    )


def test_softwareupdate_row_that_does_not_parse_is_an_error() -> None:
    text = f"{SOFTWAREUPDATE_HEAD}macOS 27             27.0       15 septembre 2026 17:41\n"
    with pytest.raises(LogscanError, match=r"su.txt:3: softwareupdate row not understood"):
        parse_history(text.encode(), "su.txt", None)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"hello world\nthis is not a history\n", "not an InstallHistory.plist, softwareupdate --history output"),
        (b"2026-05-12 10:03:12 26.5.1\nyesterday 27.0\n", "x.txt:2: expected"),
        (b"\x00\x01\x02\xff\xfe binary", "binary data that is not a property list"),
        (b"bplist00 broken", "not a readable property list"),
        (b'<?xml version="1.0"?><plist version="1.0"><dict/></plist>', "not an install history"),
        (
            b'<?xml version="1.0"?><plist version="1.0"><array><dict><key>displayName</key><string>Safari</string>'
            b"<key>displayVersion</key><string>19.5</string><key>date</key><date>2026-05-12T08:03:12Z</date>"
            b"</dict></array></plist>",
            "no macOS install",
        ),
        (b"Display Name  Version  Date\n------------  -------  ----\nSafari  19.5  05/12/2026, 10:03:12\n", "no macOS"),
    ],
)
def test_unrecognised_history_is_one_clear_error(content: bytes, message: str) -> None:
    with pytest.raises(LogscanError, match=message):
        parse_history(content, "x.txt", None)


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("27.0", "expected VERSION@DATETIME"),
        ("@2026-09-15", "expected VERSION@DATETIME"),
        ("27.0@soon", "neither a duration nor a date"),
    ],
)
def test_bad_os_flags(flag: str, message: str) -> None:
    with pytest.raises(LogscanError, match=message):
        parse_os_flag(flag, None)


def test_system_history_is_read_on_macos_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oshistory, "SYSTEM_HISTORY", HISTORY / "InstallHistory.plist")
    monkeypatch.setattr(oshistory.sys, "platform", "linux")
    assert load_history([], [], BERLIN, use_system=True) is None
    monkeypatch.setattr(oshistory.sys, "platform", "darwin")
    assert load_history([], [], BERLIN, use_system=False) is None
    history = load_history([], [], BERLIN, use_system=True)
    assert history is not None and history.from_system and installs_of(history) == INSTALLS
    result = runner.invoke(app, ["bounds", str(UPGRADE_LOG), "--tz", "Europe/Berlin"])
    assert result.exit_code == 0, result.output
    assert "OS history: " in result.stderr and "InstallHistory.plist" in result.stderr


# -- rows on a log where the OS changes mid-way ---------------------------------------------------------

EXPECTED_ROWS = [
    {
        "os_version": "26.4",
        "first": "2026-05-11T09:00:00.000+02:00",
        "last": "2026-05-12T09:55:00.000+02:00",
        "hours": 24.917,
        "process_starts": 2,
        "engine_starts": 2,
        "faults": {},
        "penalty_box_entries": 0,
        "dead_hours": 0.0,
        "first_fault_after_first_start_s": None,
        "first_fault_after_os_install_s": None,
    },
    {
        "os_version": "26.5.1",
        "first": "2026-05-12T11:00:00.000+02:00",
        "last": "2026-05-14T20:00:00.000+02:00",
        "hours": 57.0,
        "process_starts": 2,
        "engine_starts": 3,
        "faults": {},
        "penalty_box_entries": 0,
        "dead_hours": 0.0,
        "first_fault_after_first_start_s": None,
        "first_fault_after_os_install_s": None,
    },
    {
        "os_version": "27.0",
        "first": "2026-09-16T09:00:00.000+02:00",
        "last": "2026-09-16T13:00:00.000+02:00",
        "hours": 4.0,
        "process_starts": 2,
        "engine_starts": 2,
        "faults": {"timeout": 2},
        "penalty_box_entries": 1,
        "dead_hours": 1.0,
        "first_fault_after_first_start_s": 5400.0,
        "first_fault_after_os_install_s": 16 * 3600 + 49 * 60.0,
    },
]


@pytest.mark.parametrize(
    "history_args",
    [
        ["--os-history", str(HISTORY / "InstallHistory.plist")],
        ["--os-history", str(HISTORY / "InstallHistory-binary.plist")],
        ["--os-history", str(HISTORY / "softwareupdate-history.txt")],
        OS_FLAGS,
    ],
    ids=["xml-plist", "binary-plist", "softwareupdate", "os-flags"],
)
def test_rows_per_os_version(history_args: list[str]) -> None:
    doc = bounds_json(str(UPGRADE_LOG), *history_args, "--tz", "Europe/Berlin")
    assert doc["schema"] == "omlx-logscan/bounds/2" and doc["by"] == "os"
    rows = doc["rows"]
    assert [{key: row[key] for key in EXPECTED_ROWS[0]} for row in rows] == EXPECTED_ROWS
    assert [row["omlx_version"] for row in rows] == ["unknown", "unknown", None]  # 0.5.8 and unknown on 27.0
    assert rows[2]["first_fault_after_first_start_min_s"] == rows[2]["first_fault_after_first_start_max_s"] == 5400
    assert rows[0]["upper95_faults_per_start"] == pytest.approx(2.9957 / 2, abs=1e-4)
    assert rows[1]["upper95_faults_per_hour"] == pytest.approx(2.9957 / 57, abs=1e-5)
    assert rows[2]["faults_per_start"] == 1.0 and rows[2]["upper95_faults_per_start"] == pytest.approx(6.2958 / 2, 1e-4)
    assert doc["sentence"] == (
        "No Timeout or SubmissionsIgnored on macOS 26.4 (2 starts, 24 h 55 min) or macOS 26.5.1 (2 starts, 2 d 9 h); "
        "the first on macOS 27.0 came 1 h 30 min after the first start on it, "
        "16 h 49 min after macOS 27.0 was installed."
    )


def test_plist_read_in_the_wrong_zone_moves_a_session() -> None:
    rows = bounds_json(str(UPGRADE_LOG), "--os-history", str(HISTORY / "InstallHistory.plist"), "--tz", "UTC")["rows"]
    assert [(row["os_version"], row["process_starts"]) for row in rows] == [("26.4", 1), ("26.5.1", 3), ("27.0", 2)]


def test_rows_per_omlx_version_do_not_count_each_others_hours() -> None:
    rows = bounds_json(str(UPGRADE_LOG), "--by", "omlx", "--tz", "Europe/Berlin")["rows"]  # no OS history needed
    assert [(r["omlx_version"], r["os_version"], r["process_starts"], r["hours"]) for r in rows] == [
        ("unknown", "unknown", 5, 84.0),  # 2026-05-11 09:00 → 05-14 20:00, then 09-16 12:00 → 13:00
        ("0.5.8", "unknown", 1, 2.1),
    ]


def test_rows_per_pair(example_analysis: Analysis) -> None:
    history = load_history([ROOT / "examples" / "os-history.txt"], [], None, use_system=False)
    rows = build_bounds(example_analysis, history, Grouping.both).rows
    assert [(r.os_version, r.omlx_version, r.process_starts) for r in rows] == [
        ("26.5.1", "0.5.7", 156),
        ("27.0", "0.5.7", 4),
    ]


def test_no_faults_in_the_window_gives_a_sentence_of_bounds_only() -> None:
    doc = bounds_json(str(UPGRADE_LOG), *OS_FLAGS, "--until", "2026-09-01")
    assert [row["os_version"] for row in doc["rows"]] == ["26.4", "26.5.1"]
    assert doc["sentence"] == "No GPU faults on macOS 26.4 (2 starts, 24 h 55 min) or macOS 26.5.1 (2 starts, 2 d 9 h)."


def test_session_os_versions_for_the_timeline_and_report() -> None:
    analysis = analysis_of(UPGRADE_LOG)
    flags = ["26.5.1@2026-05-12 10:03:12", "27.0@2026-09-15 17:41"]
    history = load_history([], [parse_os_flag(flag, None) for flag in flags], None, use_system=False)
    assert history is not None
    assert session_os_versions(analysis.sessions, history) == {
        1: "unknown",
        2: "unknown",
        3: "26.5.1",
        4: "26.5.1",
        5: "27.0",
        6: "27.0",
    }


def test_markdown_output_has_a_heading_and_no_colour() -> None:
    args = ["bounds", str(UPGRADE_LOG), *OS_FLAGS, "-f", "markdown", "-q"]
    result = runner.invoke(app, args, env={"NO_COLOR": ""})
    assert result.exit_code == 0
    assert result.stdout.startswith(
        "## Version bounds\n\n| | macOS 26.4 | macOS 26.5.1 | macOS 27.0 |\n|---|---|---|---|"
    )
    assert "| faults | 0 | 0 | timeout 2 |" in result.stdout and "\x1b[" not in result.stdout


# -- the example: the report's sentence -------------------------------------------------------------


def test_example_reproduces_the_reports_version_bounds(example_analysis: Analysis) -> None:
    history = load_history([ROOT / "examples" / "os-history.txt"], [], None, use_system=False)
    bounds = build_bounds(example_analysis, history)
    old, new = bounds.rows
    assert (old.os_version, old.process_starts, round(old.hours), old.faults) == ("26.5.1", 156, 2086, {})
    assert old.per_start() == (0.0, pytest.approx(0.0192, abs=1e-4))
    assert old.engine_starts is None  # a WARNING-level capture hides "Engine started"
    assert (new.os_version, new.process_starts, new.faults, new.penalty_box_entries) == ("27.0", 4, {"timeout": 6}, 2)
    # The first start on 27.0 is an untimed banner: after 10:14:52 (the record before) and the install at
    # 17:41:00, at the latest 17:56:38 (the record after); the first fault is at 20:19:38.663.
    assert new.after_first_start.exact_s is None
    assert new.after_first_start.min_s == pytest.approx(2 * 3600 + 23 * 60 + 0.251)
    assert new.after_first_start.max_s == pytest.approx(2 * 3600 + 38 * 60 + 38.663)
    assert bounds_sentence(bounds) == (
        "No Timeout or SubmissionsIgnored on macOS 26.5.1 (156 starts, 86 d 22 h); the first on macOS 27.0 came "
        "2 h 23 min to 2 h 38 min after the first start on it, 2 h 38 min after macOS 27.0 was installed."
    )
    markdown = bounds_markdown(bounds)
    assert "| faults per start | 0 (95 % ≤ 0.0192) | 1.5 (95 % ≤ 2.96) |" in markdown
    assert markdown.rstrip().endswith(bounds_sentence(bounds))


def test_example_on_the_command_line() -> None:
    history = str(ROOT / "examples" / "os-history.txt")
    doc = bounds_json(str(EXAMPLE), "--os-history", history, "--tz", "UTC")
    new = doc["rows"][1]
    assert new["first_fault_after_first_start_s"] is None
    assert new["first_fault_after_first_start_max_s"] == pytest.approx(9518.663)
    assert new["os_installed"] == "2026-09-15T17:41:00+00:00" and new["engine_starts"] is None
    assert [i["version"] for i in doc["os_history"]["installs"]] == ["26.5.1", "27.0"]
    documented = json.loads((ROOT / "docs" / "bounds.md").read_text().split("```json\n")[1].split("```")[0])
    assert (documented["rows"], documented["sentence"]) == (doc["rows"], doc["sentence"])
    result = runner.invoke(app, ["bounds", str(EXAMPLE), "--os-history", history, "-q"], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    assert "macOS 26.5.1" in result.stdout and "0 (95 % ≤ 0.0192)" in result.stdout
    assert "2 h 23 min to 2 h 38 min after the first start on it" in result.stdout


def test_time_bounds_phrases() -> None:
    assert time_bounds_phrase(TimeBounds(5400, 5400, 5400)) == "1 h 30 min"
    assert time_bounds_phrase(TimeBounds(None, 8580, 9518)) == "2 h 23 min to 2 h 38 min"
    assert time_bounds_phrase(TimeBounds(None, 8580, 8590)) == "2 h 23 min"
    assert time_bounds_phrase(TimeBounds(None, 8580, None)) == "at least 2 h 23 min"


# -- command-line errors ----------------------------------------------------------------------------------


def test_command_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oshistory.sys, "platform", "linux")
    assert "needs the OS history" in error_of(str(UPGRADE_LOG))
    assert "--by 'weekly': expected os, omlx or both" in error_of(str(UPGRADE_LOG), "--by", "weekly")
    assert "cannot read the OS history" in error_of(str(UPGRADE_LOG), "--os-history", str(tmp_path / "none.plist"))
    junk = tmp_path / "junk.txt"
    junk.write_text("not a history at all\n")
    assert "not an InstallHistory.plist" in error_of(str(UPGRADE_LOG), "--os-history", str(junk))
    assert "expected VERSION@DATETIME" in error_of(str(UPGRADE_LOG), "--os", "27.0")
