"""The command line, through typer's CliRunner and once as a real subprocess."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, REAL
from omlx_logscan.cli.app import app

runner = CliRunner()


def test_version_and_help() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("logscan ")
    result = runner.invoke(app, ["timeline", "--help"])
    assert result.exit_code == 0
    assert "--since" in result.output and "--format" in result.output


def test_timeline_text_on_the_example() -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "2026-09-15 22:20:21              Timeout → SubmissionsIgnored in the same second" in result.output
    assert "identical for all 6 faults" in result.output
    assert "read 2224 lines" in result.output  # the accounting, on stderr (mixed in by the runner)


@pytest.mark.slow
def test_timeline_json_schema_and_fields() -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "-f", "json", "-q"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["schema"] == "omlx-logscan/timeline/3"
    assert set(doc) >= {"sessions", "faults", "dead_windows", "signatures", "summary"}
    assert [f["outcome"] for f in doc["faults"]] == [
        "absorbed",
        "absorbed",
        "penalty_box",
        "absorbed",
        "penalty_box",
        "absorbed",
    ]
    fault = doc["faults"][0]
    assert set(fault) >= {"time", "kind", "session", "context", "signature", "outcome"}
    window = doc["dead_windows"][0]
    assert set(window) >= {
        "start",
        "last_failure",
        "end",
        "end_exact",
        "end_reason",
        "duration_s",
        "repeats",
        "requests_completed",
    }
    session = doc["sessions"][0]
    assert set(session) >= {
        "index",
        "start",
        "start_exact",
        "end",
        "end_reason",
        "omlx_version",
        "engine_starts",
        "requests_completed",
        "faults",
    }


def test_timeline_markdown_has_no_colour() -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "-f", "markdown", "-q"], env={"NO_COLOR": ""})
    assert result.exit_code == 0
    assert result.stdout.startswith("## oMLX log timeline")
    assert "\x1b[" not in result.stdout


@pytest.mark.slow
def test_events_ndjson_filter_and_accounting(tmp_path: Path) -> None:
    out = tmp_path / "events.ndjson"
    result = runner.invoke(app, ["events", str(EXAMPLE), "-k", "gpu_error", "-f", "ndjson", "-o", str(out)])
    assert result.exit_code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 36 and {r["kind"] for r in rows} == {"gpu_error"}
    assert rows[0]["code"] == "00000002" and rows[0]["context"] == "engine_loop"
    assert "unparsed" in result.stderr


def test_events_csv_and_parquet(tmp_path: Path) -> None:
    result = runner.invoke(app, ["events", str(REAL / "omlx-issue-3683.log"), "-f", "csv", "-q"])
    assert result.exit_code == 0
    header, *rows = result.stdout.splitlines()
    assert header == "time,source,line,level,logger,kind,message,host,fields"
    assert len(rows) == 3
    target = tmp_path / "e.parquet"
    result = runner.invoke(app, ["events", str(EXAMPLE), "-f", "parquet", "-o", str(target), "-q"])
    assert result.exit_code == 0 and target.stat().st_size > 0
    import polars as pl

    assert pl.read_parquet(target).filter(pl.col("kind") == "gpu_error").height == 36
    result = runner.invoke(app, ["events", str(EXAMPLE), "-f", "parquet"])
    assert result.exit_code == 2 and "--output" in result.stderr


def test_request_rows_appear_in_events(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "2026-09-15 20:00:00,000 - omlx.engine_core - INFO - [-] - Engine started\n"
        "2026-09-15 20:00:01,000 - omlx.server - INFO - [-] - Chat completion: 12 tokens in 1.00s (12.0 tok/s), "
        "prompt: 40\n"
        "2026-09-15 20:00:02,000 - omlx.server - INFO - [-] - Chat completion: 30 tokens in 2.00s (15.0 tok/s), "
        "prompt: 50\n"
        "2026-09-15 20:00:03,000 - omlx.server - INFO - [-] - something routine\n"
    )
    result = runner.invoke(app, ["events", str(log), "-f", "ndjson", "-q"])
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["kind"] for r in rows] == ["engine_start", "request_complete", "request_complete"]
    assert rows[2]["tokens"] == 30 and rows[2]["prompt_tokens"] == 50 and rows[2]["tok_per_s"] == 15.0
    result = runner.invoke(app, ["events", str(log), "-f", "ndjson", "-q", "--all"])
    assert [json.loads(line)["kind"] for line in result.stdout.splitlines()][-1] == "record"


def test_since_and_until_filter() -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "-f", "json", "-q", "--since", "2026-09-16 00:00"])
    doc = json.loads(result.stdout)
    assert [f["time"][:19] for f in doc["faults"]] == ["2026-09-16T02:07:02", "2026-09-16T03:22:40"]
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "--since", "next blue moon"])
    assert result.exit_code == 2 and "neither a duration nor a date" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["timeline", "/no/such/file.log"], "no such file"),
        (["events", "--tz", "Mars/Olympus", str(EXAMPLE)], "not a time zone"),
        (["events", "--kind", "nonsense", str(EXAMPLE)], "unknown"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_folder_without_logs(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    result = runner.invoke(app, ["timeline", str(tmp_path)])
    assert result.exit_code == 2 and "no oMLX logs" in result.stderr


def test_folder_of_rotated_logs_reads_oldest_first(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_text("2026-09-16 01:00:00,000 - omlx.server - WARNING - [-] - newest\n")
    with gzip.open(tmp_path / "server.log.2026-09-14.gz", "wt") as handle:
        handle.write("2026-09-14 01:00:00,000 - omlx.server - WARNING - [-] - oldest\n")
    (tmp_path / "server.log.2026-09-15").write_text("2026-09-15 01:00:00,000 - omlx.server - WARNING - [-] - middle\n")
    result = runner.invoke(app, ["events", str(tmp_path), "-f", "ndjson", "-q"])
    assert [json.loads(line)["message"] for line in result.stdout.splitlines()] == ["oldest", "middle", "newest"]


def test_markup_in_log_text_is_printed_verbatim(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("2026-09-15 20:00:00,000 - omlx.x - WARNING - [-] - [bold red]not a style[/] [METAL] x\n")
    result = runner.invoke(app, ["events", str(log), "-f", "table", "-q"], env={"COLUMNS": "200"})
    assert "[bold red]not a style[/] [METAL] x" in result.stdout


def test_strict_turns_unparsed_lines_into_an_error(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("random words first\n2026-09-15 20:00:00,000 - omlx.x - WARNING - [-] - fine\n")
    assert runner.invoke(app, ["events", str(log), "-q"]).exit_code == 0
    result = runner.invoke(app, ["events", str(log), "-q", "--strict"])
    assert result.exit_code == 2 and "1 line(s) could not be parsed" in result.stderr
    result = runner.invoke(app, ["events", str(log), "--show-unparsed", "-f", "ndjson"])
    assert "unparsed " in result.stderr and ":1: random words first" in result.stderr


def test_stdin_input() -> None:
    text = (REAL / "omlx-issue-3683.log").read_text()
    result = runner.invoke(app, ["events", "-", "-f", "ndjson", "-q", "-k", "gpu_error"], input=text)
    assert result.exit_code == 0
    assert [json.loads(line)["context"] for line in result.stdout.splitlines()] == ["prefill", "chat_stream"]


@pytest.mark.slow
def test_sessions_command() -> None:
    result = runner.invoke(app, ["sessions", str(EXAMPLE), "-f", "json", "-q"])
    doc = json.loads(result.stdout)
    assert doc["schema"] == "omlx-logscan/sessions/2" and len(doc["sessions"]) == 160
    assert runner.invoke(app, ["sessions", str(EXAMPLE), "-q"]).exit_code == 0


@pytest.mark.slow
def test_real_subprocess_module_entry_point(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "timeline", str(EXAMPLE), "--format", "json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["faults"]) == 6
    missing = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "timeline", str(tmp_path / "absent.log")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 2
    assert missing.stderr.startswith("logscan: error:") and "Traceback" not in missing.stderr


@pytest.mark.slow
def test_the_process_exits_with_every_line_written_and_its_code() -> None:
    """The entry point leaves without tearing the interpreter down: nothing buffered may be lost,
    and a failed check still exits 1."""
    events = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "events", str(EXAMPLE), "-f", "ndjson", "--all", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert events.returncode == 0, events.stderr
    expected = runner.invoke(app, ["events", str(EXAMPLE), "-f", "ndjson", "--all", "-q"]).stdout
    assert events.stdout == expected and len(expected) > 256 * 1024  # far more than a pipe holds
    check = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "check", str(EXAMPLE), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 1 and check.stdout.strip()


@pytest.mark.slow
def test_machine_formats_do_not_load_the_terminal_renderer() -> None:
    """rich's console and tables are for terminals; a JSON run in CI starts faster without them."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "omlx_logscan", "timeline", str(EXAMPLE), "-f", "json", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0 and json.loads(result.stdout)["faults"]
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time")
    }
    assert "omlx_logscan.stream.read" in imported and not imported & {"rich.console", "rich.table", "rich.text"}


