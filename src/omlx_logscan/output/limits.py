"""What a log cannot show: what its level hides, what oMLX never logs, what happened after it ends.

The report says it as plainly as what the log does show, so that no reader takes it for more.
"""

from __future__ import annotations

from omlx_logscan.analysis.results import Analysis
from omlx_logscan.timeutil import human_time

CANNOT_SHOW = "### What this log cannot show"


def cannot_show(analysis: Analysis, os_versions: dict[int, str] | None) -> list[str]:
    """The report's *What this log cannot show*: what the log's level, oMLX's logging and the Mac hide."""
    stream = analysis.stream
    level = stream.lowest_level or "an unknown level"
    items: list[str] = []
    if not stream.shows("INFO"):
        items.append(
            f"**INFO records.** The log was written at {level}, so pressure cache reclaim requests "
            "(`Requested pressure cache reclaim …`), startup blocks, engine starts and finished requests are "
            "absent: session start times are bounded, request counts unknown."
        )
    shrinks = [
        ev for ev in stream.events if ev.kind == "memory_pressure" and ev.fields.get("action") == "hot_cache_shrink"
    ]
    if shrinks:
        items.append(
            f"**Whether a pressure clear ran.** {len(shrinks)} hot-cache shrink warning(s) were logged (first at "
            f"{human_time(shrinks[0].time)}), so a memory-pressure cache clear is possible near them."
        )
    elif stream.shows("WARNING") and not stream.shows("INFO"):
        items.append(
            "**Whether a pressure clear ran.** No `Shrank … hot cache under memory pressure` warning was logged, so "
            "the usual precursor of a pressure reclaim never fired; the reclaim request itself is INFO and cannot "
            "be ruled out."
        )
    if any(sig.call_site == "cache_clear" for sig in analysis.signatures):
        items.append(
            "**Which cache clear failed.** oMLX writes nothing when it clears the Metal cache (periodic, deferred "
            "after a request, or on memory pressure); the trigger can only be inferred from what surrounds a fault."
        )
    if any(w.end_reason == "eof" for w in analysis.dead_windows):
        items.append("**What happened after the log ends.** The engine was still dead at the last record.")
    if analysis.dead_windows and not stream.shows("TRACE"):
        items.append(
            "**Health checks during a dead window.** `GET /v1/models` access lines are written only at TRACE "
            "level, so whether clients kept polling a dead engine is not visible."
        )
    if analysis.faults:
        items.append(
            "**Other GPU work on the Mac.** The log shows only this server's faults, not what else used the GPU."
        )
    hidden = "the chip and the mlx / mlx-lm versions" if os_versions else "the macOS version, the chip, mlx and mlx-lm"
    items.append(f"**Hardware and libraries.** oMLX never logs {hidden}.")
    if stream.accounting.unparsed:
        items.append(
            f"**{stream.accounting.unparsed} unparsed line(s).** No grammar matched them; "
            "`logscan events --show-unparsed` lists them."
        )
    return [CANNOT_SHOW, "", *(f"- {item}" for item in items), ""]
