"""The JSON Schemas the package ships: valid, in step with the code's closed sets, and met by what every
command writes, in process (the autouse hook in conftest) and as a real subprocess."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from conftest import EXAMPLE, REAL, ROOT, event_row_errors, schema_errors
from omlx_logscan.analysis.attribution import Supported, Trigger
from omlx_logscan.analysis.outage_model import OUTAGE_KINDS
from omlx_logscan.analysis.results import CallSite, Outcome, SessionEnd, WindowEnd
from omlx_logscan.analysis.rules import RULES
from omlx_logscan.analysis.signatures import CLEAR_CONTEXTS
from omlx_logscan.cli.app import app
from omlx_logscan.output import documents
from omlx_logscan.output.documents import FLEET_SCHEMA
from omlx_logscan.output.jsonschemas import _PARTS, DOCUMENTS, NAMES, _with_typed_sets, bundled, name_of, raw
from omlx_logscan.output.outages import FATAL_REASON_WORDS
from omlx_logscan.parsing import catalog
from omlx_logscan.parsing.kinds import KINDS, TAG_FIELDS, EventKind
from outage_logs import make_outages, outage_log

runner = CliRunner()
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
SCHEMA_STRINGS = {
    "timeline": documents.TIMELINE_SCHEMA,
    "events": documents.EVENTS_SCHEMA,
    "sessions": documents.SESSIONS_SCHEMA,
    "bounds": documents.BOUNDS_SCHEMA,
    "check": documents.CHECK_SCHEMA,
    "fleet": FLEET_SCHEMA,
}
OS = ("--os", "26.0@2026-09-15T20:00")  # an OS history, so timeline carries bounds and bounds can run
# Each command's JSON run: its arguments after the inputs.
COMMANDS = {
    "timeline": ("timeline", "-f", "json", *OS),
    "events": ("events", "-f", "json", "--all"),
    "sessions": ("sessions", "-f", "json"),
    "bounds": ("bounds", "-f", "json", "--by", "both", *OS),
    "check": ("check", "-f", "json"),
}


def assert_valid(document: Any, name: str) -> None:
    assert document["schema"] == SCHEMA_STRINGS[name]
    errors = schema_errors(document)
    assert not errors, "\n".join(errors[:20])


def run_json(name: str, *inputs: str | Path, extra: tuple[str, ...] = ()) -> Any:
    """One command with ``-f json`` as a real subprocess, its document parsed."""
    command, *options = COMMANDS[name]
    result = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", command, *map(str, inputs), *options, *extra, "-q"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr  # check exits 1 on findings
    return json.loads(result.stdout)


# -- the files ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_each_schema_loads_from_the_package_and_is_a_valid_2020_12_schema(name: str) -> None:
    schema = bundled(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    if name in DOCUMENTS:
        assert schema["title"] == SCHEMA_STRINGS[name]
        assert schema["properties"]["schema"] == {"const": SCHEMA_STRINGS[name]}
        assert name_of(SCHEMA_STRINGS[name]) == name
    # Bundled: every reference resolves inside the one file (a validator with no registry is given it).
    Draft202012Validator(schema).iter_errors({}).__next__()


def test_a_document_schema_of_another_number_or_tool_names_no_shipped_schema() -> None:
    assert name_of("omlx-logscan/timeline/1") is None
    assert name_of("omlx-logscan/timeline/2") is None  # /3 is the timeline's now; check too
    assert name_of("omlx-logscan/check/2") is None
    assert name_of("omlx-logscan/events/2") == "events"
    assert name_of("omlx-logscan/export") is None
    assert name_of("other/timeline/2") is None


def _enum(schema: dict[str, Any], *path: str) -> set[Any]:
    node: Any = schema
    for key in path:
        node = node[key]
    return set(node["enum"])


def test_the_closed_sets_are_the_codes_own() -> None:
    common, event, timeline, check = raw("common"), raw("event"), raw("timeline"), raw("check")
    assert event["$defs"]["kind"]["enum"] == list(get_args(EventKind)) == list(KINDS)  # KINDS: REGISTRY's order
    assert _enum(check, "$defs", "rule") == set(RULES)
    assert common["$defs"]["outage_kind"]["enum"] == list(OUTAGE_KINDS)
    hours = raw("bounds")["$defs"]["row"]["properties"]["outage_hours"]["propertyNames"]["enum"]
    assert set(hours) == {*OUTAGE_KINDS, "possible_wedge"}  # Outage.rule: the kind, or possible_ for a wedge
    assert common["$defs"]["fault_kind"]["enum"] == list(get_args(catalog.FaultKind))
    assert {*catalog.INCIDENT_KINDS.values(), "other_gpu"} == set(get_args(catalog.FaultKind))
    assert _enum(event, "$defs", "gpu_context") == {context for _, context in catalog.GPU_CONTEXTS} | {"other"}
    assert set(CLEAR_CONTEXTS.values()) <= _enum(timeline, "$defs", "trigger")
    reasons = timeline["$defs"]["outage"]["allOf"][0]["then"]["properties"]["reason"]["enum"]
    assert set(reasons) == {*FATAL_REASON_WORDS, None}


def test_the_typed_sets_are_listed_from_their_types_in_their_order() -> None:
    common, timeline = raw("common"), raw("timeline")
    assert common["$defs"]["end_reason"]["enum"] == list(get_args(SessionEnd))
    assert timeline["$defs"]["dead_window"]["properties"]["end_reason"]["enum"] == list(get_args(WindowEnd))
    assert timeline["$defs"]["outcome"]["enum"] == list(get_args(Outcome))
    assert timeline["$defs"]["call_site"]["enum"] == list(get_args(CallSite))
    assert timeline["$defs"]["trigger"]["enum"] == list(get_args(Trigger))
    assert set(CLEAR_CONTEXTS.values()) <= set(get_args(Trigger))
    assert set(get_args(Supported)) <= set(get_args(Trigger))


def _enums(schema: Any) -> list[Any]:
    if isinstance(schema, dict):
        own = [schema["enum"]] if "enum" in schema else []
        return own + [e for value in schema.values() for e in _enums(value)]
    return [e for value in schema for e in _enums(value)] if isinstance(schema, list) else []


@pytest.mark.parametrize("name", (*NAMES, *_PARTS))
def test_every_enum_of_a_schema_is_a_list_once_read(name: str) -> None:
    assert all(isinstance(enum, list) and enum for enum in _enums(raw(name)))


def test_a_schema_naming_no_typed_set_fails_to_load() -> None:
    with pytest.raises(KeyError, match="Outcom"):
        _with_typed_sets({"properties": {"outcome": {"enum": "Outcom"}}})


@pytest.mark.parametrize("kind", sorted(set(TAG_FIELDS) - {"process_start"}))
def test_every_tag_the_catalog_gives_is_in_its_fields_enum(kind: str) -> None:
    tables = [value for value in vars(catalog).values() if isinstance(value, tuple)]
    tags = {t.tag for table in tables for t in table if isinstance(t, catalog.Template) and t.kind == kind}
    assert tags
    then = raw("event")["$defs"]["tagged"][kind]["then"]
    assert tags <= set(then["properties"][TAG_FIELDS[kind]]["enum"])
    assert TAG_FIELDS[kind] in then["required"]


# -- the hook can fail ----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_broken_document_fails_the_hook_that_every_test_runs_under(json_schema_violations: list[str]) -> None:
    result = runner.invoke(app, ["timeline", str(EXAMPLE), "-f", "json", "-q"])
    document = json.loads(result.stdout)
    assert json_schema_violations == []  # the real run is valid …
    document["faults"][0]["outcome"] = "recovered"  # … an outcome there is no such thing as is not
    document["sessions"][0]["start"] = document["sessions"][0]["start"][:23]  # nor a time without its offset
    del document["summary"]
    documents.write_json(document, io.StringIO())
    assert len(json_schema_violations) == 3, json_schema_violations
    assert any("faults/0/outcome" in v for v in json_schema_violations)
    assert any("'summary' is a required property" in v for v in json_schema_violations)
    json_schema_violations.clear()  # seen: this test's own teardown must not fail on them


def test_an_event_row_that_breaks_its_schema_is_caught() -> None:
    row = {"time": None, "source": "x", "line": 1, "level": None, "logger": None, "kind": "gpu_error", "message": ""}
    assert any("'context' is a required property" in e for e in event_row_errors(row))
    assert event_row_errors(row | {"code": None, "code_name": "ResourceLimit", "context": "engine_loop"}) == []
    assert any("kind" in e for e in event_row_errors(row | {"kind": "gpu_fault"}))
    assert event_row_errors({"watch": "dead", "message": "…"}) == []  # a watch notice is no event row


def test_a_dumps_threads_are_checked() -> None:
    row = {"time": None, "source": "x", "line": 1, "level": "CRITICAL", "logger": None, "kind": "faulthandler_dump"}
    frame = {"path": "/x/omlx/scheduler.py", "line": 5439, "func": "step", "code": ""}
    thread = {"id": "0x00000001f0d2c0c0", "current": True, "frames": [frame]}
    dump = row | {"message": "Fatal Python error: Aborted", "threads": [thread], "traceback": [frame]}
    assert event_row_errors(dump) == []
    assert any(
        "'current' is a required property" in e
        for e in event_row_errors(dump | {"threads": [{"id": "0x1", "frames": []}]})
    )
    assert any("does not match" in e for e in event_row_errors(dump | {"threads": [thread | {"id": "main"}]}))


def test_an_unknown_omlx_logscan_document_is_a_violation() -> None:
    assert schema_errors({"schema": "omlx-logscan/timeline/9"}) == ["omlx-logscan/timeline/9: no schema ships for it"]
    assert schema_errors({"schema": "someone-else/1"}) == []


# -- every command, as a real subprocess ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_on_the_example_log(name: str) -> None:
    assert_valid(run_json(name, EXAMPLE, extra=("--host", "mac-01", "--tz", "Europe/Berlin")), name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_on_all_the_real_logs_at_once(name: str) -> None:
    assert_valid(run_json(name, *sorted(REAL.glob("*.log"))), name)


@pytest.mark.slow
@pytest.mark.parametrize("log", sorted(p.name for p in REAL.glob("*.log")))
def test_every_command_on_each_real_log_in_process(log: str) -> None:
    for name, (command, *options) in COMMANDS.items():
        # --force: a few pastes are too short to be recognised alone; their documents must still be valid.
        result = runner.invoke(app, [command, str(REAL / log), *options, "--force", "-q"])
        assert result.exit_code in (0, 1), result.output
        assert_valid(json.loads(result.stdout), name)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seed", "fmt", "level"), [(1, "file", "debug"), (2, "console", "info"), (3, "file", "warning")]
)
def test_every_command_on_generated_outage_logs(tmp_path: Path, seed: int, fmt: str, level: str) -> None:
    path, _ = outage_log(tmp_path, seed, fmt, level)
    timeline = run_json("timeline", path)
    assert_valid(timeline, "timeline")
    assert {o["kind"] for o in timeline["outages"]} >= ({"reboot", "fatal_exit"} if level != "warning" else set())
    for name in sorted(set(COMMANDS) - {"timeline"}):
        assert_valid(run_json(name, path), name)


@pytest.mark.slow
def test_event_rows_of_ndjson_as_a_real_subprocess(tmp_path: Path) -> None:
    path, _ = outage_log(tmp_path, 4, "console", "debug", make_outages.INCIDENTS)
    result = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "events", str(path), str(EXAMPLE), "-f", "ndjson", "--all", "-q"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=True,
    )
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {row["kind"] for row in rows} >= {"gpu_error", "process_start", "process_exit", "request_arrival"}
    errors = [e for row in rows for e in event_row_errors(row)]
    assert not errors, "\n".join(errors[:20])


# -- logscan schema -------------------------------------------------------------------------------


def test_schema_prints_one_bundled_schema_and_a_wrong_name_lists_them() -> None:
    result = runner.invoke(app, ["schema", "timeline"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == bundled("timeline")
    for args in (["schema"], ["schema", "timelines"]):
        wrong = runner.invoke(app, args)
        assert wrong.exit_code == 2
        assert wrong.stdout == ""
        assert wrong.stderr.count("\n") == 1 and ", ".join(NAMES) in wrong.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_schema_as_a_real_subprocess_validates_what_its_command_writes(name: str, tmp_path: Path) -> None:
    target = tmp_path / f"{name}.schema.json"
    subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "schema", name, "-o", str(target)], env=ENV, timeout=120, check=True
    )
    validator = Draft202012Validator(json.loads(target.read_text()))
    if name in COMMANDS:
        assert list(validator.iter_errors(run_json(name, EXAMPLE))) == []
    assert list(validator.iter_errors({"schema": "omlx-logscan/none"}))  # it can say no
