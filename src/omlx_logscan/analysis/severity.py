"""Severity: how bad a thing oMLX wrote is, read from what its source does around the message.

One rule, written down here and in docs/severity.md. A lexicon entry (``parsing/lexicon.py``) knows
its level, whether it is written in an ``except`` block, which exception types that block catches
and what it does after the message (``Entry.handler_action``); the catalog knows what the message
means (an admission refusal, a client's abort, memory pressure). :func:`entry_severity` turns those
into one of four severities, or None for a message that tells of no trouble by itself. The cases
that the level alone would get wrong are grounded in oMLX's source, each named where it is decided
(the lines are those of oMLX's tip the lexicon was read from, commit 2df39bfc).

:data:`KIND_SEVERITY` is the default severity of each kind of incident, whatever wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Final, Literal, get_args

from omlx_logscan.parsing.catalog import CATALOG, FATAL_LOGGER
from omlx_logscan.parsing.kinds import EventKind
from omlx_logscan.parsing.lexicon import LOG, Entry

Severity = Literal["critical", "error", "warning", "notice"]
SEVERITIES: Final[tuple[Severity, ...]] = get_args(Severity)  # worst first

IncidentKind = Literal[
    "gpu_fault",
    "crash",
    "fatal_exit",
    "reboot",
    "dead_engine",
    "wedge",
    "error",
    "load_failure",
    "rejected",
    "memory_pressure",
    "aborted",
    "fallback",
]
INCIDENT_KINDS: Final[tuple[IncidentKind, ...]] = get_args(IncidentKind)

# Each kind's severity. A wedge is critical when it is certain (the engine took no new work
# again); a possible one is POSSIBLE_WEDGE. A GPU fault the process absorbed, or whose outcome the
# log does not show, is an error (one that ended the process is a crash).
KIND_SEVERITY: Final[Mapping[IncidentKind, Severity]] = {
    "crash": "critical",
    "fatal_exit": "critical",
    "reboot": "critical",
    "dead_engine": "critical",
    "wedge": "critical",
    "gpu_fault": "error",
    "error": "error",
    "load_failure": "error",
    "rejected": "warning",
    "memory_pressure": "warning",
    "aborted": "notice",
    "fallback": "notice",
}
POSSIBLE_WEDGE: Final[Severity] = "warning"

# The catalog's kinds of event that are incidents of their own kind, whatever the level says.
_CATALOG_KINDS: Final[Mapping[EventKind, IncidentKind]] = {
    "gpu_error": "gpu_fault",
    "crash_report": "crash",
    "kernel_panic": "reboot",
    "model_load_failed": "load_failure",
    "memory_pressure": "memory_pressure",
    "request_abort": "aborted",
    "request_error": "error",
}
# A request_error row of this tag is a refusal before any work: the memory guard, the preflight,
# the dynamic ceiling (server.py ``get_engine`` answers ModelTooLargeError and InsufficientMemoryError
# with 507).
_ADMISSION = "admission"
_STATUS_DECIDES = "http"  # the request_error rows of the HTTP error line, whose status is a placeholder
_TROUBLE_LEVELS: Final = ("WARNING", "ERROR", "CRITICAL")

# 507 Insufficient Storage is oMLX's refusal for lack of memory or disk (server.py ``get_engine`` and
# ``load_model_public``: ModelTooLargeError, InsufficientMemoryError; cluster/routes.py: InsufficientDiskError):
# a request turned away, like a 4xx, not a server failure.
_REFUSAL_STATUSES: Final = frozenset({507})

# A handler of a full queue is flow control, by design: cache/paged_ssd_cache.py:1910
# ``_enqueue_ssd_write`` (``except queue.Full:``) writes the block inline; server.py
# ``scheduler_queue_full_handler`` (SchedulerQueueFullError) answers 503 "Try again shortly". What it
# answers is a refusal, not a failure.
_FLOW_CONTROL = re.compile(r"queue\.?full", re.IGNORECASE)

# oMLX names the degraded path it takes: "falling back to LLM" (engine_pool.py ``EnginePool._load_engine``,
# VLM -> LLM and DFlash -> default engine), "falling back to normal path" (specprefill/draft.py
# ``run_specprefill_draft_scoring``, an ERROR in a handler that then clears the sparse indices and goes on).
# "CacheList fallback: failed …" or "fallback failed" is a fallback that failed: no match. At INFO
# and DEBUG oMLX reports the routine ones ("vlm_mtp routing skipped …; falling back to BatchGenerator").
_FALLS_BACK = re.compile(r"\bfall(?:s|ing)? back\b", re.IGNORECASE)

# Failures written below their weight: the code carries on, but what it meant to keep is gone.
# Keyed by the writing function (module.function) and the template.
LOST_WRITES: Final[frozenset[tuple[str, str]]] = frozenset(
    {
        # cache/boundary_snapshot_store.py:1149 ``_process_write_item``: DEBUG, then unlinks the temp and
        # target files; its ``finally`` drops the snapshot's registry entry. The snapshot is lost.
        (
            "omlx.cache.boundary_snapshot_store.BoundarySnapshotSSDStore._process_write_item",
            "Background snapshot write failed: {any}",
        ),
        # the same store's ``_write_inline`` (:992): unlinks both files, returns False.
        (
            "omlx.cache.boundary_snapshot_store.BoundarySnapshotSSDStore._write_inline",
            "Inline boundary snapshot write failed for {any}/{int}: {any}",
        ),
        # its ``save`` (:370): the snapshot was neither queued nor written, returns False.
        ("omlx.cache.boundary_snapshot_store.BoundarySnapshotSSDStore.save", "Failed to save boundary snapshot: {any}"),
        # cache/vision_feature_cache.py:484 ``_writer_loop``: removes the feature from the index and
        # unlinks its files (disk full or any other failure).
        (
            "omlx.cache.vision_feature_cache.VisionFeatureSSDCache._writer_loop",
            "Vision cache background write failed: {any}",
        ),
        ("omlx.cache.vision_feature_cache.VisionFeatureSSDCache._writer_loop", "Vision cache disk full: {any}"),
    }
)


def at_least(severity: Severity, threshold: Severity) -> bool:
    """Whether ``severity`` is ``threshold`` or worse."""
    return SEVERITIES.index(severity) <= SEVERITIES.index(threshold)


def kind_severity(kind: IncidentKind, certain: bool = True) -> Severity:
    """A kind's default severity; an uncertain wedge is only a possible one."""
    return POSSIBLE_WEDGE if kind == "wedge" and not certain else KIND_SEVERITY[kind]


