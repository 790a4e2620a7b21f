"""JSON documents: each command's machine-readable result."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any, assert_never

from omlx_logscan import __version__
from omlx_logscan.analysis.attribution import Attribution, Evidence, LoadContext, WhyFaulted
from omlx_logscan.analysis.overlays import OverlayCorrelation
from omlx_logscan.analysis.results import Analysis, Signature
from omlx_logscan.output import sections as timeline
from omlx_logscan.output.failures import errors_document
from omlx_logscan.output.outages import outage_dict, outage_notes
from omlx_logscan.output.overlays import RATE_RATIO_TEST
from omlx_logscan.output.phrases import call_site_label, summary
from omlx_logscan.output.provenance import input_versions, session_versions
from omlx_logscan.output.why import evidence_what, hidden_phrases, load_label, load_note
from omlx_logscan.output.zoned import event_rows, zone_document
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.provenance import WriterVersions
from omlx_logscan.stream.event_stream import EventStream, header, skipped_files

if TYPE_CHECKING:
    from omlx_logscan.analysis.bounds import Bounds
    from omlx_logscan.analysis.check import CheckResult, Finding
    from omlx_logscan.analysis.pooled import Fleet


# Each document names its schema; a change a reader must know about is a new number.
BOUNDS_SCHEMA = "omlx-logscan/bounds/2"
CHECK_SCHEMA = "omlx-logscan/check/3"
EVENTS_SCHEMA = "omlx-logscan/events/2"
FLEET_SCHEMA = "omlx-logscan/fleet/2"
SESSIONS_SCHEMA = "omlx-logscan/sessions/2"
TIMELINE_SCHEMA = "omlx-logscan/timeline/3"


def document_header(stream: EventStream) -> dict[str, Any]:
    """The input's header, with the oMLX versions its messages allow (``omlx_version_range``)."""
    return {**header(stream), "omlx_version_range": versions_dict(input_versions(stream))}


def session_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """The sessions, each with the oMLX versions its own messages allow (across an upgrade, each its own)."""
    return [
        {**s.as_dict(), "omlx_version_range": versions_dict(found)}
        for s, found in zip(analysis.sessions, session_versions(analysis), strict=True)
    ]


def versions_dict(found: WriterVersions | None) -> dict[str, Any] | None:
    return found.as_dict() if found is not None else None


def bounds_document(bounds: Bounds, analysis: Analysis) -> dict[str, Any]:
    """The ``bounds --format json`` document."""
    from omlx_logscan.analysis.bounds import CONFIDENCE
    from omlx_logscan.output.versions import bounds_sentence

    document = {
        "schema": BOUNDS_SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        "header": document_header(analysis.stream),
        "by": bounds.by.value,
        "confidence": CONFIDENCE,
        "os_history": bounds.history.as_dict() if bounds.history else None,
        "rows": [row.as_dict() for row in bounds.rows],
        "sentence": bounds_sentence(bounds),
    }
    return zone_document(document, analysis.stream)


def check_document(result: CheckResult) -> dict[str, Any]:
    """The ``check --format json`` document (schema omlx-logscan/check/3)."""
    from omlx_logscan.output.findings import rule_finds, rule_threshold, rule_title, warning_message, warning_title

    document = {
        "schema": CHECK_SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        "status": "findings" if result.findings else "clean",
        "exit_code": result.exit_code,
        "input": {**result.input, "skipped": skipped_files(result.stream)},
        "fail_level": result.rules.fail_level,
        "rules": [
            {
                "rule": rule,
                "title": rule_title(rule),
                "finds": rule_finds(rule),
                "threshold": rule_threshold(result.rules, rule),
                "findings": result.count(rule),
            }
            for rule in result.rules.names
        ],
        "findings": [finding_dict(f) for f in result.findings],
        "warnings": [
            {
                "kind": item.kind,
                "severity": item.severity,
                "title": warning_title(item),
                "message": warning_message(item, result.sessions_read),
                "source": item.example.source,
                "line": item.example.line,
            }
            for item in result.warnings
        ],
    }
    return zone_document(document, result.stream) if result.stream is not None else document


def finding_dict(finding: Finding) -> dict[str, Any]:
    """One ``findings`` entry: the rule, its words, and where the finding points."""
    from omlx_logscan.output.findings import finding_message, finding_title

    return {
        "rule": finding.rule,
        "title": finding_title(finding),
        "message": finding_message(finding),
        "time": finding.time,
        "source": finding.source,
        "line": finding.line,
        "session": finding.session,
        "worst_case": finding.worst_case,
    }


def fleet_document(fleet: Fleet, sources: list[str]) -> dict[str, Any]:
    """The ``fleet --format json`` document: the pooled rows, and the sources they were read from."""
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


def events_document(stream: EventStream, events: Iterable[Event]) -> dict[str, Any]:
    """The ``events --format json`` document: the line accounting, then the events."""
    document = {
        "schema": EVENTS_SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        "header": document_header(stream),
        "events": list(event_rows(stream, events)),
    }
    return zone_document(document, stream)


def sessions_document(analysis: Analysis) -> dict[str, Any]:
    """The ``sessions --format json`` document: the process lifetimes."""
    document = {
        "schema": SESSIONS_SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        "sessions": session_rows(analysis),
    }
    return zone_document(document, analysis.stream)


