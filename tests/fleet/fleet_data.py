"""Two hosts' exports and timeline documents, built once for the fleet tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, ROOT
from omlx_logscan.cli.app import app

HISTORY = ROOT / "examples" / "os-history.txt"
runner = CliRunner()


@dataclass
class Fleet:
    root: Path
    tables: Path
    timelines: dict[str, dict[str, Any]]  # each host's own timeline document
    documents: list[Path]


def invoke(*args: str) -> str:
    result = runner.invoke(app, [*args, "-q"])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="session")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """mac-01 runs the example log; mac-02 the same log cut short before its last two faults, in another zone."""
    root = tmp_path_factory.mktemp("fleet")
    lines = EXAMPLE.read_text().splitlines(keepends=True)
    cut = next(number for number, line in enumerate(lines) if line.startswith("2026-09-16 03"))
    logs = {"mac-01": "".join(lines), "mac-02": "".join(lines[:cut])}
    zones = {"mac-01": "Europe/Berlin", "mac-02": "America/New_York"}
    tables = root / "tables"
    timelines, documents = {}, []
    for host, text in logs.items():
        folder = root / "logs" / host
        folder.mkdir(parents=True)
        (folder / "server.log").write_text(text)
        common = ["--host", host, "--tz", zones[host], "--os-history", str(HISTORY)]
        invoke("export", str(folder), *common, "-o", str(tables))
        text_out = invoke("timeline", str(folder), *common, "-f", "json")
        timelines[host] = json.loads(text_out)
        document = root / "reports" / f"{host}.json"
        document.parent.mkdir(exist_ok=True)
        document.write_text(text_out)
        documents.append(document)
    return Fleet(root, tables, timelines, documents)
