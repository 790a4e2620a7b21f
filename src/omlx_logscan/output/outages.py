"""Outages in words: one line each, what the log cannot show about it, and what the log level
lets a wedge be. Every format (text, JSON, Markdown, report, chart) takes its sentences from here."""

from __future__ import annotations

from typing import Any

from omlx_logscan.analysis.outage_model import COMPLETIONS_SHOWN, TRAFFIC_HIDDEN, Outage, OutageKind, Outages
from omlx_logscan.output.markup import code_block, fence_for, fit_code, md_text
from omlx_logscan.output.report_blocks import Part, ReportBlock
from omlx_logscan.timeutil import human_duration, human_time

KIND_TITLES: dict[OutageKind, str] = {
    "penalty_box": "penalty box",
    "wedge": "wedge",
    "fatal_exit": "fatal exit",
    "crash": "crash",
    "reboot": "reboot",
    "retry_loop": "retry loop",
}

_STILL_GOING: frozenset[OutageKind] = frozenset({"wedge", "penalty_box"})  # until a restart, when none follows

FATAL_REASON_WORDS = {
    "submissions_ignored": "Metal GPU submissions disabled (SubmissionsIgnored)",
    "teardown": "engine teardown outlived its 60 s watchdog",
    "store_cache_timeout": "the scheduler's cache writes outlived its 60 s watchdog",
    "other": "a reason this version of logscan does not know",
    "at_start": "the CLI raised out of its main() as the process started",
}

# What the log cannot show about an outage, by the ids analysis/outages.py gives.
HIDDEN_WORDS = {
    "end_time": "when exactly it ended: the next start lies between two records",
    "restart_time": "when exactly the supervisor restarted it: the next start lies between two records",
    "wired_memory": "whether the exit stranded wired GPU memory (only a reboot frees it)",
    "crash_time": "when exactly the process died: after its last record, before the next start",
    "panic_time": "when exactly the Mac panicked: the report gives no time",
    "loop_cause": "whether requests failed or only waited while the engine loop retried",
    "why_stalled": "why the scheduler stopped stepping (nothing is logged), nor whether /health still answered "
    "(health checks are logged only at TRACE)",
    "arrivals_hidden": "whether requests kept arriving: at INFO level arrivals are not logged, so the log level "
    "cannot tell a wedge from an idle server",
}

POSSIBLE_WEDGE_CAVEAT = "The log level cannot tell a wedge from an idle server."

TRAFFIC_NOTES = {
    COMPLETIONS_SHOWN: "At INFO level only finished requests are logged: a silence after steady traffic is at most a "
    "possible wedge. " + POSSIBLE_WEDGE_CAVEAT + " Run oMLX at DEBUG level to see arrivals.",
    TRAFFIC_HIDDEN: "The log level hides all traffic (neither arriving nor finished requests are logged): no wedge "
    "can be seen in this log.",
}


def outage_title(outage: Outage) -> str:
    """``wedge``, ``possible wedge``, ``fatal exit`` …"""
    title = KIND_TITLES[outage.kind]
    return title if outage.certain else f"possible {title}"


def end_phrase(outage: Outage) -> str:
    """Where it ended, as exactly as the log says."""
    if outage.end is None and outage.next_session is not None:  # a later lifetime shows it over
        return f"until session {outage.next_session} began"
    if outage.end is None:
        still = "still going" if outage.kind in _STILL_GOING else "no restart"
        return f"{still} when the log ends"
    if outage.end_exact:
        return f"until {human_time(outage.end)}"
    return f"until between {human_time(outage.end_after)} and {human_time(outage.end)}"


def duration_phrase(outage: Outage) -> str:
    """``14 h 03 min``, ``2 min to 6 d``, ``at least 3 min``, or ``up to 5 min`` (it began after an unknown moment)."""
    if not outage.start_exact:
        return f"up to {human_duration(outage.at_most_s)}" if outage.end is not None else "length unknown"
    if outage.end is None:
        return f"at least {human_duration(outage.at_least_s)}"
    if outage.end_exact:
        return human_duration(outage.at_most_s)
    return f"{human_duration(outage.at_least_s)} to {human_duration(outage.at_most_s)}"