# The timeline document's keys in the order its schema lists them (a key a new section adds follows
# them); ``bounds`` and ``probes`` are documents of their own (zoned apart), after the rest.
TIMELINE_KEYS = (
    "header",
    "sessions",
    "incidents",
    "faults",
    "dead_windows",
    "outages",
    "outage_notes",
    "signatures",
    "escalation",
    "crashes",
    "errors",
    "rejected_requests",
    "summary",
    "overlays",
)
NESTED_KEYS = ("bounds", "probes")


def timeline_document(sections: list[timeline.Section]) -> dict[str, Any]:
    """The ``timeline --format json`` document; every fault carries its attribution."""
    parts: dict[str, Any] = {}
    for section in sections:  # in the list's order: the attribution finds the faults there
        parts |= _document_part(section, parts)
    stream = next(section.analysis.stream for section in sections if isinstance(section, timeline.Heading))
    keys = [*TIMELINE_KEYS, *(key for key in parts if key not in TIMELINE_KEYS and key not in NESTED_KEYS)]
    document = {
        "schema": TIMELINE_SCHEMA,
        "generator": f"omlx-logscan {__version__}",
        **{key: parts[key] for key in keys},
    }
    return zone_document(document, stream) | {key: parts[key] for key in NESTED_KEYS if key in parts}


def _document_part(section: timeline.Section, parts: dict[str, Any]) -> dict[str, Any]:
    """What one section adds to the timeline document (the attribution goes into the faults already there)."""
    match section:
        case timeline.Heading():
            return {"header": document_header(section.analysis.stream), "sessions": session_rows(section.analysis)}
        case timeline.Incidents():
            return {"incidents": [item.as_dict() for item in section.items]}
        case timeline.Escalation():
            return {"faults": [f.as_dict() for f in section.analysis.faults], "escalation": section.rows}
        case timeline.OtherFailures():
            return errors_document(section.errors)
        case timeline.Crashes():
            return {"crashes": section.rows}
        case timeline.DeadWindows():
            return {"dead_windows": [w.as_dict() for w in section.windows]}
        case timeline.OutageList():
            outages = section.outages
            return {"outages": [outage_dict(o) for o in outages.items], "outage_notes": outage_notes(outages)}
        case timeline.Signatures():
            return {"signatures": [signature_dict(s) for s in section.signatures]}
        case timeline.Why():
            return why_part(parts["faults"], section.why)
        case timeline.Summary():
            return {"summary": summary(section.analysis, section.crashes)}
        case timeline.VersionBounds():
            return {"bounds": bounds_document(section.bounds, section.analysis)}
        case timeline.Probes():
            from omlx_logscan.output.probes import probes_document

            return {"probes": probes_document(section.evidence, section.analysis)}
        case timeline.Chart() | timeline.FirstFault() | timeline.Limits():  # drawings and the report's own parts
            return {}
        case _:
            assert_never(section)


def signature_dict(signature: Signature) -> dict[str, Any]:
    """One ``signatures`` entry: the stack's ids and frames, with its call site in words."""
    return {
        "id": signature.id,
        "faults": signature.faults,
        "call_site": signature.call_site,
        "call_site_label": call_site_label(signature),
        "innermost_code": signature.innermost_code,
        "exception": signature.exception,
        "frames": signature.frames,
    }


def why_part(faults: list[dict[str, Any]], why: WhyFaulted) -> dict[str, Any]:
    """The timeline document's faults, each with its ``attribution``, and its ``overlays``."""
    return {
        "faults": [
            {**fault, "attribution": attribution_dict(attribution)}
            for fault, attribution in zip(faults, why.attributions, strict=True)
        ],
        "overlays": [overlay_dict(o) for o in why.overlays],
    }


def attribution_dict(attribution: Attribution) -> dict[str, Any]:
    """One fault's ``attribution`` entry: the ids and numbers, with the words a reader needs."""
    return {
        "call_site": attribution.call_site,
        "trigger": attribution.trigger,
        "candidates": attribution.candidates,
        "possible": attribution.possible,
        "evidence": [_evidence_dict(e) for e in attribution.evidence],
        "invisible": hidden_phrases(attribution.hidden),
        "load": _load_dict(attribution.load),
    }


def _evidence_dict(evidence: Evidence) -> dict[str, Any]:
    return {
        "time": evidence.time,
        "source": evidence.source,
        "line": evidence.line,
        "message": evidence.message,
        "what": evidence_what(evidence),
        "supports": evidence.supports,
    }


def _load_dict(load: LoadContext) -> dict[str, Any]:
    return {
        "visible": load.visible,
        "label": load_label(load),
        "baseline": load.baseline,
        "windows": [w.as_dict() for w in load.windows],
        "note": load_note(load),
    }


def overlay_dict(overlay: OverlayCorrelation) -> dict[str, object]:
    """One ``overlays`` entry: the correlation's numbers and the test behind its p-value."""
    return {**overlay.as_dict(), "test": RATE_RATIO_TEST}


def write_json(document: Any, out: IO[str]) -> None:
    json.dump(document, out, indent=2, ensure_ascii=False, default=str)
    out.write("\n")
