"""Records without a head line of their own keep all they say (review B10, L3)."""

from __future__ import annotations

from pathlib import Path

from conftest import stream_of

FRAME_FIRST = (
    '  File "/opt/homebrew/lib/python3.12/site-packages/omlx/scheduler.py", line 8204, in _sync_and_clear_cache\n'
    "    mx.clear_cache()\n"
    "RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
)


def test_a_paste_beginning_at_a_frame_keeps_that_frame(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(FRAME_FIRST)
    (gpu,) = [ev for ev in stream_of(log).events if ev.kind == "gpu_error"]
    assert [(f["func"], f["line"], f["code"]) for f in gpu.fields["traceback"]] == [
        ("_sync_and_clear_cache", 8204, "mx.clear_cache()")
    ]
    assert gpu.fields["exception"] == "RuntimeError"


def test_a_continuation_leaves_out_the_blank_lines_around_it(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(
        "2026-09-19 16:00:01,000 - omlx.engine_core - ERROR - [-] - Engine loop error: [METAL] Command buffer "
        "execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
        "\nAfter this I ran:\n\n"
    )
    (gpu,) = stream_of(log).events
    assert gpu.fields["continuation"] == "After this I ran:"