def detail_phrase(outage: Outage) -> str:
    """What is particular to this outage: the exit's reason, the loop's error, the wedge's requests."""
    if outage.kind == "fatal_exit":
        words = FATAL_REASON_WORDS.get(outage.reason or "other", outage.reason or "")
        cause = f", after fault {outage.fault + 1}" if outage.fault is not None else ""
        if outage.reason == "at_start":
            return f"exit at start: {words}"
        return f"exit 70 for a supervisor restart: {words}{cause}; the restart gap"
    if outage.kind == "retry_loop":
        return f"'Engine loop error: {outage.reason}' {outage.repeats} times, never SubmissionsIgnored"
    if outage.kind == "wedge" and outage.certain:
        return f"{outage.unfinished_requests} requests accepted and never finished, nothing finished, aborted or failed"
    if outage.kind == "wedge":
        gap = human_duration(outage.longest_gap_s)
        return (
            f"no request finished after {outage.completions_before} completions whose longest gap was {gap}. "
            + POSSIBLE_WEDGE_CAVEAT
        )
    if outage.kind == "penalty_box":
        return "the driver ignored the process's GPU submissions"
    if outage.kind == "reboot":
        return "a kernel panic took the Mac down"
    return "the process died without an orderly stop"


def outage_line(outage: Outage) -> str:
    """One outage on one line."""
    if outage.start is None:
        begins = "at a time the log does not give,"
    else:
        begins = human_time(outage.start) if outage.start_exact else f"after {human_time(outage.start)}"
    return (
        f"{begins} {end_phrase(outage)} ({duration_phrase(outage)}): session {outage.session} "
        f"{outage_title(outage)} — {detail_phrase(outage)}"
    )


def hidden_sentences(outage: Outage) -> list[str]:
    return [HIDDEN_WORDS[item] for item in outage.hidden]


def outage_lines(outages: Outages) -> list[str]:
    """The section's lines: one per outage, then the note on what the log level hides."""
    lines = [outage_line(o) for o in outages.items]
    if not lines:
        lines.append("no outages")
    return lines + outage_notes(outages)


def wedge_alert_message(since: str | None, unfinished: int, session: int) -> str:
    """The watch's live wedge alert: requests keep arriving and nothing has finished since ``since``."""
    return (
        f"ALERT engine wedged: no request finished, aborted or failed since {human_time(since)} while "
        f"{unfinished} requests arrived (session {session}). The server may still answer /health; only a restart "
        "recovers it"
    )


def outage_notes(outages: Outages) -> list[str]:
    """What the log level hides of the outages (the timeline JSON's ``outage_notes``); nothing for a
    pasted excerpt, whose few records say nothing of the server's log level."""
    note = None if outages.excerpt else TRAFFIC_NOTES.get(outages.traffic)
    return [note] if note else []


def outage_dict(outage: Outage) -> dict[str, Any]:
    """One ``outages`` entry of the timeline JSON: the numbers, with the words a reader needs."""
    return {
        **outage.as_dict(),
        "title": outage_title(outage),
        "text": outage_line(outage),
        "cannot_show": hidden_sentences(outage),
    }


def outages_sentence(outages: Outages) -> str:
    """The summary's words on the outages other than penalty boxes (the summary counts those already)."""
    counted: dict[str, list[Outage]] = {}
    for outage in outages.items:
        if outage.kind != "penalty_box":
            counted.setdefault(outage_title(outage), []).append(outage)
    if not counted:
        return ""
    parts = []
    for title, items in counted.items():
        proven = sum(o.at_least_s for o in items)
        lasted = f" (at least {human_duration(proven)})" if proven else ""
        parts.append(f"{len(items)} {title}{'' if len(items) == 1 else 's'}{lasted}")
    return " Outages: " + ", ".join(parts) + "."


def outages_markdown(outages: Outages) -> list[str]:
    """The *Outages* section of the timeline: the lines in a code block (a retry loop's line is log
    text), the cannot-show sentences and the note on the log level as bullets."""
    return ["### Outages", "", *code_block(_code_lines(outages)), "", *_bullets(outages)]


def outages_report(outages: Outages) -> list[Part]:
    """The report's *Outages* section: as the timeline's, its lines a block the report may cut to fit."""
    lines = _code_lines(outages)
    fence = fence_for(lines)
    block = ReportBlock("outages", [fence], lines, [fence], lambda n: f"… {n} outages cut here", "`logscan timeline`")
    return ["### Outages", "", block, *_bullets(outages)]


def _code_lines(outages: Outages) -> list[str]:
    """One line per outage, wrapped to read at the width of a comment."""
    return fit_code([outage_line(o) for o in outages.items] or ["no outages"])


def _bullets(outages: Outages) -> list[str]:
    hidden = sorted({sentence for o in outages.items for sentence in hidden_sentences(o)})
    bullets = [f"- The log cannot show {md_text(sentence)}." for sentence in hidden]
    bullets += [f"- {note}" for note in outage_notes(outages)]
    return [*bullets, *([""] if bullets else [])]
