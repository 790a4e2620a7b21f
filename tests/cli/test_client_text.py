"""Issue 29 item 4: what a client sends is not what the driver says. Every Metal error the catalog
knows, placed in every message oMLX writes that quotes a client's text, is no GPU fault; the same
text in oMLX's own failure is one. Through real processes: ``check`` is what a supervisor runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from omlx_logscan.parsing.catalog import GPU_CODE_NAMES, GPU_CODE_PREFIX, RESOURCE_LIMIT_CODE

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
STAMP = "2026-06-21 01:{:02d}:{:02d},682"
# Every Metal error the catalog names (a code and its name, and MLX's resource limit, which has none).
METAL_ERRORS = [
    *(f"({code}:{GPU_CODE_PREFIX}{name})" for code, name in GPU_CODE_NAMES.items()),
    "[metal::malloc] Resource limit (499000) exceeded",
]
# The messages that quote a client's text: each 4xx answer's detail (both arrows oMLX has written),
# and the request body logged at TRACE.
ECHOES = [
    *(
        f"POST /v1/chat/completions {arrow} {status}: Unsupported content part type: '{{}}'"
        for arrow in ("→", "->")
        for status in (400, 404, 413, 422, 429)
    ),
    'Incoming POST /v1/chat/completions — body: {{"messages": [{{"role": "user", "content": "{}"}}]}}',
]


def _log(tmp_path: Path, messages: list[str]) -> Path:
    lines = [f"{STAMP.format(n // 60, n % 60)} - omlx.server - WARNING - {text}" for n, text in enumerate(messages)]
    path = tmp_path / "server.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "omlx_logscan", *args]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=120, check=False)


@pytest.mark.slow
def test_a_metal_error_a_client_sent_is_no_fault(tmp_path: Path) -> None:
    messages = [echo.format(error) for echo in ECHOES for error in METAL_ERRORS]
    log = _log(tmp_path, messages)
    assert _run("check", str(log)).returncode == 0
    rows = [json.loads(line) for line in _run("events", str(log), "-f", "ndjson").stdout.splitlines()]
    assert len(rows) == len(messages)
    assert not [row for row in rows if row["kind"] == "gpu_error"]
    assert {row.get("echoed_gpu_code") for row in rows} == {*GPU_CODE_NAMES.values(), RESOURCE_LIMIT_CODE}


@pytest.mark.slow
def test_the_same_text_in_omlx_s_own_failure_is_a_fault(tmp_path: Path) -> None:
    own = f"POST /v1/chat/completions → 500: Command buffer execution failed: Ignored {METAL_ERRORS[1]}"
    result = _run("check", str(_log(tmp_path, [own])))
    assert result.returncode == 1 and "penalty_box" in result.stdout
