"""The event kinds: one registry of their names and of what each says about the process.

The analyzers ask questions of kinds (did the process die? was the engine still working?);
each answer is a flag here, so adding a kind means deciding its flags in one row, and the
sets the analyzers use are derived from the rows. Kept apart from the catalog so ``--help``
can list the kinds without compiling its regexes.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

# Every event kind's name, in REGISTRY's order (the schemas' ``kind`` lists these).
EventKind = Literal[
    "process_start",
    "process_exit",
    "engine_start",
    "engine_stop",
    "model_load",
    "model_unload",
    "model_load_failed",
    "shutdown",
    "restart_requested",
    "gpu_error",
    "memory_pressure",
    "cache_clear",
    "request_complete",
    "request_arrival",
    "request_error",
    "request_abort",
    "kernel_panic",
    "crash_report",
    "faulthandler_dump",
    "error",
    "warning",
    "record",
    "probe",
]


class Kind(NamedTuple):
    """One event kind and what an event of it shows."""

    name: EventKind
    # The process died: a lifetime with one ended in a crash.
    crash_evidence: bool = False
    # A process was already running: a startup marker after it opens a new start, not the same one.
    shows_running_process: bool = False
    # The engine was still working: a GPU fault followed by it was absorbed.
    shows_active_engine: bool = False
    # The engine was serving: after an orderly-stop line, the stop was not the process's end.
    shows_serving: bool = False
    # A process writes it as it stops (its stop lines, its engines' teardown): after its last stop step
    # it is no sign of the next process.
    written_while_stopping: bool = False
    # Only an oMLX process (or the Mac running it) writes it: an input with one is an oMLX log,
    # whatever logger its lines name.
    omlx_only: bool = False
    # The event field the catalog template's tag goes in ("" for kinds whose tag is not shown).
    tag_field: str = ""


# Every event kind, in the order the docs list them.
REGISTRY: tuple[Kind, ...] = (
    Kind("process_start", omlx_only=True, tag_field="marker"),
    Kind("process_exit", crash_evidence=True, shows_running_process=True, omlx_only=True),
    Kind("engine_start", shows_running_process=True, shows_active_engine=True, shows_serving=True, omlx_only=True),
    Kind("engine_stop", shows_running_process=True, shows_active_engine=True, written_while_stopping=True),
    Kind("model_load", shows_active_engine=True, tag_field="stage"),
    Kind(
        "model_unload",
        shows_running_process=True,
        shows_active_engine=True,
        written_while_stopping=True,
        tag_field="stage",
    ),
    Kind("model_load_failed"),
    Kind("shutdown", shows_running_process=True, written_while_stopping=True),
    Kind("restart_requested", shows_running_process=True),
    Kind("gpu_error", shows_running_process=True, shows_active_engine=True, shows_serving=True, omlx_only=True),
    Kind("memory_pressure", shows_active_engine=True, omlx_only=True, tag_field="action"),
    # The idle reclaim's trim: the engine's own clear between turns of a live process.
    Kind("cache_clear", shows_running_process=True, shows_active_engine=True, omlx_only=True, tag_field="trigger"),
    Kind(
        "request_complete",
        shows_running_process=True,
        shows_active_engine=True,
        shows_serving=True,
        omlx_only=True,
        tag_field="type",
    ),
    # A request coming in (DEBUG and TRACE only). The batch analysis reads arrivals as dense rows
    # (``EventStream.arrivals``), never among the events, so whether the scan or the grammar read
    # one changes nothing: no flag here; the live analysis takes them as routine records too.
    Kind("request_arrival", tag_field="form"),
    Kind("request_error", shows_active_engine=True, tag_field="stage"),
    # An aborted, cancelled or disconnected request: the process was running one, but shutdowns abort
    # requests too, and a client gives up on a request a fault broke, so it shows neither that the
    # engine went on working nor that it went on serving: after a fault it is a symptom.
    Kind("request_abort", shows_running_process=True, written_while_stopping=True, tag_field="cause"),
    Kind("kernel_panic", crash_evidence=True, shows_running_process=True, omlx_only=True),
    Kind("crash_report", crash_evidence=True, shows_running_process=True, omlx_only=True),
    Kind("faulthandler_dump", crash_evidence=True, shows_running_process=True, omlx_only=True),
    Kind("error", shows_active_engine=True),
    Kind("warning", shows_active_engine=True),
    Kind("record"),
    # A generation probe ``watch --probe`` sent to the server (not a line of the log): what it answered.
    # The analysis reads probes apart from the log's events (``analysis/probes.py``): no flag here.
    Kind("probe"),
)


KINDS: tuple[EventKind, ...] = tuple(kind.name for kind in REGISTRY)


ARRIVAL_KIND: Final = "request_arrival"


PROBE_KIND: Final = "probe"


CRASH_KINDS = frozenset(kind.name for kind in REGISTRY if kind.crash_evidence)


RUNNING_PROCESS_KINDS = frozenset(kind.name for kind in REGISTRY if kind.shows_running_process)


ACTIVE_ENGINE_KINDS = frozenset(kind.name for kind in REGISTRY if kind.shows_active_engine)


# What shows a process at work after its last stop step: the next process (a running process, or its
# engine working, and not a line a stopping process writes, nor its death).
AT_WORK_KINDS = frozenset(
    kind.name
    for kind in REGISTRY
    if (kind.shows_running_process or kind.shows_active_engine)
    and not kind.written_while_stopping
    and not kind.crash_evidence
)


SERVING_KINDS = frozenset(kind.name for kind in REGISTRY if kind.shows_serving)


OMLX_ONLY_KINDS = frozenset(kind.name for kind in REGISTRY if kind.omlx_only)


TAG_FIELDS: dict[str, str] = {kind.name: kind.tag_field for kind in REGISTRY if kind.tag_field}


class PressureAction(NamedTuple):
    """What the lines of one memory-pressure ``action`` (a catalog tag of ``memory_pressure``) show,
    for attribution's pressure evidence, and the level oMLX writes them at: a log written above that
    level cannot show them, so attribution says they could be hidden."""

    level: str
    # RECLAIMING (the enforcer reclaiming memory, which can ask for the Metal cache clear),
    # LEVEL_CHANGE (reclaiming when the new level is one of the catalog's RECLAIMING_LEVELS) or
    # IDLE_RECLAIM (a request for the idle reclaim between turns).
    shows: str


RECLAIMING = "reclaiming"


LEVEL_CHANGE = "level_change"


IDLE_RECLAIM = "idle_reclaim"


# Every memory-pressure action, one row each: a new enforcer message with a new tag is one row
# here (tests/parsing/test_kinds.py checks each catalog tag has its row). Reports list them in this order.
PRESSURE_ACTIONS: dict[str, PressureAction] = {
    "hot_cache_shrink": PressureAction("WARNING", RECLAIMING),
    "reclaim_request": PressureAction("INFO", RECLAIMING),
    "reclaim_failed": PressureAction("WARNING", RECLAIMING),
    "level_change": PressureAction("INFO", LEVEL_CHANGE),
    "post_eviction": PressureAction("INFO", LEVEL_CHANGE),
    "eviction": PressureAction("INFO", RECLAIMING),
    "hard_abort": PressureAction("WARNING", RECLAIMING),
    "hard_pinned": PressureAction("WARNING", RECLAIMING),
    "emergency_abort": PressureAction("WARNING", RECLAIMING),
    "abort": PressureAction("WARNING", RECLAIMING),
    "load_abort": PressureAction("WARNING", RECLAIMING),
    "nothing_to_evict": PressureAction("WARNING", RECLAIMING),
    "deferred_enforcement": PressureAction("INFO", RECLAIMING),
    "limit_exceeded": PressureAction("WARNING", RECLAIMING),
    "idle_reclaim_request": PressureAction("WARNING", IDLE_RECLAIM),
}
