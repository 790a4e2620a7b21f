"""The message catalog: which oMLX message means which event kind.

This module is the one place that knows oMLX's wording; the other modules take it from here.
Most of it is one table, ``CATALOG``, and a new message is one new row:
``Template(kind, regex, literal, tag)``. ``regex`` is matched (``re.search``) against the
record's message; named groups become event fields. ``literal`` is a substring every match
contains: the bulk scanner uses the literals to find candidate lines without running Python
on every line. ``tag`` refines the kind (a pressure ``action``, a start ``marker``, ...); the
tags ``banner`` and ``capture`` also mark the lines oMLX prints bare, which the line grammar
knows by their literals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Template:
    kind: str
    pattern: str
    literal: str
    tag: str = ""
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern))


_GB = r"(?P<{0}>[\d.]+)\s*GB"


# Every logger oMLX names begins so (omlx.server, omlx.scheduler, omlx_app, ...).
LOGGER_PREFIX = "omlx"


# The logger of the oMLX menu-bar app, whose lines have a format of their own.
APP_LOGGER = "omlx_app"


# Where oMLX keeps its logs and settings: the environment variable that moves it, and its default.
BASE_PATH_VARIABLE = "OMLX_BASE_PATH"


DEFAULT_BASE_PATH = "~/.omlx"


# A finished chat completion as oMLX's server logger writes it: the bulk scanner reads these
# lines, the one dense kind, in polars without the grammar (parsing/scan.py), so the parts of
# their shape are named here and the chat template below is built from them.
REQUEST_LOGGER = "omlx.server"


NO_REQUEST_ID = "[-] - "  # the request-id field of a record outside a request (some builds write none)


CHAT_COMPLETION = "Chat completion: "


def chat_completion_message(tokens: int) -> str:
    """How oMLX's line for a finished chat completion begins, rebuilt for a dense request row whose
    text the scanner did not keep: evidence quotes the log, so a rebuilt quote is in oMLX's words."""
    return f"{CHAT_COMPLETION}{tokens} tokens"


# What follows CHAT_COMPLETION up to the end of the counts the scanner reads.
CHAT_COUNTS = r"(?:model=(?P<model>[^,]+), )?(?P<tokens>\d+) tokens in (?P<seconds>[\d.]+)s"