def status_kind(status: int) -> IncidentKind:
    """What an HTTP error status oMLX answered tells: a refusal (4xx, 507) or a failure (other 5xx)."""
    return "rejected" if status < 500 or status in _REFUSAL_STATUSES else "error"


def unmatched_severity(level: str | None) -> Severity | None:
    """A record no message of oMLX's matches: an error at ERROR or CRITICAL, else nothing by itself."""
    return "error" if level in ("ERROR", "CRITICAL") else None


@cache
def _catalog_kinds() -> dict[str, IncidentKind]:
    """Each entry's incident kind as the catalog row that covers it says. The HTTP error line of
    ``http_exception_handler`` (``%s %s → %d: %s``) is left out: its status, in the line, decides."""
    kinds: dict[str, IncidentKind] = {}
    for row in CATALOG:
        kind = _CATALOG_KINDS.get(row.kind)
        if kind is None or row.tag == _STATUS_DECIDES:
            continue
        for entry_id in row.entries:
            kinds.setdefault(entry_id, "rejected" if kind == "error" and row.tag == _ADMISSION else kind)
    return kinds


def _answered(entry: Entry) -> int | None:
    """The HTTP error status the message goes with: an error's detail's own, or its handler's answer."""
    if entry.kind == "http":
        return entry.status
    return entry.answer_status if entry.handler_action == "answer" else None


def entry_kind(entry: Entry) -> IncidentKind | None:
    """The kind of incident an entry's message tells by what it means or does: a fatal exit, a
    catalog kind, an HTTP error answered, a fallback taken. None when only its level can rank it."""
    if entry.handler_action == "exit" or (entry.logger == FATAL_LOGGER and entry.level == "CRITICAL"):
        # utils/fatal.py:17 ``fatal_exit``: logs the reason at CRITICAL, dumps the threads, os._exit(70)
        return "fatal_exit"
    if entry.id in _catalog_kinds():
        return _catalog_kinds()[entry.id]
    if entry.level not in (None, *_TROUBLE_LEVELS):
        return None  # DEBUG and INFO: what oMLX itself deems routine, whatever path follows
    status = _answered(entry)
    if status is not None:
        return "rejected" if any(map(_FLOW_CONTROL.search, entry.catches)) else status_kind(status)
    if entry.kind == LOG and entry.handler_action != "answer" and _FALLS_BACK.search(entry.template):
        return "fallback"
    return None


def entry_severity(entry: Entry) -> Severity | None:
    """How bad the message of ``entry`` is, from its kind of incident, its handler and its level.
    None: it tells of no trouble by itself (an INFO line, a DEBUG trace, an exception's text)."""
    kind = entry_kind(entry)
    if kind is not None:
        return KIND_SEVERITY[kind]
    if (f"{entry.module}.{entry.function}", entry.template) in LOST_WRITES:
        return "error"
    if entry.level in ("ERROR", "CRITICAL"):
        return "error"
    if entry.kind == LOG and entry.level == "WARNING":
        # Caught and carried on: the code recovered, as designed. paged_ssd_cache.py:1910
        # ``_enqueue_ssd_write``: ``except queue.Full:`` warns "SSD write queue saturated" and
        # writes the block inline: flow control, nothing lost.
        return "notice" if entry.handler_action == "carry_on" else "warning"
    return None
