"""A small log's machine-format run imports neither polars nor numpy nor rich: most of its time
would be those imports. Checked in a fresh interpreter, whose ``-X importtime`` report names every
module it imported (the CLI ends the process without running exit handlers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import omlx_logscan
from conftest import bench_module
from omlx_logscan.parsing import native

HEAVY = ("polars", "numpy", "rich")


# The copy this test process imports (an installed one, or the source tree with its scanner built):
# the child must run the same one, or the skip below would judge another copy's scanner.
TESTED = Path(omlx_logscan.__file__).resolve().parents[1]


def _native_in_use() -> bool:
    try:
        return native.native_scanner() is not None
    except native.NativeScannerMissing:
        return False


def imported(*args: str, env: dict[str, str] | None = None) -> set[str]:
    """The top-level modules ``python -m omlx_logscan ARGS`` imports."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "omlx_logscan", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTED), **(env or {})},
        check=True,
    )
    names = (line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:"))
    return {name.split(".")[0] for name in names}


@pytest.fixture(scope="module")
def small_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("light") / "server.log"
    bench_module("make_log").write_log(path, 1, 20, seed=3, level="info")
    return path


@pytest.mark.slow
@pytest.mark.skipif(not _native_in_use(), reason=f"the native scanner is not in use here ({native.scanner_name()})")
@pytest.mark.parametrize("command", [["timeline", "-f", "json", "-q"], ["sessions", "-f", "json"], ["report"]])
def test_a_small_log_needs_no_heavy_import(small_log: Path, command: list[str]) -> None:
    modules = imported(*command, str(small_log))
    assert "omlx_logscan" in modules  # the report is read right
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


@pytest.mark.slow
def test_the_polars_plan_still_imports_polars(small_log: Path) -> None:
    """The check above can fail: the fallback path does import polars (asked for, so not refused where
    the native scanner is required, as in CI)."""
    assert "polars" in imported(
        "timeline", "-f", "json", "-q", str(small_log), env={"LOGSCAN_SCANNER": "polars", "LOGSCAN_REQUIRE_NATIVE": "0"}
    )


@pytest.mark.slow
def test_terminal_text_imports_rich(small_log: Path) -> None:
    assert "rich" in imported("timeline", str(small_log), env={"COLUMNS": "100"})


def _lexicon_read(*args: str) -> bool:
    """Whether ``logscan ARGS``, run in a fresh interpreter, read the lexicon of oMLX's messages."""
    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from omlx_logscan.cli.app import app\n"
        "from omlx_logscan.parsing.lexicon import lexicon\n"
        "CliRunner().invoke(app, sys.argv[1:])\n"
        "print(lexicon.cache_info().currsize)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTED)},
        check=True,
    )
    return run.stdout.strip().splitlines()[-1] == "1"


@pytest.mark.slow
@pytest.mark.parametrize("command", [["--version"], ["schema", "timeline"], ["timeline", "--help"]])
def test_commands_that_read_no_log_do_not_read_the_lexicon(command: list[str]) -> None:
    assert not _lexicon_read(*command)


@pytest.mark.slow
def test_a_log_s_messages_read_the_lexicon(small_log: Path) -> None:
    """The check above can fail: a log's records are looked up in it."""
    assert _lexicon_read("timeline", "-f", "json", "-q", str(small_log))
