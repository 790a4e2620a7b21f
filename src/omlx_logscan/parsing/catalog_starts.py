"""The catalog's process starts: every line oMLX writes while a process starts, before it serves.

Which lines these are comes from oMLX's code, by one rule over the lexicon
(:func:`writes_at_start`): the messages written at import time (a module's top level, such as the
scheduler's ``ChunkedKVCache patch``, or a function it calls, such as the cache type registry's
``Registered handler for``), by the CLI's ``serve`` command (the banner and the settings it prints)
and by the server's ``init_server``. ``tests/parsing/test_starts.py`` checks
that a row here covers each of them. Each row's tag is the marker ``stream/starts.py`` folds into
one ``process_start`` per process:

- ``banner``: the CLI's first line; it always opens a start.
- ``import``: written while oMLX's modules are imported, the first line of a file log; it opens a
  start unless the open one has an import line already (the console prints the banner first).
- ``prelude``: written by a function a module's top level calls (the lexicon's ``called_at_import``),
  so as oMLX's modules are imported, some several times, and some later too (the DeepSeek V4 patch
  registers its cache handlers when it is applied): it joins the open start, and opens one only
  where no process is known to run (before any line that shows one, or after a stop or exit).
- ``capture``: the CLI's other bare lines (a console capture), and ``startup_block``: the server's
  timed lines; they join the open start or open one.
- ``discovery``, ``settings``: written at start and again later (a pool refresh, settings saved
  from the admin page): they join an open start and never open one.
- ``enforcer``: once per process, after its first engine started.
- ``uvicorn``: the server's own lines (no oMLX text).
"""

from __future__ import annotations

from omlx_logscan.parsing.lexicon import LOG, STDOUT, Entry, lexicon
from omlx_logscan.parsing.template import Template

# The tag of the lines a function oMLX's modules call as they are imported writes (see the module's doc).
PRELUDE_TAG = "prelude"

# The tag of the lines uvicorn writes (oMLX serves through it, as do other servers): no oMLX text.
UVICORN_TAG = "uvicorn"

# Where oMLX's start writes: a module's top level (import time), the CLI's serve command, the
# server's initialisation. Their nested functions (``init_server._refresh_models_after_download``)
# run later and are not in the set.
STARTUP_FUNCTIONS = frozenset({"<module>", "serve_command", "init_server"})


def writes_at_start(entry: Entry) -> bool:
    """Whether oMLX writes ``entry`` while a process starts: a log record or a printed line of one of
    STARTUP_FUNCTIONS, in the ``omlx`` package (not its build scripts or cluster workers), or of a
    function a module's top level calls (:func:`called_at_import`)."""
    return entry.kind in (LOG, STDOUT) and (
        called_at_import(entry)
        or (
            entry.function in STARTUP_FUNCTIONS
            and (entry.module in ("omlx.cli", "omlx.server") or entry.function == "<module>")
        )
    )


def called_at_import(entry: Entry) -> bool:
    """Whether ``entry``'s writer is a function its module's top level calls: the ``prelude`` rows."""
    return entry.id in lexicon().called_at_import


def _rows(tag: str, *patterns: str | tuple[str, str]) -> tuple[Template, ...]:
    """Rows of one tag; a pattern that opens with no fixed text comes with its literal."""
    return tuple(Template("process_start", *((p, tag) if isinstance(p, str) else (p[0], tag, p[1]))) for p in patterns)


START_ROWS: tuple[Template, ...] = (
    *_rows("banner", r"^oMLX - LLM inference"),
    *_rows(
        "import",
        r"^ChunkedKVCache patch: ",
        r"^libproc unavailable, phys_footprint will return 0",
        (r"^\S+: native extension is present but failed to load", ": native extension is present but failed to load"),
    ),
    *_rows(
        PRELUDE_TAG,
        r"^Registered handler for ",
        r"^Patched qwen3_5_mtp for MoE text_config support",
        (r"^\S+: native kernels disabled — ", ": native kernels disabled — "),
        r"^mlx-audio not available — using static audio detection sets",
        r"^Audio detection sets loaded from mlx-audio: ",
    ),
    *_rows(
        "capture",
        r"^Log directory: ",
        r"^Binding server at ",
        r"^Starting server at ",
        r"^Saved CLI arguments to settings",
        r"^Warning: Failed to save settings: ",
        r"^Configuration error: ",
        r"^Base path: ",
        r"^Model director(?:y|ies): ",
        r"^MCP config: ",
        r"^Memory guard: (?:off|on \(tier: )",
        r"^Max process memory: ",
        r"^Hot cache: .*\(in-memory\)",
        r"^paged SSD cache: .*\(max: ",
        r"^Mode: Multi-model serving",
    ),
    *_rows(
        "startup_block",
        r"^CORS origins: ",
        r"^Loaded settings for \d+ models",
        r"^Server initialized with \d+ models",
        r"^Memory guard tier: ",
        r"^Pinned model: ",
        r"^Default model: (?P<default_model>.*\S)",  # the model a probe asks (watch --probe)
        r"^Default model '.*' not found, using first model",
        r"^No default model \(no models available\)",
        r"^Default max tokens: ",
        r"^Max model memory: ",  # also printed bare by the CLI up to 0.3.10
        r"^Generated and saved new auth secret key",
        r"^API key authentication: enabled",
        r"^HF (?:Uploader|Downloader) initialized",
        r"^ModelScope (?:SDK not installed|Downloader initialized|support not available)",
        r"^oQ Quantizer initialized",
        r"^Model directory created \(empty\): ",
        r"^No models found in .*Add models to serve them",
    ),
    *_rows("discovery", r"^Discovered model: ", r"^Discovered \d+ models\b"),
    *_rows("settings", r"^Saved settings to "),
    *_rows("enforcer", r"^Process memory enforcer started\b"),
    *_rows(UVICORN_TAG, r"^Started server process \[(?P<pid>\d+)\]", r"^Uvicorn running on "),
)


# What every prelude line opens with: most are DEBUG records, which the block scanners count as
# routine unless they hold one of these.
PRELUDE_LITERALS: tuple[str, ...] = tuple(row.literal for row in START_ROWS if row.tag == PRELUDE_TAG)
