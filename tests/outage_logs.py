"""Logs of the outage generator (bench/make_outages.py), written into a test's folder with their truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import bench_module

make_outages = bench_module("make_outages")


def outage_log(
    folder: Path, seed: int, fmt: str, level: str, incidents: tuple[str, ...] | None = None
) -> tuple[Path, dict[str, Any]]:
    """A generated log in ``folder`` and its truth (every incident unless ``incidents`` says otherwise)."""
    path = folder / f"s{seed}-{fmt}-{level}.log"
    chosen = make_outages.INCIDENTS if incidents is None else incidents
    return path, make_outages.write_log(path, seed, fmt, level, chosen)
