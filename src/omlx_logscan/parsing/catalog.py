"""The message catalog: which oMLX message means which event kind.

This module is the one place that knows oMLX's wording; the other modules take it from here.
Most of it is one table, ``CATALOG``, and a new message is one new row:
``Template(kind, regex, tag)``. ``regex`` is matched (``re.search``) against the record's
message; named groups become event fields. Its ``literal``, the text every match begins with
(given when the regex opens with no fixed text), is a substring every match contains: the bulk
scanner uses the literals to find candidate lines without running Python on every line. ``tag``
refines the kind (a pressure ``action``, a start ``marker``, ...); the tags ``banner`` and
``capture`` also mark the lines oMLX prints bare, which the line grammar knows by their literals.
"""

from __future__ import annotations

import re
from typing import Literal

from omlx_logscan.parsing.catalog_arrivals import ARRIVALS
from omlx_logscan.parsing.catalog_evidence import METAL_ERROR
from omlx_logscan.parsing.catalog_starts import START_ROWS
from omlx_logscan.parsing.catalog_starts import UVICORN_TAG as UVICORN_TAG  # the shutdown rows' tag too
from omlx_logscan.parsing.kinds import EventKind
from omlx_logscan.parsing.template import Template

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


# The rate and prompt size a generation request's line may go on with (diffusion models write
# ``tok/s e2e, output=…`` inside the parentheses).
_RATE_AND_PROMPT = r"(?: \((?P<tok_per_s>[\d.]+) tok/s[^)]*\))?(?:, prompt: (?P<prompt_tokens>\d+))?"


# The message that ends every deliberate exit of oMLX >= 0.4.2 (code 70), after its reason.
FATAL_EXIT_SUFFIX = "; exiting process so the supervisor can restart with a clean state"


def _generation(opening: str, tag: str) -> Template:
    """A finished generation request of one API: its opening, then the chat line's counts."""
    return Template("request_complete", rf"^{re.escape(opening)}{CHAT_COUNTS}{_RATE_AND_PROMPT}", tag)


def _rows(kind: EventKind, *rows: tuple[str, str]) -> tuple[Template, ...]:
    """The templates of one kind, each row ``(tag, pattern)``."""
    return tuple(Template(kind, pattern, tag) for tag, pattern in rows)


def _gb(name: str) -> str:
    """An optional ``name=12.3GB`` later in the message, captured as ``name_gb``."""
    return rf"(?:.*?{name}={_GB.format(name + '_gb')})?"


_PREFILL = r"(?:Chunked prefill(?: \(first chunk\))?|Prefill)"  # the prefill paths that name their request


# A request oMLX answered with an error status (its access lines for a 2xx or 3xx are no failure).
_HTTP = r"^(?P<method>GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) (?P<path>\S+) {0} (?P<status>[45]\d{{2}})"


_MODEL = r"'(?P<model>[^']+)'"
_LEVELS = r"(?P<from_level>\w+) -> (?P<to_level>\w+)"
RECLAIMING_LEVELS = frozenset({"soft", "hard"})  # the pressure levels (a ``to_level``) at which the enforcer reclaims


