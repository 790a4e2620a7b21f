"""The JSON Schemas (draft 2020-12) of every JSON document the tool writes, shipped in the package
(``output/schemas/NAME.json``).

Each file is one schema; the parts documents share live in ``common.json`` and are referred to by
their ``$id`` (``urn:omlx-logscan:common``). A closed set the code types as a ``typing.Literal`` is
written ``"enum": "NAME"`` (NAME a key of ``typed_sets``): the schema lists that type's values, so the
schemas and the data model cannot drift apart. ``bundled`` gives one schema with every schema it
refers to embedded under ``$defs`` (a compound schema, as draft 2020-12 defines it), so a
validator needs nothing but the one file ``logscan schema NAME`` prints.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any, get_args

# The schemas a reader may ask for: the documents (their ``schema`` field is ``omlx-logscan/NAME/N``,
# the ``title`` of its schema file)
# and ``event``, one row of ``events -f ndjson``.
DOCUMENTS = ("timeline", "events", "sessions", "bounds", "check", "fleet")
NAMES = (*DOCUMENTS, "event")

_PARTS = ("common",)  # files that hold shared definitions, not a schema a reader asks for


@cache
def typed_sets() -> dict[str, tuple[str, ...]]:
    """The values of each closed set the code types, by the name of its type (imported when a schema is
    read, not when the command line starts)."""
    from omlx_logscan.analysis.attribution import Supported, Trigger
    from omlx_logscan.analysis.outage_model import OutageKind
    from omlx_logscan.analysis.probes import ProbeVerdict
    from omlx_logscan.analysis.results import CallSite, Outcome, SessionEnd, WindowEnd
    from omlx_logscan.analysis.rules import RULES
    from omlx_logscan.analysis.severity import IncidentKind, Severity
    from omlx_logscan.parsing.catalog import FaultKind
    from omlx_logscan.parsing.kinds import EventKind
    from omlx_logscan.parsing.probes import ProbeOutcome, ProbeTrigger

    types = {
        "EventKind": EventKind,
        "FaultKind": FaultKind,
        "CallSite": CallSite,
        "Outcome": Outcome,
        "OutageKind": OutageKind,
        "SessionEnd": SessionEnd,
        "WindowEnd": WindowEnd,
        "Trigger": Trigger,
        "Supported": Supported,
        "ProbeOutcome": ProbeOutcome,
        "ProbeTrigger": ProbeTrigger,
        "ProbeVerdict": ProbeVerdict,
        "IncidentKind": IncidentKind,
        "Severity": Severity,
    }
    return {name: get_args(literal) for name, literal in types.items()} | {"Rule": RULES}


def _with_typed_sets(schema: Any) -> Any:
    """``schema`` with each ``"enum": "NAME"`` replaced by the values of the type NAME."""
    if isinstance(schema, dict):
        return {
            key: list(typed_sets()[value]) if key == "enum" and isinstance(value, str) else _with_typed_sets(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_with_typed_sets(value) for value in schema]
    return schema


@cache
def raw(name: str) -> dict[str, Any]:
    """One schema file as written, its references to the others unresolved, its typed sets listed."""
    text = files("omlx_logscan.output").joinpath("schemas", f"{name}.json").read_text(encoding="utf-8")
    return _with_typed_sets(json.loads(text))  # type: ignore[no-any-return]


@cache
def _by_id() -> dict[str, str]:
    return {raw(name)["$id"]: name for name in (*NAMES, *_PARTS)}


def _refers_to(schema: Any) -> set[str]:
    """The ids of the other schemas a schema's ``$ref`` values point into."""
    if isinstance(schema, dict):
        found = {value.split("#", 1)[0] for key, value in schema.items() if key == "$ref" and isinstance(value, str)}
        return {ref for ref in found if ref} | {ref for value in schema.values() for ref in _refers_to(value)}
    if isinstance(schema, list):
        return {ref for value in schema for ref in _refers_to(value)}
    return set()


def bundled(name: str) -> dict[str, Any]:
    """The schema ``name`` with every schema it refers to, directly or not, embedded in its ``$defs``."""
    if name not in NAMES:
        raise KeyError(name)
    root = raw(name)
    wanted, embedded = _refers_to(root) - {root["$id"]}, {}
    while wanted:
        uri = wanted.pop()
        embedded[uri] = raw(_by_id()[uri])
        wanted |= _refers_to(embedded[uri]) - {root["$id"], *embedded}
    defs = {**root.get("$defs", {}), **dict(sorted(embedded.items()))}
    return {**root, "$defs": defs} if defs else dict(root)


def name_of(document_schema: str) -> str | None:
    """The schema name of a document's ``schema`` field (``omlx-logscan/timeline/3`` → ``timeline``):
    only the version its schema file is of (its ``title``)."""
    _, _, rest = document_schema.partition("/")
    name = rest.partition("/")[0]
    return name if name in DOCUMENTS and raw(name)["title"] == document_schema else None
