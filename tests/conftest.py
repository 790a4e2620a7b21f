"""Shared paths and helpers for the test suite."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.analysis.model import Analysis
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.stream.model import EventStream
from omlx_logscan.stream.read import read_events

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
REAL = FIXTURES / "real"
GENERATED = FIXTURES / "generated"
EXAMPLE = ROOT / "examples" / "omlx-3706.log"
# A routine WARNING line (format: second, text) and a GPU timeout fault, for small hand-made logs.
WARN = "2026-09-15 20:00:{:02d},000 - omlx.scheduler - WARNING - [-] - message {}\n"
TIMEOUT_LINE = (
    "2026-09-15 20:19:38,663 - omlx.engine_core - ERROR - [-] - Engine loop error: [METAL] Command buffer execution "
    "failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
)


def bench_module(name: str) -> ModuleType:
    """A script of ``bench/`` (the log generators) as a module: the tests write their logs with them."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def stream_of(*paths: str | Path) -> EventStream:
    return read_events(resolve([str(p) for p in paths]))


def analysis_of(*paths: str | Path) -> Analysis:
    return analyze(stream_of(*paths))


def generated_cases() -> list[str]:
    return sorted(p.name.removesuffix(".truth.json") for p in GENERATED.glob("*.truth.json"))


def truth(case: str) -> dict[str, Any]:
    return json.loads((GENERATED / f"{case}.truth.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def example_analysis() -> Analysis:
    return analysis_of(EXAMPLE)


# CI runs the property tests with more examples (a fuzz run of a few thousand); locally they stay quick.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("ci", max_examples=1500)
_hypothesis_settings.register_profile("dev", max_examples=150)
_hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "dev")
