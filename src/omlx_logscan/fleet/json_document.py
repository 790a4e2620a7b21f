"""The ``fleet --format json`` document."""

from __future__ import annotations

from typing import Any

from omlx_logscan.fleet.summary import Fleet

FLEET_SCHEMA = "omlx-logscan/fleet/2"


def fleet_document(fleet: Fleet, sources: list[str]) -> dict[str, Any]:
    from omlx_logscan import __version__
    from omlx_logscan.analysis.bounds import CONFIDENCE

    return {
        "schema": FLEET_SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        "sources": sources,
        "confidence": CONFIDENCE,
        "hosts": fleet.hosts,
        "versions": fleet.versions,
        "upgrades": fleet.upgrades,
    }
