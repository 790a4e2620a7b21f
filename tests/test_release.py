"""The version has one place, pyproject.toml; the package reads it from its installed metadata."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import omlx_logscan
from conftest import ROOT
from omlx_logscan.cli.app import app

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture
def fresh_version(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """The version read again on its next use (it is kept once read), from ``importlib.metadata``:
    an installed copy's own metadata, read first, is hidden."""
    monkeypatch.delitem(vars(omlx_logscan), "__version__", raising=False)
    monkeypatch.setattr(omlx_logscan, "_version_beside", lambda: None)
    yield monkeypatch
    vars(omlx_logscan).pop("__version__", None)


def test_the_version_comes_from_the_package_metadata(fresh_version: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def version(name: str) -> str:
        asked.append(name)
        return "9.8.7"

    fresh_version.setattr(importlib.metadata, "version", version)
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.splitlines()[0] == "logscan 9.8.7"
    assert asked == [PYPROJECT["project"]["name"]]


def test_a_source_tree_that_is_not_installed_says_its_version_is_unknown(fresh_version: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    fresh_version.setattr(importlib.metadata, "version", missing)
    assert omlx_logscan.__version__ == "0+unknown"


def test_an_installed_copy_reads_its_version_from_the_metadata_beside_it(tmp_path: Path) -> None:
    assert omlx_logscan._version_in(str(tmp_path)) is None  # a source tree: nothing beside it
    info = tmp_path / "omlx_logscan-9.8.7.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: omlx-logscan\nVersion: 9.8.7\n\nThe text.\n")
    assert omlx_logscan._version_in(str(tmp_path)) == "9.8.7"
    (tmp_path / "omlx_logscan-1.0.dist-info").mkdir()  # two installs: neither is trusted
    assert omlx_logscan._version_in(str(tmp_path)) is None


def test_the_version_is_written_only_in_pyproject() -> None:
    version = PYPROJECT["project"]["version"]
    src = ROOT / "src"
    holding = [p for p in src.rglob("*.py") if f'"{version}"' in p.read_text(encoding="utf-8")]
    assert holding == []


@pytest.mark.slow
def test_logscan_version_as_a_process_prints_the_installed_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={"PYTHONPATH": str(Path(omlx_logscan.__file__).parents[1]), "PATH": ""},
    )
    try:
        want = importlib.metadata.version(PYPROJECT["project"]["name"])
    except importlib.metadata.PackageNotFoundError:
        want = "0+unknown"
    assert done.stdout.splitlines()[0] == f"logscan {want}"
