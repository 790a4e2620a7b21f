"""faulthandler dumps (issue 27, item 6): each thread its own stack, the call site the current
thread's; and an abort or fatal exit that oMLX's process logs and then dumps is one death."""

from __future__ import annotations

from pathlib import Path

from conftest import pasted, stream_of
from omlx_logscan import analyze
from omlx_logscan.output.phrases import crash_rows

# The thread that crashed decodes; another thread is in a prefill at the same moment.
DUMP = (
    "Fatal Python error: Aborted\n"
    "\n"
    "Thread 0x000000016f7d3000 (most recent call first):\n"
    '  File "/x/omlx/scheduler.py", line 1780 in _do_external_prefill\n'
    '  File "/usr/lib/python3.12/threading.py", line 1010 in run\n'
    "\n"
    "Current thread 0x00000001f0d2c0c0 (most recent call first):\n"
    '  File "/x/mlx_lm/generate.py", line 1767 in _next\n'
    '  File "/x/omlx/scheduler.py", line 5439 in step\n'
    '  File "/x/omlx/engine_core.py", line 512 in _engine_loop\n'
)
ABORT = (
    "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer "
    "execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n"
)
SERVED = "2026-06-01 10:00:00,000 - omlx.server - INFO - [-] - Chat completion: 12 tokens in 1.0s\n"
# oMLX's fatal exit (omlx/utils/fatal.py): the CRITICAL line, then faulthandler.dump_traceback(all_threads=True).
FATAL = (
    "2026-06-01 10:00:01,000 - omlx.utils.fatal - CRITICAL - [-] - Scheduler shutdown timed out after 60s "
    "waiting for 1 async store_cache future(s); exiting process so the supervisor can restart with a clean state\n"
)
THREADS = DUMP.split("\n", 2)[2]  # what fatal_exit dumps: the threads, without a fatal error's header


def funcs(frames: list[dict[str, object]]) -> list[object]:
    return [frame["func"] for frame in frames]


def test_a_dumps_threads_are_separate_stacks(tmp_path: Path) -> None:
    (dump,) = stream_of(pasted(tmp_path, DUMP)).events
    assert dump.kind == "faulthandler_dump"
    threads = dump.fields["threads"]
    assert [(t["id"], t["current"]) for t in threads] == [("0x000000016f7d3000", False), ("0x00000001f0d2c0c0", True)]
    assert funcs(threads[0]["frames"]) == ["run", "_do_external_prefill"]  # outermost first, as a traceback
    assert funcs(dump.fields["traceback"]) == ["_engine_loop", "step", "_next"]  # the current thread's alone


def test_a_dump_without_a_current_thread_has_no_stack_of_the_crash(tmp_path: Path) -> None:
    (dump,) = stream_of(pasted(tmp_path, DUMP.replace("Current thread", "Thread"))).events
    assert len(dump.fields["threads"]) == 2
    assert dump.fields["traceback"] == []  # the crash was on a thread that ran no Python


def test_thread_headers_with_names_in_place_of_the_call_order(tmp_path: Path) -> None:
    # Some pastes name the threads where faulthandler says "(most recent call first)", and keep basenames.
    text = (
        "Fatal Python error: Aborted\n\n"
        "Current thread 0x0000000204842000 (writer: cache.py:854 _writer_loop):\n"
        '  File "cache.py", line 854 in _writer_loop\n'
        '  File "store.py", line 311 in _writer_loop\n\n'
        "Thread 0x0000000201046000 (engine):\n"
        '  File "scheduler.py", line 121 in step\n'
    )
    (dump,) = stream_of(pasted(tmp_path, text)).events
    assert [t["current"] for t in dump.fields["threads"]] == [True, False]
    innermost = dump.fields["traceback"][-1]
    assert (innermost["path"], innermost["line"], innermost["func"]) == ("cache.py", 854, "_writer_loop")


def test_an_abort_and_its_dump_are_one_crash(tmp_path: Path) -> None:
    stream = stream_of(pasted(tmp_path, SERVED + ABORT + DUMP))
    assert [ev.kind for ev in stream.events] == ["request_complete", "gpu_error", "process_exit"]
    analysis = analyze(stream)
    (crash,) = crash_rows(analysis)
    assert crash["kind"] == "process_exit"
    assert crash["detail"].endswith(", in generate.py:1767 _next")  # where the thread that crashed was
    assert len(analysis.outages.items) == 1
    (fault,) = analysis.faults
    (signature,) = analysis.signatures
    assert signature.call_site == "decode"  # the current thread's stack: the other one's prefill is not the fault's
    assert fault.signature == signature.id


def test_a_blank_line_between_an_abort_and_its_dump(tmp_path: Path) -> None:
    stream = stream_of(pasted(tmp_path, ABORT + "\n" + DUMP))
    assert [ev.kind for ev in stream.events] == ["gpu_error", "process_exit"]
    assert stream.accounting.unparsed == 0


def test_a_fatal_exit_and_its_thread_dump_are_one_exit(tmp_path: Path) -> None:
    own_frame = '  File "/x/omlx/utils/fatal.py", line 24 in fatal_exit\n'
    current = "Current thread 0x00000001f0d2c0c0 (most recent call first):\n"
    threads = THREADS.replace(current, current + own_frame)
    stream = stream_of(pasted(tmp_path, SERVED + FATAL + threads + SERVED.replace("00,000", "09,000")))
    assert [ev.kind for ev in stream.events] == ["request_complete", "process_exit", "request_complete"]
    exit_event = stream.events[1]
    assert exit_event.fields["reason"] == "fatal_exit"
    assert funcs(exit_event.fields["traceback"]) == ["_engine_loop", "step", "_next", "fatal_exit"]
    (crash,) = crash_rows(analyze(stream))
    assert crash["detail"].endswith(", in generate.py:1767 _next")  # where the exit was called, not its own frame


def test_a_dump_after_a_record_of_no_death_is_its_own(tmp_path: Path) -> None:
    stream = stream_of(pasted(tmp_path, SERVED + DUMP))
    assert [ev.kind for ev in stream.events] == ["request_complete", "faulthandler_dump"]
