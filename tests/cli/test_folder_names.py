"""A folder's logs: oMLX's own names are read, and so is any other ``.log`` whose text is oMLX's (a
paste saved as ``omlx-3706.log``); another program's ``.log`` is skipped, saying why (issue 30)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, ROOT
from omlx_logscan.cli.app import app

runner = CliRunner()


def test_a_paste_saved_under_its_own_name_is_read_from_a_folder(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / "omlx-3706.log")
    (tmp_path / "install.log").write_text("==> Pouring python@3.11\n==> Summary\n")
    (tmp_path / "notes.txt").write_text("the server hung at 22:20\n")
    result = runner.invoke(app, ["check", str(tmp_path), "-f", "json"])
    assert result.exit_code == 1, result.output  # the example's penalty boxes: the paste was read
    assert f"skipped {tmp_path / 'install.log'}: no oMLX text in its first MiB" in result.stderr
    assert f"skipped {tmp_path / 'notes.txt'}: not an oMLX log name" in result.stderr
    alone = runner.invoke(app, ["check", str(EXAMPLE), "-f", "json"])
    findings = json.loads(result.stdout.replace(str(tmp_path / "omlx-3706.log"), str(EXAMPLE)))["findings"]
    assert findings == json.loads(alone.stdout)["findings"] and findings


def test_a_compressed_paste_is_told_by_its_text(tmp_path: Path) -> None:
    (tmp_path / "bug-report.log.gz").write_bytes(gzip.compress(EXAMPLE.read_bytes()))
    result = runner.invoke(app, ["events", str(tmp_path), "-k", "gpu_error", "-f", "csv", "-q"])
    assert result.exit_code == 0 and result.stdout.count("gpu_error") == 36, result.output


@pytest.mark.slow
def test_a_folder_of_other_programs_logs_is_refused_naming_each(tmp_path: Path) -> None:
    (tmp_path / "install.log").write_text("==> Pouring python@3.11\n")
    (tmp_path / "notes.txt").write_text("a note\n")
    process = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "timeline", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert process.returncode == 2 and process.stderr.count("\n") == 1, process.stderr
    assert "install.log: no oMLX text in its first MiB" in process.stderr and "notes.txt" in process.stderr


@pytest.mark.slow
def test_a_paste_in_a_folder_is_read_by_a_process(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE, tmp_path / "omlx-3706.log")
    process = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "sessions", str(tmp_path), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert process.returncode == 0 and "2026-09-16 09:29:33" in process.stdout, process.stderr  # its last session
