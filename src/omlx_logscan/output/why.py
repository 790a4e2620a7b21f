"""The words of the fault attribution: call sites, triggers, evidence, load, what the level hid.

``analysis.attribution`` finds ids, numbers and times; this module says them, as the lines of
the *Why it faulted* section (which ``output.text`` and ``output.markdown`` lay out for a terminal
and for GitHub, and the report quotes), and as the phrases the timeline JSON carries.
"""

from __future__ import annotations

from omlx_logscan.analysis.attribution import (
    IDLE_TRIM,
    REQUEST_ABORTED,
    REQUEST_FAILED,
    REQUEST_FINISHED,
    Attribution,
    Evidence,
    Hidden,
    LoadContext,
    LoadGap,
    LoadLevel,
    WhyFaulted,
    own_time,
)
from omlx_logscan.output.overlays import overlay_sentence
from omlx_logscan.output.phrases import CALL_SITE_WORDS, call_site_label, every_fault, untraced_call_site_label
from omlx_logscan.timeutil import human_duration, human_time, seconds

PRESSURE_ACTION_WORDS = {  # the name in reports of each memory-pressure action of the catalog
    "hot_cache_shrink": "hot-cache shrink",
    "reclaim_request": "pressure reclaim request",
    "reclaim_failed": "failed pressure reclaim request",
    "level_change": "pressure level change",
    "post_eviction": "pressure level after an eviction",
    "eviction": "pressure eviction",
    "hard_abort": "hard-pressure abort",
    "hard_pinned": "hard pressure with all models pinned",
    "emergency_abort": "emergency-pressure abort",
    "abort": "pressure abort",
    "load_abort": "pressure abort of a model load",
    "nothing_to_evict": "hard pressure with no model to evict",
    "deferred_enforcement": "pressure enforcement deferred while buffers drain",
    "limit_exceeded": "process memory limit exceeded",
    "idle_reclaim_request": "idle reclaim requested",
}


EVIDENCE_WORDS = {
    **PRESSURE_ACTION_WORDS,
    REQUEST_FAILED: "request failed",
    REQUEST_FINISHED: "request finished",
    REQUEST_ABORTED: "request aborted",
    IDLE_TRIM: "idle reclaim ran",
}


OWN_REASON_WORDS = {  # the triggers a record (signatures.CLEAR_CONTEXTS) or a stack names: short, why
    "decode_interval": (
        "decode interval",
        "its stack is that of the clear Scheduler.step runs every 1,024 decoded tokens",
    ),
    "idle": ("idle", "the fault was in the idle reclaim between turns"),
    "recovery": ("error recovery", "the fault was in the clear oMLX runs to recover from an error"),
    "overflow": ("overflow recovery", "the fault was in the clear oMLX runs to recover from a generation overflow"),
    "pooled_reclaim": ("pooled-buffer reclaim", "the fault was in the reclaim of a request's pooled buffers"),
}


LOAD_LEVEL_WORDS = {
    LoadLevel.quiet: "quiet, as usual",
    LoadLevel.nearly_idle: "nearly idle",
    LoadLevel.busy: "busier than usual",
    LoadLevel.usual: "usual load",
}


LOAD_GAP_WORDS = {
    LoadGap.not_logged: "finished requests are INFO lines, absent from this log",
    LoadGap.untimed_fault: "the fault has no time of its own",
}


# -- phrases -------------------------------------------------------------------------------------


def evidence_what(evidence: Evidence) -> str:
    """What the evidence line is: ``hot-cache shrink``, ``request finished``."""
    return EVIDENCE_WORDS[evidence.action]


def load_label(load: LoadContext) -> str | None:
    """``nearly idle``, ``busier than usual``…; None without a median to compare with."""
    level = load.level
    return None if level is None else LOAD_LEVEL_WORDS[level]


def load_note(load: LoadContext) -> str | None:
    """Why the load cannot be measured, if it cannot."""
    return None if load.gap is None else LOAD_GAP_WORDS[load.gap]


