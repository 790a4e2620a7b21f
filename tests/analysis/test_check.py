"""logscan check: the rules, every exit code, the text and JSON outputs (CI formats: tests/output/test_ci.py)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE
from omlx_logscan.cli.app import app
from omlx_logscan.cli.values import duration_seconds
from omlx_logscan.errors import LogscanError
from synthetic import SHORT_DEAD, STILL_DEAD, absorbed_faults, busy, start, write_log

runner = CliRunner()


def check(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["check", "-q", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


# -- exit codes -----------------------------------------------------------------------------------


def test_clean_log_exits_0(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", [start(0), busy(5), busy(10)])
    code, out, _ = check(str(log))
    assert code == 0
    assert "no findings" in out and "penalty_box" in out


def test_penalty_box_exits_1_and_points_at_the_fault() -> None:
    code, out, _ = check(str(EXAMPLE))
    assert code == 1
    assert f"{EXAMPLE}:1852: penalty_box: 2026-09-15 22:20:21 Timeout → SubmissionsIgnored" in out
    assert f"{EXAMPLE}:2057: dead_engine:" in out
    assert "5 findings (penalty_box 2, dead_engine 2, gpu_fault 1)" in out


def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, out, err = check(str(tmp_path / "absent.log"))
    assert code == 2 and "no such file" in err and out == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-on", "penalty_box,bogus"], "--fail-on bogus: unknown rule"),
        (["--max-dead", "10"], "not a duration"),
        (["--fail-on", ""], "nothing to check"),
        (["--max-faults", "-1"], "--max-faults"),
        (["--format", "yaml"], "--format"),
    ],
)
def test_bad_option_exits_2(args: list[str], message: str) -> None:
    code, _, err = check(str(EXAMPLE), *args)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_unreadable_part_of_the_input_exits_2(tmp_path: Path) -> None:
    whole = gzip.compress(("\n".join(absorbed_faults(20, 5)) + "\n").encode())
    (tmp_path / "server.log.2026-09-14.gz").write_bytes(whole[: len(whole) // 2])
    write_log(tmp_path / "server.log", [start(0), busy(5)])
    code, _, err = check(str(tmp_path))
    assert code == 2 and "cannot check the whole input" in err


# -- rules ------------------------------------------------------------------------------------------


def findings_of(*args: str) -> tuple[int, dict[str, object]]:
    code, out, _ = check(*args, "--format", "json")
    return code, json.loads(out)


def test_still_dead_at_the_end_is_the_worst_case(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", STILL_DEAD)
    code, doc = findings_of(str(log), "--max-dead", "10h")
    assert code == 1
    findings = doc["findings"]
    assert isinstance(findings, list)
    worst = findings[0]
    assert worst["rule"] == "dead_engine" and worst["worst_case"] is True
    assert worst["title"] == "Engine still dead at the end of the log"
    assert "STILL DEAD when the log ends" in worst["message"] and worst["line"] == 3


def test_max_dead_counts_only_longer_windows(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", SHORT_DEAD)
    assert check(str(log), "--fail-on", "dead_engine", "--max-dead", "15m")[0] == 0
    code, doc = findings_of(str(log), "--fail-on", "dead_engine", "--max-dead", "5m")
    assert code == 1
    assert doc["rules"] == [
        {
            "rule": "dead_engine",
            "title": "Dead engine",
            "finds": "a dead-engine window (with --max-dead: one that lasted longer)",
            "threshold": "longer than 5 min",
            "findings": 1,
        }
    ]
    # --max-dead alone implies the dead_engine rule
    assert check(str(log), "--fail-on", "timeout", "--max-dead", "5m")[0] == 1
    assert check(str(log), "--fail-on", "out_of_memory", "--max-dead", "1h")[0] == 0


def test_max_faults(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", absorbed_faults(1, 3))
    assert check(str(log), "--fail-on", "", "--max-faults", "3")[0] == 0
    code, doc = findings_of(str(log), "--fail-on", "", "--max-faults", "2")
    assert code == 1
    findings = doc["findings"]
    assert isinstance(findings, list) and len(findings) == 1
    assert findings[0]["rule"] == "max_faults" and findings[0]["line"] == 6  # the third fault


@pytest.mark.parametrize(
    ("rule", "count"),
    [("any_gpu_error", 6), ("timeout", 6), ("submissions_ignored", 2), ("out_of_memory", 0), ("crash", 0)],
)
def test_each_rule_on_the_example(rule: str, count: int) -> None:
    code, doc = findings_of(str(EXAMPLE), "--fail-on", rule)
    assert code == (1 if count else 0)
    rules = doc["rules"]
    assert isinstance(rules, list) and rules[0]["findings"] == count


def test_json_document() -> None:
    code, doc = findings_of(str(EXAMPLE))
    assert code == 1
    assert doc["schema"] == "omlx-logscan/check/3"
    assert doc["status"] == "findings" and doc["exit_code"] == 1
    assert set(doc) == {
        *("schema", "generator", "tz", "time_notes", "status", "exit_code", "input"),
        *("fail_level", "rules", "findings", "warnings"),
    }
    assert doc["fail_level"] == "error"
    assert [(w["kind"], w["line"]) for w in doc["warnings"]] == [("rejected", 7), ("memory_pressure", 8)]
    findings = doc["findings"]
    assert isinstance(findings, list)
    assert set(findings[0]) == {"rule", "title", "message", "time", "source", "line", "session", "worst_case"}
    assert [f["line"] for f in findings] == [1814, 1852, 1852, 2057, 2057]  # the absorbed Timeouts: one gpu_fault


def test_duration_option_values() -> None:
    assert duration_seconds("10m", "--max-dead") == 600
    assert duration_seconds("1h30m", "--max-dead") == 5400
    assert duration_seconds("90s", "--max-dead") == 90
    assert duration_seconds("2 d", "--max-dead") == 172800
    assert duration_seconds("1.5hours", "--max-dead") == 5400
    for bad in ("10", "m", "10x", "", "10ms", "0m"):
        with pytest.raises(LogscanError):
            duration_seconds(bad, "--max-dead")
