"""The kinds registry: it names every kind classification emits, and each flag drives what it says."""

from __future__ import annotations

import ast
import inspect
from collections import Counter

import pytest

from omlx_logscan.analysis.attribution import IDLE_REQUESTS, PRESSURE_ACTION_LEVELS
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.output.why import PRESSURE_ACTION_WORDS
from omlx_logscan.parsing import classify as classify_module
from omlx_logscan.parsing.catalog import CATALOG
from omlx_logscan.parsing.classify import classify
from omlx_logscan.parsing.dense import REQUEST_SCHEMA, Dense
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import (
    ACTIVE_ENGINE_KINDS,
    CRASH_KINDS,
    IDLE_RECLAIM,
    KINDS,
    LEVEL_CHANGE,
    OMLX_ONLY_KINDS,
    PRESSURE_ACTIONS,
    RECLAIMING,
    REGISTRY,
    RUNNING_PROCESS_KINDS,
    SERVING_KINDS,
    TAG_FIELDS,
)
from omlx_logscan.parsing.records import assemble_one
from omlx_logscan.stream.event_stream import Accounting, EventStream, SourceInfo
from omlx_logscan.stream.starts import StartCollapser

FLAG_SETS = {
    "crash_evidence": CRASH_KINDS,
    "shows_running_process": RUNNING_PROCESS_KINDS,
    "shows_active_engine": ACTIVE_ENGINE_KINDS,
    "shows_serving": SERVING_KINDS,
    "omlx_only": OMLX_ONLY_KINDS,
    "tag_field": frozenset(TAG_FIELDS),
}


def _kinds_classify_writes() -> set[str]:
    """The kind strings classify.py passes to its event maker, read from its source."""
    tree = ast.parse(inspect.getsource(classify_module))
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "make"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def test_kinds_are_unique_and_in_the_registry_order() -> None:
    assert len(set(KINDS)) == len(KINDS)
    assert tuple(kind.name for kind in REGISTRY) == KINDS


def test_every_catalog_kind_is_registered() -> None:
    assert {template.kind for template in CATALOG} <= set(KINDS)


def test_every_kind_classify_writes_is_registered() -> None:
    written = _kinds_classify_writes()
    assert {"kernel_panic", "crash_report", "faulthandler_dump", "gpu_error", "process_exit", "error"} <= written
    assert written <= set(KINDS)


@pytest.mark.parametrize("flag", sorted(FLAG_SETS))
def test_each_flag_set_is_a_set_of_kinds(flag: str) -> None:
    assert FLAG_SETS[flag] <= set(KINDS)
    assert FLAG_SETS[flag] == {kind.name for kind in REGISTRY if getattr(kind, flag)}


def test_templates_of_kinds_with_a_tag_field_carry_a_tag() -> None:
    """classify puts a tag in its field only when there is one: every such template has one."""
    assert all(template.tag for template in CATALOG if template.kind in TAG_FIELDS)


T0, T1, T2, T3 = (f"2026-01-01T10:00:{second:02d}.000" for second in (0, 10, 20, 30))


def _event(kind: str, time: str, **fields: object) -> Event:
    return Event(kind, time, "server.log", 1, "INFO", None, f"a {kind} line", dict(fields))


def _start(time: str = T0, marker: str = "startup_block") -> Event:
    return _event("process_start", time, marker=marker)


def _stream(*events: Event) -> EventStream:
    times = [ev.time for ev in events if ev.time]
    source = SourceInfo("server.log", len(events), min(times), max(times), ["INFO"], None)
    requests = Dense.empty(REQUEST_SCHEMA)
    return EventStream([source], list(events), requests, Accounting(), Counter(), [], ["INFO"])


def _sample(kind: str, time: str) -> Event:
    """An event of ``kind`` with the fields the analyzers read (an exit's reason, a fault's code)."""
    if kind == "process_exit":
        return _event(kind, time, reason="abort")
    if kind == "gpu_error":
        return _event(kind, time, code="00000002", code_name="Timeout", context="other")
    return _event(kind, time)


