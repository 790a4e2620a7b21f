"""Everything the timeline and the report say about a log, computed once: analysis, why, versions, bounds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from omlx_logscan.analysis import Analysis, analyze
from omlx_logscan.attribution import WhyFaulted, explain
from omlx_logscan.events import EventStream
from omlx_logscan.overlay import Overlay

if TYPE_CHECKING:  # bounds and OS histories load only when an OS history is given
    from omlx_logscan.bounds import Bounds
    from omlx_logscan.oshistory import OsHistory


@dataclass
class Investigation:
    analysis: Analysis
    why: WhyFaulted
    os_versions: dict[int, str] | None  # session → macOS version, when an OS history was given
    bounds: Bounds | None


def investigate(stream: EventStream, history: OsHistory | None, overlays: list[Overlay]) -> Investigation:
    analysis = analyze(stream)
    if history is None:
        return Investigation(analysis, explain(analysis, overlays), None, None)
    from omlx_logscan.bounds import build_bounds, session_os_versions

    return Investigation(
        analysis,
        explain(analysis, overlays),
        session_os_versions(analysis.sessions, history),
        build_bounds(analysis, history),
    )