@pytest.mark.slow
def test_timeline_with_os_history_names_versions_and_adds_bounds() -> None:
    history = EXAMPLE.parent / "os-history.txt"
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "--os-history", str(history), "-f", "json", "-q"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert {row["os_version"] for row in doc["escalation"]} == {"27.0"}
    rows = {row["os_version"]: row for row in doc["bounds"]["rows"]}
    assert rows["26.5.1"]["process_starts"] == 156 and rows["26.5.1"]["faults"] == {}
    text = runner.invoke(app, ["timeline", str(EXAMPLE), "--os", "27.0@2026-09-15 17:41", "-q"]).stdout
    assert "Every row is of macOS 27.0 (from the OS install history)." in text and "Version bounds" in text


def test_crash_evidence_shows_in_the_timeline_and_fails_the_check() -> None:
    panic = REAL / "omlx-issue-862.log"
    text = runner.invoke(app, ["timeline", str(panic), "-q"]).stdout
    assert "Crash evidence" in text and "macOS kernel panic" in text and "completeMemory()" in text
    doc = json.loads(runner.invoke(app, ["timeline", str(panic), "-q", "-f", "json"]).stdout)
    assert [row["kind"] for row in doc["crashes"]] == ["kernel_panic"]
    assert doc["sessions"][0]["end_reason"] == "crash"
    result = runner.invoke(app, ["check", str(REAL / "omlx-issue-410.log"), "-q"])
    assert result.exit_code == 1 and "macOS crash report" in result.stdout