# A new start ends the lifetime before it by itself (at INFO level, with no stop line, as a crash).
@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind != "process_start"])
def test_crash_evidence_ends_a_lifetime_as_a_crash(kind: str) -> None:
    session = analyze(_stream(_start(), _sample(kind, T1))).sessions[0]
    assert (session.end_reason == "crash") == (kind in CRASH_KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_a_running_process_closes_the_startup_block(kind: str) -> None:
    collapser = StartCollapser()
    collapser.feed(_start(T0, "banner"))
    collapser.feed(_sample(kind, T1) if kind != "process_start" else _start(T1))
    stands_alone = collapser.feed(_start(T2))
    assert stands_alone == (kind in RUNNING_PROCESS_KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_any_later_record_of_the_process_absorbed_the_fault(kind: str) -> None:
    # Issue 14 changed this rule: not only an active engine but any later record of the process shows
    # it went on, unless that record is what ended it (crash evidence) or is a new process's start.
    analysis = analyze(_stream(_start(), _sample("gpu_error", T1), _sample(kind, T3)))
    went_on = kind not in CRASH_KINDS and kind != "process_start"
    assert (analysis.faults[0].outcome == "absorbed") == went_on


@pytest.mark.parametrize("kind", sorted(set(KINDS) - CRASH_KINDS))
def test_serving_after_a_shutdown_line_means_it_was_not_the_end(kind: str) -> None:
    session = analyze(_stream(_start(), _event("shutdown", T1), _sample(kind, T2))).sessions[0]
    assert (session.end_reason == "shutdown") == (kind not in SERVING_KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_an_omlx_only_kind_makes_the_input_an_omlx_log(kind: str) -> None:
    assert _stream(_sample(kind, T0)).has_omlx_records == (kind in OMLX_ONLY_KINDS)


@pytest.mark.parametrize(
    ("message", "kind", "tag"),
    [
        ("CORS origins: *", "process_start", "startup_block"),
        ("Memory pressure post-eviction: normal", "memory_pressure", "post_eviction"),
        ("Loaded model: qwen", "model_load", "loaded"),
        ("Unloading model: qwen", "model_unload", "unloading"),
        ("Chat completion: 5 tokens in 1.0s", "request_complete", "chat"),
        ("Prefill failed for req-1: boom", "request_error", "prefill"),
        # The first row here was a VLM fallback as a failed load; issue 14: a fallback is no failure.
        ("Client disconnected, cancelling generation task", "request_abort", "disconnect"),
        ("Idle reclaim: trimmed Metal transients between turns (12.3GB -> 8.1GB)", "cache_clear", "idle"),
    ],
)
def test_the_tag_field_shows_the_template_tag(message: str, kind: str, tag: str) -> None:
    record = assemble_one(f"2026-01-01 10:00:00,000 - omlx.server - INFO - {message}", 1)
    (event,) = classify(record, "server.log", 0)
    assert event.kind == kind
    if kind in TAG_FIELDS:
        assert event.fields[TAG_FIELDS[kind]] == tag
    else:
        assert tag not in event.fields.values()


def test_every_memory_pressure_action_has_its_row_in_the_pressure_table() -> None:
    """A new enforcer message with a new tag must say (in one row) what it shows and at what level;
    attribution's pressure evidence and what a log level hides are derived from that table."""
    tags = {template.tag for template in CATALOG if template.kind == "memory_pressure"}
    assert tags == set(PRESSURE_ACTIONS)
    assert {row.shows for row in PRESSURE_ACTIONS.values()} <= {RECLAIMING, LEVEL_CHANGE, IDLE_RECLAIM}
    assert {row.level for row in PRESSURE_ACTIONS.values()} <= {"INFO", "WARNING"}
    assert set(PRESSURE_ACTION_WORDS) == set(PRESSURE_ACTIONS)  # each is named in reports
    assert set(PRESSURE_ACTION_LEVELS) | IDLE_REQUESTS == set(PRESSURE_ACTIONS)


def test_a_second_import_time_line_is_another_process() -> None:
    # Issue 28: a process writes its import-time lines once; the console prints the banner before them.
    collapser = StartCollapser()
    assert collapser.feed(_start(T0, "banner"))
    assert not collapser.feed(_start(T1, "import"))  # the banner's process imports its modules
    assert collapser.feed(_start(T2, "import"))  # a process that crashed while starting, then the next


def test_saved_settings_never_opens_a_start() -> None:
    # Issue 28: `Saved settings to …` is written at start and whenever the admin page saves settings.
    collapser = StartCollapser(keep_routine=False)
    assert not collapser.feed(_start(T0, "settings"))
    assert collapser.feed(_start(T1, "import"))
    assert not collapser.feed(_start(T2, "settings"))
