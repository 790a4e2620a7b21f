"""The incidents through the command line: check's verdicts on what failed, the warnings under the
--fail-level, the counts of what was read, the versions, in every format (CliRunner; one subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from conftest import FIXTURES, REAL, ROOT
from omlx_logscan.cli.app import app

runner = CliRunner()
INCIDENTS = FIXTURES / "incidents"


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, [*args])
    return result.exit_code, result.stdout


@pytest.mark.parametrize(
    ("log", "headline"),
    [
        (REAL / "omlx-issue-943.log", "logscan check: 1 finding (error 1)"),  # Engine loop error + traceback
        (REAL / "omlx-issue-2530.log", "logscan check: 1 finding (load_failure 1)"),  # a failed load
        (INCIDENTS / "startup-crash.log", "logscan check: 1 finding (fatal_exit 1)"),
        (INCIDENTS / "metal-unknown-outcome.log", "logscan check: 1 finding (gpu_fault 1)"),
    ],
    ids=lambda value: getattr(value, "name", ""),
)
def test_the_default_check_fails_what_failed(log: object, headline: str) -> None:
    code, out = run("check", "-q", str(log))
    assert (code, out.splitlines()[0]) == (1, headline)


def test_a_rejected_request_is_a_warning_until_the_level_or_a_rule_asks_for_it() -> None:
    paste = str(REAL / "omlx-issue-1503.log")  # a 422: oMLX refused a request body
    code, out = run("check", "-q", paste)
    assert code == 0 and out.startswith("logscan check: no findings")
    assert "warning: " in out and ": rejected: " in out and "→ 422" in out
    assert run("check", "-q", paste, "--fail-level", "warning")[0] == 1
    assert run("check", "-q", paste, "--fail-on", "rejected")[0] == 1
    assert run("check", "-q", str(REAL / "omlx-issue-943.log"), "--fail-level", "critical")[0] == 0


def test_a_bad_fail_level_is_a_usage_error() -> None:
    result = runner.invoke(app, ["check", "-q", str(REAL / "omlx-issue-943.log"), "--fail-level", "fatal"])
    assert result.exit_code == 2 and "--fail-level fatal: unknown severity" in result.stderr


def test_records_read_are_checked_and_counted() -> None:
    """Shared pastes: bare oMLX messages with no time are records checked, not "nothing to check"; the
    header counts the records that matched no message of oMLX's."""
    code, out = run("check", "-q", str(REAL / "omlx-issue-2232.log"))
    assert code == 0 and out.startswith("logscan check: no findings (") and "nothing to check" not in out
    code, out = run("timeline", "-q", str(REAL / "omlx-issue-1060.log"))
    assert code == 0
    assert "  sessions  1\n" in out and "  lines     3 read, 0 unparsed, 3 records matched no message of oMLX's" in out


def test_every_format_shows_the_incidents() -> None:
    log = str(INCIDENTS / "admission-and-pressure.log")
    for args, heading in (
        (["timeline"], "\nIncidents\n"),
        (["timeline", "-f", "markdown"], "### Incidents"),
        (["report"], "### Incidents"),
    ):
        code, out = run(*args, "-q", log)
        assert code == 0 and heading in out, args
    code, out = run("timeline", "-q", "-f", "json", log)  # the autouse hook validated it against schema /3
    document = json.loads(out)
    assert document["schema"] == "omlx-logscan/timeline/3"
    assert [item["kind"] for item in document["incidents"]] == ["memory_pressure", "rejected", "rejected", "aborted"]
    assert document["incidents"][0]["episodes"][0]["worst_level"] == "hard"


def test_a_keg_named_by_a_commit_states_no_version() -> None:
    code, out = run("timeline", "-q", str(INCIDENTS / "cellar-commit.log"))
    assert code == 0 and "stated" not in out and "4e7c1d9" not in out.split("Incidents", 1)[0]
    code, out = run("sessions", "-q", "-f", "json", str(INCIDENTS / "cellar-commit.log"))
    assert json.loads(out)["sessions"][0]["omlx_version"] is None


def test_one_process_is_no_upgrade() -> None:
    """Two messages whose version ranges do not meet, in a log of one process: a line misread, not an
    upgrade; the sessions table takes the header's computation."""
    code, out = run("timeline", "-q", str(INCIDENTS / "one-process-two-ranges.log"))
    assert code == 0 and "an upgrade?" not in out and "though one process wrote them" in out
    code, out = run("sessions", "-q", "-f", "json", str(INCIDENTS / "one-process-two-ranges.log"))
    header = json.loads(run("timeline", "-q", "-f", "json", str(INCIDENTS / "one-process-two-ranges.log"))[1])
    assert json.loads(out)["sessions"][0]["omlx_version_range"] == header["header"]["omlx_version_range"]


@pytest.mark.slow
def test_the_startup_crash_fails_check_as_a_real_process() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "omlx_logscan", "check", "-q", str(INCIDENTS / "startup-crash.log")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "startup-crash.log:10: fatal_exit: " in done.stdout
