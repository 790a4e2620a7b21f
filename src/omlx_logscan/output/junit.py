"""JUnit XML of ``check``, valid against Jenkins' ``junit-10.xsd`` (the schema CI test reporters follow).

One test suite per input file (``file=`` names it; the suite and its cases are ``host/file`` when the
host is known, so two Macs' runs of the same file are told apart), with a failed test case per finding in that
file and a passing one per rule that found nothing there, so a test history tracks each rule of
each file. Findings that point at no file get a suite of their own. A check that could not run
is one suite with one errored case that says why, so a reporter shows a failure, not nothing.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import IO

from omlx_logscan.analysis.check import CheckResult, Finding
from omlx_logscan.output.findings import finding_message, finding_title, warning_message
from omlx_logscan.timeutil import human_time

SUITE = "logscan check"


_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """Characters XML 1.0 cannot hold (escape codes, NUL) become U+FFFD."""
    return _XML_INVALID.sub("\ufffd", text)


def _places(result: CheckResult) -> Iterator[tuple[str | None, list[Finding]]]:
    """Each input file with the findings that point into it, in input order; findings that point at no
    file come last, under None."""
    files: dict[str | None, list[Finding]] = {name: [] for name in result.input["files"]}
    for finding in result.findings:
        files.setdefault(finding.source, []).append(finding)
    yield from ((name, found) for name, found in files.items() if name is not None)
    if files.get(None):
        yield None, files[None]


def case_name(finding: Finding) -> str:
    """A finding's test name: its rule, title, line and time, e.g. ``penalty_box: GPU penalty box, line
    1852 (2026-09-15 22:20:21)``."""
    where = f", line {finding.line}" if finding.line else ""
    return f"{finding.rule}: {finding_title(finding)}{where} ({human_time(finding.time)})"


def _suite(parent: ET.Element, name: str, file: str | None, cases: int, failures: int, errors: int) -> ET.Element:
    counts = {"tests": str(cases), "failures": str(failures), "errors": str(errors), "skipped": "0", "time": "0"}
    attributes = {"name": _xml_text(name), **counts, **({"file": _xml_text(file)} if file else {})}
    return ET.SubElement(parent, "testsuite", attributes)


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", {"classname": _xml_text(classname), "name": _xml_text(name), "time": "0"})


def _write(root: ET.Element, out: IO[str]) -> None:
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")


def _totals(root: ET.Element) -> None:
    for key in ("tests", "failures", "errors"):
        root.set(key, str(sum(int(suite.get(key, "0")) for suite in root.iter("testsuite"))))


def write_junit(result: CheckResult, out: IO[str]) -> None:
    """The check as JUnit XML: a failed case per finding, a passing case per rule and file without one."""
    root = ET.Element("testsuites", {"name": SUITE, "time": "0"})
    host = result.stream.host if result.stream is not None else None
    for file, found in _places(result):
        # The host and file are the class: test ids differ from file to file and from Mac to Mac.
        place = file or f"{SUITE} (no file)"
        classname = f"{host}/{place}" if host else file or SUITE
        quiet = [rule for rule in result.rules.names if file and not any(f.rule == rule for f in found)]
        suite = _suite(root, f"{host}/{place}" if host else place, file, len(found) + len(quiet), len(found), 0)
        for finding in found:
            message = finding_message(finding)
            failure = ET.SubElement(
                _case(suite, classname, case_name(finding)),
                "failure",
                {"type": finding.rule, "message": _xml_text(message)},
            )
            failure.text = _xml_text(f"{finding.source or '?'}:{finding.line or '?'}: {message}")
        for rule in quiet:
            _case(suite, classname, rule)
        warned = [item for item in result.warnings if item.example.source == file]
        if warned:  # under the --fail-level: told as the suite's properties, no failure
            properties = ET.Element("properties")
            for item in warned:
                value = f"{item.example.source}:{item.example.line}: {warning_message(item, result.sessions_read)}"
                ET.SubElement(properties, "property", {"name": f"warning.{item.kind}", "value": _xml_text(value)})
            suite.insert(0, properties)
    _totals(root)
    _write(root, out)


def write_junit_error(reason: str, out: IO[str]) -> None:
    """The JUnit file of a check that could not run (exit 2): one errored case that says why."""
    root = ET.Element("testsuites", {"name": SUITE, "time": "0"})
    suite = _suite(root, SUITE, None, 1, 0, 1)
    error = ET.SubElement(_case(suite, SUITE, "the input could be checked"), "error", {"type": "exit 2"})
    error.set("message", _xml_text(reason))
    error.text = _xml_text(f"logscan check could not check the input: {reason}")
    _totals(root)
    _write(root, out)
