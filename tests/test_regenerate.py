"""tools/regenerate.py --check: every generated file it can rebuild offline equals the committed one,
and a stale copy of any of them is named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

TOOL = Path("tools") / "regenerate.py"


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(root / TOOL), "--check"],
        capture_output=True,
        text=True,
        env={"PATH": ""},
        check=False,
    )


@pytest.mark.slow
def test_the_committed_files_are_current() -> None:
    result = _check(ROOT)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("docs/cli.md", "`--kind, -k`", "`--kinds`"),
        ("docs/severity.md", "| error | `Queue: error running", "| warning | `Queue: error running"),
        ("src/omlx_logscan/data/catalog_entries.py", '"^oMLX - LLM inference": ("b5482cfe1c",),', ""),
    ],
)
def test_a_stale_file_is_named(tmp_path: Path, path: str, old: str, new: str) -> None:
    """A copy of the checkout with one generated file edited fails the check, naming that file only."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so")
    for part in ("src/omlx_logscan", "tools", "docs"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")  # ruff's settings, for the catalog entries
    stale = tmp_path / path
    text = stale.read_text(encoding="utf-8")
    assert old in text
    stale.write_text(text.replace(old, new, 1), encoding="utf-8")
    result = _check(tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"{path} is stale: run python tools/regenerate.py"]
