"""Faults whose evidence a paste does not give: no trigger or load borrowed from the record before,
and a client giving up after a fault is no sign the engine went on."""

from __future__ import annotations

from pathlib import Path

from omlx_logscan import analyze, read_events, resolve
from omlx_logscan.analysis.attribution import explain

FAULT = (
    "Engine loop error: [METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)"
)


def test_an_untimed_fault_has_no_trigger_from_the_request_before_it(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(
        "2026-09-19 09:00:00,000 - omlx.server - INFO - [-] - Chat completion: model=m, 10 tokens in 1.00s "
        "(10.0 tok/s), prompt: 5\n"
        "\n"
        f"{FAULT}\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/omlx/scheduler.py", line 10, in _sync_and_clear_cache\n'
        "RuntimeError: failed\n"
    )
    analysis = analyze(read_events(resolve([str(log)])))
    (attribution,) = explain(analysis).attributions
    assert attribution.trigger == "unknown"


def test_a_client_disconnect_after_a_fault_does_not_absorb_it(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "2026-09-19 16:00:00,000 - omlx.server - INFO - [-] - CORS origins: ['*']\n"
        f"2026-09-19 16:00:01,000 - omlx.engine_core - ERROR - [-] - {FAULT}\n"
        "2026-09-19 16:00:10,000 - omlx.server - INFO - [-] - Client disconnected during streaming "
        "(is_disconnected), cancelling\n"
        "2026-09-19 16:00:30,000 - omlx.server - INFO - [-] - CORS origins: ['*']\n"
    )
    analysis = analyze(read_events(resolve([str(log)])))
    assert [fault.outcome for fault in analysis.faults] == ["crash"]
    assert analysis.sessions[0].end_reason == "crash"
