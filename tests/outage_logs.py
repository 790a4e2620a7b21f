"""Logs of the outage generator (bench/make_outages.py), written into a test's folder with their truth."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from conftest import ROOT


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_outages", ROOT / "bench" / "make_outages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_outages", module)
    spec.loader.exec_module(module)
    return module


make_outages = _generator()


def outage_log(
    folder: Path, seed: int, fmt: str, level: str, incidents: tuple[str, ...] | None = None
) -> tuple[Path, dict[str, Any]]:
    """A generated log in ``folder`` and its truth (every incident unless ``incidents`` says otherwise)."""
    path = folder / f"s{seed}-{fmt}-{level}.log"
    chosen = make_outages.INCIDENTS if incidents is None else incidents
    return path, make_outages.write_log(path, seed, fmt, level, chosen)
