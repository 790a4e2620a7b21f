"""``pip install .`` with no working C compiler still installs, reads with the polars plan and says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import venv
from importlib.metadata import version
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT


def _setuptools_is_new_enough() -> bool:
    major = int(version("setuptools").split(".")[0])
    return major >= 77  # pyproject's build requirement: without it the build cannot run offline


@pytest.mark.slow  # about 20 s: a venv and a build; .ci/run runs it with the rest
@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the clone's git checkout to copy its tracked files")
@pytest.mark.skipif(not _setuptools_is_new_enough(), reason="setuptools >= 77 (the test extra's) is not installed")
def test_an_install_without_a_compiler_falls_back_and_says_so(tmp_path: Path) -> None:
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    clone = tmp_path / "clone"
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)  # the dependencies: this Python's own
    python = env_dir / "bin" / "python"
    # The venv's bundled setuptools may be older than the build needs: the test extra's is used.
    subprocess.run([str(python), "-m", "pip", "uninstall", "--yes", "--quiet", "setuptools"], capture_output=True)
    kept = {k: v for k, v in os.environ.items() if not k.startswith("LOGSCAN_") and k != "PYTHONPATH"}
    env = kept | {"CC": "false"}
    install = [str(python), "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "--no-index"]
    subprocess.run([*install, str(clone)], env=env, check=True, capture_output=True, cwd=tmp_path)
    run = subprocess.run(
        [str(python), "-m", "omlx_logscan", "--version"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert run.stdout.splitlines()[1] == "scanner: polars (the native scanner is not built)"
    timeline = [str(python), "-m", "omlx_logscan", "timeline", str(EXAMPLE), "-f", "json", "-q"]
    assert subprocess.run(timeline, env=env, capture_output=True, cwd=tmp_path).returncode == 0
    # The JSON Schemas are package data: the installed package has them.
    schema = subprocess.run(
        [str(python), "-m", "omlx_logscan", "schema", "timeline"], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert json.loads(schema.stdout)["title"] == "omlx-logscan/timeline/2"
