"""``pip install .`` with no working C compiler still installs, reads with the polars plan and says so."""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import venv
from importlib.metadata import version
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT


def _setuptools_is_new_enough() -> bool:
    major = int(version("setuptools").split(".")[0])
    return major >= 77  # pyproject's build requirement: without it the build cannot run offline


def _quickstart() -> list[str]:
    """The commands of the README's Quickstart block."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block, "the Quickstart has no sh block"
    return block[1].splitlines()


def test_the_quickstart_makes_its_own_environment_and_ci_runs_its_test_command() -> None:
    """Debian's and Homebrew's python3 refuse ``pip install`` outside a virtual environment: each of the
    two commands makes one and runs only what is in it, and CI runs the test command as written."""
    commands = _quickstart()
    assert len(commands) == 2
    for command in commands:
        first, *rest = command.split(" && ")
        assert first == "python3 -m venv .venv" and rest, command
        assert all(step.startswith(".venv/bin/") for step in rest), command
    install, test = commands
    assert "logscan timeline examples/omlx-3706.log" in install and "'.[test]'" in test
    assert test in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


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
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # The venv's bundled setuptools may be older than the build needs (3.11 bundles 65.5): the test
    # extra's is used, with the other dependencies, from the environment running the tests. That is
    # not the base interpreter's when the tests run in a venv, as the Quickstart's do, so the nested
    # venv is given this environment's folders by a .pth file rather than --system-site-packages.
    subprocess.run([str(python), "-m", "pip", "uninstall", "--yes", "--quiet", "setuptools"], capture_output=True)
    (_site_packages(python) / "outer-environment.pth").write_text("\n".join(_own_site_packages()) + "\n")
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
    assert json.loads(schema.stdout)["title"] == "omlx-logscan/timeline/3"


def _site_packages(python: Path) -> Path:
    """The site-packages folder of the venv whose interpreter is ``python``."""
    where = [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
    return Path(subprocess.run(where, capture_output=True, text=True, check=True).stdout.strip())


def _own_site_packages() -> list[str]:
    """The folders this environment's packages are installed in: a venv's own, else the interpreter's
    (and the user's, when Python reads it)."""
    folders = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return folders
