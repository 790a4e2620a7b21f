"""Who writes the messages the catalog knows: the level and logger of oMLX's call, so a paste that
dropped them (a bare ``Engine loop error: …``) gets them back.

Read from oMLX's source (onthehub97/omlx at 0.6.3rc2, ``git grep`` of ``omlx/**/*.py``): its
loggers are ``logging.getLogger(__name__)``, so a module's path is its logger's name. A message
several modules write at one level names no logger (None); one written at several levels is left
out. Until the lexicon of every oMLX message lands (issue 27), these are the messages whose
writer the project knows.
"""

from __future__ import annotations

from typing import NamedTuple


class Writer(NamedTuple):
    level: str
    logger: str | None  # None: several modules write the message


_SERVER = "omlx.server"
_POOL = "omlx.engine_pool"
_ENFORCER = "omlx.process_memory_enforcer"
_SCHEDULER = "omlx.scheduler"
_CORE = "omlx.engine_core"
_ADMIN = "omlx.admin.routes"


# The writer of each catalog row's message, by the row's literal.
CATALOG_WRITERS: dict[str, Writer] = {
    " cancelled, aborting": Writer("INFO", _CORE),
    " capacity rejected for ": Writer("ERROR", _SCHEDULER),
    " failed for ": Writer("ERROR", _SCHEDULER),  # Prefill failed for %s: %s
    "Anthropic message: ": Writer("INFO", _SERVER),
    "BatchedEngine loaded: ": Writer("INFO", None),
    "BatchedEngine stopped": Writer("INFO", None),
    "CORS origins: ": Writer("INFO", _SERVER),
    "Chat completion: ": Writer("INFO", _SERVER),
    "Client disconnected": Writer("INFO", _SERVER),
    "Completion: ": Writer("INFO", _SERVER),
    "Default max tokens: ": Writer("INFO", _SERVER),
    "Default model: ": Writer("INFO", _SERVER),
    "Discovered model: ": Writer("INFO", "omlx.model_discovery"),
    "Embedding: ": Writer("INFO", _SERVER),
    "Emergency memory pressure: aborted ": Writer("WARNING", _ENFORCER),
    "Engine pool shutdown complete": Writer("INFO", _POOL),
    "Engine started": Writer("INFO", _CORE),
    "Engine stopped": Writer("INFO", None),
    "Error during ": Writer("ERROR", _SERVER),
    "Error during chat streaming:": Writer("ERROR", _SERVER),
    "Evicting model '": Writer("WARNING", _ENFORCER),
    "Failed to preload pinned model ": Writer("ERROR", _POOL),
    "Hard memory pressure but no models loaded": Writer("WARNING", _ENFORCER),
    "Hard memory pressure, ": Writer("WARNING", _ENFORCER),
    "Hard memory pressure: aborted ": Writer("WARNING", _ENFORCER),
    "Idle reclaim: trimmed Metal transients": Writer("INFO", _SCHEDULER),
    "Loaded model: ": Writer("INFO", _POOL),
    "Loaded settings for ": Writer("INFO", "omlx.model_settings"),
    "Manually loaded model: ": Writer("INFO", _ADMIN),
    "Manually unloaded model: ": Writer("INFO", _ADMIN),
    "Memory admission stalled for ": Writer("WARNING", _SCHEDULER),
    "Memory guard tier: ": Writer("INFO", _SERVER),
    "Memory pressure after hot-cache shrink: ": Writer("INFO", _ENFORCER),
    "Memory pressure level: ": Writer("INFO", _ENFORCER),
    "Memory pressure post-eviction": Writer("INFO", _ENFORCER),
    "Model load aborted by memory enforcer: ": Writer("WARNING", _POOL),
    "Model load failed for '": Writer("ERROR", _POOL),
    "Pinned model: ": Writer("INFO", _POOL),
    "Prefill interrupted at ": Writer("INFO", _SCHEDULER),
    "Preflight rejected (": Writer("WARNING", None),
    "Preloading pinned model: ": Writer("INFO", _POOL),
    "Pressure cache reclaim request failed": Writer("WARNING", _ENFORCER),
    "Process memory enforcer started": Writer("INFO", _ENFORCER),
    "Requested pressure cache reclaim on ": Writer("INFO", _ENFORCER),
    "Rerank: model=": Writer("INFO", _SERVER),
    "Responses API: ": Writer("INFO", _SERVER),
    "SSE generator error:": Writer("ERROR", _SERVER),
    "Scheduler shutdown ": Writer("INFO", _SCHEDULER),
    "Server initialized with ": Writer("INFO", _SERVER),
    "Server restart requested": Writer("WARNING", _ADMIN),
    "SpecPrefill sparse prefill failed:": Writer("ERROR", _SCHEDULER),
    "Successfully loaded ": Writer("INFO", _POOL),
    "TTL expired for model '": Writer("INFO", _POOL),
    "Unloaded model: ": Writer("INFO", _POOL),
    "Unloading model: ": Writer("INFO", _POOL),
    "stream_generate] Aborting request ": Writer("INFO", None),
}


# Messages no catalog row gives a meaning, as regexes of their text, and who writes them.
MESSAGE_WRITERS: tuple[tuple[str, Writer], ...] = (
    (r"^Engine loop error: ", Writer("ERROR", _CORE)),
    (r"^Error in batch generation step: ", Writer("ERROR", _SCHEDULER)),
    (r"^Metal cache clear failed during (?:error|generation overflow) recovery: ", Writer("WARNING", _SCHEDULER)),
    (r"^Idle reclaim failed: ", Writer("WARNING", _SCHEDULER)),
    (r"^Pooled-buffer reclaim failed", Writer("WARNING", _POOL)),
    (r"^Async store_cache failed for \S+: ", Writer("WARNING", _SCHEDULER)),
    (r"^Timeout waiting for request ", Writer("WARNING", _CORE)),
    (r"^Request \S+ needs prefill headroom before throttling ", Writer("INFO", _SCHEDULER)),
    (r"^No idle model evicted for request \S+; ", Writer("INFO", _CORE)),
    (r"^Paused request \S+ for prefill ", Writer("INFO", _SCHEDULER)),
    (r"^Metal wired limit raised: ", Writer("INFO", _ENFORCER)),
    (r"^DFlash start failed for ", Writer("WARNING", _POOL)),
    (r"^DFlash streaming generation error: ", Writer("ERROR", "omlx.engine.dflash")),
    (r"^Background snapshot write failed: ", Writer("DEBUG", "omlx.cache.boundary_snapshot_store")),
    (r"^Failed to connect to MCP server '", Writer("ERROR", "omlx.mcp.client")),
)
