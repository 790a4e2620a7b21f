"""Both C++ runtimes' aborts (issue 28 item 5): crash evidence when they end a running process, a note
when they follow its orderly stop (libstdc++'s words as a stopped Linux process exits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import analysis_of, pasted
from omlx_logscan.analysis.check import Rules, run_check
from omlx_logscan.parsing.grammar import parse_line

SERVING = (
    "2026-12-04 16:58:30,000 - omlx.server - INFO - Server initialized with 1 models\n"
    "2026-12-04 16:58:35,000 - omlx.server - INFO - Chat completion: 24 tokens in 0.09s (273.9 tok/s), prompt: 34\n"
)
# The tail of a console capture of oMLX 0.4.4 stopped by SIGTERM on Linux (tests/fixtures/real-omlx).
STOPPED = (
    "2026-12-04 16:58:41,612 - omlx.engine_pool - INFO - Engine pool shutdown complete\n"
    "INFO:     Application shutdown complete.\n"
    "INFO:     Finished server process [29919]\n"
)
NEXT = "2026-12-04 16:59:00,000 - omlx.server - INFO - Server initialized with 1 models\n"
LIBSTDCXX = (
    "terminate called without an active exception",
    "terminate called after throwing an instance of 'std::runtime_error'",
)
LIBCXXABI = "libc++abi: terminating due to uncaught exception of type std::runtime_error: boom"


@pytest.mark.parametrize("line", [*LIBSTDCXX, LIBCXXABI])
def test_either_runtime_abort_is_an_abort_line(line: str) -> None:
    assert parse_line(line).form == "abort"


@pytest.mark.parametrize("line", [*LIBSTDCXX, LIBCXXABI])
@pytest.mark.parametrize("following", [NEXT, ""], ids=["restarted", "log-ends"])
def test_an_abort_after_the_orderly_stop_is_a_note(tmp_path: Path, line: str, following: str) -> None:
    analysis = analysis_of(pasted(tmp_path, SERVING + STOPPED + line + "\n" + following))
    first = analysis.sessions[0]
    assert len(analysis.sessions) == (2 if following else 1)
    assert first.end_reason == "shutdown" and [ev.message for ev in first.exit_notes] == [line]
    assert analysis.crash_evidence() == [] and analysis.outages.items == []
    assert run_check(analysis, Rules(("crash", "outage"))).exit_code == 0


@pytest.mark.parametrize("line", [*LIBSTDCXX, LIBCXXABI])
def test_an_abort_that_ends_a_running_process_is_a_crash(tmp_path: Path, line: str) -> None:
    analysis = analysis_of(pasted(tmp_path, SERVING + line + "\n" + NEXT))
    first = analysis.sessions[0]
    assert first.end_reason == "crash" and first.exit_notes == []
    assert [ev.message for ev in analysis.crash_evidence()] == [line]
    assert run_check(analysis, Rules(("crash", "outage"))).exit_code == 1
