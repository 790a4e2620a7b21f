"""JUnit test ids name the host when it is known (``host/file``), so the same file checked on two Macs
gives two histories; validated against Jenkins' junit-10.xsd."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import xmlschema
from typer.testing import CliRunner

from conftest import FIXTURES
from omlx_logscan.analysis.rules import DEFAULT_FAIL_LEVEL, DEFAULT_RULES, level_rules
from omlx_logscan.cli.app import app
from synthetic import STILL_DEAD, write_log

runner = CliRunner()
JUNIT_XSD = xmlschema.XMLSchema10(FIXTURES / "junit-10.xsd")


def junit(*args: str) -> ET.Element:
    result = runner.invoke(app, ["check", "-q", "--format", "junit", *args])
    assert result.exit_code == 1, result.output
    JUNIT_XSD.validate(result.stdout)
    return ET.fromstring(result.stdout)


def test_the_host_prefixes_each_case_and_suite_and_the_file_stays_the_file(tmp_path: Path) -> None:
    log = str(write_log(tmp_path / "server.log", STILL_DEAD))
    ids = {}
    for host in ("mac-01", "mac-02"):
        root = junit(log, "--host", host)
        suite = root.find("testsuite")
        assert suite is not None and suite.get("name") == f"{host}/{log}" and suite.get("file") == log
        cases = list(root.iter("testcase"))
        assert {case.get("classname") for case in cases} == {f"{host}/{log}"}
        ids[host] = {(case.get("classname"), case.get("name")) for case in cases}
    rules = len({*DEFAULT_RULES, *level_rules(DEFAULT_FAIL_LEVEL)})  # a case per rule of the default set
    assert len(ids["mac-01"]) == rules and not ids["mac-01"] & ids["mac-02"]  # two Macs, two test histories


def test_without_a_host_the_class_is_the_file(tmp_path: Path) -> None:
    log = str(write_log(tmp_path / "server.log", STILL_DEAD))
    assert {case.get("classname") for case in junit(log).iter("testcase")} == {log}
