"""Every ``logscan`` command line of docs/*.md runs as written, as the README's do (tests/test_readme.py,
whose user folder and stand-ins this extends): the repository's fixtures stand in for a user's files.
What a line pipes or redirects to is the shell's, not logscan's: the command before it is run. Lines
that need what CI lacks are listed with the reason."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme import NOT_RUN, _arguments, runner, user  # noqa: F401 - user: the fixture, used by name

from conftest import ROOT
from omlx_logscan.cli.app import app

# Beyond the README's: what a line of the docs needs that CI lacks.
DOCS_NOT_RUN = {
    **NOT_RUN,
    "/shared/": "an export on a shared volume (tests/fleet pool exports from folders and globs)",
    "https://": "a document by URL (tests/fleet serve one)",
    "other-server.csv": "another server's activity (tests/analysis read overlays; the README runs --overlay)",
    "$GITHUB_WORKSPACE": "a GitHub runner's workspace (tests/output check --sarif-root)",
}
# The docs' own placeholders, as the fixtures stand in for them (beyond the README's, in test_readme.py).
STAND_INS = {
    "history.txt": "examples/os-history.txt",
    "h.txt": "examples/os-history.txt",
    "soak/omlx.log": "omlx.log",
    "reports/*.json": "bug-reports/mac.json",
}
SHELL_OPERATOR = re.compile(r"\s(?:>|\||;)\s")


def _lines() -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        for body in re.findall(r"```sh\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            found += [(path.name, line) for line in body.splitlines() if line.startswith("logscan ")]
    return found


LINES = _lines()
RUN = [(name, line) for name, line in LINES if not any(piece in line for piece in DOCS_NOT_RUN)]


def test_the_docs_command_lines_are_found() -> None:
    assert len(LINES) >= 60 and len(RUN) >= 40
    assert {name for name, _ in RUN} >= {"cli.md", "events.md", "check.md", "bounds.md", "report.md", "export.md"}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "line"), RUN, ids=[f"{name}:{line[:60]}" for name, line in RUN])
def test_a_docs_command_runs_as_written(name: str, line: str, user: Path) -> None:  # noqa: F811 - the fixture
    shutil.copy(user / "omlx.log", user / "server.log")
    (user / "fleet" / "mac-07").mkdir(parents=True)
    shutil.copy(user / "omlx.log", user / "fleet" / "mac-07" / "server.log")
    shutil.copy(user / "omlx.log", user / "fleet" / "server.log")  # a log collected into fleet/, named by hosts.toml
    (user / "hosts.toml").write_text('[[host]]\nname = "mac-07"\npaths = ["fleet/server.log"]\n', encoding="utf-8")
    command = SHELL_OPERATOR.split(line.split("  # ", 1)[0])[0]
    for placeholder, stand_in in STAND_INS.items():
        command = command.replace(placeholder, stand_in)
    arguments = _arguments(command)
    if arguments[0] == "fleet":  # pools exports: the docs' export step writes them first
        assert runner.invoke(app, ["export", "omlx.log", "-o", "tables", "-q", "--host", "mac-01"]).exit_code == 0
    expected = {"check": (0, 1), "schema": (0, 2) if arguments == ["schema"] else (0,)}.get(arguments[0], (0,))
    if len(arguments) == 1 or arguments[1].startswith("-"):  # no PATH: <base>/logs/, as from a terminal
        process = subprocess.run(
            [sys.executable, "-m", "omlx_logscan", *arguments],
            stdin=subprocess.DEVNULL,  # neither a pipe nor a file: the default folder is read
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )
        code, output, errors = process.returncode, process.stdout + process.stderr, process.stderr
    else:
        result = runner.invoke(app, arguments)
        code, output, errors = result.exit_code, result.output, result.stderr
    assert code in expected, f"{name}: {line}\n{output}"
    assert "Traceback" not in errors  # (the log's own tracebacks are in the events printed)
