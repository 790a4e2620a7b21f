"""A fault a paste gives without a time: no trigger borrowed from the record before it."""

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