CATALOG: tuple[Template, ...] = (
    *START_ROWS,  # a new process: parsing/catalog_starts.py
    # Engines and models.
    Template("engine_start", r"^Engine started\b"),
    *_rows("engine_stop", ("", r"^Engine stopped\b"), ("", r"^BatchedEngine stopped\b")),
    Template("engine_stop", r"^Scheduler shutdown (?:initiated|completed)"),
    *_rows(
        "model_load",
        ("loading", r"^Preloading pinned model: (?P<model>\S+)"),
        ("loading", r"^Loading model(?: as LM \(force_lm=True\))?: (?P<model>\S+)"),
        ("loaded", r"^Loaded model: (?P<model>\S+)"),
        ("loaded", r"^BatchedEngine loaded: (?P<model>\S+)"),
        ("loaded", r"^Successfully loaded (?P<model>\S+) as \S+ \(fallback from "),
        ("manual", r"^Manually loaded model: (?P<model>\S+)"),
    ),
    *_rows(
        "model_unload",
        ("unloading", r"^Unloading model: (?P<model>\S+)"),
        ("unloaded", r"^Unloaded model: (?P<model>[^,\s]+)"),
        ("ttl", rf"^TTL expired for model {_MODEL}"),
        ("manual", r"^Manually unloaded model: (?P<model>\S+)"),
        ("queued", r"^Queued manual unload for active model: (?P<model>\S+)"),
    ),
    # A VLM load that falls back to LLM is no failure (the load may still succeed): no row.
    *_rows(
        "model_load_failed",
        ("", rf"^Model load failed for {_MODEL}"),
        ("", r"^Failed to preload pinned model (?P<model>\S+?):"),
    ),
    # Orderly stops and restarts.
    *_rows(
        "shutdown",
        ("pool", r"^Engine pool shutdown complete"),
        ("pool", r"^Error unloading \S+ during shutdown"),
        ("enforcer", r"^Process memory enforcer stopped"),
        (UVICORN_TAG, r"^Shutting down$"),
        (UVICORN_TAG, r"^Waiting for application shutdown"),
        (UVICORN_TAG, r"^Application shutdown complete"),
        (UVICORN_TAG, r"^Finished server process"),
    ),
    Template("restart_requested", r"^Server restart requested"),
    # Memory pressure, every enforcer version (its own start line is no pressure event).
    *_rows(
        "memory_pressure",
        (
            "level_change",
            rf"^Memory pressure level: {_LEVELS}{_gb('current')}{_gb('soft')}{_gb('hard')}{_gb('ceiling')}",
        ),
        ("level_change", rf"^Memory pressure after hot-cache shrink: {_LEVELS}{_gb('current')}{_gb('freed_hot')}"),
        ("post_eviction", rf"^Memory pressure post-eviction(?:: {_LEVELS})?{_gb('current')}"),
        ("hot_cache_shrink", r"^Shrank (?:shared )?hot cache under memory pressure: freed=(?P<freed>[\d.]+\s*\w+)"),
        ("reclaim_request", r"^Requested pressure cache reclaim on (?P<schedulers>\d+) scheduler"),
        ("reclaim_failed", r"^Pressure cache reclaim request failed"),
        ("eviction", rf"^Evicting model {_MODEL} (?:\(pressure=(?P<to_level>\w+)|to enforce process memory limit)"),
        ("hard_abort", rf"^Hard memory pressure: aborted (?P<aborted>\d+) request\(s\) on {_MODEL}"),
        ("hard_abort", rf"^Hard memory pressure: requested abort/unload for {_MODEL} \(aborted=(?P<aborted>\d+)"),
        ("hard_abort", rf"^Aborted (?P<aborted>\d+) requests on {_MODEL} (?:due to hard memory|before eviction)"),
        ("abort", rf"^Aborted (?P<aborted>\d+) requests(?: on {_MODEL})? due to memory pressure"),
        ("abort", r"^Aborted (?P<aborted>\d+) requests: "),
        ("load_abort", rf"^Aborting in-progress load of {_MODEL} \(hard memory pressure\)"),
        ("load_abort", rf"^Requesting abort of loading model {_MODEL} — process memory limit"),
        ("nothing_to_evict", r"^Hard memory pressure but no models loaded"),
        ("nothing_to_evict", r"^Process memory limit exceeded but no models are loaded"),
        ("hard_pinned", r"^Hard memory pressure but all loaded models are pinned"),
        ("hard_pinned", r"^Process memory limit exceeded but all loaded models are pinned"),
        ("idle_reclaim_request", r"^Hard memory pressure, .*requested idle reclaim on (?P<schedulers>\d+) scheduler"),
        (
            "deferred_enforcement",
            rf"^Hard memory pressure(?: on {_MODEL})?: deferring (?:request abort|destructive enforcement) "
            r"\(poll (?P<poll>\d+)/(?P<polls>\d+)\)(?:.*? on (?P<schedulers>\d+) scheduler)?",
        ),
        ("emergency_abort", rf"^Emergency memory pressure: aborted (?P<aborted>\d+){_gb('current')}{_gb('ceiling')}"),
        (
            "limit_exceeded",
            rf"^Process memory limit exceeded: {_GB.format('current_gb')} / {_GB.format('ceiling_gb')}"
            rf"(?: \(over by {_GB.format('over_gb')}\))?",
        ),
    ),
    # The idle reclaim's own clear, asked for by the enforcer between turns.
    Template(
        "cache_clear",
        rf"^Idle reclaim: trimmed Metal transients.*?\({_GB.format('before_gb')} -> {_GB.format('after_gb')}",
        "idle",
    ),
    # Finished requests, every API (each schedules the deferred clear).
    Template(
        "request_complete",
        rf"^{CHAT_COMPLETION}{CHAT_COUNTS}{_RATE_AND_PROMPT}(?:.*?finish_reason=(?P<finish_reason>\w+))?",
        "chat",
    ),
    *(Template("request_arrival", arrival.pattern, arrival.form) for arrival in ARRIVALS),  # below INFO
    _generation("Completion: ", "completion"),
    _generation("Anthropic message: ", "anthropic"),
    _generation("Responses API: ", "responses"),
    *_rows(
        "request_complete",
        (
            "embedding",
            r"^Embedding: (?:model=(?P<model>[^,]+), )?(?P<texts>\d+) (?:texts|inputs), (?P<dims>\d+) dims, "
            r"(?P<tokens>\d+) tokens(?:, max_length=(?P<max_length>\d+), truncation=(?P<truncation>\w+))? "
            r"in (?P<seconds>[\d.]+)s",
        ),
        (
            "rerank",
            r"^Rerank: model=(?P<model>[^,]+), (?P<docs>\d+) docs, (?P<tokens>\d+) tokens in (?P<seconds>[\d.]+)s",
        ),
    ),
    # Aborted, cancelled and disconnected requests (each schedules the deferred clear, >= 0.5.2rc2).
    Template(
        "request_abort",
        r"^\[(?:vlm_)?stream_generate\] Aborting request (?P<request_id>\S+)"
        r"(?: \(finished_normally=(?P<finished_normally>\w+)\))?",
        "abort",
        "stream_generate] Aborting request ",
    ),
    Template("request_abort", r"^Request (?P<request_id>\S+) cancelled, aborting", "cancel", " cancelled, aborting"),
    *_rows(
        "request_abort",
        ("disconnect", r"^Client disconnected\b"),
        ("prefill_interrupted", r"^Prefill interrupted at (?P<done_tokens>\d+)/(?P<total_tokens>\d+)\b.*\baborted"),
    ),
    # Failed requests: memory-guard refusals first (their text may follow a streaming error's head).
    Template(
        "request_error",
        r"^Request (?P<request_id>\S+) rejected by prefill memory guard",
        "admission",
        " rejected by prefill memory guard",
    ),
    *_rows(
        "request_error",
        (
            "admission",
            r"^Preflight rejected \((?P<prompt_tokens>\d+) tokens, cached=(?P<cached_tokens>\d+), "
            r"request_id=(?P<request_id>[^)]+)\)",
        ),
        ("admission", r"^Memory admission stalled for (?P<request_id>\S+?):"),
        ("admission", r"^Model load aborted by memory enforcer: (?P<model>\S+)"),
        ("admission", rf"^Prefill would require ~{_GB.format('required_gb')} peak"),
        (
            "admission",
            r"Request aborted: process memory limit exceeded"
            rf"(?: \(usage {_GB.format('current_gb')}, ceiling {_GB.format('ceiling_gb')}\))?",
        ),
        ("admission", r"oMLX prefill memory guard rejected this prompt"),
    ),
    Template(
        "request_error",
        rf"\b507: Model {_MODEL} \(.*?\) does not fit under the dynamic memory ceiling",
        "admission",
        "does not fit under the dynamic memory ceiling",
    ),
    Template(
        "request_error",
        rf"^{_PREFILL} capacity rejected for (?P<request_id>\S+?):",
        "admission",
        " capacity rejected for ",
    ),
    Template("request_error", _HTTP.format("→"), "http", " → "),
    Template("request_error", _HTTP.format("->"), "http", " -> "),
    Template("request_error", rf"^{_PREFILL} failed for (?P<request_id>\S+?):", "prefill", " failed for "),
    *_rows(
        "request_error",
        ("prefill", r"^SpecPrefill sparse prefill failed:"),
        ("chat_stream", r"^Error during chat streaming:"),
        ("stream", r"^Error during (?:completion|Anthropic|Responses API) streaming:"),
        ("stream", r"^SSE generator error:"),
    ),
)