def test_check_refuses_input_without_omlx_records() -> None:
    result = runner.invoke(app, ["check", str(EXAMPLE.parent / "os-history.txt")])
    assert result.exit_code == 2 and "does not look like an oMLX log" in result.stderr


@pytest.mark.slow
def test_counts_the_log_level_hides_are_unknown_not_zero() -> None:
    doc = json.loads(runner.invoke(app, ["timeline", str(EXAMPLE), "-q", "-f", "json"]).stdout)
    assert {s["requests_completed"] for s in doc["sessions"]} == {None}
    assert {s["engine_starts"] for s in doc["sessions"]} == {None}
    assert {w["requests_completed"] for w in doc["dead_windows"]} == {None}
    text = runner.invoke(app, ["timeline", str(EXAMPLE), "-q"]).stdout
    assert "requests completed not logged" in text


def test_time_window_checks() -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "--since", "2026-09-16", "--until", "2026-09-15"])
    assert result.exit_code == 2 and "is after --until" in result.stderr
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "--since", "2027-01-01"])
    assert result.exit_code == 0 and "no records between 2027-01-01 00:00:00 and the end" in result.stderr
    assert "the log spans 2026-06-20 12:07:22 → 2026-09-16 09:29:33" in result.stderr


@pytest.mark.slow
def test_a_closed_pipe_is_not_an_error() -> None:
    command = f"{sys.executable} -m omlx_logscan timeline {EXAMPLE} -q | head -1"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "oMLX log timeline" and "Traceback" not in result.stderr


def test_events_json_document_has_schema_and_accounting() -> None:
    result = runner.invoke(app, ["events", str(EXAMPLE), "-f", "json", "-q", "-k", "gpu_error"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["schema"] == "omlx-logscan/events/2"
    assert doc["header"]["lines"] == 2224 and doc["header"]["unparsed_lines"] == 0
    assert len(doc["events"]) == 36 and {e["kind"] for e in doc["events"]} == {"gpu_error"}


# The review of issue 14 (t21): a client that disconnects after a fault is its symptom, not service.
# The timeline called the fault absorbed while sessions and check called the lifetime crashed.
DISCONNECT_AFTER_A_FAULT = [
    "2026-09-19 16:00:00,000 - omlx.server - INFO - [-] - Chat completion: model=m, 10 tokens in 1.00s "
    "(10.0 tok/s), prompt: 5",
    "2026-09-19 16:00:01,000 - omlx.engine_core - ERROR - [-] - Engine loop error: [METAL] Command buffer "
    "execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
    "2026-09-19 16:00:10,000 - omlx.server - INFO - [-] - Client disconnected during streaming (is_disconnected), "
    "cancelling",
    "2026-09-19 16:00:30,000 - omlx.server - INFO - [-] - CORS origins: ['*']",
    "2026-09-19 16:00:30,100 - omlx.server - INFO - [-] - Server initialized with 3 models",
]


def test_timeline_sessions_and_check_agree_that_a_disconnect_after_a_fault_is_no_service(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join(DISCONNECT_AFTER_A_FAULT) + "\n")
    timeline = json.loads(runner.invoke(app, ["timeline", str(log), "-f", "json", "-q"]).stdout)
    sessions = json.loads(runner.invoke(app, ["sessions", str(log), "-f", "json", "-q"]).stdout)
    check = json.loads(runner.invoke(app, ["check", str(log), "-f", "json", "-q"]).stdout)
    assert [f["outcome"] for f in timeline["faults"]] == ["crash"]
    assert [s["end_reason"] for s in sessions["sessions"]] == ["crash", "eof"]
    assert [(f["rule"], f["line"], f["session"]) for f in check["findings"]] == [("crash", 2, 1)]
    text = runner.invoke(app, ["timeline", str(log)]).output
    assert "process crashed" in text and "absorbed" not in text