CATALOG: tuple[Template, ...] = (
    # A new process: the timed startup block (INFO) and the capture-only lines.
    Template("process_start", r"^CORS origins: ", "CORS origins: ", "startup_block"),
    Template("process_start", r"^Loaded settings for \d+ models", "Loaded settings for ", "startup_block"),
    Template("process_start", r"^Server initialized with \d+ models", "Server initialized with ", "startup_block"),
    Template("process_start", r"^Memory guard tier: ", "Memory guard tier: ", "startup_block"),
    Template("process_start", r"^oMLX - LLM inference", "oMLX - LLM inference", "banner"),
    Template("process_start", r"^Log directory: ", "Log directory: ", "capture"),
    Template("process_start", r"^Starting server at ", "Starting server at ", "capture"),
    Template("process_start", r"^Started server process \[(?P<pid>\d+)\]", "Started server process", "uvicorn"),
    Template("process_start", r"^Uvicorn running on ", "Uvicorn running on ", "uvicorn"),
    # Engines and models.
    Template("engine_start", r"^Engine started\b", "Engine started"),
    Template("engine_stop", r"^Engine stopped\b", "Engine stopped"),
    Template("engine_stop", r"^Scheduler shutdown (?:initiated|completed)", "Scheduler shutdown "),
    Template("model_load", r"^(?:Preloading pinned model|Loading model): (?P<model>\S+)", "model: ", "loading"),
    Template("model_load", r"^Loaded model: (?P<model>\S+)", "Loaded model: ", "loaded"),
    Template("model_load", r"^BatchedEngine loaded: (?P<model>\S+)", "BatchedEngine loaded: ", "loaded"),
    Template("model_unload", r"^Unloading model: (?P<model>\S+)", "Unloading model: ", "unloading"),
    Template("model_unload", r"^Unloaded model: (?P<model>[^,\s]+)", "Unloaded model: ", "unloaded"),
    Template("model_unload", r"^TTL expired for model '(?P<model>[^']+)'", "TTL expired for model ", "ttl"),
    Template("model_load_failed", r"^Model load failed for '(?P<model>[^']+)'", "Model load failed for ", ""),
    Template("model_load_failed", r"^VLM loading failed for (?P<model>\S+?),", "VLM loading failed for ", "vlm"),
    # Orderly stops and restarts.
    Template("shutdown", r"^Engine pool shutdown complete", "Engine pool shutdown complete", "pool"),
    Template("shutdown", r"^Process memory enforcer stopped", "Process memory enforcer stopped", "enforcer"),
    Template("shutdown", r"^Shutting down$", "Shutting down", "uvicorn"),
    Template("shutdown", r"^Application shutdown complete", "Application shutdown complete", "uvicorn"),
    Template("shutdown", r"^Finished server process", "Finished server process", "uvicorn"),
    Template("restart_requested", r"^Server restart requested", "Server restart requested"),
    # Memory pressure (the enforcer's own start line is not a pressure event).
    Template(
        "memory_pressure",
        r"^Memory pressure level: (?P<from_level>\w+) -> (?P<to_level>\w+)"
        r"(?:.*?current=" + _GB.format("current_gb") + r")?(?:.*?soft=" + _GB.format("soft_gb") + r")?"
        r"(?:.*?hard=" + _GB.format("hard_gb") + r")?(?:.*?ceiling=" + _GB.format("ceiling_gb") + r")?",
        "Memory pressure level: ",
        "level_change",
    ),
    Template(
        "memory_pressure",
        r"^Memory pressure after hot-cache shrink: (?P<from_level>\w+) -> (?P<to_level>\w+)",
        "Memory pressure after hot-cache shrink",
        "level_change",
    ),
    Template("memory_pressure", r"^Memory pressure post-eviction", "Memory pressure post-eviction", "post_eviction"),
    Template(
        "memory_pressure",
        r"^Shrank (?:shared )?hot cache under memory pressure: freed=(?P<freed>[\d.]+\s*\w+)",
        "under memory pressure",
        "hot_cache_shrink",
    ),
    Template(
        "memory_pressure",
        r"^Requested pressure cache reclaim on (?P<schedulers>\d+) scheduler",
        "Requested pressure cache reclaim",
        "reclaim_request",
    ),
    Template(
        "memory_pressure",
        r"^Evicting model '(?P<model>[^']+)' \(pressure=(?P<to_level>\w+)",
        "Evicting model ",
        "eviction",
    ),
    Template(
        "memory_pressure",
        r"^Hard memory pressure: aborted (?P<aborted>\d+) request",
        "Hard memory pressure: aborted",
        "hard_abort",
    ),
    Template(
        "memory_pressure",
        r"^Hard memory pressure but all loaded models are pinned",
        "Hard memory pressure but",
        "hard_pinned",
    ),
    Template(
        "memory_pressure",
        r"^Emergency memory pressure: aborted (?P<aborted>\d+)",
        "Emergency memory pressure",
        "emergency_abort",
    ),
    # Finished and failed requests.
    Template(
        "request_complete",
        rf"^{CHAT_COMPLETION}{CHAT_COUNTS}"
        r"(?: \((?P<tok_per_s>[\d.]+) tok/s\))?(?:, prompt: (?P<prompt_tokens>\d+))?"
        r"(?:.*?finish_reason=(?P<finish_reason>\w+))?",
        CHAT_COMPLETION,
        "chat",
    ),
    Template(
        "request_complete",
        r"^Embedding: (?P<texts>\d+) texts, (?P<dims>\d+) dims, (?P<tokens>\d+) tokens in (?P<seconds>[\d.]+)s",
        "Embedding: ",
        "embedding",
    ),
    Template(
        "request_error",
        r"^(?P<method>GET|POST|PUT|DELETE|PATCH) (?P<path>\S+) → (?P<status>\d{3})",
        " → ",
        "http",
    ),
    Template("request_error", r"^Prefill failed for (?P<request_id>\S+?):", "Prefill failed for ", "prefill"),
    Template("request_error", r"^Error during chat streaming:", "Error during chat streaming", "chat_stream"),
)


def bare_openings(tag: str) -> tuple[str, ...]:
    """How the lines oMLX prints bare (no time, level or logger) begin: the literals of the
    templates tagged ``tag`` ("banner" or "capture"), whose patterns each begin with theirs. The
    grammar cannot find such a line by its format, so it looks for these."""
    return tuple(t.literal for t in CATALOG if t.tag == tag)


def _first_character(pattern: str) -> str | None:
    """The character every match of an anchored pattern begins with, when the pattern fixes one."""
    fixed = len(pattern) > 2 and pattern[0] == "^" and pattern[1] not in ".^$*+?{}[]()|\\" and pattern[2] not in "*?{"
    return pattern[1] if fixed and not _alternatives_at_top(pattern) else None


def _alternatives_at_top(pattern: str) -> bool:
    """Whether a ``|`` outside any group splits the pattern ("^A|B" may begin with B)."""
    depth, in_class, escaped = 0, False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return True
    return False


def _by_first_character() -> tuple[dict[str, tuple[Template, ...]], tuple[Template, ...]]:
    firsts = [_first_character(t.pattern) for t in CATALOG]
    open_start = tuple(t for t, first in zip(CATALOG, firsts, strict=True) if first is None)
    index = {
        char: tuple(t for t, first in zip(CATALOG, firsts, strict=True) if first in (char, None))
        for char in {first for first in firsts if first is not None}
    }
    return index, open_start


_BY_FIRST, _OPEN_START = _by_first_character()


def candidates(message: str) -> tuple[Template, ...]:
    """The templates that can match ``message``, in catalog order: an anchored pattern whose
    first character is fixed matches no message that begins otherwise, so most are skipped."""
    return _BY_FIRST.get(message[:1], _OPEN_START)


