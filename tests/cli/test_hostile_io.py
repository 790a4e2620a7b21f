"""Issue 29: nothing the command reads is replaced, nothing half-written is left, every failure is
one line; each class through real processes where the behaviour is the CLI's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE, FIXTURES, ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
HISTORY = FIXTURES / "oshistory" / "InstallHistory.plist"


def run(args: list[str], cwd: Path | None = None, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "omlx_logscan", *args],
        stdin=kwargs.pop("stdin", subprocess.DEVNULL),
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        cwd=cwd,
        **kwargs,
    )


def one_error(result: subprocess.CompletedProcess[str], words: str) -> None:
    """Exit 2 with one line on stderr that says ``words``."""
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1 and words in result.stderr, result.stderr


# 1. No output replaces anything the command reads.


def _inputs(tmp_path: Path) -> dict[str, tuple[list[str], Path]]:
    """For each kind of input besides the log: the options that make the command read it, and the file."""
    overlay = tmp_path / "other.log"
    shutil.copy(EXAMPLE, overlay)
    history = tmp_path / "InstallHistory.plist"
    shutil.copy(HISTORY, history)
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(f'[[host]]\nname = "mac-07"\npaths = ["{tmp_path / "server.log"}"]\nos-history = "own.plist"\n')
    shutil.copy(HISTORY, tmp_path / "own.plist")
    config = tmp_path / ".logscan.toml"
    config.write_text('tz = "UTC"\n')
    return {
        "log": ([], tmp_path / "server.log"),
        "overlay": (["--overlay", f"gpu={overlay}"], overlay),
        "overlay folder": (["--overlay", f"gpu={tmp_path / 'overlays'}"], tmp_path / "overlays" / "one.log"),
        "os-history": (["--os-history", str(history)], history),
        "hosts file": (["--hosts", str(hosts)], hosts),
        "os-history of a host": (["--hosts", str(hosts)], tmp_path / "own.plist"),
        "configuration": ([], config),
    }


@pytest.mark.parametrize(
    ("kind", "command"),
    [
        ("log", ["check", "-f", "sarif"]),  # check writes its error document to -o
        ("overlay", ["timeline"]),
        ("overlay folder", ["report"]),
        ("os-history", ["bounds", "--by", "os"]),
        ("hosts file", ["check", "-f", "sarif"]),  # check writes its error document to -o
        ("os-history of a host", ["timeline"]),
        ("configuration", ["check", "-f", "junit"]),
    ],
)
def test_no_output_replaces_any_input_of_any_option(tmp_path: Path, kind: str, command: list[str]) -> None:
    (tmp_path / "overlays").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "overlays" / "one.log")
    shutil.copy(EXAMPLE, tmp_path / "server.log")
    options, target = _inputs(tmp_path)[kind]
    before = target.read_bytes()
    result = run([*command, str(tmp_path / "server.log"), *options, "-o", str(target)], cwd=tmp_path)
    one_error(result, "would destroy it")
    assert target.read_bytes() == before


def test_fleet_output_never_replaces_a_document_it_reads(tmp_path: Path) -> None:
    document = tmp_path / "mac-07.json"
    made = run(["timeline", str(EXAMPLE), "-q", "-f", "json", "-o", str(document)])
    assert made.returncode == 0, made.stderr
    before = document.read_bytes()
    one_error(run(["fleet", str(document), "-o", str(document)]), "is a source")
    assert document.read_bytes() == before