def bare_openings(tag: str) -> tuple[str, ...]:
    """How the lines oMLX prints bare (no time, level or logger) begin: the literals of the
    templates tagged ``tag`` ("banner" or "capture"), whose patterns each begin with theirs. The
    grammar cannot find such a line by its format, so it looks for these."""
    return tuple(t.literal for t in CATALOG if t.tag == tag)


# Named groups that hold numbers: those whose pattern is digits (others, like request ids, model
# names and a size with its unit, stay text).
_NUMERIC_GROUP = re.compile(r"\(\?P<(\w+)>(?:(?:\[\d+\])?\\d(?:\+|\{\d+\})|\[\\d\.\]\+)\)")


NUMERIC_FIELDS = frozenset(name for t in CATALOG for name in _NUMERIC_GROUP.findall(t.pattern))


# The request types whose ``tokens`` are generated tokens (an embedding's or a rerank's are its input).
GENERATION_TYPES = frozenset({"chat", "completion", "anthropic", "responses"})


# Substrings that make the bulk scanner keep an INFO line for the Python grammar (WARNING and
# above are always kept; DEBUG records are dropped as routine unless they carry a GPU error).
PREFILTER_LITERALS: tuple[str, ...] = tuple(sorted({t.literal for t in CATALOG}))


# The function that writes the lines of a process's last stop step: oMLX's lifespan calls it last, once
# it stopped serving, and nothing else calls it (its first commit to its last). After one of its lines
# the process writes only its stop's own lines: a line that shows a process at work is the next one's.
FINAL_STOP_FUNCTION = "EnginePool.shutdown"


