"""Each command's ``--help`` ends with two to four examples, and every example is a command line its
command takes: each is parsed by the command itself, its values converted (a misspelt option, a
value no longer taken or a wrong count of arguments fails here)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from conftest import ROOT
from omlx_logscan.cli import COMMANDS, app
from omlx_logscan.cli.examples import EXAMPLES, epilog
from omlx_logscan.inputs.hosts import read_hosts_file

runner = CliRunner()
NAMES = [command.__name__ for command in COMMANDS]


def test_every_command_has_two_to_four_examples_and_no_other_has() -> None:
    assert sorted(EXAMPLES) == sorted(NAMES)
    assert all(2 <= len(examples) <= 4 for examples in EXAMPLES.values())


@pytest.mark.parametrize("name", NAMES)
def test_help_ends_with_the_examples(name: str) -> None:
    result = runner.invoke(app, [name, "--help"])
    assert result.exit_code == 0
    shown = [line.strip() for line in result.stdout.rstrip().splitlines()[-len(EXAMPLES[name]) - 1 :]]
    assert shown == [line.strip() for line in epilog(name).splitlines()[1:]]


@pytest.mark.parametrize(("name", "line"), [(name, line) for name in NAMES for line, _ in EXAMPLES[name]])
def test_each_example_is_a_command_line_its_command_takes(name: str, line: str) -> None:
    words = shlex.split(line)
    assert words[:2] == ["logscan", name]
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    context = command.make_context(name, words[2:], resilient_parsing=False)
    assert context.params  # parsed, each value converted by its option's type
    with pytest.raises(typer.TyperException, match="No such option"):  # so a stale option would fail here
        command.make_context(name, [*words[2:], "--no-such-option"], resilient_parsing=False)


def test_the_example_hosts_file_in_the_docs_is_read_as_written(tmp_path: Path) -> None:
    (body,) = re.findall(r"```toml\n(.*?)```", (ROOT / "docs" / "export.md").read_text("utf-8"), re.S)
    (tmp_path / "hosts.toml").write_text(body, encoding="utf-8")
    hosts = read_hosts_file(tmp_path / "hosts.toml", None)
    assert [(host.name, str(host.zone), host.chip) for host, _ in hosts] == [
        ("mac-07", "Europe/Berlin", "M3 Ultra"),
        ("studio-2", "America/Los_Angeles", "M2 Max"),
    ]
    assert hosts[0][1] == [str(tmp_path / "fleet/mac-07/*.log*")]
    assert hosts[0][0].os_history == [tmp_path / "fleet/mac-07/InstallHistory.plist"]
