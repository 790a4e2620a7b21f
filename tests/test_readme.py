"""Every shell and TOML example of the README runs as written (as sqlite-utils checks its docs): the
repository's fixtures stand in for a user's files, the configuration example is tried in both
``pyproject.toml`` and ``.logscan.toml``. Examples that need what CI lacks are listed with the reason;
the launchd plist (XML) needs a Mac's launchd, and the workflow (YAML), examples/github-workflow.yml,
is held to the README and linted by tests/test_action.py."""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, ROOT
from omlx_logscan.cli.app import app

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(sh|toml)\n(.*?)```", README, re.S)

# What CI lacks, by a piece of the example's text: each such example is not run, for the reason given.
NOT_RUN = {
    "python3 -m venv": "the Quickstart: .ci/run runs its two commands itself, from a clean clone",
    "bench/": "the benchmarks take minutes; bench/ and tests/test_bench_generator.py check them",
    "logscan watch": "follows a live log until stopped (tests/watch run it against growing files)",
    "s3://": "needs an S3 bucket (tests/fleet run the remote path against moto's S3)",
    "/Library/Receipts/InstallHistory.plist": "a Mac's install history (tests/inputs read a copy of one)",
}
# The placeholders of the command overview, and the user's own places, as the fixtures stand in for them.
STAND_INS = {
    "LOG...": "omlx.log",
    "--os-history FILE": "--os-history examples/os-history.txt",
    "-o DIR": "-o tables",
    "DIR|URL|JSON...": "bug-reports/mac.json",
    "schema NAME": "schema timeline",
    "/Volumes/shared/omlx-tables": "tables",
}


def _commands() -> list[str]:
    """The README's shell commands, one per line, comments and continuation-free."""
    lines = []
    for language, body in BLOCKS:
        if language == "sh":
            lines += [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return lines


COMMANDS = _commands()
RUN = [line for line in COMMANDS if not any(piece in line for piece in NOT_RUN)]


def test_the_examples_are_found_and_every_one_is_run_or_listed() -> None:
    assert len(COMMANDS) >= 30 and len(RUN) >= 15
    assert all(line.startswith(("logscan ", "python")) for line in COMMANDS)
    for piece in NOT_RUN:
        assert any(piece in line for line in COMMANDS), f"{piece!r} is in no README example: drop it from NOT_RUN"


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's folder: their oMLX logs, a log named as the README names it, the examples, exports."""
    home = tmp_path / "home"
    (home / ".omlx" / "logs").mkdir(parents=True)
    shutil.copy(EXAMPLE, home / ".omlx" / "logs" / "server.log")
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(EXAMPLE, work / "omlx.log")
    shutil.copytree(ROOT / "examples", work / "examples")
    (work / "bug-reports").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("OMLX_BASE_PATH", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.chdir(work)
    document = runner.invoke(app, ["timeline", "omlx.log", "-f", "json", "-o", "bug-reports/mac.json", "-q"])
    assert document.exit_code == 0, document.output
    return work


runner = CliRunner()


def _arguments(line: str) -> list[str]:
    """The words the shell would give logscan: stand-ins put in, ``~`` and globs expanded."""
    for placeholder, stand_in in STAND_INS.items():
        line = line.replace(placeholder, stand_in)
    line = line.split(" # ", 1)[0]
    words = []
    for word in shlex.split(line)[1:]:
        word = os.path.expanduser(word)
        words += sorted(glob.glob(word)) or [word] if "*" in word else [word]
    return words


@pytest.mark.slow
@pytest.mark.parametrize("line", RUN)
def test_a_readme_command_runs_as_written(line: str, user: Path) -> None:
    arguments = _arguments(line)
    if arguments[0] == "fleet":  # pools exports: the README's export step writes them first
        assert runner.invoke(app, ["export", "omlx.log", "-o", "tables", "-q"]).exit_code == 0
    result = runner.invoke(app, arguments)
    # check's exit 1 is its verdict on the example log (two penalty-box faults), as the README says
    assert result.exit_code in ((0, 1) if arguments[0] == "check" else (0,)), f"{line}\n{result.output}"
    assert "Traceback" not in result.stderr and "error:" not in result.stderr, result.stderr
    if "-o" in arguments:
        written = user / arguments[arguments.index("-o") + 1]
        assert written.exists() and (written.is_dir() or written.stat().st_size > 0), line


def _config_example() -> str:
    (body,) = [body for language, body in BLOCKS if language == "toml"]
    return body


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pyproject.toml", ".logscan.toml"])
def test_the_configuration_example_works_in_either_file(name: str, user: Path) -> None:
    """The example sets the zone and a stricter check: the check counts its max-faults threshold, and no
    key of it is ignored or refused."""
    (user / name).write_text(_config_example(), encoding="utf-8")
    result = runner.invoke(app, ["check", "omlx.log", "-f", "json"])
    assert result.exit_code == 1, result.output
    assert f"configuration: {user / name}" in result.stderr
    assert "ignored" not in result.stderr and "error:" not in result.stderr, result.stderr
    assert '"max_faults"' in result.stdout and "+02:00" in result.stdout  # max-faults = 0; Europe/Berlin in summer


@pytest.mark.slow
def test_a_readme_command_runs_as_a_process(user: Path) -> None:
    """One example as the user runs it, the configuration found from the current folder."""
    (user / ".logscan.toml").write_text(_config_example(), encoding="utf-8")
    line = next(line for line in RUN if "--format sarif" in line)
    process = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", *_arguments(line)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert process.returncode == 1, process.stderr  # findings: the example log's penalty boxes
    assert (user / "logscan.sarif").stat().st_size > 0 and "max_faults 1" in process.stdout  # the file's threshold
    assert "ignored" not in process.stderr


def _output_blocks() -> list[str]:
    """The README's blocks of output (fences with no language): each line is what logscan prints."""
    return [body for language, body in re.findall(r"```(\w*)\n(.*?)```", README, re.S) if not language]


def test_the_output_shown_is_what_the_example_prints() -> None:
    """The escalation lines and the overlay sentence shown are lines the example log's timeline prints."""
    overlay = f"gpu={ROOT / 'examples' / 'gpu-overlay.csv'}"
    printed = runner.invoke(app, ["timeline", str(EXAMPLE), "--overlay", overlay, "-q"], env={"COLUMNS": "300"})
    assert printed.exit_code == 0
    lines = {line.strip() for line in printed.stdout.splitlines()}
    shown = [line.strip() for block in _output_blocks() for line in block.splitlines() if line.strip()]
    assert len(shown) >= 4
    assert [line for line in shown if line not in lines] == []