# The functions that write from that step on: the pool's stop (its models' unload failures among its
# lines), and the lifespan's clean-up after it (0.4.0rc1 on; oMLX runs it at start too, so its line may
# be either process's): their lines show no next process.
LAST_STOP_FUNCTIONS = frozenset({FINAL_STOP_FUNCTION, "_reset_boundary_snapshots_for_server"})


# The logger of oMLX's deliberate exits (code 70, >= 0.4.2: after a GPU fault or a stuck teardown), so a
# supervisor restarts it.
FATAL_LOGGER = "omlx.utils.fatal"
# Its function: the innermost frame of the stack it dumps (where it was called from is the point).
FATAL_EXIT_FUNCTION = "fatal_exit"


# The fatal exit's message (its reason is the group ``reason_text``; the seed report's fix wrote its
# reason alone before the suffix was known here), and the uncaught C++ abort of older builds; the
# line grammar knows the abort's bare line by ABORT_OPENING.
FATAL_SUBMISSIONS_OPENING = "Metal GPU submissions disabled:"


FATAL_EXIT = re.compile(
    rf"^(?:(?P<reason_text>.+?){re.escape(FATAL_EXIT_SUFFIX)}|(?P<submissions>{re.escape(FATAL_SUBMISSIONS_OPENING)}.*))"
)


def may_be_fatal_exit(message: str) -> bool:
    """Whether ``message`` holds what every fatal-exit line does: ``FATAL_EXIT`` tries a lazy match
    at every length, far slower than looking for these literals on every record."""
    return FATAL_EXIT_SUFFIX in message or message.startswith(FATAL_SUBMISSIONS_OPENING)


# Both C++ runtimes' words for std::terminate: LLVM's libc++abi (macOS) and GNU's libstdc++ (Linux:
# ``terminate called without an active exception``, ``… after throwing an instance of 'X'``).
ABORT_OPENING = (
    r"(?:libc\+\+abi: terminating|terminate called (?:without an active exception|after throwing|recursively))"
)


