"""The words of ``check`` findings: each names the session it is about (not a "process")."""

from __future__ import annotations

from pathlib import Path

from conftest import EXAMPLE, analysis_of
from omlx_logscan.analysis.check import Rules, run_check
from omlx_logscan.output.findings import check_headline, finding_message, finding_title
from synthetic import busy, start, write_log


def test_a_fault_finding_names_its_session() -> None:
    result = run_check(analysis_of(EXAMPLE), Rules(("penalty_box",)))
    assert [finding_message(f) for f in result.findings] == [
        "2026-09-15 22:20:21 Timeout → SubmissionsIgnored in the same second (session 157)",
        "2026-09-16 02:07:02 Timeout → SubmissionsIgnored in the same second (session 159)",
    ]
    assert {finding_title(f) for f in result.findings} == {"GPU penalty box"}
    assert check_headline(result) == "logscan check: 2 findings (penalty_box 2)"


def test_a_crash_without_a_fault_names_its_session(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "server.log", [start(0), busy(1), "libc++abi: terminating due to uncaught exception", start(5)]
    )
    result = run_check(analysis_of(log), Rules(("crash",)))
    (finding,) = result.findings
    assert finding.rule == "crash" and finding.session == 1
    assert finding_message(finding) == (
        "session 1 ended without an orderly stop; its last record is at 2026-09-15 20:01:00"
    )
