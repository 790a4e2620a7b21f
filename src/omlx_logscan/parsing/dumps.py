"""faulthandler dumps: each thread its own stack, and the current thread's the one that crashed.

faulthandler writes ``Current thread 0x… (most recent call first):`` over the stack of the thread
that crashed (or that called it, as oMLX's fatal exit does) and ``Thread 0x…`` over every other,
each stack innermost frame first. Merged, the threads would make one stack that never ran; when no
thread is the current one, the crash came from a thread that ran no Python (a Metal completion
queue's), and no Python stack is where it happened.
"""

from __future__ import annotations

import re
from typing import Any

# A thread's header, and whether it is the current one; what follows the id varies (a thread name,
# ``(most recent call first)``, or what a paste put in its place).
_THREAD = re.compile(r"^\s*(?P<which>Current thread|Thread) (?P<id>0x[0-9a-fA-F]+)\b")


# One frame of a dump: no comma before ``in``, unlike a Python traceback's.
DUMP_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


def dump_threads(lines: list[str]) -> list[dict[str, Any]]:
    """The threads of a dump's lines in the dump's order (none when it has no thread header), each
    with its frames outermost first, as a Python traceback lists them."""
    threads: list[dict[str, Any]] = []
    for text in lines:
        header = _THREAD.match(text)
        if header is not None:
            threads.append({"id": header["id"], "current": header["which"] == "Current thread", "frames": []})
            continue
        frame = DUMP_FRAME.match(text) if threads else None
        if frame is not None:
            found = {"path": frame["path"], "line": int(frame["line"]), "func": frame["func"], "code": ""}
            threads[-1]["frames"].insert(0, found)
    return threads


def dump_fields(lines: list[str]) -> dict[str, Any]:
    """``threads`` of a dump's lines and ``traceback``, the current thread's stack (empty when no
    thread is current); nothing when the lines hold no thread."""
    threads = dump_threads(lines)
    if not threads:
        return {}
    current: list[dict[str, Any]] = next((thread["frames"] for thread in threads if thread["current"]), [])
    return {"threads": threads, "traceback": current}
