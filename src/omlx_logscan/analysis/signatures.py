"""Stack signatures: tracebacks normalised across installs, and the engine operation that failed."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from omlx_logscan.analysis.results import CallSite, Incident, Signature
from omlx_logscan.parsing.catalog import (
    CACHE_CLEAR_FUNCTION,
    DECODE_FUNCTIONS,
    DECODE_IN_FUNCTION,
    FATAL_EXIT_FUNCTION,
    PACKAGE,
    PREFILL_IN_FUNCTION,
    STEP_FRAME,
)
from omlx_logscan.parsing.event import Event

# The contexts of records that say the fault was in one of oMLX's cache clears (the call site
# without a traceback), each with the reason that clear runs for: its trigger in attribution. These
# clears are not ``Scheduler.step``'s, so what surrounds the fault does not say what asked for them:
# the error recovery, the generation-overflow recovery, the idle reclaim and the pooled-buffer
# reclaim each clear for their own reason.
ClearReason = Literal["recovery", "overflow", "idle", "pooled_reclaim"]
CLEAR_CONTEXTS: dict[str, ClearReason] = {
    "recovery_clear": "recovery",
    "overflow_clear": "overflow",
    "idle_clear": "idle",
    "pooled_reclaim": "pooled_reclaim",
}


_MODULE_ROOTS = ("/site-packages/", "/dist-packages/")


_STDLIB = re.compile(r"/lib/python\d+(?:\.\d+)?/(?P<rest>.+)$")


def normal_module(path: str) -> str:
    """A traceback path without install prefix or version folders: ``omlx/scheduler.py``."""
    path = path.replace("\\", "/")
    for root in _MODULE_ROOTS:
        if root in path:
            return path.split(root)[-1]
    match = _STDLIB.search(path)
    if match:
        return match["rest"]
    cut = path.rfind(f"/{PACKAGE}/")
    if cut >= 0:
        return path[cut + 1 :]
    return path.rsplit("/", 1)[-1].lstrip(".")


def _dotted(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".").removeprefix(f"{PACKAGE}.")


def call_site(funcs: list[str], context: str) -> CallSite:
    """Which engine operation failed, as an id (``output.phrases`` names it), from the functions of
    the fault's traceback (none without one) and the context its record gave."""
    if CACHE_CLEAR_FUNCTION in funcs or context in CLEAR_CONTEXTS:
        return "cache_clear"
    if context == "ane_dispatch":
        return "ane_dispatch"
    if context == "prefill" or any(PREFILL_IN_FUNCTION in f.lower() for f in funcs):
        return "prefill"
    if any((DECODE_IN_FUNCTION in f.lower() or f in DECODE_FUNCTIONS) for f in funcs):
        return "decode"
    return "unknown"


def cache_clear_call(frames: list[dict[str, Any]]) -> tuple[str, str | None] | None:
    """Where a signature's stack ran the cache clear, as dotted names: the clear's own frame and its
    caller's (None when the clear is the outermost frame); None when the stack has no clear. Both
    names tell a maintainer which of oMLX's clears drained the GPU."""
    funcs = [f["func"] for f in frames]
    if CACHE_CLEAR_FUNCTION not in funcs:
        return None
    index = funcs.index(CACHE_CLEAR_FUNCTION)
    where = f"{_dotted(frames[index]['module'])}.{CACHE_CLEAR_FUNCTION}"
    if index == 0:
        return where, None
    caller = frames[index - 1]
    return where, f"{_dotted(caller['module'])}.{caller['func']}"


def decode_interval_clear(frames: list[dict[str, Any]]) -> bool:
    """Whether a stack is that of the clear ``Scheduler.step`` runs every 1,024 decoded tokens.

    In every version that has it (0.3.9 to 0.6.3) it is the one clear ``step`` calls itself inside
    the ``try`` whose handler logs ``Error in batch generation step`` with the traceback: so its stack
    begins at ``step`` and ``step`` calls the clear. The clear at the end of ``step`` (periodic,
    deferred, pressure) runs after that ``try``; its stack begins in the engine loop.
    """
    funcs = [f["func"] for f in frames]
    return len(frames) > 1 and (frames[0]["module"], funcs[0]) == STEP_FRAME and funcs[1] == CACHE_CLEAR_FUNCTION


def crash_site(event: Event) -> dict[str, Any] | None:
    """Where the thread that crashed was, from the faulthandler dump of a crash event: its innermost
    frame (above a fatal exit's own), normalised; None without a dump or a current thread in it."""
    if "threads" not in event.fields:
        return None
    frames = [f for f in event.fields["traceback"] if f["func"] != FATAL_EXIT_FUNCTION]
    if not frames:
        return None
    innermost = frames[-1]
    return {"module": normal_module(innermost["path"]), "line": innermost["line"], "func": innermost["func"]}


def _signature_of(incident: Incident) -> Signature | None:
    """The signature of a fault's first record with a traceback. Its ``faults`` count is the caller's to keep."""
    for event in incident.records:
        frames = event.fields.get("traceback")
        if not frames:
            continue
        normal = [
            {"module": normal_module(f["path"]), "line": f["line"], "func": f["func"], "code": f["code"]}
            for f in frames
        ]
        key = "|".join(f"{f['module']}:{f['line']}:{f['func']}" for f in normal)
        sig_id = hashlib.sha1(key.encode()).hexdigest()[:10]
        site = call_site([f["func"] for f in normal], incident.context)
        innermost = normal[-1]["code"] if normal else ""
        return Signature(
            id=sig_id,
            frames=normal,
            exception=event.fields.get("exception"),
            call_site=site,
            innermost_code=innermost,
            faults=0,
        )
    return None


def signatures_of(faults: list[Incident]) -> list[Signature]:
    """The stack signatures of the faults, most often seen first; each fault with a traceback
    learns the id of its own."""
    found: dict[str, Signature] = {}
    for incident in faults:
        signature = _signature_of(incident)
        if signature is None:
            continue
        incident.signature = signature.id
        found.setdefault(signature.id, signature).faults += 1
    return sorted(found.values(), key=lambda s: -s.faults)
