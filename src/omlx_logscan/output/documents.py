"""JSON documents: each command's machine-readable result."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

from omlx_logscan import __version__
from omlx_logscan.analysis.attribution import WhyFaulted, explain
from omlx_logscan.analysis.bounds import CONFIDENCE, Bounds
from omlx_logscan.analysis.check import RULES, CheckResult
from omlx_logscan.analysis.model import Analysis
from omlx_logscan.output.phrases import crash_rows, escalation_rows, summary
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.model import EventStream, header

if TYPE_CHECKING:
    pass


BOUNDS_SCHEMA = "omlx-logscan/bounds/1"


# -- documents and renderers ------------------------------------------------------------------------


def bounds_document(bounds: Bounds, analysis: Analysis) -> dict[str, Any]:
    """The ``bounds --format json`` document."""
    return {
        "schema": BOUNDS_SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        "header": header(analysis.stream),
        "by": bounds.by.value,
        "confidence": CONFIDENCE,
        "os_history": bounds.history.as_dict() if bounds.history else None,
        "rows": [row.as_dict() for row in bounds.rows],
        "sentence": bounds.sentence(),
    }


CHECK_SCHEMA = "omlx-logscan/check/1"


# -- outputs -------------------------------------------------------------------------------------


def check_document(result: CheckResult) -> dict[str, Any]:
    """The ``check --format json`` document (schema omlx-logscan/check/1)."""
    return {
        "schema": CHECK_SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        "status": "findings" if result.findings else "clean",
        "exit_code": result.exit_code,
        "input": result.input,
        "rules": [
            {
                "rule": rule,
                "title": RULES[rule][0],
                "finds": RULES[rule][1],
                "threshold": result.rules.threshold(rule),
                "findings": result.count(rule),
            }
            for rule in result.rules.names
        ],
        "findings": [f.as_dict() for f in result.findings],
    }


def events_document(stream: EventStream, events: Iterable[Event]) -> dict[str, Any]:
    """The ``events --format json`` document: the line accounting, then the events."""
    return {
        "schema": "omlx-logscan/events/1",
        "generator": f"omlx-logscan {__version__}",
        "header": header(stream),
        "events": [event.as_dict() for event in events],
    }


def timeline_document(
    analysis: Analysis, os_versions: dict[int, str] | None = None, why: WhyFaulted | None = None
) -> dict[str, Any]:
    """The ``timeline --format json`` document; every fault carries its attribution."""
    document = {
        "schema": "omlx-logscan/timeline/1",
        "generator": f"omlx-logscan {__version__}",
        "header": header(analysis.stream),
        "sessions": [s.as_dict() for s in analysis.sessions],
        "faults": [f.as_dict() for f in analysis.faults],
        "dead_windows": [w.as_dict() for w in analysis.dead_windows],
        "signatures": [s.as_dict() for s in analysis.signatures],
        "escalation": escalation_rows(analysis, os_versions),
        "crashes": crash_rows(analysis),
        "summary": summary(analysis),
    }
    (why or explain(analysis)).extend_document(document)
    return document


def write_json(document: Any, out: IO[str]) -> None:
    json.dump(document, out, indent=2, ensure_ascii=False, default=str)
    out.write("\n")