ABORT = re.compile(f"^{ABORT_OPENING}")


# How the ANE dispatch's failure begins; its NSError follows (on the next lines when wrapped).
ANE_DISPATCH_OPENING = "ANE input pack"


# Where a GPU failure surfaced, from the record's message. First match wins.
GPU_CONTEXTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (FATAL_EXIT, "fatal_exit"),
    (ABORT, "uncaught_abort"),
    *(
        (re.compile(p), c)
        for p, c in (
            (re.escape(ANE_DISPATCH_OPENING), "ane_dispatch"),
            (r"^Engine loop error:", "engine_loop"),
            (r"^Error in batch generation step:", "batch_step"),
            (r"^Metal cache clear failed during error recovery:", "recovery_clear"),
            (r"^Metal cache clear failed during generation overflow recovery:", "overflow_clear"),
            (r"^Idle reclaim failed:", "idle_clear"),
            (r"^Pooled-buffer reclaim failed", "pooled_reclaim"),
            (rf"^(?:{_PREFILL} failed for |SpecPrefill sparse prefill failed:)", "prefill"),
            (r"^Error during chat streaming:", "chat_stream"),
            (r"^(?:Error during (?:completion|Anthropic|Responses API) streaming:|SSE generator error:)", "stream"),
            (r"^Async store_cache failed", "store_cache"),
        )
    ),
)


# A Metal command-buffer failure: code and name (the closing parenthesis is sometimes lost
# in pastes, and one code is written with a space after the colon).
GPU_CODE = re.compile(
    r"\((0000000[0-9A-Fa-f]|000000[0-9A-Fa-f]{2}):\s?(kIO(?:GPU|Accel)CommandBufferCallbackError(\w+))"
)


# The messages that quote what a client sent: a 4xx answer (its detail repeats the request's
# text), a request body (TRACE, ``Incoming {METHOD} {path} — body: {body}``). A Metal code in one
# is the client's text, not the driver's: oMLX's own failure answers 5xx.
ECHOES_CLIENT = re.compile(rf"{_HTTP.format('(?:→|->)').replace('[45]', '4')}|^Incoming [A-Z]+ \S+ — body: ")


GPU_RESOURCE_LIMIT = re.compile(r"\[metal::malloc\] Resource limit \((\d+)\) exceeded")


def carries_metal_error(text: str) -> bool:
    """Whether a line carries a Metal or ANE error, as MLX, Metal or a crash stack write one."""
    return any(regex.search(text) is not None for regex in (METAL_ERROR, GPU_CODE, GPU_RESOURCE_LIMIT))


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
# A GPU fault's kind: the one its first record's code names, other_gpu for any other code (the schemas'
# ``fault_kind``).
FaultKind = Literal[
    "timeout", "submissions_ignored", "out_of_memory", "impacting_interactivity", "resource_limit", "other_gpu"
]
INCIDENT_KINDS: dict[str, FaultKind] = {
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


CELLAR_VERSION = re.compile(r"/Cellar/omlx(?:@[\w.\-+]+)?/(?P<version>\d[\w.\-+]*)/")  # a versioned keg: omlx@0.3.6


# oMLX's Python package, as traceback paths and module names show it.
PACKAGE = "omlx"


# The engine operation a GPU error's traceback shows, by the functions in it (oMLX's and mlx-lm's).
CACHE_CLEAR_FUNCTION = "_sync_and_clear_cache"  # the Metal cache-clear drain
# ``Scheduler.step`` (scheduler.py), whose own ``except`` formats the traceback of an error inside its
# batch step (``Error in batch generation step``): a stack that begins at it was written there.
STEP_FRAME = ("omlx/scheduler.py", "step")
PREFILL_IN_FUNCTION = "prefill"  # any function whose name holds it (case aside) is a prefill step
DECODE_IN_FUNCTION = "decode"  # ... a decode step


DECODE_FUNCTIONS = ("next_generated", "_next", "_step")  # the decode loop's own steps
