"""The Errors part in every format, the summary's sentence, the rejected requests and ``check --fail-on error``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import REAL, ROOT, analysis_of, unwrapped
from omlx_logscan.analysis.failures import ANY_SHOWN, DETAIL, ErrorGroup, Template
from omlx_logscan.cli.app import app
from omlx_logscan.output.failures import NAMES_SHOWN, errors_sentence, sessions_phrase, when_phrase
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.lexicon import lexicon

runner = CliRunner()
STAMP = "2026-09-15 {} - {} - {} - [-] - {}\n"
HOME_PATH = "/Users/alice/.lmstudio/models/Crow-9B"
NO_WEIGHTS = f"no weights in {HOME_PATH}"
NO_STREAM = "There is no Stream(gpu, 0) in current thread."


def failing_log(tmp_path: Path) -> Path:
    """Two engine-loop errors, an HTTP 500, two rejected requests and a warning that is no failure (oMLX
    writes it outside any exception handler)."""
    lines = [
        ("10:00:00,000", "omlx.server", "INFO", "CORS origins: ['*']"),
        ("10:00:05,000", "omlx.engine_core", "ERROR", f"Engine loop error: {NO_STREAM}"),
        ("10:00:06,000", "omlx.server", "WARNING", "POST /v1/chat/completions → 400: max_tokens must be at least 1"),
        ("10:00:07,000", "omlx.server", "WARNING", "POST /v1/messages → 422: messages: field required"),
        ("10:00:08,000", "omlx.server", "ERROR", f"POST /v1/chat/completions → 500 (unhandled): {NO_WEIGHTS}"),
        ("10:00:09,000", "omlx.engine_core", "ERROR", "Engine loop error: 'X' object has no attribute 'ndim'"),
        ("10:00:10,000", "omlx.engine_core", "WARNING", "Aborted 3 requests due to memory pressure"),
    ]
    log = tmp_path / "server.log"
    log.write_text("".join(STAMP.format(*parts) for parts in lines))
    return log


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "-q", "--tz", "UTC"])
    return result.exit_code, result.stdout


def test_the_text_timeline_has_an_errors_part_after_the_escalation(tmp_path: Path) -> None:
    code, out = run("timeline", str(failing_log(tmp_path)))
    assert code == 0
    lines = out.splitlines()
    part = lines[lines.index("Errors") + 1 : lines.index("Outages")]
    assert lines.index("Escalation") < lines.index("Errors")
    assert part == [
        f"  2026-09-15 10:00:05 … 10:00:09  2 × Engine loop error: {ANY_SHOWN}  (ERROR, session 1)",
        "      example  server.log:2: Engine loop error: There is no Stream(gpu, 0) in current thread.",
        "  2026-09-15 10:00:08             1 × POST /v1/chat/completions → 500  (ERROR, session 1)",
        f"      example  server.log:5: POST /v1/chat/completions → 500 (unhandled): no weights in {HOME_PATH}",
        "",
    ]
    summary = lines[lines.index("Summary") + 1]
    assert summary.endswith(
        " 3 other failures: 2 × Engine loop error, 1 × POST /v1/chat/completions → 500."
        " 2 requests rejected with HTTP 4xx (1 × 400, 1 × 422)."
    )


@pytest.mark.parametrize("paste", ["omlx-issue-3683.log", "omlx-issue-899.log"])
def test_a_log_without_other_failures_has_no_errors_part(paste: str) -> None:
    code, out = run("timeline", str(REAL / paste))
    assert code == 0
    assert "Errors" not in out.splitlines() and "other failure" not in out


def test_markdown_shows_the_part_and_escapes_the_placeholders_in_prose(tmp_path: Path) -> None:
    code, out = run("timeline", str(failing_log(tmp_path)), "-f", "markdown")
    assert code == 0
    headings = [line for line in out.splitlines() if line.startswith("###")]
    assert headings[:4] == ["### Incidents", "### Escalation", "### Errors", "### Outages"]
    section = out.split("### Errors\n", 1)[1].split("### Outages", 1)[0]
    assert f"2 × Engine loop error: {ANY_SHOWN}  (ERROR, session 1)" in section  # in a code block: as written
    assert "1 × POST /v1/chat/completions → 500" in out.split("### Summary", 1)[1]


def test_the_report_shows_the_part_with_the_log_s_text_redacted(tmp_path: Path) -> None:
    code, out = run("report", str(failing_log(tmp_path)))
    assert code == 0
    headings = [line for line in out.splitlines() if line.startswith("###")]
    assert headings.index("### Errors") == headings.index("### Escalation") + 1
    section = "\n".join(unwrapped(out.split("### Errors\n", 1)[1].split("\n### ", 1)[0]))
    assert "example  server.log:5: POST /v1/chat/completions → 500 (unhandled): no weights in ~/.lmstudio" in section
    assert "alice" not in "\n".join(unwrapped(out))
    code, out = run("report", str(failing_log(tmp_path)), "--no-redact")
    assert HOME_PATH in "\n".join(unwrapped(out.split("### Errors\n", 1)[1]))


def test_the_json_document_lists_the_groups_and_the_rejected_requests(tmp_path: Path) -> None:
    code, out = run("timeline", str(failing_log(tmp_path)), "-f", "json")
    assert code == 0
    document = json.loads(out)  # the autouse hook has validated it against the shipped schema
    answer = document["errors"][1]["entry"]
    assert lexicon().entry(answer).logger == "omlx.server"  # the message oMLX's server logs it with
    assert document["errors"][1] == {
        "template": "POST /v1/chat/completions → 500",
        "entry": answer,
        "level": "ERROR",
        "count": 1,
        "first": "2026-09-15T10:00:08.000+00:00",
        "last": "2026-09-15T10:00:08.000+00:00",
        "sessions": [1],
        "example": {
            "source": str(tmp_path / "server.log"),
            "line": 5,
            "message": f"POST /v1/chat/completions → 500 (unhandled): no weights in {HOME_PATH}",
        },
    }
    assert [group["count"] for group in document["errors"]] == [2, 1]
    assert document["rejected_requests"] == {"count": 2, "by_status": {"400": 1, "422": 1}}


def test_a_log_without_failures_has_empty_errors_in_json() -> None:
    code, out = run("timeline", str(REAL / "omlx-issue-899.log"), "-f", "json")
    assert code == 0
    document = json.loads(out)
    assert document["errors"] == [] and document["rejected_requests"] == {"count": 0, "by_status": {}}


def _group(text: str, count: int, sessions: list[int]) -> ErrorGroup:
    event = Event("error", "2026-09-15T10:00:00.000", "a.log", 1, "ERROR", None, text)
    return ErrorGroup(Template(text, None), [event] * count, sessions)


def test_the_summary_names_the_most_frequent_and_counts_the_rest(tmp_path: Path) -> None:
    errors = analysis_of(failing_log(tmp_path)).errors
    errors.groups = [_group(f"Failure {n}: {DETAIL}", n, [1]) for n in range(1, NAMES_SHOWN + 3)]
    assert errors_sentence(errors).startswith(
        " 28 other failures: 7 × Failure 7, 6 × Failure 6, 5 × Failure 5, 4 × Failure 4, 3 × Failure 3"
        " and 3 more of 2 other messages."
    )


def test_sessions_are_written_as_ranges() -> None:
    assert sessions_phrase([2]) == "session 2"
    assert sessions_phrase([1, 2, 3, 4, 7, 9, 10]) == "sessions 1–4, 7, 9–10"


def test_times_of_day_say_the_date_is_unknown() -> None:
    def undated(time_of_day: str | None) -> Event:
        return Event("error", None, "a.log", 1, "ERROR", None, "Engine loop error: x", time_of_day=time_of_day)

    events = [undated("23:59:58.100"), undated("00:00:03.200")]
    group = ErrorGroup(Template(f"Engine loop error: {DETAIL}", None), events)
    assert when_phrase(group) == "23:59:58 … 00:00:03 (date unknown)"
    group.events = group.events[:1]
    assert when_phrase(group) == "23:59:58 (date unknown)"
    group.events = [undated(None)]
    assert when_phrase(group) == "(untimed)"


# -- check --fail-on error --------------------------------------------------------------------------


def test_check_fails_on_error_with_one_finding_per_template(tmp_path: Path) -> None:
    log = failing_log(tmp_path)
    result = runner.invoke(app, ["check", "-q", str(log), "--fail-on", "error", "-f", "json"])
    assert result.exit_code == 1
    findings = json.loads(result.stdout)["findings"]
    assert [(f["rule"], f["line"], f["session"], f["title"]) for f in findings] == [
        ("error", 2, 1, "oMLX error"),
        ("error", 5, 1, "oMLX error"),
    ]
    when = "2026-09-15 10:00:05 … 10:00:09"
    assert findings[0]["message"] == f"{when}: 2 × Engine loop error: {ANY_SHOWN} (session 1)"


def test_check_fails_on_errors_by_default_but_not_on_rejected_requests(tmp_path: Path) -> None:
    """The default --fail-level error fails the failed log's errors; a 422 (oMLX's answer to a bad
    request body) is a rejected request: listed as a warning, exit 0."""
    assert runner.invoke(app, ["check", "-q", str(failing_log(tmp_path))]).exit_code == 1
    assert runner.invoke(app, ["check", "-q", str(failing_log(tmp_path)), "--fail-on", "crash"]).exit_code == 0
    rejected = runner.invoke(app, ["check", "-q", str(REAL / "omlx-issue-1503.log")])
    assert rejected.exit_code == 0 and "warning: " in rejected.stdout and ": rejected: " in rejected.stdout
    assert runner.invoke(app, ["check", "-q", str(REAL / "omlx-issue-1503.log"), "--fail-on", "error"]).exit_code == 0


@pytest.mark.slow
def test_check_fail_on_error_as_a_real_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "omlx_logscan", "check", "-q", "--fail-on", "error"]
    failed = subprocess.run([*command, str(REAL / "omlx-issue-943.log")], capture_output=True, text=True, env=env)
    assert failed.returncode == 1, failed.stderr
    assert "omlx-issue-943.log:1: error: 2026-04-24 21:49:12: 1 × Engine loop error: <…>" in failed.stdout
    clean = subprocess.run([*command, str(REAL / "omlx-issue-899.log")], capture_output=True, text=True, env=env)
    assert clean.returncode == 0, clean.stderr
