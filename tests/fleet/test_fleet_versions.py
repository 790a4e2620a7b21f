"""Fleet versions per lifetime (issue 38): Homebrew captures that state oMLX's version only in the
``Cellar/omlx/<version>/`` paths of their tracebacks put no ``unknown`` row beside a known version.

The captures are the real oMLX 0.5.7 runs of ``tests/fixtures/real-omlx`` as Homebrew writes them:
the banner's version line gone, oMLX's files under the keg's ``site-packages``. The runs with faults
state the version in every lifetime (their tracebacks); the clean run states it nowhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import REAL, pasted, stream_of
from omlx_logscan import analyze
from omlx_logscan.cli.app import app

RUNS = REAL.parent / "real-omlx"
KEG = "/opt/homebrew/Cellar/omlx/0.5.7/libexec/lib/python3.11/site-packages/"
runner = CliRunner()


def _homebrew(run: str, hours: int) -> str:
    """A console capture of ``run`` as Homebrew's would be, its times ``hours`` later."""
    text = (RUNS / f"{run}@0.5.7.console.log").read_text()
    text = "".join(line for line in text.splitlines(keepends=True) if "Version: " not in line)
    text = text.replace("/srv/real-omlx/src/omlx-0.5.7/", KEG)
    return re.sub(r"^2026-12-04 (\d\d)", lambda m: f"2026-12-04 {int(m[1]) + hours:02d}", text, flags=re.M)


def _document(tmp_path: Path, name: str, *parts: tuple[str, int]) -> tuple[Path, dict[str, Any]]:
    capture = tmp_path / f"{name}.log"
    capture.write_text("".join(_homebrew(run, hours) for run, hours in parts))
    document = tmp_path / f"{name}.json"
    result = runner.invoke(app, ["timeline", str(capture), "-f", "json", "-o", str(document), "--host", name, "-q"])
    assert result.exit_code == 0, result.output
    return document, json.loads(document.read_text())


def _versions(*documents: Path) -> dict[str, dict[str, Any]]:
    result = runner.invoke(app, ["fleet", *map(str, documents), "-f", "json"])
    assert result.exit_code == 0, result.output
    return {row["omlx_version"]: row for row in json.loads(result.stdout)["versions"]}


@pytest.mark.slow  # each reads real captures and runs the fleet's SQL (a second or two)
def test_a_lifetime_between_two_of_one_version_ran_it(tmp_path: Path) -> None:
    """Faults, a clean day, faults: the clean lifetimes state nothing, their neighbours 0.5.7."""
    document, timeline = _document(
        tmp_path, "mac-01", ("d-warning-seed", 0), ("a-info-clean", 1), ("d-warning-seed", 2)
    )
    stated = [session["omlx_version"] for session in timeline["sessions"]]
    assert stated == ["0.5.7"] * 3 + [None] * 3 + ["0.5.7"] * 3  # the timeline says what each states
    (row,) = _versions(document).values()
    assert (row["omlx_version"], row["process_starts"], row["faults"]) == ("0.5.7", 9, len(timeline["faults"]))


@pytest.mark.slow
def test_a_lifetime_before_the_first_statement_stays_unknown(tmp_path: Path) -> None:
    """No guess: the clean lifetimes before the first traceback may have run an older version."""
    document, timeline = _document(tmp_path, "mac-02", ("a-info-clean", 0), ("d-warning-seed", 1))
    versions = _versions(document)
    assert set(versions) == {"0.5.7", "unknown"}
    assert (versions["unknown"]["process_starts"], versions["unknown"]["faults"]) == (3, 0)
    assert versions["0.5.7"]["faults"] == len(timeline["faults"])


@pytest.mark.slow
def test_each_host_is_bracketed_by_its_own_lifetimes(tmp_path: Path) -> None:
    """A host's clean lifetimes are not filled in by another host's statements around them."""
    faulted, _ = _document(tmp_path, "mac-03", ("d-warning-seed", 0), ("d-warning-seed", 2))
    clean, _ = _document(tmp_path, "mac-04", ("a-info-clean", 1))
    versions = _versions(faulted, clean)
    assert (versions["unknown"]["hosts"], versions["unknown"]["process_starts"]) == (1, 3)
    assert (versions["0.5.7"]["hosts"], versions["0.5.7"]["process_starts"]) == (1, 6)


def test_a_crash_dump_states_the_version_in_any_thread(tmp_path: Path) -> None:
    """The crash was on a thread that ran no Python: the other threads' frames still name the keg."""
    dump = (
        "Fatal Python error: Segmentation fault\n\n"
        "Thread 0x000000016f7d3000 (most recent call first):\n"
        f'  File "{KEG}omlx/engine_core.py", line 394 in _engine_loop\n'
        '  File "/opt/homebrew/Cellar/python@3.11/3.11.9/lib/python3.11/threading.py", line 1010 in run\n\n'
        "Current thread 0x00000001f0d2c0c0 (most recent call first):\n"
        "  <no Python frame>\n"
    )
    (session,) = analyze(stream_of(pasted(tmp_path, dump))).sessions
    assert session.omlx_version == "0.5.7"
