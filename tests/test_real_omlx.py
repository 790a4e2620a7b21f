"""The real oMLX server's logs (file log and console capture of each recorded run) read as their truth says,
each alone and together (both files in either order, the log folder with crash.log and the capture).

Each aspect is one test over every log. A (log, aspect) pair in KNOWN_DEFECTS fails today for a reason
issue 28 names: for those the test asserts that the tool's answer still differs from the truth, so a
fix makes it fail until its entry is removed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from real_omlx import (
    Case,
    cases,
    check_arguments,
    check_problems,
    dead_window_problems,
    fault_problems,
    reading,
    request_problems,
    runs,
    session_problems,
    together,
    trigger_problems,
    unparsed_problems,
    wedge_problems,
)
from typer.testing import CliRunner

from omlx_logscan.cli.app import app
from omlx_logscan.output.phrases import crash_rows

CASES = cases()
READINGS = CASES + together()
ASPECTS: dict[str, Callable[[Case], list[str]]] = {
    "sessions": session_problems,
    "faults": fault_problems,
    "triggers": trigger_problems,
    "dead_windows": dead_window_problems,
    "wedges": wedge_problems,
    "requests": request_problems,
    "unparsed": unparsed_problems,
}

# What the tool gets wrong today on these logs: (log, aspect, the issue 28 item that fixes it, 0 for a
# defect issue 28 does not name), each with a comment that says why it fails. None today.
KNOWN_DEFECTS: list[tuple[str, str, int]] = []

DEFECTS = {(log, aspect): item for log, aspect, item in KNOWN_DEFECTS}


def judge(case: Case, aspect: str, problems: list[str]) -> None:
    item = DEFECTS.get((case.id, aspect))
    if item is None:
        assert not problems, "\n".join(problems)
    else:
        assert problems, (
            f"{case.id} {aspect} now matches the truth: issue 28 item {item} fixed it, drop it from KNOWN_DEFECTS"
        )


def test_every_run_has_both_logs_and_the_set_covers_versions_levels_and_stops() -> None:
    assert all(path.is_file() for case in READINGS for path in case.files)
    names = runs()
    assert len(names) >= 12
    assert {n.split("@")[1] for n in names} >= {"0.4.4", "0.5.3", "0.5.7", "0.6.3rc2"}
    levels = {case.truth["log_level"] for case in CASES}
    assert levels == {"debug", "info", "warning"}
    stops = {p["stop"]["how"] for case in CASES for p in case.truth["sessions"]}
    assert stops == {"sigint", "sigterm", "sigkill"}


def test_known_defects_name_real_logs_and_aspects_once() -> None:
    ids = {case.id for case in READINGS}
    assert len(DEFECTS) == len(KNOWN_DEFECTS)
    for log, aspect, item in KNOWN_DEFECTS:
        assert log in ids and (aspect in ASPECTS or aspect == "check") and item in (0, 2, 3, 4, 5)


@pytest.mark.slow
@pytest.mark.parametrize("case", READINGS, ids=lambda c: c.id)
@pytest.mark.parametrize("aspect", sorted(ASPECTS))
def test_reading_matches_truth(aspect: str, case: Case) -> None:
    judge(case, aspect, ASPECTS[aspect](case))


@pytest.mark.slow
@pytest.mark.parametrize("case", READINGS, ids=lambda c: c.id)
def test_check_exit_code_and_findings(case: Case) -> None:
    """The CI gate, as a user runs it (a real process) and in process (CliRunner): the same answer,
    and the one the truth calls for."""
    arguments = check_arguments(case)
    done = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", *arguments], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    result = CliRunner().invoke(app, arguments)
    assert (result.exit_code, json.loads(result.stdout)) == (done.returncode, json.loads(done.stdout))
    judge(case, "check", check_problems(case, done.returncode, json.loads(done.stdout)))


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", [c for c in READINGS if any(p.name == "crash.log" for p in c.files)], ids=lambda c: c.id
)
def test_the_dump_in_crash_log_is_in_view_in_no_session(case: Case) -> None:
    """faulthandler's dump of the abort at an orderly stop's exit: no time, so no session, and a note
    of it among the crash evidence."""
    analysis = reading(case).analysis
    assert [(Path(ev.source).name, ev.kind) for ev in analysis.unplaced] == [("crash.log", "faulthandler_dump")]
    [row] = [row for row in crash_rows(analysis) if Path(row["source"]).name == "crash.log"]
    assert row["detail"].endswith(
        "an abort as the process exited (no thread has a Python frame); it cannot be placed in a session"
    )