def load_phrase(load: LoadContext, *, full: bool) -> str:
    """``nearly idle: 0 requests in the 10 min before, median 4`` (all windows when ``full``)."""
    note = load_note(load)
    if not load.visible:
        return f"load not measurable: {note}" if full else "load not logged"
    if not load.windows:
        return f"load unknown: {note}"
    parts = [
        f"{w.requests} request{'s' if w.requests != 1 else ''} in the {w.minutes} min before, "
        f"{_against(w.median_requests, w.minutes)}"
        for w in (load.windows if full else load.windows[:1])
    ]
    if full:
        parts += [
            f"{w.tokens:,} tokens generated in the {w.minutes} min before, {_against(w.median_tokens, w.minutes)}"
            for w in load.windows
            if w.tokens is not None
        ]
        if note:
            parts.append(note)
        parts.append(f"medians over the {load.baseline}'s live windows")
    label = load_label(load)
    return f"{label}: {'; '.join(parts)}" if label else "; ".join(parts)


def trigger_phrase(attribution: Attribution, *, full: bool) -> str:
    """What asked for the clear: ``pressure (hot-cache shrink 42 s before)``; the reasons when ``full``."""
    a = attribution
    if a.trigger == "not_applicable":
        return "not applicable (not a cache clear)"
    if a.trigger == "periodic":
        if not full:
            return "periodic"
        return (
            f"periodic: no pressure line in the {lead_time(a.pressure_window_s)} before, "
            f"no request ended in the {lead_time(a.deferred_window_s)} before"
        )
    if a.trigger == "unknown":
        if not full:
            return "unknown"
        if a.call_site == "unknown":
            return "unknown: no traceback says this fault was a cache clear"
        if own_time(a.incident) is None:
            return "unknown: the fault has no time of its own"
        left = ", ".join(a.possible[:-1]) + f" or {a.possible[-1]}" if len(a.possible) > 1 else a.possible[0]
        return f"unknown: {left} (the log level hides the lines that would tell; see hidden)"
    nearest = next((e for e in reversed(a.evidence) if e.supports == a.trigger), None)
    if a.trigger in OWN_REASON_WORDS and nearest is None:
        short, why = OWN_REASON_WORDS[a.trigger]
        return f"{short} ({why})" if full else short
    gap = seconds(nearest.time, own_time(a.incident)) if nearest else None
    detail = f" ({evidence_what(nearest)}{f' {lead_time(gap)} before' if gap is not None else ''})" if nearest else ""
    also = [c for c in a.candidates if c != a.trigger]
    return f"{a.trigger}{detail}" + (f"; {', '.join(also)} possible too" if full and also else "")


def hidden_phrases(hidden: Hidden | None) -> list[str]:
    """What the log level hid, as two sentences: on a pressure clear, and on a deferred clear and the load."""
    if hidden is None:
        return []
    missing = f"{' and '.join(hidden.absent_levels)} lines absent: "
    actions = ", ".join(PRESSURE_ACTION_WORDS[action] for action in hidden.hidden_actions)
    pressure = f"{missing}a pressure clear cannot be excluded ({actions} would not show)"
    if hidden.shrink_warning_seen is not None:
        pressure += f"; the hot-cache shrink warning (WARNING) {seen_phrase(hidden.shrink_warning_seen)}"
    ended = (
        f"{missing}finished requests are not logged, so neither a deferred clear nor the load before the "
        "fault can be judged"
    )
    if hidden.failed_requests_seen is not None:
        ended += f"; failed requests (ERROR) {seen_phrase(hidden.failed_requests_seen)}"
    return [pressure, ended]


def seen_phrase(found: bool) -> str:
    """Whether lines the log level does show turned up."""
    return "showed" if found else "would have shown and did not"


def lead_time(total: float | None) -> str:
    """A window or a gap before a fault: ``42 s`` or ``5 min``."""
    if total is None:
        return "?"
    if total < 10 and total != round(total):  # the deferred clear's second is told in tenths
        return f"{total:.1f} s"
    return f"{total:.0f} s" if total < 120 else f"{total / 60:.0f} min"


def _against(median: float | None, minutes: int) -> str:
    """``median 4``, or why there is none: the log holds no live window that long to compare with."""
    if median is None:
        return f"no median (the log holds no live {minutes}-min window to compare with)"
    return f"median {median:,.0f}" if median == int(median) or median >= 10 else f"median {median:.1f}"


