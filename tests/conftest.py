"""Shared paths and helpers for the test suite."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from omlx_logscan.analysis.investigation import investigation_of
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.output.documents import timeline_document
from omlx_logscan.output.phrases import crash_rows, summary
from omlx_logscan.output.sections import Section, timeline_sections
from omlx_logscan.output.wrap import CONTINUED
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.stream.read import read_events

# No test reads the real user's configuration or writes into its config folder (the redaction key):
# set before any test module copies the environment for its subprocesses.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="logscan-test-config-")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
REAL = FIXTURES / "real"
GENERATED = FIXTURES / "generated"
EXAMPLE = ROOT / "examples" / "omlx-3706.log"
# A routine WARNING line (format: second, text) and a GPU timeout fault, for small hand-made logs.
WARN = "2026-09-15 20:00:{:02d},000 - omlx.scheduler - WARNING - [-] - message {}\n"
TIMEOUT_LINE = (
    "2026-09-15 20:19:38,663 - omlx.engine_core - ERROR - [-] - Engine loop error: [METAL] Command buffer execution "
    "failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="write tests/golden's expected outputs again from today's (then review their git diff)",
    )


def unwrapped(text: str) -> list[str]:
    """The lines of a report with each log line that its code blocks wrap (``↪``) joined again."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.lstrip(" ").startswith(CONTINUED):
            lines[-1] += line.lstrip(" ").removeprefix(CONTINUED)
        else:
            lines.append(line)
    return lines


def bench_module(name: str) -> ModuleType:
    """A script of ``bench/`` (the log generators) as a module: the tests write their logs with them."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def stream_of(*paths: str | Path) -> EventStream:
    return read_events(resolve([str(p) for p in paths]))


def analysis_of(*paths: str | Path) -> Analysis:
    return analyze(stream_of(*paths))


def sections_of(analysis: Analysis, os_versions: dict[int, str] | None = None) -> list[Section]:
    """The timeline's sections of an analysis read with no OS history and no overlays; ``os_versions``
    gives each session a macOS version as an OS history would."""
    return timeline_sections(replace(investigation_of(analysis), os_versions=os_versions))


def summary_of(analysis: Analysis) -> str:
    """The timeline's *Summary* paragraph of an analysis."""
    return summary(analysis, crash_rows(analysis))


def timeline_json(analysis: Analysis) -> dict[str, Any]:
    """The ``timeline --format json`` document of an analysis (no OS history, no overlays)."""
    return timeline_document(sections_of(analysis))


def pasted(tmp_path: Path, text: str) -> Path:
    """``text`` as a file a user pasted, for the pipeline to read."""
    path = tmp_path / "paste.log"
    path.write_text(text)
    return path


def generated_cases() -> list[str]:
    return sorted(p.name.removesuffix(".truth.json") for p in GENERATED.glob("*.truth.json"))


def truth(case: str) -> dict[str, Any]:
    return json.loads((GENERATED / f"{case}.truth.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def example_analysis() -> Analysis:
    return analysis_of(EXAMPLE)


# CI runs the property tests with more examples (a fuzz run of a few thousand), derandomized so that
# whether a commit lands never rests on a draw; local runs draw afresh each time and stay quick. What
# a local run finds is kept as an @example or a unit test.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("ci", max_examples=1500, derandomize=True)
_hypothesis_settings.register_profile("dev", max_examples=150)
_hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "dev")


# -- every JSON document a test makes is checked against the schema the package ships --------------

import hashlib  # noqa: E402
from functools import cache as _cache  # noqa: E402

from jsonschema import Draft202012Validator  # noqa: E402

from omlx_logscan.output import documents as _documents  # noqa: E402
from omlx_logscan.output import rows as _rows  # noqa: E402
from omlx_logscan.output.jsonschemas import bundled, name_of  # noqa: E402


@_cache
def schema_validator(name: str) -> Draft202012Validator:
    schema = bundled(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_errors(document: Any) -> list[str]:
    """What is wrong with a document by the schema its ``schema`` field names (an omlx-logscan
    document naming no shipped schema is wrong too); nothing for other JSON."""
    claimed = document.get("schema") if isinstance(document, dict) else None
    if not isinstance(claimed, str) or not claimed.startswith("omlx-logscan/"):
        return []
    name = name_of(claimed)
    if name is None:
        return [f"{claimed}: no schema ships for it"]
    return _written_errors(name, document, claimed)


_VALID_WRITTEN: set[tuple[str, bytes]] = set()


def _written_errors(name: str, value: Any, what: str) -> list[str]:
    """What is wrong with the JSON ``value`` is written as (``default=str`` included) by schema ``name``.
    Many tests write the same document or row (the example's), so each distinct one is validated once."""
    text = json.dumps(value, sort_keys=True, default=str)
    key = (name, hashlib.sha1(text.encode()).digest())
    if key in _VALID_WRITTEN:
        return []
    errors = [
        f"{what} at {'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in schema_validator(name).iter_errors(json.loads(text))
    ]
    if not errors:
        _VALID_WRITTEN.add(key)
    return errors


def event_row_errors(row: dict[str, Any]) -> list[str]:
    """What is wrong with one NDJSON row of an event (a watch notice, with its ``watch`` key, is no event)."""
    if "watch" in row:
        return []
    return _written_errors("event", row, f"event row {row.get('source')}:{row.get('line')}")


@pytest.fixture(autouse=True)
def json_schema_violations(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every document written through ``write_json`` and every event row through ``write_ndjson``, in
    any in-process run of any test, validated as it is written; the test fails on a violation."""
    violations: list[str] = []
    write_json, write_ndjson = _documents.write_json, _rows.write_ndjson

    def checked_json(document: Any, out: Any) -> None:
        violations.extend(schema_errors(document))
        write_json(document, out)

    def checked_rows(rows: Any, out: Any) -> None:
        def each() -> Any:
            for row in rows:
                violations.extend(event_row_errors(row))
                yield row

        write_ndjson(each(), out)

    monkeypatch.setattr(_documents, "write_json", checked_json)
    monkeypatch.setattr(_rows, "write_ndjson", checked_rows)
    yield violations
    assert not violations, "JSON output that breaks its shipped schema:\n" + "\n".join(violations[:20])
