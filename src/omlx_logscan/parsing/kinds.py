"""The event kinds, apart from the catalog, so ``--help`` can list them without compiling its regexes."""

from __future__ import annotations

# Every event kind, in the order the docs list them.
KINDS = (
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
    "request_complete",
    "request_error",
    "kernel_panic",
    "crash_report",
    "faulthandler_dump",
    "error",
    "warning",
    "record",
)