# Named groups that hold numbers (others, like request ids and model names, stay text).
NUMERIC_FIELDS = frozenset(
    {
        "pid",
        "tokens",
        "seconds",
        "tok_per_s",
        "prompt_tokens",
        "texts",
        "dims",
        "status",
        "schedulers",
        "aborted",
        "current_gb",
        "soft_gb",
        "hard_gb",
        "ceiling_gb",
    }
)


# Substrings that make the bulk scanner keep an INFO line for the Python grammar (WARNING and
# above are always kept; DEBUG records are dropped as routine unless they carry a GPU error).
PREFILTER_LITERALS: tuple[str, ...] = tuple(sorted({t.literal for t in CATALOG}))


# The logger of the deliberate exit after a GPU fault (post-0.5.7 builds), so a supervisor restarts oMLX.
FATAL_LOGGER = "omlx.utils.fatal"


# The fatal exit's message, and the uncaught C++ abort of older builds; the line grammar knows the
# abort's bare line by ABORT_OPENING.
FATAL_EXIT = re.compile(r"^Metal GPU submissions disabled:")


ABORT_OPENING = r"libc\+\+abi: terminating"


ABORT = re.compile(f"^{ABORT_OPENING}")


# Where a GPU failure surfaced, from the record's message. First match wins.
GPU_CONTEXTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (FATAL_EXIT, "fatal_exit"),
    (ABORT, "uncaught_abort"),
    *(
        (re.compile(p), c)
        for p, c in (
            (r"ANE input pack", "ane_dispatch"),
            (r"^Engine loop error:", "engine_loop"),
            (r"^Error in batch generation step:", "batch_step"),
            (r"^Metal cache clear failed during error recovery:", "recovery_clear"),
            (r"^Prefill failed for ", "prefill"),
            (r"^Error during chat streaming:", "chat_stream"),
        )
    ),
)


# A Metal command-buffer failure: code and name (the closing parenthesis is sometimes lost
# in pastes, and one code is written with a space after the colon).
GPU_CODE = re.compile(
    r"\((0000000[0-9A-Fa-f]|000000[0-9A-Fa-f]{2}):\s?(kIO(?:GPU|Accel)CommandBufferCallbackError(\w+))"
)


GPU_RESOURCE_LIMIT = re.compile(r"\[metal::malloc\] Resource limit \((\d+)\) exceeded")


GPU_LITERALS: tuple[str, ...] = ("CommandBufferCallbackError", "[metal::malloc]")


# Text that sends a record to the GPU-error test (a match of either pattern above contains one).
GPU_MARKERS: tuple[str, ...] = ("kIO", "metal::malloc")


# The full name of a Metal command-buffer error is this prefix and its code name.
GPU_CODE_PREFIX = "kIOGPUCommandBufferCallbackError"


# The code names the analysis and the reports single out, so each is spelled once.
TIMEOUT_CODE = "Timeout"
PENALTY_BOX_CODE = "SubmissionsIgnored"  # the driver ignores the process's work: its penalty box
OUT_OF_MEMORY_CODE = "OutOfMemory"
IMPACTING_INTERACTIVITY_CODE = "ImpactingInteractivity"
RESOURCE_LIMIT_CODE = "ResourceLimit"  # our name for a [metal::malloc] resource-limit error, which has no code


# Short names for the codes the fact sheet documents; others keep the name as written.
GPU_CODE_NAMES = {
    "00000002": TIMEOUT_CODE,
    "00000004": PENALTY_BOX_CODE,
    "00000008": OUT_OF_MEMORY_CODE,
    "0000000e": IMPACTING_INTERACTIVITY_CODE,
}


# Fault incident kinds, from the code name of an incident's first record.
INCIDENT_KINDS = {
    TIMEOUT_CODE: "timeout",
    PENALTY_BOX_CODE: "submissions_ignored",
    OUT_OF_MEMORY_CODE: "out_of_memory",
    IMPACTING_INTERACTIVITY_CODE: "impacting_interactivity",
    RESOURCE_LIMIT_CODE: "resource_limit",
}


# Versions: the banner, and Homebrew's keg folder in traceback paths.
BANNER_VERSION = re.compile(r"(?:├─|└─|\|-|`-)?\s*Version:\s*(?P<version>\d[\w.\-+]*)")


# The tree the banner draws under its first line: a line that begins with a branch continues it.
BANNER_BRANCH = r"[├└│|`]─"


CELLAR_VERSION = re.compile(r"/Cellar/omlx/(?P<version>\d[\w.\-+]*)/")


# oMLX's Python package, as traceback paths and module names show it.
PACKAGE = "omlx"


# The engine operation a GPU error's traceback shows, by the functions in it (oMLX's and mlx-lm's).
CACHE_CLEAR_FUNCTION = "_sync_and_clear_cache"  # the Metal cache-clear drain


PREFILL_IN_FUNCTION = "prefill"  # any function whose name holds it (case aside) is a prefill step


DECODE_IN_FUNCTION = "decode"  # ... a decode step


DECODE_FUNCTIONS = ("next_generated", "_next", "_step")  # the decode loop's own steps
