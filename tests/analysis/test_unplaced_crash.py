"""faulthandler's dumps where oMLX writes them: ``crash.log``, beside the dated ``server.log`` (oMLX's
``cli.py`` opens it for appending and hands it to ``faulthandler.enable``), or in line in a log.

A dump in crash.log has no time and none around it: it cannot be placed in a session, so it makes none,
yet it is never passed over. An abort's dump in which no thread has a Python frame is an abort as the
process exited (the Linux runs abort so after their orderly stop): a note. One that shows a process
dying while it ran fails ``check``'s crash rule, in no session.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import FIXTURES, analysis_of, pasted, schema_errors
from omlx_logscan.analysis.check import Rules, UnplacedCrash, run_check
from omlx_logscan.cli.app import app
from omlx_logscan.output.findings import finding_message
from omlx_logscan.output.phrases import crash_rows

RUN = FIXTURES / "real-omlx" / "a-info-clean@0.5.7"
SERVER = RUN.with_name(RUN.name + ".server.log")
# faulthandler's dump as the process aborted after its orderly stop (exit code -6): no Python frame.
AT_EXIT = RUN.with_name(RUN.name + ".crash.log").read_text()
# A dump of an abort while serving, as faulthandler writes one: the engine's thread in oMLX's code.
SERVING = (
    "Fatal Python error: Aborted\n\n"
    "Current thread 0x000000016f7d7000 (most recent call first):\n"
    '  File "/opt/omlx/omlx/scheduler.py", line 5439 in step\n'
    '  File "/opt/omlx/omlx/engine_core.py", line 212 in _engine_loop\n\n'
    "Thread 0x00000001f6d3e0c0 (most recent call first):\n"
    '  File "/opt/python/asyncio/base_events.py", line 1898 in _run_once\n'
)
SEGFAULT = SERVING.replace("Aborted", "Segmentation fault")
CHECKED = Rules(("crash",))


def _folder(tmp_path: Path, dump: str) -> Path:
    """oMLX's log folder: its file log and faulthandler's crash.log."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "server.log").write_bytes(SERVER.read_bytes())
    (logs / "crash.log").write_text(dump)
    return logs


def _shutdowns() -> list[str]:
    return [s.end_reason for s in analysis_of(SERVER).sessions]


@pytest.mark.parametrize("dump", [AT_EXIT, SERVING], ids=["at-exit", "serving"])
def test_a_dump_in_crash_log_makes_no_session_and_stays_in_view(tmp_path: Path, dump: str) -> None:
    analysis = analysis_of(_folder(tmp_path, dump))
    assert [s.end_reason for s in analysis.sessions] == _shutdowns() == ["shutdown"] * 3
    assert all(s.start_in_log for s in analysis.sessions)
    assert [ev.source.endswith("crash.log") for ev in analysis.unplaced] == [True]
    rows = crash_rows(analysis)
    assert len(rows) == 1 and "it cannot be placed in a session" in rows[0]["detail"]


def test_an_abort_at_exit_in_crash_log_is_a_note_for_check(tmp_path: Path) -> None:
    analysis = analysis_of(_folder(tmp_path, AT_EXIT))
    assert "an abort as the process exited" in crash_rows(analysis)[0]["detail"]
    assert run_check(analysis, CHECKED).exit_code == 0


@pytest.mark.parametrize("dump", [SERVING, SEGFAULT], ids=["abort", "segfault"])
def test_a_dump_of_a_running_process_in_crash_log_fails_check_in_no_session(tmp_path: Path, dump: str) -> None:
    result = run_check(analysis_of(_folder(tmp_path, dump)), CHECKED)
    [finding] = result.findings
    assert isinstance(finding.subject, UnplacedCrash)
    assert (finding.session, finding.time, finding.line) == (None, None, 1)
    assert finding_message(finding).endswith("a crash dump with no time; it cannot be placed in a session")


def test_crash_log_reads_the_same_before_or_after_the_file_log(tmp_path: Path) -> None:
    crash = tmp_path / "crash.log"
    crash.write_text(SERVING)
    readings = [analysis_of(*paths) for paths in ((SERVER, crash), (crash, SERVER))]
    assert [[(s.start, s.end, s.end_reason) for s in a.sessions] for a in readings] == [
        [(s.start, s.end, s.end_reason) for s in analysis_of(SERVER).sessions]
    ] * 2
    assert [len(a.unplaced) for a in readings] == [1, 1]