def evidence_line(evidence: Evidence) -> str:
    """``time  file:line  what: message``."""
    where = f"{evidence.source.rsplit('/', 1)[-1]}:{evidence.line}"
    return f"{human_time(evidence.time)}  {where}  {evidence_what(evidence)}: {evidence.message}"


# -- the section ---------------------------------------------------------------------------------


def why_caveats(why: WhyFaulted) -> list[str]:
    """What the log level hid, once for the whole log (the same for every fault)."""
    seen: dict[str, None] = {}
    for attribution in why.attributions:
        seen.update(dict.fromkeys(hidden_phrases(attribution.hidden)))
    return list(seen)


EVIDENCE_LABEL = "    evidence  "  # starts the lines that quote the log: they are not the tool's own words


SITE_LABEL = "    stack     "  # the call site, when every fault shares it


LABEL_WIDTH = len(EVIDENCE_LABEL)  # where the text of a labelled line starts (and its wrapped lines)


def fault_lines(why: WhyFaulted, *, full: bool) -> list[str]:
    """One line per fault in short form, a block per fault in full, then what the level hid."""
    if not why.attributions:
        return ["no GPU faults"]
    shared, faults, hidden = fault_parts(why, full=full)
    return [*shared, *(line for block in faults for line in block), *hidden]


def fault_parts(why: WhyFaulted, *, full: bool) -> tuple[list[str], list[list[str]], list[str]]:
    """The lines of the *Why it faulted* section in three parts: in full, what every fault shares (said
    once, ``all 6 faults: …``), each fault's own lines, and what the level hid (the same for all)."""
    hidden = [f"hidden: {text}" for text in why_caveats(why)]
    if not full:
        return [], [[_short_line(a)] for a in why.attributions], hidden
    details = [
        {
            "site": call_site_label(a.signature) if a.signature else untraced_call_site_label(a.call_site),
            "trigger": f"    trigger   {trigger_phrase(a, full=True)}",
            "load": f"    load      {load_phrase(a.load, full=True).removeprefix('load ')}",
        }
        for a in why.attributions
    ]
    common = {
        key: details[0][key]
        for key in details[0]
        if len(details) > 1 and all(detail[key] == details[0][key] for detail in details)
    }
    shared = []
    if common:
        site = [f"{SITE_LABEL}{common['site']}"] if "site" in common else []
        shared = [
            f"{every_fault(len(details))}:",
            *site,
            *(common[key] for key in ("trigger", "load") if key in common),
        ]
    faults = []
    for number, (a, detail) in enumerate(zip(why.attributions, details, strict=True), start=1):
        head = f"{_when(a)}  fault {number} (session {a.incident.session})"
        lines = [head + ("" if "site" in common else f": {detail['site']}")]
        lines += [detail["trigger"]] if "trigger" not in common else []
        lines += [f"{EVIDENCE_LABEL}{evidence_line(e)}" for e in a.evidence]
        lines += [detail["load"]] if "load" not in common else []
        faults.append(lines)
    return shared, faults, hidden


def _when(attribution: Attribution) -> str:
    """When the fault was logged; ``after`` the record before it when it has no time of its own."""
    when = human_time(attribution.incident.time)
    if attribution.incident.time and own_time(attribution.incident) is None:
        return f"after {when}"
    return when


def _short_line(a: Attribution) -> str:
    words = [CALL_SITE_WORDS[a.call_site].short]
    if a.trigger != "not_applicable":
        words.append(f"trigger {trigger_phrase(a, full=False)}")
    return f"{_when(a)}  {', '.join(words)}; {load_phrase(a.load, full=False)}"


def overlay_lines(why: WhyFaulted, *, full: bool) -> list[str]:
    """One sentence per overlay; in full, what the hours at risk leave out."""
    out: list[str] = []
    for overlay in why.overlays:
        line = f"overlay {overlay.name}: {overlay_sentence(overlay)}"
        if full and overlay.hours_dead_excluded > 0:
            line += (
                f" (the hours leave out {human_duration(overlay.hours_dead_excluded * 3600)} of dead-engine windows, "
                "when no new fault could occur)"
            )
        out.append(line)
    return out
