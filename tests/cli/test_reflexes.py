"""journalctl's and tail's reflexes: ``-n`` the newest N, ``--limit`` the first N, ``-p`` a level or
worse, ``-S``/``-U`` the window, ``@EPOCH`` a time, ``-V`` the version; export's rows named as rows;
each text output names the zone its times were read in."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

import omlx_logscan
from conftest import EXAMPLE
from omlx_logscan.cli.app import app
from omlx_logscan.cli.values import parse_when, priority_rank
from omlx_logscan.errors import LogscanError
from omlx_logscan.parsing.grammar import LEVEL_RANK, shown_at

runner = CliRunner()


@functools.cache
def _events(*args: str) -> list[dict[str, object]]:
    """The example's GPU faults (at ERROR and at WARNING) and starts (no level stated), as ``events`` selects them."""
    result = runner.invoke(app, ["events", str(EXAMPLE), "-q", "-f", "ndjson", "-k", "gpu_error,process_start", *args])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("flag", ["-n", "--lines"])
def test_n_is_the_newest_events(flag: str) -> None:
    every = _events()
    assert _events(flag, "3") == every[-3:] and every[:3] != every[-3:]


def test_limit_is_the_first_events_and_not_with_n() -> None:
    assert _events("--limit", "3") == _events()[:3] and _events("-n", "0") == []
    both = runner.invoke(app, ["events", str(EXAMPLE), "-n", "2", "--limit", "2"])
    assert both.exit_code == 2 and "give one of them" in both.stderr


def test_n_takes_the_newest_after_the_kind_filter() -> None:
    """The example's last 40 events are mostly warnings: the newest 40 of the kinds chosen are these kinds'."""
    newest = _events("-n", "40")
    assert newest == _events()[-40:] and {event["kind"] for event in newest} == {"gpu_error", "process_start"}


@pytest.mark.parametrize(
    ("name", "least"),
    [("err", "ERROR"), ("ERROR", "ERROR"), ("3", "ERROR"), ("crit", "CRITICAL"), ("emerg", "CRITICAL"),
     ("Warning", "WARNING"), ("notice", "INFO"), ("info", "INFO"), ("debug", "DEBUG")],
)  # fmt: skip
def test_priority_names_are_journalctls_and_omlxs_in_any_case(name: str, least: str) -> None:
    assert priority_rank(name) == LEVEL_RANK[least]


def test_a_mistyped_priority_is_one_line_with_the_closest_name() -> None:
    with pytest.raises(LogscanError, match=r"--priority 'eror': not a level .*did you mean error\?"):
        priority_rank("eror")
    result = runner.invoke(app, ["events", str(EXAMPLE), "-p", "warnnig"])
    assert result.exit_code == 2 and "did you mean warning?" in result.stderr and "Traceback" not in result.output


def test_priority_keeps_a_level_and_worse_and_what_states_no_level() -> None:
    errors = _events("-p", "err")
    levels = {event["level"] for event in errors}
    assert levels == {"ERROR", None}  # the example's GPU faults at ERROR and at WARNING, banners with no level
    assert len(errors) < len(_events()) and _events("-p", "warning") == _events()
    assert shown_at(None, LEVEL_RANK["CRITICAL"]) and not shown_at("WARNING", LEVEL_RANK["ERROR"])


@pytest.mark.slow  # the whole example through the streaming reader (or the watch): about a second
def test_priority_filters_what_is_streamed_from_stdin_too() -> None:
    result = runner.invoke(app, ["events", "-", "-q", "-f", "ndjson", "-p", "err"], input=EXAMPLE.read_text("utf-8"))
    assert result.exit_code == 0 and result.stdout
    assert {json.loads(line)["level"] for line in result.stdout.splitlines()} == {"ERROR", None}


@pytest.mark.slow  # the whole example through the streaming reader (or the watch): about a second
def test_watch_prints_only_the_priority_asked_for() -> None:
    result = runner.invoke(app, ["watch", str(EXAMPLE), "--exit-at-end", "-q", "-f", "ndjson", "-p", "error"])
    assert result.exit_code in (0, 3), result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and {row.get("level") for row in rows if row.get("kind") != "probe"} <= {"ERROR", "CRITICAL", None}
    assert any(row.get("level") == "ERROR" for row in rows)


def test_epoch_times_with_and_without_a_fraction() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    assert parse_when("@1789488000", berlin) == datetime(2026, 9, 15, 18, 0)
    assert parse_when("@1789488000.25", ZoneInfo("UTC")) == datetime(2026, 9, 15, 16, 0, 0, 250000)
    with pytest.raises(LogscanError, match="not seconds since 1970"):
        parse_when("@yesterday", berlin)


def test_S_and_U_are_since_and_until_and_take_epoch_times() -> None:
    window = _events("-S", "@1789502400", "-U", "@1789509600", "--tz", "UTC")  # 20:00 to 22:00 UTC on 15 Sep
    named = _events("--since", "2026-09-15 20:00", "--until", "2026-09-15 22:00", "--tz", "UTC")
    assert window == named and len(window) >= 2
    assert all(str(event["time"]).startswith(("2026-09-15T20:", "2026-09-15T21:")) for event in window)


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_V_prints_the_version(flag: str) -> None:
    result = runner.invoke(app, [flag])
    assert result.exit_code == 0 and result.stdout.startswith(f"logscan {omlx_logscan.__version__}\n")


@pytest.mark.slow  # writes every table's Parquet: half a second
def test_export_names_its_counts_as_rows(tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", str(EXAMPLE), "-o", str(tmp_path / "tables"), "--host", "mac-01"])
    assert result.exit_code == 0, result.output
    assert "request-minute rows" in result.stderr and "dead-window rows" in result.stderr
    assert "requests_per_minute" not in result.stderr


@pytest.mark.parametrize("command", ["timeline", "sessions", "check", "report"])
def test_each_text_output_names_its_zone_and_how_to_change_it(command: str) -> None:
    given = runner.invoke(app, [command, str(EXAMPLE), "-q", "--tz", "Asia/Tokyo"])
    assert given.exit_code in (0, 1), given.output
    assert "read in Asia/Tokyo" in given.stdout and "--tz ZONE to change" in given.stdout
    mine = runner.invoke(app, [command, str(EXAMPLE), "-q"], env={"TZ": "America/New_York"})
    said = mine.stdout.replace("\\_", "_")  # the report's Markdown escapes the underscore
    assert "read in America/New_York, this machine's zone (--tz ZONE reads them in another)" in said


def test_the_events_table_names_its_zone() -> None:
    result = runner.invoke(app, ["events", str(EXAMPLE), "-q", "-f", "table", "-n", "1", "--tz", "+05:30"])
    assert (
        result.stdout.splitlines()[0]
        == "times: read in +05:30, as --tz or the configuration says (--tz ZONE to change)"
    )


def test_no_configuration_file_names_a_pager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pager command comes from the environment alone: a found file's ``pager`` key is no option
    (refused, nothing run); the one display key it may set is ``no-pager``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    ran = tmp_path / "ran"
    (tmp_path / ".logscan.toml").write_text(f'pager = "touch {ran}"\n', encoding="utf-8")
    result = runner.invoke(app, ["sessions", str(EXAMPLE), "-q"])
    assert result.exit_code == 2 and "pager" in result.stderr and not ran.exists()
    (tmp_path / ".logscan.toml").write_text("no-pager = true\n", encoding="utf-8")
    result = runner.invoke(app, ["sessions", str(EXAMPLE), "-q"])
    assert result.exit_code == 0 and "ignored" not in result.stderr
