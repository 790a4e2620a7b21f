"""The timeline's sections in order, built once from the investigation: text, Markdown, the JSON
document and the report each render this one list.

What a section shows is worked out here, once (the header, the escalation rows, the crash rows; the
fault attribution comes computed with the investigation); a renderer only formats it. Each
renderer matches on a section's class and ends in ``assert_never``, so a section that a format
forgets is a mypy error. A new part of the timeline is a class here, its line in
``timeline_sections``, a case in each renderer, and the golden files it changes.

The list's order is the timeline's, as Markdown shows it. The terminal shows the probes before the
bounds table and the report puts a maintainer's questions first: each says so in its own order
(``arranged``), and a test holds every order to every section. The JSON document keeps its
schema's order of keys (``documents.TIMELINE_KEYS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omlx_logscan.analysis.attribution import WhyFaulted
from omlx_logscan.analysis.failures import Errors
from omlx_logscan.analysis.outage_model import Outages
from omlx_logscan.analysis.results import Analysis, DeadWindow, Signature
from omlx_logscan.analysis.trouble import Trouble
from omlx_logscan.output.phrases import crash_rows, escalation_rows
from omlx_logscan.stream.event_stream import header

if TYPE_CHECKING:
    from omlx_logscan.analysis.bounds import Bounds
    from omlx_logscan.analysis.investigation import Investigation
    from omlx_logscan.analysis.probes import ProbeEvidence


@dataclass(frozen=True)
class Heading:
    """What the log is: its files, span, level, oMLX versions, sessions and lines."""

    analysis: Analysis
    head: dict[str, Any]  # the stream's header
    os_versions: dict[int, str] | None


@dataclass(frozen=True)
class Incidents:
    """Every kind of trouble, worst first (analysis/incidents.py), and how many sessions were read."""

    items: list[Trouble]
    sessions: int


@dataclass(frozen=True)
class Escalation:
    """Every GPU fault in time order and what became of the engine after it."""

    analysis: Analysis
    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class OtherFailures:
    """Failures other than GPU faults, grouped by their message, and the requests rejected."""

    errors: Errors


@dataclass(frozen=True)
class Crashes:
    """Evidence of a crash: fatal exits, macOS crash reports, kernel panics."""

    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class DeadWindows:
    """The windows in which the driver's penalty box left the engine dead."""

    windows: list[DeadWindow]
    faults: int


@dataclass(frozen=True)
class OutageList:
    """Every kind of outage, certain or possible, with what the log hides of them."""

    outages: Outages


@dataclass(frozen=True)
class Signatures:
    """The distinct stacks the faults failed in."""

    signatures: list[Signature]
    faults: int


@dataclass(frozen=True)
class Why:
    """Why each fault happened (the attribution) and the overlays tested against the faults."""

    why: WhyFaulted
    faults: int


@dataclass(frozen=True)
class Summary:
    """One paragraph of what the log shows."""

    analysis: Analysis
    crashes: list[dict[str, Any]]  # the crash evidence's rows


@dataclass(frozen=True)
class Chart:
    """The lifetimes with a fault, a dead window or an outage, drawn (Markdown's Mermaid)."""

    analysis: Analysis
    os_versions: dict[int, str]


@dataclass(frozen=True)
class VersionBounds:
    """Faults per macOS (or oMLX) version with their upper bounds, when an OS history was given."""

    bounds: Bounds
    analysis: Analysis


@dataclass(frozen=True)
class Probes:
    """The generation probes a watch sent, read back with the log (``--probes``)."""

    evidence: ProbeEvidence
    analysis: Analysis


@dataclass(frozen=True)
class FirstFault:
    """The first fault as the log wrote it (the report quotes it)."""

    analysis: Analysis


@dataclass(frozen=True)
class Limits:
    """What the log cannot show (the report says it)."""

    analysis: Analysis
    os_versions: dict[int, str] | None


Section = (
    Heading
    | Incidents
    | Escalation
    | OtherFailures
    | Crashes
    | DeadWindows
    | OutageList
    | Signatures
    | Why
    | Summary
    | Chart
    | VersionBounds
    | Probes
    | FirstFault
    | Limits
)


def timeline_sections(found: Investigation) -> list[Section]:
    """The timeline of an investigation, section by section in the timeline's order."""
    analysis, os_versions = found.analysis, found.os_versions
    faults, crashes = len(analysis.faults), crash_rows(analysis)
    sections: list[Section] = [
        Heading(analysis, header(analysis.stream), os_versions),
        Incidents(analysis.incidents, len(analysis.sessions)),
        Escalation(analysis, escalation_rows(analysis, os_versions)),
        OtherFailures(analysis.errors),
        Crashes(crashes),
        DeadWindows(analysis.dead_windows, faults),
        OutageList(analysis.outages),
        Signatures(analysis.signatures, faults),
        Why(found.why, faults),
        Summary(analysis, crashes),
        Chart(analysis, os_versions or {}),
    ]
    if found.bounds is not None:
        sections.append(VersionBounds(found.bounds, analysis))
    if found.probes is not None:
        sections.append(Probes(found.probes, analysis))
    return [*sections, FirstFault(analysis), Limits(analysis, os_versions)]


def arranged(sections: Sequence[Section], order: Sequence[type[Section]]) -> list[Section]:
    """The sections in a format's own ``order`` (the classes of every section, each once)."""
    return sorted(sections, key=lambda section: order.index(type(section)))
