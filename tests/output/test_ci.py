"""The CI formats of ``logscan check``: GitHub annotations and step summary, JUnit XML (validated by
Jenkins' junit-10.xsd) and SARIF 2.1.0 (validated by the OASIS JSON Schema)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import xmlschema
from typer.testing import CliRunner

from conftest import EXAMPLE, FIXTURES, ROOT
from omlx_logscan.cli.app import app
from omlx_logscan.output.ci import escape_data, escape_property
from omlx_logscan.output.markup import code_span
from synthetic import STILL_DEAD, absorbed_faults, busy, start, timeout, write_log

runner = CliRunner()
JUNIT_XSD = xmlschema.XMLSchema10(FIXTURES / "junit-10.xsd")
SARIF_SCHEMA = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
ANNOTATION = re.compile(r"^::error file=(?P<file>[^,]+),line=(?P<line>\d+),title=(?P<title>[^:]+)::(?P<message>.+)$")


def check(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["check", "-q", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def valid_junit(text: str) -> ET.Element:
    JUNIT_XSD.validate(text)  # raises with the schema's own words when the file does not conform
    return ET.fromstring(text)


def valid_sarif(text: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(text)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(document)
    return document


# -- GitHub annotations and the step summary ---------------------------------------------------------------


def test_one_annotation_per_fault_names_every_rule_it_broke() -> None:
    code, out, _ = check(str(EXAMPLE), "--format", "github")
    assert code == 1
    errors = [ANNOTATION.match(line) for line in out.splitlines() if line.startswith("::error")]
    assert len(errors) == 3 and all(errors)  # 5 findings: the absorbed faults' one, and 2 penalty-box faults
    first = errors[1]
    assert first is not None and first["line"] == "1852"
    assert first["title"] == "GPU penalty box%2C Dead engine (penalty_box%2C dead_engine)"  # GitHub shows ", "
    penalty, dead = first["message"].split("%0A")
    assert penalty.startswith("penalty_box: 2026-09-15 22:20:21 Timeout → SubmissionsIgnored")
    assert dead.startswith("dead_engine: engine generation-dead from 2026-09-15 22:20:21")
    assert out.splitlines()[-1] == "logscan check: 5 findings (penalty_box 2, dead_engine 2, gpu_fault 1)"


def test_ten_annotations_reach_ten_faults(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", absorbed_faults(1, 12))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    code, out, _ = check(
        str(log),
        "--fail-on",
        "timeout,any_gpu_error",
        "--format",
        "github",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert code == 1
    lines = out.splitlines()
    errors = [ANNOTATION.match(line) for line in lines if line.startswith("::error")]
    assert len(errors) == 10 and all(errors)
    assert len({e["line"] for e in errors if e}) == 10  # ten different faults, not one fault twice
    first = errors[0]
    assert first is not None and first["file"] == str(log) and first["line"] == "2"
    assert first["title"] == "GPU timeout%2C GPU error (timeout%2C any_gpu_error)"
    assert lines[10].startswith("::notice title=logscan check::2 more faults not annotated")
    written = summary.read_text()
    assert written.startswith("earlier step\n## logscan check: 24 findings")
    assert "| `any_gpu_error` | **fail** | 12 |" in written


def test_github_escaping(tmp_path: Path) -> None:
    assert escape_property("a,b:c%d\r\ne") == "a%2Cb%3Ac%25d%0D%0Ae"
    assert escape_data("a,b:c%d\ne") == "a,b:c%25d%0Ae"
    log = write_log(tmp_path / "odd,name:1.log", STILL_DEAD)
    code, out, _ = check(str(log), "--format", "github")
    assert code == 1
    assert f"::error file={tmp_path!s}/odd%2Cname%3A1.log,line=3," in out
    assert "title=Engine still dead at the end of the log%2C GPU penalty box (dead_engine%2C penalty_box)::" in out


def test_github_without_findings_prints_only_the_headline(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", [start(0), start(1)])
    code, out, _ = check(str(log), "--format", "github")
    assert code == 0 and out.startswith("logscan check: no findings") and "::" not in out


def test_incidents_under_the_fail_level_are_warnings_that_fail_nothing(tmp_path: Path) -> None:
    """A 4xx answer is a rejected request (a warning): the default check lists it, exit 0; with
    --fail-level warning it fails."""
    log = write_log(tmp_path / "server.log", [start(0), busy(1)])  # busy: a 400 answered
    code, out, _ = check(str(log), "--format", "github")
    (warning,) = [line for line in out.splitlines() if line.startswith("::warning")]
    assert code == 0 and "title=Rejected request::rejected: " in warning and "→ 400" in warning
    code, out, _ = check(str(log), "--fail-level", "warning")
    assert code == 1 and out.startswith("logscan check: 1 finding (rejected 1)")
    target = tmp_path / "check.xml"
    assert check(str(log), "--format", "junit", "-o", str(target))[0] == 0
    (prop,) = valid_junit(target.read_text(encoding="utf-8")).iter("property")
    assert prop.get("name") == "warning.rejected" and "→ 400" in (prop.get("value") or "")
    results = valid_sarif(check(str(log), "--format", "sarif")[1])["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("rejected", "warning")]


def test_github_annotations_name_files_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    log = write_log(tmp_path / "logs" / "server.log", STILL_DEAD)
    result = runner.invoke(app, ["check", str(log), "--format", "github"], env={"GITHUB_WORKSPACE": str(tmp_path)})
    assert result.exit_code == 1
    assert "::error file=logs/server.log,line=" in result.stdout


def test_exit_2_in_text_or_json_prints_only_the_error(tmp_path: Path) -> None:
    for fmt in ("text", "json"):
        code, out, err = check(str(tmp_path / "missing.log"), "--format", fmt)
        assert (code, out) == (2, "") and err.startswith("logscan: error: ")


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github"])
def test_step_summary_is_written_with_any_format(tmp_path: Path, fmt: str) -> None:
    summary = tmp_path / "summary.md"
    code, out, _ = check(str(EXAMPLE), "--format", fmt, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 1 and out
    assert summary.read_text().startswith("## logscan check: 5 findings")


def test_unwritable_step_summary_is_a_warning_not_exit_2(tmp_path: Path) -> None:
    code, out, err = check(str(EXAMPLE), "--format", "json", env={"GITHUB_STEP_SUMMARY": str(tmp_path)})  # a folder
    assert code == 1 and json.loads(out)["status"] == "findings"
    assert err.startswith(f"logscan: warning: GITHUB_STEP_SUMMARY {tmp_path}: cannot append the summary (")


def test_summary_fences_a_file_name_with_backticks(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a`b|c.log", STILL_DEAD)
    summary = tmp_path / "summary.md"
    check(str(log), env={"GITHUB_STEP_SUMMARY": str(summary)})
    text = summary.read_text()
    assert f"Input: ``{log}``" in text  # outside the table: no escaped pipe
    assert f"| ``{str(log).replace('|', chr(92) + '|')}:3`` |" in text  # inside it: the pipe escaped
    assert code_span("`x`") == "`` `x` ``" and code_span("a``b") == "```a``b```"


# -- JUnit ---------------------------------------------------------------------------------------------------


def test_junit_has_a_case_per_finding_and_per_quiet_rule(tmp_path: Path) -> None:
    target = tmp_path / "check.xml"
    code, out, _ = check(str(EXAMPLE), "--format", "junit", "--max-faults", "10", "-o", str(target))
    assert code == 1 and out == "logscan check: 5 findings (penalty_box 2, dead_engine 2, gpu_fault 1)\n"
    root = valid_junit(target.read_text(encoding="utf-8"))
    counts = (root.get("tests"), root.get("failures"), root.get("errors"))
    assert root.tag == "testsuites" and counts == ("13", "5", "0")
    suites = root.findall("testsuite")
    assert [s.get("file") for s in suites] == [str(EXAMPLE)]
    cases = suites[0].findall("testcase")
    assert {case.get("classname") for case in cases} == {str(EXAMPLE)}
    names = [case.get("name") for case in cases]
    assert names == [
        "gpu_fault: GPU fault, line 1814 (2026-09-15 20:19:38)",
        "penalty_box: GPU penalty box, line 1852 (2026-09-15 22:20:21)",
        "dead_engine: Dead engine, line 1852 (2026-09-15 22:20:21)",
        "penalty_box: GPU penalty box, line 2057 (2026-09-16 02:07:02)",
        "dead_engine: Dead engine, line 2057 (2026-09-16 02:07:02)",
        *("crash", "unparsed_gpu_error", "fatal_exit", "error", "wedge", "reboot", "load_failure", "max_faults"),
    ]
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("type") == "penalty_box"
    assert failure.get("message", "").startswith("2026-09-15 22:20:21 Timeout → SubmissionsIgnored")
    assert (failure.text or "").startswith(f"{EXAMPLE}:1852: ")
    assert all(case.find("failure") is None for case in cases[5:])


def test_junit_test_ids_differ_between_files(tmp_path: Path) -> None:
    logs = [write_log(tmp_path / name, STILL_DEAD) for name in ("host-a.log", "host-b.log")]
    code, out, _ = check(*map(str, logs), "--format", "junit")
    assert code == 1
    root = valid_junit(out)
    ids = [(case.get("classname"), case.get("name")) for case in root.iter("testcase")]
    assert len(ids) == len(set(ids)) == 2 * 10  # dead_engine and penalty_box fail, the other 8 default rules pass
    assert [suite.get("file") for suite in root.iter("testsuite")] == list(map(str, logs))


def test_junit_survives_control_characters_in_names(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server\x01\x1b.log", [start(0), timeout(1), busy(2)])  # a name XML cannot hold
    code, out, _ = check(str(log), "--fail-on", "timeout", "--format", "junit")
    assert code == 1
    failure = valid_junit(out).find("testsuite/testcase/failure")
    assert failure is not None and failure.text is not None and "server\ufffd\ufffd.log" in failure.text


@pytest.mark.parametrize("fmt", ["junit", "sarif", "github"])
def test_exit_2_still_writes_a_file_that_says_why(tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"check.{fmt}"
    code, _, err = check(str(tmp_path / "missing.log"), "--format", fmt, "-o", str(target))
    assert code == 2 and err.startswith("logscan: error: ")
    reason = err.removeprefix("logscan: error: ").strip()
    text = target.read_text(encoding="utf-8")
    if fmt == "github":
        assert text == f"::error title=logscan check could not run::{reason}\n"
    elif fmt == "junit":
        root = valid_junit(text)
        assert (root.get("tests"), root.get("errors"), root.get("failures")) == ("1", "1", "0")
        error = root.find("testsuite/testcase/error")
        assert error is not None and error.get("message") == reason
    else:
        run = valid_sarif(text)["runs"][0]
        assert run["results"] == []
        invocation = run["invocations"][0]
        assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
        assert invocation["toolExecutionNotifications"][0]["message"]["text"] == reason


# -- SARIF ---------------------------------------------------------------------------------------------------


def test_sarif_of_the_example_is_valid_with_a_result_per_finding() -> None:
    code, out, _ = check(str(EXAMPLE), "--format", "sarif", "--sarif-root", str(ROOT))
    assert code == 1
    run = valid_sarif(out)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [
        *("penalty_box", "dead_engine", "crash", "unparsed_gpu_error", "fatal_exit", "error", "wedge", "gpu_fault"),
        *("reboot", "load_failure", "rejected", "memory_pressure"),  # the last two: the warnings' rules
    ]
    assert [rule["defaultConfiguration"]["level"] for rule in rules[-3:]] == ["error", "warning", "warning"]
    assert rules[0]["shortDescription"]["text"] == "GPU penalty box"
    results = run["results"]
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in results] == [
        ("gpu_fault", 7, "error"),
        ("penalty_box", 0, "error"),
        ("dead_engine", 1, "error"),
        ("penalty_box", 0, "error"),
        ("dead_engine", 1, "error"),
        ("rejected", 10, "warning"),
        ("memory_pressure", 11, "warning"),
    ]
    location = results[1]["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "examples/omlx-3706.log", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1852},
    }
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"
    assert len({r["partialFingerprints"]["logscanFinding/v1"] for r in results}) == 7
    failed = [r for r in results if r["level"] == "error"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+[+-]\d\d:\d\d", r["properties"]["time"]) for r in failed)


def test_sarif_names_a_log_outside_the_root_by_absolute_uri(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    log = write_log(tmp_path / "soak log.txt", STILL_DEAD)
    code, out, _ = check(str(log), "--format", "sarif", "--sarif-root", str(tmp_path / "repo"))
    assert code == 1
    artifact = valid_sarif(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": log.as_uri()} and "%20" in artifact["uri"]


def test_sarif_of_a_clean_log_has_no_failed_results(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", [start(0), busy(1)])
    code, out, _ = check(str(log), "--format", "sarif")
    assert code == 0
    run = valid_sarif(out)["runs"][0]
    assert [r["level"] for r in run["results"]] == ["warning"]  # the 400 it answered: a rejected request
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]


@pytest.mark.slow
def test_sarif_and_junit_from_a_real_process(tmp_path: Path) -> None:
    """As CI runs it: ``python -m omlx_logscan``, the default --sarif-root being the current folder."""
    shutil.copy(EXAMPLE, tmp_path / "omlx.log")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for fmt, target in (("sarif", "out.sarif"), ("junit", "out.xml")):
        done = subprocess.run(
            [sys.executable, "-m", "omlx_logscan", "check", "omlx.log", "-q", "-f", fmt, "-o", target],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1 and done.stderr == ""
    sarif = valid_sarif((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert uris == {"omlx.log"}
    assert valid_junit((tmp_path / "out.xml").read_text(encoding="utf-8")).get("failures") == "5"


def test_the_step_summary_of_an_empty_window_passes_no_rule() -> None:
    from datetime import datetime

    from conftest import analysis_of
    from omlx_logscan.analysis.check import Rules, run_check
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.output.ci import summary_markdown
    from omlx_logscan.stream.window import within

    empty = within(analysis_of(EXAMPLE).stream, datetime(2030, 1, 1), None)
    result = run_check(analyze(empty), Rules(("penalty_box", "crash")))
    shown = summary_markdown(result)
    assert "nothing to check, no records" in shown
    assert "| `penalty_box` | no records | 0 |" in shown and "| pass |" not in shown
