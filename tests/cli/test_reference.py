"""docs/cli.md is what the app says: regenerated from the app, it must equal the committed file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from omlx_logscan.cli import COMMANDS

REFERENCE = ROOT / "docs" / "cli.md"
TOOL = ROOT / "tools" / "cli_reference.py"


def _check(*reference: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": ""}
    command = [sys.executable, str(TOOL), "--check", *reference]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


@pytest.mark.slow
def test_the_committed_reference_is_current() -> None:
    result = _check()
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_a_stale_reference_fails_the_check(tmp_path: Path) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text(REFERENCE.read_text(encoding="utf-8").replace("`--kind, -k`", "`--kinds`"), encoding="utf-8")
    result = _check(str(stale))
    assert result.returncode == 1 and "stale" in result.stderr


def test_every_command_and_option_is_in_the_reference() -> None:
    import typer.core
    import typer.main

    from omlx_logscan.cli import app

    text = REFERENCE.read_text(encoding="utf-8")
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    for function in COMMANDS:
        command = group.commands[function.__name__]
        assert f"## `logscan {function.__name__}`" in text
        section = text.split(f"## `logscan {function.__name__}`", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            assert all(f"{opt}" in section for opt in param.opts if opt.startswith("-")), param.name
