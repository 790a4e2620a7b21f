"""A Metal error nothing but its own text ties to oMLX (another program's line, a bare paste) is never
passed by ``check``: the fault rules see a fault of unknown outcome, which no default rule fails,
so ``unparsed_gpu_error`` finds it; a fault in oMLX's own records stays the fault rules' to judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, REAL, analysis_of
from omlx_logscan.analysis.check import Rules, UnparsedGpuError, run_check

METAL_OTHER = FIXTURES / "pastes" / "metal-other"
RULE = Rules(("unparsed_gpu_error",))
CODE = "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)"
TIMEOUT = f"[METAL] Command buffer execution failed: Caused GPU Timeout Error {CODE}"


@pytest.mark.parametrize(("name", "line"), [("llama-cpp-metal-timeout.log", 7), ("ollama-metal-timeout.log", 3)])
def test_a_metal_error_in_another_programs_line_is_found(name: str, line: int) -> None:
    result = run_check(analysis_of(METAL_OTHER / name), RULE)
    (finding,) = result.findings
    assert finding.line == line and isinstance(finding.subject, UnparsedGpuError)
    assert "kIOGPUCommandBufferCallbackErrorTimeout" in finding.subject.text


def test_a_bare_metal_line_with_nothing_after_it_is_found(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(f"Engine halted: {TIMEOUT}\n", encoding="utf-8")
    assert len(run_check(analysis_of(log), RULE).findings) == 1


@pytest.mark.parametrize(
    "line",
    [
        f"2026-09-15 20:19:38,123 - omlx.scheduler - ERROR - [-] - Prefill failed for r1: {TIMEOUT}",
        f"2026-09-15 20:19:38,123 - omlx.engine_core - ERROR - [-] - Engine loop error: {TIMEOUT}",
    ],
)
def test_a_fault_in_an_omlx_record_is_left_to_the_fault_rules(tmp_path: Path, line: str) -> None:
    log = tmp_path / "server.log"
    log.write_text(line + "\n", encoding="utf-8")
    assert run_check(analysis_of(log), RULE).findings == []


def test_an_absorbed_fault_of_a_real_paste_is_not_found() -> None:
    assert run_check(analysis_of(REAL / "omlx-issue-3399.log"), RULE).findings == []
