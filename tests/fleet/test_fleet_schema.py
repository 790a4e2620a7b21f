"""The fleet document against the schema the package ships, as a real subprocess over exports, a glob
of export folders, timeline documents, and both at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, schema_errors
from fleet_data import Fleet
from fleet_data import fleet as fleet  # the fixture
from omlx_logscan.output.documents import FLEET_SCHEMA


@pytest.mark.slow
@pytest.mark.parametrize("sources", ["exports", "glob", "documents", "mixed"])
def test_the_fleet_document_meets_its_schema(fleet: Fleet, sources: str) -> None:
    chosen = {
        "exports": [str(fleet.tables)],
        "glob": [str(fleet.root / "tab*")],
        "documents": [str(d) for d in fleet.documents],
        "mixed": [str(fleet.tables), str(fleet.documents[0])],
    }[sources]
    done = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "fleet", *chosen, "-f", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=300,
        check=True,
    )
    document = json.loads(done.stdout)
    assert document["schema"] == FLEET_SCHEMA and document["upgrades"]
    errors = schema_errors(document)
    assert not errors, "\n".join(errors[:20])
