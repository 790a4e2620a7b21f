"""A hook command's output is reported by its tail, never held whole (issue 29 item 7)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import tracemalloc

import pytest

from omlx_logscan.watch.hooks import OUTPUT_KEEP_CHARS, HookRun


@pytest.mark.slow
def test_a_hook_that_writes_hundreds_of_megabytes_costs_only_its_tail() -> None:
    output = tempfile.TemporaryFile()  # noqa: SIM115 - the run closes it
    output.truncate(256 << 20)  # 256 MiB of output (sparse: nothing is written to disk)
    output.seek(0, 2)
    output.write("last words é\n".encode())
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    run = HookRun("on-dead", "restart", 1, process, output, time.monotonic())
    tracemalloc.start()
    try:
        notice = run.result(time.monotonic(), timeout=10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert notice is not None
    assert notice.data["output"].endswith("last words é\n")
    assert len(notice.data["output"]) == OUTPUT_KEEP_CHARS
    assert peak < 1 << 20  # read whole, the output took 256 MiB