def test_a_dump_alone_is_still_the_crash_of_the_one_process_it_shows(tmp_path: Path) -> None:
    """Nothing dated to place it against: the dump is all the input shows, a process that crashed."""
    analysis = analysis_of(pasted(tmp_path, SERVING))
    assert analysis.unplaced == []
    assert [s.end_reason for s in analysis.sessions] == ["crash"]


@pytest.mark.parametrize("dump", [AT_EXIT, SERVING], ids=["at-exit", "serving"])
def test_an_abort_dump_in_line_after_the_orderly_stop_is_a_note(tmp_path: Path, dump: str) -> None:
    """The same dump where a log holds it in line (faulthandler's output captured with the rest),
    after session 1's orderly stop: the session stopped in order, as with the C++ runtimes' aborts."""
    lines = SERVER.read_text().splitlines(keepends=True)
    stop = next(i for i, line in enumerate(lines) if "Engine pool shutdown complete" in line)
    analysis = analysis_of(pasted(tmp_path, "".join([*lines[: stop + 1], dump, *lines[stop + 1 :]])))
    assert [s.end_reason for s in analysis.sessions] == ["shutdown"] * 3
    assert [ev.kind for ev in analysis.sessions[0].exit_notes] == ["faulthandler_dump"]
    assert run_check(analysis, CHECKED).exit_code == 0


def test_a_segfault_dump_in_line_after_the_orderly_stop_is_still_a_crash(tmp_path: Path) -> None:
    lines = SERVER.read_text().splitlines(keepends=True)
    stop = next(i for i, line in enumerate(lines) if "Engine pool shutdown complete" in line)
    analysis = analysis_of(pasted(tmp_path, "".join([*lines[: stop + 1], SEGFAULT, *lines[stop + 1 :]])))
    assert analysis.sessions[0].end_reason == "crash"
    assert run_check(analysis, CHECKED).exit_code == 1


@pytest.mark.slow
def test_the_cli_names_the_dump_it_cannot_place(tmp_path: Path) -> None:
    """``sessions`` and ``check`` on oMLX's folder layout (``--base-path``), in process and as a user runs them."""
    base = _folder(tmp_path, SERVING).parent
    shown = CliRunner().invoke(app, ["sessions", "--base-path", str(base)])
    assert shown.exit_code == 0 and "(start not in log)" not in shown.stdout
    note = "note: crash.log:1: Python fatal error (faulthandler): Aborted, in omlx/scheduler.py:5439 step; a crash dump"
    assert f"{note} with no time; it cannot be placed in a session" in shown.stdout
    arguments = ["check", "--base-path", str(base), "--fail-on", "crash", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", *arguments], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == CliRunner().invoke(app, arguments).exit_code == 1
    assert "it cannot be placed in a session" in done.stdout
    documents = {
        command: json.loads(CliRunner().invoke(app, [command, "--base-path", str(base), "--format", "json"]).stdout)
        for command in ("check", "timeline")
    }
    assert [schema_errors(document) for document in documents.values()] == [[], []]
    assert [(f["session"], f["time"], f["line"]) for f in documents["check"]["findings"]] == [(None, None, 1)]
    assert len(documents["timeline"]["sessions"]) == 3 and len(documents["timeline"]["crashes"]) == 1


@pytest.mark.slow
def test_check_passes_on_an_abort_at_exit_and_says_so(tmp_path: Path) -> None:
    """The note comes with the verdict (text, and a GitHub notice), as a user runs it and in process."""
    base = _folder(tmp_path, AT_EXIT).parent
    note = "crash.log:1: Python fatal error (faulthandler): Aborted; a crash dump with no time, an abort as the process"
    for form, said in (("text", f"note: {note}"), ("github", f"title=Crash evidence that cannot be placed::{note}")):
        arguments = ["check", "--base-path", str(base), "--fail-on", "crash", "--format", form]
        done = subprocess.run(
            [sys.executable, "-m", "omlx_logscan", *arguments], capture_output=True, text=True, timeout=120, check=False
        )
        result = CliRunner().invoke(app, arguments)
        assert (done.returncode, result.exit_code) == (0, 0)
        assert said in done.stdout and said in result.stdout
