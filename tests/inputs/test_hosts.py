"""Which host each input is: --host, --host-from folder, --hosts TOML; hosts are never read as one server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE
from omlx_logscan.cli.app import app
from omlx_logscan.errors import InputError
from omlx_logscan.inputs.hosts import HostFrom, HostLabels, plan_hosts

runner = CliRunner()


def two_macs(root: Path) -> list[Path]:
    """The example log on two Macs, each in a folder named after it."""
    folders = [root / "mac-01", root / "mac-02"]
    for folder in folders:
        folder.mkdir()
        (folder / "server.log").write_bytes(EXAMPLE.read_bytes())
    return folders


@pytest.mark.slow
def test_host_labels_every_row_and_the_document() -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "--host", "mac-07", "-f", "json", "-q"])
    doc = json.loads(result.stdout)
    assert doc["host"] == "mac-07"
    assert {row["host"] for key in ("sessions", "faults", "dead_windows") for row in doc[key]} == {"mac-07"}
    rows = runner.invoke(app, ["events", str(EXAMPLE), "--host", "mac-07", "-f", "ndjson", "-q", "-k", "gpu_error"])
    assert {json.loads(line)["host"] for line in rows.stdout.splitlines()} == {"mac-07"}


def test_without_a_label_rows_carry_no_host() -> None:
    doc = json.loads(runner.invoke(app, ["sessions", str(EXAMPLE), "-f", "json", "-q"]).stdout)
    assert "host" not in doc and all("host" not in row for row in doc["sessions"])


def test_host_from_folder_names_each_file_by_its_folder(tmp_path: Path) -> None:
    hosts = plan_hosts([str(f) for f in two_macs(tmp_path)], HostLabels(from_=HostFrom.folder), None)
    assert [(host.name, [s.path.name for s in host.sources if s.path]) for host in hosts] == [
        ("mac-01", ["server.log"]),
        ("mac-02", ["server.log"]),
    ]


@pytest.mark.slow
def test_two_hosts_given_together_are_never_one_server(tmp_path: Path) -> None:
    folders = [str(f) for f in two_macs(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "timeline", *folders, "--host-from", "folder"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "logscan: error: the inputs are 2 hosts (mac-01, mac-02): this command reads one host at a time; "
        "`logscan export` writes each host's tables and `logscan fleet` pools them"
    ]


@pytest.mark.slow
def test_hosts_file_gives_each_host_its_paths_zone_and_chip(tmp_path: Path) -> None:
    folders = two_macs(tmp_path)
    hosts_file = tmp_path / "hosts.toml"
    hosts_file.write_text(
        '[[host]]\nname = "berlin"\npaths = ["mac-01/*.log"]\ntz = "Europe/Berlin"\nchip = "M3 Max"\n'
        'os-history = "mac-01/history.txt"\n\n'
        '[[host]]\nname = "boston"\npaths = ["mac-02"]\ntz = "America/New_York"\n'
    )
    hosts = plan_hosts([str(f) for f in folders], HostLabels(file=hosts_file), None)
    assert [(h.name, str(h.zone), h.chip, [p.name for p in h.os_history]) for h in hosts] == [
        ("berlin", "Europe/Berlin", "M3 Max", ["history.txt"]),
        ("boston", "America/New_York", None, []),
    ]
    result = runner.invoke(app, ["timeline", str(folders[1]), "--hosts", str(hosts_file), "-f", "json", "-q"])
    doc = json.loads(result.stdout)
    assert doc["host"] == "boston" and doc["tz"] == "America/New_York"
    assert doc["faults"][0]["time"].endswith("-04:00")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not toml [", "not a TOML hosts file"),
        ("[x]\n", "no [[host]] tables"),
        ('[[host]]\npaths = ["a"]\n', "needs a name"),
        ('[[host]]\nname = "a"\n', "needs paths"),
        ('[[host]]\nname = "a"\npaths = ["a"]\ntz = "Mars/Base"\n', "is not a time zone"),
        ('[[host]]\nname = "a"\npaths = ["elsewhere"]\n', "no host of"),
    ],
)
def test_bad_hosts_files_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    hosts_file = tmp_path / "hosts.toml"
    hosts_file.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)):
        plan_hosts([str(EXAMPLE)], HostLabels(file=hosts_file), None)
    result = runner.invoke(app, ["sessions", str(EXAMPLE), "--hosts", str(hosts_file)])
    assert result.exit_code == 2 and message in result.output


def test_one_way_of_naming_hosts(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sessions", str(EXAMPLE), "--host", "a", "--host-from", "folder"])
    assert result.exit_code == 2 and "give one way of naming hosts" in result.output


@pytest.mark.slow
def test_redact_masks_the_host_and_home_folders_in_json(tmp_path: Path) -> None:
    log = tmp_path / "lab-mac-07" / "server.log"
    log.parent.mkdir()
    note = "2026-09-15 20:19:40,000 - omlx.server - WARNING - [-] - cannot read /Users/alice/.omlx/models/x\n"
    log.write_text(EXAMPLE.read_text() + note)
    args = ["timeline", str(log), "--host-from", "folder", "-f", "json", "-q"]
    plain = runner.invoke(app, ["events", str(log), "--host-from", "folder", "-f", "ndjson", "-q"]).stdout
    assert "/Users/alice" in plain and "lab-mac-07" in plain  # the log names its user and the folder its host ...
    masked = runner.invoke(app, ["events", str(log), "--host-from", "folder", "--redact", "-f", "ndjson", "-q"]).stdout
    assert "/Users/alice" not in masked and "lab-mac-07" not in masked  # ... and --redact masks both
    result = runner.invoke(app, [*args, "--redact"])
    doc = json.loads(result.stdout)
    assert "lab-mac-07" not in result.stdout
    assert doc["host"].startswith("host-") and {row["host"] for row in doc["faults"]} == {doc["host"]}
    assert len(doc["faults"]) == len(json.loads(runner.invoke(app, args).stdout)["faults"])  # the same analysis


def test_report_never_names_the_host(tmp_path: Path) -> None:
    log = tmp_path / "lab-mac-07" / "server.log"
    log.parent.mkdir()
    log.write_bytes(EXAMPLE.read_bytes())
    result = runner.invoke(app, ["report", str(log), "--host-from", "folder", "-q"])
    assert result.exit_code == 0, result.output
    assert "Escalation" in result.stdout and "lab-mac-07" not in result.stdout
