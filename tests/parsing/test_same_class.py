"""Issue 27, item 6: misreadings of one class (oMLX text read as something else), each where it showed."""

from __future__ import annotations

from pathlib import Path

from conftest import REAL, summary_of
from omlx_logscan import analyze, read_events, resolve
from omlx_logscan.output.phrases import span_length, span_phrase
from omlx_logscan.stream.event_stream import EventStream, header

RESTATED = "RuntimeError: [metal::malloc] Resource limit (499000) exceeded.\n"
FAULT = (
    "2026-06-01 10:00:00,000 - omlx.engine_core - ERROR - [-] - Engine loop error: [metal::malloc] "
    "Resource limit (499000) exceeded.\n"
    "Traceback (most recent call last):\n"
    '  File "/x/omlx/engine_core.py", line 500, in _engine_loop\n'
    "RuntimeError: [metal::malloc] Resource limit (499000) exceeded.\n"
)
SERVED = "2026-06-01 10:00:05,000 - omlx.server - INFO - [-] - Chat completion: 12 tokens in 1.0s\n"


def stream_of(tmp_path: Path, text: str) -> EventStream:
    log = tmp_path / "paste.log"
    log.write_text(text)
    return read_events(resolve([str(log)]))


def test_a_restated_exception_above_its_record_is_part_of_it(tmp_path: Path) -> None:
    stream = stream_of(tmp_path, RESTATED + "\n" + FAULT + SERVED)
    assert [(ev.line, ev.kind, ev.lines) for ev in stream.events] == [
        (3, "gpu_error", 6),  # the restatement and the blank line under it are the fault's
        (7, "request_complete", 1),
    ]
    assert len(analyze(stream).faults) == 1


def test_a_restatement_under_an_earlier_record_is_not_its_tail(tmp_path: Path) -> None:
    earlier = "2026-06-01 09:59:00,000 - omlx.server - INFO - [-] - Chat completion: 10 tokens in 1.0s\n"
    stream = stream_of(tmp_path, earlier + RESTATED + FAULT + SERVED)
    assert [ev.kind for ev in stream.events] == ["request_complete", "gpu_error", "request_complete"]
    assert len(analyze(stream).faults) == 1


def test_an_ane_dispatch_failure_wrapped_over_lines_is_one_record(tmp_path: Path) -> None:
    stream = stream_of(
        tmp_path,
        "ANE input pack command buffer failed; canceling this dispatch:\n"
        'Error Domain=MTLCommandBufferErrorDomain Code=2 "Caused GPU Timeout Error\n'
        '(00000002:kIOGPUCommandBufferCallbackErrorTimeout)"\n',
    )
    (event,) = stream.events
    assert (event.line, event.lines, event.fields["context"], event.fields["code_name"]) == (
        1,
        3,
        "ane_dispatch",
        "Timeout",
    )
    assert stream.accounting.unparsed == 0


def test_several_panic_reports_are_several_boots(tmp_path: Path) -> None:
    text = "".join((REAL / name).read_text() for name in ("omlx-issue-1265.log", "omlx-issue-1372.log"))
    stream = stream_of(tmp_path, text)
    analysis = analyze(stream)
    assert [ev.kind for ev in stream.events] == ["kernel_panic", "kernel_panic"]
    assert len(analysis.sessions) == 2
    assert "2 reboots" in summary_of(analysis)


def test_a_span_under_an_hour_is_in_minutes_and_seconds(tmp_path: Path) -> None:
    assert span_length(7.6) == "7.6 s"
    assert span_length(725.0) == "12 min 05 s"
    short = stream_of(tmp_path, FAULT.replace("10:00:00,000", "10:00:00,100") + SERVED.replace("05,000", "07,700"))
    assert "(7.6 s)" in span_phrase(header(short), short)


def test_times_of_day_are_no_input_without_timestamps(tmp_path: Path) -> None:
    stream = stream_of(tmp_path, "19:40:08  Engine started\n19:40:17  Chat completion: 5 tokens in 1.0s\n")
    text = summary_of(analyze(stream))
    assert "no timestamps" not in text and "19:40:08 → 19:40:17" in text
