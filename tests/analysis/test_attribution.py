"""Why did it fault: call site, clear trigger with its evidence, what the log level hid, and load context."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest

from conftest import EXAMPLE, analysis_of
from fault_logs import (
    CLEAR_TRACEBACK,
    DECODE_TRACEBACK,
    FAULT_AT,
    TIMEOUT,
    analysis_from,
    before,
    completion,
    fault,
    info_start,
    record,
)
from omlx_logscan.analysis.attribution import WhyFaulted, explain
from omlx_logscan.analysis.investigation import investigation_of
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.cli.values import overlay_specs
from omlx_logscan.inputs.overlays import parse_overlays
from omlx_logscan.output.documents import attribution_dict, timeline_document
from omlx_logscan.output.markdown import why_markdown
from omlx_logscan.output.sections import timeline_sections
from omlx_logscan.output.text import console, write_why_text
from omlx_logscan.output.why import (
    fault_lines,
    load_label,
    load_phrase,
    overlay_lines,
    trigger_phrase,
    why_caveats,
)


def only(why: WhyFaulted) -> dict[str, object]:
    assert len(why.attributions) == 1
    return attribution_dict(why.attributions[0])


def test_pressure_lines_before_a_clear_fault_name_the_pressure_trigger(tmp_path: Path) -> None:
    shrink = "Shrank hot cache under memory pressure: freed=6.0GB protected=12"
    reclaim = "Requested pressure cache reclaim on 1 scheduler(s) (freed_hot=6.0GB, pool=3.7GB)"
    lines = [
        *info_start(),
        completion(before(minutes=20), 500),
        record(before(seconds=40), "WARNING", "omlx.process_memory_enforcer", shrink),
        record(before(seconds=40), "INFO", "omlx.process_memory_enforcer", reclaim),
        *fault(),
    ]
    got = only(explain(analysis_from(tmp_path, lines)))
    assert got["call_site"] == "cache_clear"
    assert got["trigger"] == "pressure" and got["candidates"] == ["pressure"]
    assert got["invisible"] == []
    evidence = got["evidence"]
    assert isinstance(evidence, list)
    assert [(e["line"], e["what"], e["message"]) for e in evidence] == [
        (4, "hot-cache shrink", shrink),
        (5, "pressure reclaim request", reclaim),
    ]
    assert evidence[0]["time"].startswith("2026-09-15T20:18:58") and evidence[0]["source"].endswith("server.log")


def test_a_level_change_counts_only_towards_soft_or_hard(tmp_path: Path) -> None:
    enforcer = "omlx.process_memory_enforcer"
    relief = record(before(minutes=2), "INFO", enforcer, "Memory pressure level: soft -> ok (current=400.0GB)")
    rising = record(before(minutes=2), "INFO", enforcer, "Memory pressure level: ok -> hard (current=470.0GB)")
    assert only(explain(analysis_from(tmp_path, [*info_start(), relief, *fault()])))["trigger"] == "periodic"
    assert only(explain(analysis_from(tmp_path, [*info_start(), rising, *fault()])))["trigger"] == "pressure"


@pytest.mark.parametrize(
    ("logger", "message", "what"),
    [
        ("omlx.server", "Anthropic message: model=qwen, 300 tokens in 10.00s (30.0 tok/s)", "request finished"),
        ("omlx.server", "Responses API: model=qwen, 300 tokens in 10.00s (30.0 tok/s)", "request finished"),
        ("omlx.server", "Embedding: 4 inputs, 1024 dims, 80 tokens in 0.120s", "request finished"),
        ("omlx.server", "Client disconnected, cancelling generation task", "request aborted"),
        ("omlx.engine.batched", "[stream_generate] Aborting request r1 (finished_normally=False)", "request aborted"),
    ],
    ids=["anthropic", "responses", "embedding", "disconnect", "abort"],
)
def test_every_finished_or_aborted_request_is_a_deferred_trigger(
    tmp_path: Path, logger: str, message: str, what: str
) -> None:
    """Every finish and every abort schedules the deferred clear, whatever the API (issue 14)."""
    lines = [*info_start(), record(before(seconds=0.5), "INFO", logger, message), *fault()]
    got = only(explain(analysis_from(tmp_path, lines)))
    assert got["trigger"] == "deferred" and got["candidates"] == ["deferred"]
    assert [e["what"] for e in got["evidence"]] == [what]  # type: ignore[union-attr]


def test_other_apis_count_in_the_load_before_a_fault(tmp_path: Path) -> None:
    anthropic = "Anthropic message: model=qwen, 300 tokens in 10.00s (30.0 tok/s)"
    lines = [*info_start(), record(before(minutes=3), "INFO", "omlx.server", anthropic), *fault()]
    load = only(explain(analysis_from(tmp_path, lines)))["load"]
    assert load["windows"][0]["requests"] == 1 and load["windows"][0]["tokens"] == 300  # type: ignore[index]


def test_an_idle_reclaim_request_names_the_idle_trigger(tmp_path: Path) -> None:
    ask = (
        "Hard memory pressure, no evictable models and no loads in progress: requested idle reclaim on 1 scheduler(s)."
    )
    lines = [*info_start(), record(before(seconds=30), "WARNING", "omlx.process_memory_enforcer", ask), *fault()]
    got = only(explain(analysis_from(tmp_path, lines)))
    assert got["trigger"] == "idle" and got["candidates"] == ["idle"]
    assert [e["what"] for e in got["evidence"]] == ["idle reclaim requested"]  # type: ignore[union-attr]


def test_a_fault_in_the_idle_reclaim_is_a_clear_with_the_idle_trigger_without_a_traceback(tmp_path: Path) -> None:
    message = f"Idle reclaim failed: {TIMEOUT}"
    lines = [*info_start(), record(FAULT_AT, "WARNING", "omlx.scheduler", message)]
    why = explain(analysis_from(tmp_path, lines))
    got = only(why)
    assert got["call_site"] == "cache_clear" and got["trigger"] == "idle"
    assert trigger_phrase(why.attributions[0], full=False) == "idle"


def test_pressure_outside_the_window_does_not_count(tmp_path: Path) -> None:
    shrink = record(
        before(minutes=6),
        "WARNING",
        "omlx.process_memory_enforcer",
        "Shrank hot cache under memory pressure: freed=1GB",
    )
    analysis = analysis_from(tmp_path, [*info_start(), shrink, *fault()])
    assert only(explain(analysis))["trigger"] == "periodic"
    assert only(explain(analysis, pressure_window_s=600))["trigger"] == "pressure"


def test_a_completion_half_a_second_before_names_the_deferred_trigger(tmp_path: Path) -> None:
    lines = [*info_start(), completion(before(minutes=30), 100), completion(before(seconds=0.5), 321), *fault()]
    why = explain(analysis_from(tmp_path, lines))
    got = only(why)
    assert got["trigger"] == "deferred" and got["candidates"] == ["deferred"]
    evidence = got["evidence"]
    assert isinstance(evidence, list) and len(evidence) == 1
    assert evidence[0]["line"] == 4 and evidence[0]["what"] == "request finished"
    assert evidence[0]["message"].startswith("Chat completion: 321 tokens")
    assert trigger_phrase(why.attributions[0], full=False) == "deferred (request finished 0.5 s before)"


def test_a_request_failing_in_the_scheduler_is_deferred_evidence_even_at_warning_level(tmp_path: Path) -> None:
    failed = record(before(seconds=1), "ERROR", "omlx.scheduler", "Prefill failed for req-7: out of memory")
    rejected = record(before(seconds=1), "WARNING", "omlx.server", "POST /v1/chat/completions → 400: bad request")
    got = only(explain(analysis_from(tmp_path, [rejected, failed, *fault()])))
    assert got["trigger"] == "deferred"
    assert [e["what"] for e in got["evidence"]] == ["request failed"]  # type: ignore[union-attr]
    assert any("failed requests (ERROR) showed" in text for text in got["invisible"])  # type: ignore[union-attr]


def test_a_completion_written_after_the_fault_is_no_evidence(tmp_path: Path) -> None:
    lines = [*info_start(), *fault(), completion(FAULT_AT, 50)]  # same second, but later in the file
    assert only(explain(analysis_from(tmp_path, lines)))["trigger"] == "periodic"


def test_neither_pressure_nor_a_completion_is_the_periodic_clear(tmp_path: Path) -> None:
    lines = [*info_start(), completion(before(minutes=8), 100), *fault()]
    why = explain(analysis_from(tmp_path, lines))
    got = only(why)
    assert got["trigger"] == "periodic" and got["evidence"] == [] and got["invisible"] == []
    assert trigger_phrase(why.attributions[0], full=True) == (
        "periodic: no pressure line in the 5 min before, no request ended in the 1 s before"
    )


def test_a_completion_whose_deferred_clear_already_ran_is_no_evidence(tmp_path: Path) -> None:
    """The deferred clear runs eight engine steps after the finish: completions 1.1 to 3 s before a
    clear (e-info-periodic, oMLX 0.5.3) had theirs run, so the clear that faulted was the periodic one."""
    lines = [*info_start(), *(completion(before(seconds=s), 24) for s in (2.9, 2.3, 1.7, 1.1)), *fault()]
    got = only(explain(analysis_from(tmp_path, lines)))
    assert got["trigger"] == "periodic" and got["evidence"] == []


def test_the_decode_interval_clear_is_told_by_its_stack_at_any_level(tmp_path: Path) -> None:
    """Scheduler.step's clear every 1,024 decoded tokens fails inside the try whose handler logs
    `Error in batch generation step`: its stack begins at step. A completion just before does not
    make it deferred, and a WARNING log hides nothing about it."""
    step = "/opt/homebrew/Cellar/omlx/0.5.7/libexec/lib/python3.11/site-packages/omlx/scheduler.py"
    inner = [
        "Traceback (most recent call last):",
        f'  File "{step}", line 10621, in step',
        "    _sync_and_clear_cache(self._stream)",
        *CLEAR_TRACEBACK[-5:],
    ]
    head = record(FAULT_AT, "ERROR", "omlx.scheduler", f"Error in batch generation step: {TIMEOUT}")
    for start in (info_start(), []):
        lines = [*start, completion(before(seconds=0.3), 24), head, *inner, *fault()]
        why = explain(analysis_from(tmp_path, lines))
        got = only(why)
        assert got["call_site"] == "cache_clear" and got["trigger"] == "decode_interval", got
        assert got["candidates"] == ["decode_interval"] and got["invisible"] == []
        assert trigger_phrase(why.attributions[0], full=False) == "decode interval"


def test_a_pressure_episode_that_ended_asks_for_no_later_clear(tmp_path: Path) -> None:
    """`hard -> ok` after the reclaim request: its clear ran at the next step; a completion just
    before the fault (f-info-long-pressure, 37 s later) is what asked for this one."""
    enforcer = "omlx.process_memory_enforcer"
    up = "Memory pressure level: ok -> hard (current=19.0GB, soft=17.6GB, hard=18.6GB, ceiling=19.5GB)"
    ask = "Requested pressure cache reclaim on 1 scheduler(s) (freed_hot=0.0GB, pool=4.0GB)"
    down = "Memory pressure level: hard -> ok (current=0.0GB, soft=17.6GB, hard=18.6GB, ceiling=19.5GB)"
    episode = [record(before(seconds=38), "INFO", enforcer, up), record(before(seconds=38), "INFO", enforcer, ask)]
    ended = [*episode, record(before(seconds=37), "INFO", enforcer, down)]
    late = completion(before(seconds=0.2), 24)
    got = only(explain(analysis_from(tmp_path, [*info_start(), *ended, late, *fault()])))
    assert got["trigger"] == "deferred" and got["candidates"] == ["deferred"]
    still = only(explain(analysis_from(tmp_path, [*info_start(), *episode, late, *fault()])))
    assert still["trigger"] == "pressure" and still["candidates"] == ["pressure", "deferred"]


def test_a_warning_only_log_gives_the_visibility_caveat(tmp_path: Path) -> None:
    noise = record(before(minutes=3), "WARNING", "omlx.cache.paged_ssd_cache", "SSD write queue full")
    why = explain(analysis_from(tmp_path, [noise, *fault()]))
    got = only(why)
    assert got["call_site"] == "cache_clear" and got["trigger"] == "unknown" and got["evidence"] == []
    # The enforcer's idle request is a WARNING line, absent: not idle; the rest stay open.
    assert got["possible"] == ["pressure", "deferred", "periodic"]
    assert trigger_phrase(why.attributions[0], full=True).startswith("unknown: pressure, deferred or periodic (")
    invisible = got["invisible"]
    assert isinstance(invisible, list) and len(invisible) == 2
    assert invisible[0] == (
        # Issue 14: the enforcer's deferred enforcement (INFO) is a pressure action too; the review of issue 14:
        # so is the level after an eviction (every action of the kinds registry's table counts).
        "INFO lines absent: a pressure clear cannot be excluded (pressure reclaim request, pressure level change, "
        "pressure level after an eviction, pressure eviction, pressure enforcement deferred while buffers drain "
        "would not show); the hot-cache shrink warning (WARNING) would have shown and did not"
    )
    assert "deferred clear" in invisible[1] and "failed requests (ERROR) would have shown and did not" in invisible[1]
    assert got["load"] == {
        "visible": False,
        "label": None,
        "baseline": None,
        "windows": [],
        "note": "finished requests are INFO lines, absent from this log",
    }


def test_a_shrink_warning_in_a_warning_only_log_is_positive_pressure_evidence(tmp_path: Path) -> None:
    message = "Shrank shared hot cache under memory pressure: freed=2.0GB protected=3"
    shrink = record(before(minutes=1), "WARNING", "omlx.process_memory_enforcer", message)
    got = only(explain(analysis_from(tmp_path, [shrink, *fault()])))
    assert got["trigger"] == "pressure"
    assert "the hot-cache shrink warning (WARNING) showed" in got["invisible"][0]  # type: ignore[index]


def test_an_error_only_log_cannot_see_the_shrink_warning_either(tmp_path: Path) -> None:
    got = only(explain(analysis_from(tmp_path, fault())))
    assert got["trigger"] == "unknown"
    assert got["invisible"] == [  # issue 14 added the pressure actions of every enforcer version (and its review
        # the two the list had missed: a failed reclaim request, the level after an eviction)
        "INFO and WARNING lines absent: a pressure clear cannot be excluded (hot-cache shrink, pressure reclaim "
        "request, failed pressure reclaim request, pressure level change, pressure level after an eviction, "
        "pressure eviction, hard-pressure abort, hard pressure with all models pinned, "
        "emergency-pressure abort, pressure abort, pressure abort of a model load, hard pressure with no model to "
        "evict, pressure enforcement deferred while buffers drain, process memory limit exceeded would not show)",
        "INFO and WARNING lines absent: finished requests are not logged, so neither a deferred clear nor the load "
        "before the fault can be judged; failed requests (ERROR) would have shown and did not",
    ]


def test_a_fault_outside_a_clear_has_no_trigger(tmp_path: Path) -> None:
    lines = [*info_start(), completion(before(seconds=1), 10), *fault(traceback=DECODE_TRACEBACK)]
    got = only(explain(analysis_from(tmp_path, lines)))
    assert got["call_site"] == "decode" and got["trigger"] == "not_applicable"
    assert got["evidence"] == [] and got["invisible"] == []


def test_a_fault_without_traceback_has_an_unknown_site_and_trigger(tmp_path: Path) -> None:
    got = only(explain(analysis_from(tmp_path, [*info_start(), *fault(traceback=[])])))
    assert got["call_site"] == "unknown" and got["trigger"] == "unknown"


def test_load_context_against_the_sessions_median(tmp_path: Path) -> None:
    """Four requests of 100 tokens in every 10 minutes for 110 minutes, then none before the fault."""
    start = before(hours=2)
    busy = [completion(start + timedelta(minutes=2.5 * i + 1), 100) for i in range(44)]
    lines = [
        record(start, "INFO", "omlx.server", "CORS origins: ['*']"),
        *busy,
        *fault(),
        completion(FAULT_AT + timedelta(minutes=30), 100),
    ]
    attribution = explain(analysis_from(tmp_path, lines)).attributions[0]
    load = attribution.load
    assert load.visible and load.baseline == "session" and load_label(load) == "nearly idle"
    ten, sixty = load.windows
    assert (ten.requests, ten.median_requests, ten.tokens, ten.median_tokens) == (0, 4, 0, 400)
    assert (sixty.requests, sixty.tokens) == (20, 2000)
    assert load_phrase(load, full=False) == "nearly idle: 0 requests in the 10 min before, median 4"


def test_tokens_count_the_same_from_events_and_dense_request_rows(tmp_path: Path) -> None:
    lines = [
        *info_start(),
        completion(before(minutes=4), 23),  # between timed lines: a dense request row
        completion(before(minutes=3), 77),
        "",  # a blank line next to it: read as a sparse event
        *fault(),
    ]
    analysis = analysis_from(tmp_path, lines)
    assert analysis.stream.requests.height == 1
    assert sum(1 for ev in analysis.stream.events if ev.kind == "request_complete") == 1
    ten = explain(analysis).attributions[0].load.windows[0]
    assert (ten.requests, ten.tokens) == (2, 100)


def test_tokens_are_counted_without_keeping_request_text(tmp_path: Path) -> None:
    lines = [*info_start(), *[completion(before(minutes=m), 70) for m in (50, 40, 30, 20)], *fault()]
    (tmp_path / "server.log").write_text("\n".join(lines) + "\n")
    analysis = analysis_of(tmp_path / "server.log")  # the default read keeps no request text
    load = explain(analysis).attributions[0].load
    assert load.windows[1].requests == 4 and load.windows[1].tokens == 280
    assert load.windows[0].requests == 0 and load.windows[0].tokens == 0


def test_the_example_log(tmp_path: Path) -> None:
    overlays = parse_overlays(overlay_specs([f"gpu={EXAMPLE.parent / 'gpu-overlay.csv'}"]))
    why = explain(analysis_of(EXAMPLE), overlays)
    assert [a.call_site for a in why.attributions] == ["cache_clear"] * 6
    assert {a.trigger for a in why.attributions} == {"unknown"}
    caveats = why_caveats(why)
    assert len(caveats) == 2
    assert "hot-cache shrink warning (WARNING) would have shown and did not" in caveats[0]
    (overlay,) = why.overlays
    assert (overlay.faults_inside, overlay.faults_outside) == (6, 0)
    assert fault_lines(why, full=False)[0] == "2026-09-15 20:19:38  cache-clear drain, trigger unknown; load not logged"
    assert fault_lines(why, full=False)[6:] == [f"hidden: {text}" for text in caveats]
    (sentence,) = overlay_lines(why, full=False)
    assert sentence.startswith("overlay gpu: 6 of 6 faults fell in the 7 h 58 min when gpu was active, 0 in 87 d 12 h")


def test_json_document_gets_attribution_and_overlays(example_analysis: Analysis) -> None:
    overlays = parse_overlays(overlay_specs([f"gpu={EXAMPLE.parent / 'gpu-overlay.csv'}"]))
    document = timeline_document(timeline_sections(investigation_of(example_analysis, overlays=overlays)))
    attribution = document["faults"][0]["attribution"]
    assert set(attribution) >= {"call_site", "trigger", "evidence", "invisible"}
    assert set(document["overlays"][0]) >= {
        "name",
        "hours_inside",
        "hours_outside",
        "faults_inside",
        "faults_outside",
        "rate_ratio",
        "ci95",
        "p_value",
    }


def test_full_text_and_markdown(tmp_path: Path) -> None:
    shrink = "Shrank hot cache under memory pressure: freed=6.0GB protected=12 [not markup]"
    lines = [
        *info_start(),
        record(before(seconds=30), "WARNING", "omlx.process_memory_enforcer", shrink),
        *fault(),
    ]
    why = explain(analysis_from(tmp_path, lines))
    out = io.StringIO()
    write_why_text(why, console(out), full=True)
    text = out.getvalue()
    assert text.startswith("Why it faulted\n")
    assert "trigger   pressure (hot-cache shrink 30 s before)" in text
    assert f"evidence  2026-09-15 20:19:08  server.log:3  hot-cache shrink: {shrink}" in text
    markdown = why_markdown(why, full=False)
    assert markdown[:3] == ["### Why it faulted", "", "```"]
    assert markdown[3].startswith("2026-09-15 20:19:38  cache-clear drain, trigger pressure")


def test_markdown_fence_outlasts_backticks_in_log_text(tmp_path: Path) -> None:
    failed = record(before(seconds=1), "ERROR", "omlx.scheduler", "Prefill failed for r1: bad ```json``` block")
    why = explain(analysis_from(tmp_path, [*info_start(), failed, *fault()]))
    markdown = why_markdown(why, full=True)
    assert markdown[2] == "````" and markdown.count("````") == 2
    assert any("bad ```json``` block" in line for line in markdown)


@pytest.mark.parametrize("full", [False, True])
def test_a_log_without_faults_says_so(tmp_path: Path, full: bool) -> None:
    why = explain(analysis_from(tmp_path, info_start()))
    out = io.StringIO()
    write_why_text(why, console(out), full=full)
    assert out.getvalue() == "Why it faulted\n  no GPU faults\n"


# -- the review of issue 14 ------------------------------------------------------------------------

HEADLESS_CLEAR = [
    "Traceback (most recent call last):",
    '  File "/x/omlx/engine_core.py", line 120, in _engine_loop',
    "    self.scheduler.step()",
    '  File "/x/omlx/utils/metal_sync.py", line 40, in _sync_and_clear_cache',
    "    mx.clear_cache()",
    f"RuntimeError: {TIMEOUT}",
]


@pytest.mark.parametrize(
    "fault_head",
    # A time of day an hour before the line above it: no date fits it (t24).
    [[""], [f"19:19:38.000 - omlx.engine_core - ERROR - Engine loop error: {TIMEOUT}"]],
    ids=["headless-after-a-blank", "time-of-day-only"],
)
def test_a_fault_without_a_time_of_its_own_borrows_none_for_its_trigger_or_load(
    tmp_path: Path, fault_head: list[str]
) -> None:
    """t25, t24: the fault is placed after the completion before it, whose time it may not measure from."""
    lines = [completion(before(seconds=1), 10), *fault_head, *HEADLESS_CLEAR]
    why = explain(analysis_from(tmp_path, lines))
    got = only(why)
    assert got["call_site"] == "cache_clear" and got["trigger"] == "unknown" and got["evidence"] == []
    assert trigger_phrase(why.attributions[0], full=True) == "unknown: the fault has no time of its own"
    assert load_phrase(why.attributions[0].load, full=False) == "load unknown: the fault has no time of its own"
    assert fault_lines(why, full=False)[0].startswith("after ")


NAMED_CLEARS = [
    ("Metal cache clear failed during error recovery: ", "recovery", "error recovery"),
    ("Metal cache clear failed during generation overflow recovery: ", "overflow", "overflow recovery"),
    ("Pooled-buffer reclaim failed for prefill request r1: ", "pooled_reclaim", "pooled-buffer reclaim"),
    ("Idle reclaim failed: ", "idle", "idle"),
]


@pytest.mark.parametrize(("opening", "trigger", "short"), NAMED_CLEARS, ids=[t for _, t, _ in NAMED_CLEARS])
def test_a_clear_its_record_names_has_that_clears_own_trigger(
    tmp_path: Path, opening: str, trigger: str, short: str
) -> None:
    """t26: these clears run for their own reasons, not as a scheduler step's periodic or deferred one,
    whatever finished or pressed before them."""
    lines = [
        *info_start(),
        completion(before(seconds=1), 10),
        record(
            before(seconds=30),
            "WARNING",
            "omlx.process_memory_enforcer",
            "Shrank hot cache under memory pressure: freed=6.0GB protected=12",
        ),
        record(FAULT_AT, "WARNING", "omlx.scheduler", f"{opening}{TIMEOUT}"),
    ]
    why = explain(analysis_from(tmp_path, lines))
    got = only(why)
    assert got["call_site"] == "cache_clear"
    assert got["trigger"] == trigger and got["candidates"] == [trigger]
    assert got["evidence"] == [] and got["invisible"] == []
    assert trigger_phrase(why.attributions[0], full=False) == short
    assert trigger_phrase(why.attributions[0], full=True).startswith(f"{short} (the fault was in the ")


def test_a_named_clear_without_a_time_keeps_its_own_trigger(tmp_path: Path) -> None:
    clear = f"19:19:38.000 - omlx.scheduler - WARNING - Metal cache clear failed during error recovery: {TIMEOUT}"
    lines = [completion(before(seconds=1), 10), clear]
    assert only(explain(analysis_from(tmp_path, lines)))["trigger"] == "recovery"


@pytest.mark.parametrize(
    "message",
    [
        "Error during completion streaming: boom",
        "Error during Anthropic streaming: boom",
        "Error during Responses API streaming: boom",
        "SSE generator error: boom",
    ],
)
def test_a_stream_of_any_api_failing_is_deferred_evidence(tmp_path: Path, message: str) -> None:
    """Like the chat stream's, every API's streaming error is a request failing in the scheduler."""
    lines = [*info_start(), record(before(seconds=1), "ERROR", "omlx.server", message), *fault()]
    got = only(explain(analysis_from(tmp_path, lines)))
    assert got["trigger"] == "deferred"
    assert [e["what"] for e in got["evidence"]] == ["request failed"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("level", "message", "trigger"),
    [
        ("WARNING", "Pressure cache reclaim request failed: RuntimeError('x')", "pressure"),
        ("INFO", "Memory pressure post-eviction: soft -> hard (current=470.0GB)", "pressure"),
        ("INFO", "Memory pressure post-eviction: hard -> ok (current=10.0GB)", "periodic"),
    ],
    ids=["reclaim-failed", "post-eviction-hard", "post-eviction-relief"],
)
def test_every_pressure_action_of_the_registry_is_pressure_evidence(
    tmp_path: Path, level: str, message: str, trigger: str
) -> None:
    """These actions were left out of attribution's own list; it is now derived from the kinds registry."""
    lines = [*info_start(), record(before(minutes=2), level, "omlx.process_memory_enforcer", message), *fault()]
    assert only(explain(analysis_from(tmp_path, lines)))["trigger"] == trigger


def test_a_window_longer_than_the_log_has_no_median_and_says_why(tmp_path: Path) -> None:
    start = before(minutes=5)
    lines = [record(start, "INFO", "omlx.server", "CORS origins: ['*']"), *fault()]
    load = explain(analysis_from(tmp_path, lines)).attributions[0].load
    assert load.windows and load.windows[0].median_requests is None  # 5 minutes hold no 10-minute window
    phrase = load_phrase(load, full=True)
    assert "median ?" not in phrase and "no median (the log holds no live 10-min window" in phrase
