"""Everything the timeline and the report say about a log, computed once: analysis, why, versions, bounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from omlx_logscan.analysis.attribution import WhyFaulted, explain
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.analysis.outage_model import WEDGE_AFTER_S
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.inputs.overlays import Overlay
from omlx_logscan.stream.event_stream import EventStream

if TYPE_CHECKING:
    from omlx_logscan.analysis.bounds import Bounds
    from omlx_logscan.analysis.probes import ProbeEvidence
    from omlx_logscan.inputs.oshistory import OsHistory


@dataclass
class Investigation:
    analysis: Analysis
    why: WhyFaulted
    os_versions: dict[int, str] | None  # session → macOS version, when an OS history was given
    bounds: Bounds | None
    probes: ProbeEvidence | None = None  # the probes read back with the log (--probes), if any


def investigate(
    stream: EventStream, history: OsHistory | None, overlays: list[Overlay], *, wedge_after_s: float = WEDGE_AFTER_S
) -> Investigation:
    return investigation_of(analyze(stream, wedge_after_s=wedge_after_s), history, overlays)


def investigation_of(
    analysis: Analysis, history: OsHistory | None = None, overlays: Sequence[Overlay] = ()
) -> Investigation:
    """What the timeline says beyond the analysis: why each fault happened, and with an OS history
    each session's macOS version and the version bounds."""
    why = explain(analysis, list(overlays))
    if history is None:
        return Investigation(analysis, why, None, None)
    from omlx_logscan.analysis.bounds import build_bounds, session_os_versions

    return Investigation(
        analysis, why, session_os_versions(analysis.sessions, history), build_bounds(analysis, history)
    )
