"""Issue 27, item 2: oMLX text is recognised however it is pasted; what is no oMLX text is still refused.

``tests/fixtures/pastes/omlx`` holds small pastes written for these tests in the shapes people paste
oMLX's lines in, each from a message template of oMLX's source (0.6.3rc2) or a way oMLX is installed
and crashes; ``pastes/other`` holds text of other programs. Every one is read through the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import FIXTURES, REAL, ROOT
from omlx_logscan.cli.app import app

runner = CliRunner()

PASTES = FIXTURES / "pastes"
OMLX_PASTES = sorted((PASTES / "omlx").glob("*.log"))
OTHER_PASTES = sorted((PASTES / "other").glob("*.log"))


def test_there_are_enough_pastes() -> None:
    assert len(OMLX_PASTES) >= 20 and len(OTHER_PASTES) >= 8


@pytest.mark.slow
@pytest.mark.parametrize("path", OMLX_PASTES, ids=lambda p: p.name)
def test_omlx_text_in_any_shape_is_read(path: Path) -> None:
    result = runner.invoke(app, ["events", str(path), "-q", "-f", "ndjson"])
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("path", OTHER_PASTES, ids=lambda p: p.name)
def test_text_of_other_programs_is_refused(path: Path) -> None:
    result = runner.invoke(app, ["timeline", str(path)])
    assert result.exit_code == 2
    assert "does not look like an oMLX log" in result.stderr


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "omlx_logscan", *args], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "code"),
    [("omlx/padded-short-logger.log", 0), ("omlx/nsrange-abort.log", 0), ("other/django-traceback.log", 2)],
)
def test_recognition_in_a_real_process(name: str, code: int) -> None:
    result = _run("sessions", str(PASTES / name), "-q")
    assert result.returncode == code, result.stderr


@pytest.mark.slow
def test_watch_asks_the_same_question(tmp_path: Path) -> None:
    accepted = _run("watch", str(PASTES / "omlx" / "level-first-short-logger.log"), "--exit-at-end", "-q")
    assert accepted.returncode == 0, accepted.stderr
    refused = _run("watch", str(PASTES / "other" / "nginx-access.log"), "--exit-at-end")
    assert refused.returncode == 2 and "does not look like an oMLX log" in refused.stderr


# Pastes with no text of oMLX's: a client's own timeout error, a Homebrew install console.
REFUSED = {
    "omlx-issue-3711.log": "a client's `OMLX stream timed out` error: no text of oMLX's source",
    "omlx-issue-954.log": "a Homebrew install console that names omlx but holds none of its text",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("*.log")))
def test_every_shared_paste_with_omlx_text_is_read(name: str) -> None:
    """Among them messages the catalog has no row for, known by the lexicon of oMLX's source:
    exceptions oQ raises (2232), bulleted log messages with elisions (2784), the message of an
    exception raised with ``message=`` quoted in a client's JSON (62), the error of a model's
    weights that miss parameters (1927)."""
    result = runner.invoke(app, ["sessions", str(REAL / name), "-q"])
    assert result.exit_code == (2 if name in REFUSED else 0), result.stderr


# Logs of other programs that carry a Metal error (``pastes/metal-other``, written for these tests in
# the shapes llama.cpp, ollama and mlx_lm.server print): the Metal error is what makes them read, so
# ``check`` must fail on it, never pass (issue: a new user's trial).
METAL_OTHER = {
    "llama-cpp-metal-timeout.log": "7: unparsed_gpu_error: ",
    "ollama-metal-timeout.log": "3: unparsed_gpu_error: ",
    "mlx-lm-metal-abort.log": "3: crash: ",  # an abort with its [METAL] error: the crash oMLX's process dies by
}


@pytest.mark.parametrize("name", sorted(METAL_OTHER))
def test_a_metal_error_of_another_program_fails_check(name: str) -> None:
    result = runner.invoke(app, ["check", str(PASTES / "metal-other" / name)])
    assert result.exit_code == 1, result.output
    assert METAL_OTHER[name] in result.stdout


def test_another_programs_loggers_are_no_omlx_evidence_whatever_their_messages() -> None:
    """``myapp.engine - INFO - Engine started`` has a message oMLX writes, but a logger of another package."""
    path = PASTES / "other" / "python-app-own-loggers.log"
    assert runner.invoke(app, ["check", str(path)]).exit_code == 2
    forced = runner.invoke(app, ["events", str(path), "--force", "-f", "json", "-q"])
    document = json.loads(forced.stdout)
    assert document["header"]["omlx_version_range"] is None  # no message of oMLX's source to tell a version by
    assert [event.get("entry") for event in document["events"]] == [None] * 5


def test_a_crash_report_pasted_from_its_header_fails_check() -> None:
    result = runner.invoke(app, ["check", str(REAL / "omlx-issue-1548.log")])
    assert result.exit_code == 1, result.output
    assert "1548.log:1: crash: session 1 crashed (macOS crash report)" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "code"),
    [
        (PASTES / "metal-other" / "llama-cpp-metal-timeout.log", 1),
        (PASTES / "other" / "python-app-own-loggers.log", 2),
        (REAL / "omlx-issue-1548.log", 1),
    ],
    ids=lambda value: value.name if isinstance(value, Path) else str(value),
)
def test_check_in_a_real_process(path: Path, code: int) -> None:
    result = _run("check", str(path), "-q")
    assert result.returncode == code, result.stdout + result.stderr
