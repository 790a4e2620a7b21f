"""The core is a library: usable without the command line, and cheap to import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import EXAMPLE

LIBRARY_USE = """
import json, sys
import omlx_logscan
cheap = "polars" not in sys.modules
from omlx_logscan import analyze, read_events, resolve
analysis = analyze(read_events(resolve([sys.argv[1]])))
print(json.dumps({
    "cheap": cheap,
    "faults": len(analysis.faults),
    "loaded": sorted(name for name in ("typer", "click", "rich") if name in sys.modules),
}))
"""


@pytest.mark.slow
def test_the_core_runs_without_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY_USE, str(EXAMPLE)], capture_output=True, text=True, check=True, timeout=120
    )
    seen = json.loads(done.stdout)
    assert seen == {"cheap": True, "faults": 6, "loaded": []}


def test_unknown_library_names_are_attribute_errors() -> None:
    import omlx_logscan

    assert {"analyze", "read_events", "resolve"} <= set(dir(omlx_logscan))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        omlx_logscan.nope  # noqa: B018
