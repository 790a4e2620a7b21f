"""Whether a fault's process went on after it: only the log's own later lines say so (review B1, B6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import analysis_of

FAULT = (
    "2026-09-19 16:00:01,000 - omlx.engine_core - ERROR - [-] - Engine loop error: [METAL] Command buffer "
    "execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
)
TIME_ONLY_FAULT = (
    "{} - omlx.scheduler - ERROR - Engine loop error: [METAL] Command buffer execution failed: "
    "Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
)
TIME_ONLY_CHAT = "{} - omlx.server - INFO - Chat completion: model=m, 10 tokens in 1.00s (10.0 tok/s), prompt: 5\n"


@pytest.mark.parametrize(
    "after",
    [
        "\nAfter this I ran:\n- `brew services restart omlx`\n",  # a user's note and a quoted command
        "\nsteps  - restarted the server, same thing\n",  # a note that looks like the short log form
        '\n  "procName" : "python3.12",\n  "exception" : {"type":"EXC_CRASH","signal":"SIGABRT"},\n',  # .ips JSON
    ],
)
def test_text_under_a_fault_that_is_not_omlx_s_is_no_sign_it_went_on(after: str, tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(FAULT + after)
    assert [f.outcome for f in analysis_of(log).faults] == ["unknown"]


def test_an_undated_omlx_record_under_a_fault_still_shows_it_went_on(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(FAULT + "\nomlx.scheduler - INFO - prefix cache: re-prefills 10 of 20 tokens\n")
    assert [f.outcome for f in analysis_of(log).faults] == ["absorbed"]


def test_later_time_only_lines_after_a_time_only_fault_show_it_went_on(tmp_path: Path) -> None:
    # No date anywhere: the times of day, in file order, still say what came after the fault.
    log = tmp_path / "paste.log"
    log.write_text(
        TIME_ONLY_FAULT.format("23:58:01.100")
        + TIME_ONLY_CHAT.format("23:59:30.000")
        + TIME_ONLY_FAULT.format("00:00:40.500")
    )
    assert [f.outcome for f in analysis_of(log).faults] == ["absorbed", "unknown"]


def test_a_time_only_line_at_the_fault_s_own_time_is_not_later(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(TIME_ONLY_FAULT.format("23:58:01.100") + TIME_ONLY_CHAT.format("23:58:01.100"))
    assert [f.outcome for f in analysis_of(log).faults] == ["unknown"]


def test_a_client_disconnect_after_a_fault_does_not_absorb_it(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "2026-09-19 16:00:00,000 - omlx.server - INFO - [-] - CORS origins: ['*']\n"
        + FAULT
        + "2026-09-19 16:00:10,000 - omlx.server - INFO - [-] - Client disconnected during streaming "
        "(is_disconnected), cancelling\n"
        "2026-09-19 16:00:30,000 - omlx.server - INFO - [-] - CORS origins: ['*']\n"
    )
    analysis = analysis_of(log)
    assert [fault.outcome for fault in analysis.faults] == ["crash"]
    assert analysis.sessions[0].end_reason == "crash"
