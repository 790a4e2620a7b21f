"""SARIF 2.1.0 of ``check``, for GitHub code scanning (``github/codeql-action/upload-sarif``) and
other SARIF viewers: one rule per check rule, one result per finding at its file and line.

A log inside the ``root`` folder (the repository checkout) is named relative to it, under the
``%SRCROOT%`` base, so code scanning links the result to the file; a log elsewhere gets an absolute
``file://`` URI. A check that could not run is a run with no results whose invocation failed and
says why.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from omlx_logscan import __version__
from omlx_logscan.analysis.check import CheckResult, Finding
from omlx_logscan.analysis.rules import RuleId
from omlx_logscan.analysis.trouble import Trouble
from omlx_logscan.errors import EXIT_INPUT
from omlx_logscan.output.findings import (
    finding_message,
    finding_title,
    rule_finds,
    rule_threshold,
    rule_title,
    warning_message,
    warning_title,
)

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


SARIF_VERSION = "2.1.0"


ROOT_BASE = "%SRCROOT%"


FINGERPRINT = "logscanFinding/v1"


def _driver(rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": "logscan",
        "fullName": f"omlx-logscan {__version__}",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": rules,
    }


def _rule(result: CheckResult, rule: RuleId, level: str = "error") -> dict[str, Any]:
    threshold = rule_threshold(result.rules, rule)
    finds = rule_finds(rule) + (f" ({threshold})" if threshold else "")
    return {
        "id": rule,
        "name": "".join(word.capitalize() for word in rule.split("_")),
        "shortDescription": {"text": rule_title(rule)},
        "fullDescription": {"text": finds[0].upper() + finds[1:] + "."},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["omlx", "gpu"]},
    }


def artifact_location(source: str, root: Path) -> dict[str, str]:
    """Where a log is: relative to ``root`` under ``%SRCROOT%`` when inside it, else an absolute URI."""
    path = Path(os.path.abspath(source))
    try:
        relative = path.relative_to(os.path.abspath(root))
    except ValueError:
        return {"uri": path.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": ROOT_BASE}


def _fingerprint(finding: Finding) -> str:
    """The same finding in a later run of the same log keeps its identity, whatever folder it was read from."""
    key = "\0".join([finding.rule, os.path.basename(finding.source or ""), finding.time or "", str(finding.line)])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _result(finding: Finding, index: int, root: Path, zoned: Callable[[str], str]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": "error",
        "message": {"text": f"{finding_title(finding)}: {finding_message(finding)}"},
    }
    if finding.source and finding.source != "<stdin>":
        location: dict[str, Any] = {"artifactLocation": artifact_location(finding.source, root)}
        if finding.line:
            location["region"] = {"startLine": finding.line}
        out["locations"] = [{"physicalLocation": location}]
    out["partialFingerprints"] = {FINGERPRINT: _fingerprint(finding)}
    time = zoned(finding.time) if finding.time else None  # with its offset, as every time in the JSON formats
    out["properties"] = {"time": time, "session": finding.session, "worstCase": finding.worst_case}
    return out


def _warning(item: Trouble, index: int, root: Path, sessions: int) -> dict[str, Any]:
    """An incident under the --fail-level: a result of level ``warning``, which fails nothing."""
    example = item.example
    out: dict[str, Any] = {
        "ruleId": item.kind,
        "ruleIndex": index,
        "level": "warning",
        "message": {"text": f"{warning_title(item)}: {warning_message(item, sessions)}"},
    }
    if example.source != "<stdin>":
        location = {"artifactLocation": artifact_location(example.source, root), "region": {"startLine": example.line}}
        out["locations"] = [{"physicalLocation": location}]
    key = "\0".join([item.kind, os.path.basename(example.source), item.template, str(example.line)])
    out["partialFingerprints"] = {FINGERPRINT: hashlib.sha256(key.encode()).hexdigest()[:32]}
    return out


def _log(run: dict[str, Any], out: IO[str]) -> None:
    document = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    json.dump(document, out, indent=2, ensure_ascii=False)
    out.write("\n")


def write_sarif(result: CheckResult, out: IO[str], root: Path) -> None:
    """The check as one SARIF run."""
    names = result.rules.names
    warned = [kind for kind in dict.fromkeys(item.kind for item in result.warnings) if kind not in names]
    zoned = result.stream.clock().zoned if result.stream is not None else str
    rules = [_rule(result, rule) for rule in names] + [_rule(result, kind, "warning") for kind in warned]
    every = [*names, *warned]
    run = {
        "tool": {"driver": _driver(rules)},
        "originalUriBaseIds": {ROOT_BASE: {"uri": Path(os.path.abspath(root)).as_uri().rstrip("/") + "/"}},
        "invocations": [{"executionSuccessful": True, "exitCode": result.exit_code}],
        "results": [_result(finding, names.index(finding.rule), root, zoned) for finding in result.findings]
        + [_warning(item, every.index(item.kind), root, result.sessions_read) for item in result.warnings],
    }
    _log(run, out)


def write_sarif_error(reason: str, out: IO[str]) -> None:
    """The SARIF of a check that could not run (exit 2): no results, and a failed invocation that says why."""
    invocation = {
        "executionSuccessful": False,
        "exitCode": EXIT_INPUT,
        "toolExecutionNotifications": [{"level": "error", "message": {"text": reason}}],
    }
    _log({"tool": {"driver": _driver([])}, "invocations": [invocation], "results": []}, out)
