"""A host on every row (events in every format, sessions, faults, dead windows), the host's own OS
history in ``bounds``; in-process and as a subprocess."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE
from omlx_logscan.cli import app
from synthetic import STILL_DEAD, write_log

runner = CliRunner()
HISTORY = EXAMPLE.parent / "os-history.txt"


def _both(arguments: list[str]) -> list[str]:
    """The command's stdout in-process and as a subprocess (each must succeed)."""
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    process = subprocess.run([sys.executable, "-m", "omlx_logscan", *arguments], capture_output=True, text=True)
    assert process.returncode == 0, process.stderr
    return [result.stdout, process.stdout]


@pytest.mark.slow
def test_csv_rows_have_a_host_column_empty_without_a_host(tmp_path: Path) -> None:
    log = str(write_log(tmp_path / "omlx.log", STILL_DEAD))
    for host, want in ((["--host", "mac-07"], "mac-07"), ([], "")):
        for output in _both(["events", "-q", "-f", "csv", *host, log]):
            rows = list(csv.DictReader(io.StringIO(output)))
            assert rows and {row["host"] for row in rows} == {want}
            assert all("host" not in json.loads(row["fields"]) for row in rows)  # a column, not a field


@pytest.mark.slow
def test_ndjson_and_json_events_carry_the_host(tmp_path: Path) -> None:
    log = str(write_log(tmp_path / "omlx.log", STILL_DEAD))
    for output in _both(["events", "-q", "-f", "ndjson", "--host", "mac-07", log]):
        rows = [json.loads(line) for line in output.splitlines()]
        assert rows and {row["host"] for row in rows} == {"mac-07"}
    for output in _both(["events", "-q", "-f", "json", "--host", "mac-07", log]):
        assert {row["host"] for row in json.loads(output)["events"]} == {"mac-07"}
    unnamed = runner.invoke(app, ["events", "-q", "-f", "ndjson", log])
    assert all("host" not in json.loads(line) for line in unnamed.stdout.splitlines())


@pytest.mark.slow
def test_sessions_faults_and_dead_windows_carry_the_host(tmp_path: Path) -> None:
    log = str(write_log(tmp_path / "omlx.log", STILL_DEAD))
    for output in _both(["timeline", "-q", "-f", "json", "--host", "mac-07", log]):
        document = json.loads(output)
        assert document["host"] == "mac-07"
        for key in ("sessions", "faults", "dead_windows"):
            assert document[key] and {row["host"] for row in document[key]} == {"mac-07"}, key
    for output in _both(["sessions", "-q", "-f", "json", "--host", "mac-07", log]):
        document = json.loads(output)
        rows = document["sessions"] if isinstance(document, dict) else document
        assert rows and {row["host"] for row in rows} == {"mac-07"}


@pytest.mark.slow
def test_bounds_reads_the_os_history_of_the_host_in_a_hosts_file(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(f'[[host]]\nname = "mac-07"\npaths = ["{EXAMPLE}"]\nos-history = "{HISTORY}"\n')
    given = runner.invoke(app, ["bounds", "-q", "-f", "json", "--os-history", str(HISTORY), str(EXAMPLE)])
    assert given.exit_code == 0, given.output
    expected = json.loads(given.stdout)
    for output in _both(["bounds", "-q", "-f", "json", "--hosts", str(hosts), str(EXAMPLE)]):
        document = json.loads(output)
        assert document["os_history"]["sources"] == [str(HISTORY)] and not document["os_history"]["from_system"]
        assert document["rows"] == expected["rows"] and [r["os_version"] for r in document["rows"]] == [
            "26.5.1",
            "27.0",
        ]
