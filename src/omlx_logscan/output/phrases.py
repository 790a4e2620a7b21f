"""Phrases: the sentences and table cells every format builds from results."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from omlx_logscan.analysis.outage_model import LEVEL_EVIDENCE_RECORDS
from omlx_logscan.analysis.results import (
    Analysis,
    DeadWindow,
    Incident,
    Signature,
    aborted_at_exit,
    shows_penalty_box,
)
from omlx_logscan.analysis.signatures import cache_clear_call, crash_site
from omlx_logscan.output.failures import errors_sentence
from omlx_logscan.output.incidents import incidents_sentence
from omlx_logscan.output.outages import outages_sentence
from omlx_logscan.parsing.catalog import FATAL_LOGGER, PENALTY_BOX_CODE
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import EventKind
from omlx_logscan.stream.event_stream import EventStream, header
from omlx_logscan.timeutil import clock_seconds, human_duration, human_time, seconds, to_second

LEVEL_NOTES = {
    "WARNING": "written at WARNING level: INFO records (startup blocks, engine starts, finished requests, "
    "pressure reclaim requests) are absent, so session starts and request counts are bounded, not exact",
    "ERROR": "written at ERROR level: warnings and all INFO records are absent",
}


def plural(count: int, word: str) -> str:
    """``1 session``, ``2 sessions``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def log_spans(whole: EventStream) -> str | None:
    """``the log spans first → last``, or None when no record of it is dated."""
    from omlx_logscan.stream.window import span

    covered = span(whole)
    return f"the log spans {human_time(covered[0])} → {human_time(covered[1])}" if covered else None


def _empty_window(stream: EventStream) -> str | None:
    """What a --since/--until window without a dated record of a dated log says instead of "no
    timestamps": ``none in the window; the log spans …``; None for anything else."""
    spans = log_spans(stream.cut_from) if stream.cut_from is not None else None
    return f"none in the window; {spans}" if spans else None


def zone_phrase(zone: tzinfo | None) -> str:
    """The zone the log's local times were read in, and how to read them in another: a log taken from
    a Mac in another zone is read an offset off unless ``--tz`` names that Mac's zone."""
    from omlx_logscan.timeutil import local_zone, zone_label

    if zone is None:
        return f"read in {zone_label(local_zone())}, this machine's zone (--tz ZONE reads them in another)"
    return f"read in {zone_label(zone)}, as --tz or the configuration says (--tz ZONE to change)"


def span_phrase(head: dict[str, Any], stream: EventStream) -> str:
    """``first → last (87 d 21 h)``, or that the window holds none of the log's dated records, or
    that the input carries no timestamps (``head`` is the stream's header)."""
    if head["first"]:
        length = span_length(seconds(head["first"], head["last"]))
        return f"{human_time(head['first'])} → {human_time(head['last'])}  ({length})"
    if head["first_time_of_day"]:
        length = span_length(clock_seconds(head["first_time_of_day"], head["last_time_of_day"]))
        return (
            f"{head['first_time_of_day'][:8]} → {head['last_time_of_day'][:8]}  ({length}; times of day "
            "only, the log gives no date)"
        )
    return _empty_window(stream) or "unknown (no timestamps)"


def span_length(total: float | None) -> str:
    """How long a log spans: under an hour in minutes and seconds (``7.6 s``, ``12 min 05 s``), a
    short paste's span being its point; longer ones as every other length."""
    if total is None or total >= 3600:
        return human_duration(total)
    if total < 60:
        return f"{total:.1f} s"
    minutes, rest = divmod(int(total), 60)
    return f"{minutes} min {rest:02d} s"


def level_phrase(level: str | None, records: int) -> str:
    """What the lowest level present says about how the log was written (little, for a short paste)."""
    if level is None:
        return "unknown (no record carries a level)"
    if records < LEVEL_EVIDENCE_RECORDS:
        return f"{level} is the lowest level present (too few records to tell how the log was written)"
    return f"written at {level} (the lowest level present)"


@dataclass(frozen=True)
class CallSiteWords:
    """A call site's two names: ``short`` in a fault's one-line summary, ``label`` where a stack is named."""

    short: str
    label: str


CALL_SITE_WORDS = {  # by the ids of analysis.signatures.call_site
    "cache_clear": CallSiteWords("cache-clear drain", "a cache-clear drain"),  # the label follows where it ran
    "decode": CallSiteWords("decode step", "decode step"),
    "prefill": CallSiteWords("prefill", "prefill"),
    "ane_dispatch": CallSiteWords("ANE dispatch", "ANE input dispatch"),
    "unknown": CallSiteWords("call site unknown", "unknown"),
}


def call_site_label(signature: Signature) -> str:
    """A stack's call site, as the signature list, the summary and the JSON ``call_site_label`` say it; a
    cache clear names where it ran (``scheduler._sync_and_clear_cache from scheduler.step = a cache-clear
    drain``), as the clear's caller tells which of oMLX's clears it was."""
    label = CALL_SITE_WORDS[signature.call_site].label
    clear = cache_clear_call(signature.frames)
    if clear is None:
        return label
    where, caller = clear
    return f"{where}{f' from {caller}' if caller else ''} = {label}"


def untraced_call_site_label(call_site: str) -> str:
    """The call site of a fault without a traceback (known from its record's context alone, if at all)."""
    label = CALL_SITE_WORDS[call_site].label
    return f"{label} (no traceback)" if call_site == "unknown" else label


def signature_share(faults: int, total: int) -> str:
    """``identical for all 6 faults`` (``both faults``, ``the one fault``), or ``shared by 2 of 6 faults``."""
    return f"identical for {every_fault(faults)}" if faults == total else f"shared by {faults} of {total} faults"


def every_fault(count: int) -> str:
    """All of ``count`` faults in words that fit any count: ``the one fault``, ``both faults``, ``all 6 faults``."""
    return {1: "the one fault", 2: "both faults"}.get(count, f"all {count} faults")


CRASH_WORDS: dict[EventKind, str] = {
    "kernel_panic": "macOS kernel panic",
    "crash_report": "macOS crash report",
    "faulthandler_dump": "Python fatal error (faulthandler)",
    "process_exit": "process exit",
}


def crash_rows(analysis: Analysis) -> list[dict[str, Any]]:
    """Evidence of a dying process or Mac: aborts, fatal exits, faulthandler dumps, panics, crash reports."""
    unplaced = {id(event) for event in analysis.unplaced}
    return [_crash_row(event, unplaced=id(event) in unplaced) for event in analysis.crash_evidence()]


def _crash_row(event: Event, *, unplaced: bool) -> dict[str, Any]:
    detail = event.fields.get("panic") or event.fields.get("exception_type") or event.fields.get("error")
    if event.kind == "process_exit":
        detail = (
            "uncaught C++ exception (C++ runtime abort)"
            if event.fields.get("reason") == "abort"
            else f"{AT_START_WORDS}: {event.fields.get('reason_text')}"
            if event.fields.get("at_start")
            else _fatal_exit_detail(event.fields.get("reason_text"))
        )
    site = crash_site(event)
    if site is not None:  # the crashing thread's frame, from the dump
        detail = f"{detail or '?'}, in {site['module']}:{site['line']} {site['func']}"
    if unplaced:
        detail = f"{detail or '?'}; {unplaced_phrase(event)}"
    return {
        "time": event.time,
        "after": None if event.time else event.prev_time,
        "kind": event.kind,
        "what": CRASH_WORDS[event.kind],
        "detail": detail,
        "source": event.source,
        "line": event.line,
    }


def unplaced_phrase(event: Event) -> str:
    """What crash evidence the log cannot place shows, and that it is in no session."""
    exited = ", an abort as the process exited (no thread has a Python frame)" if aborted_at_exit(event) else ""
    return f"a crash dump with no time{exited}; it cannot be placed in a session"


def unplaced_note(event: Event) -> str:
    """A line for crash evidence the log cannot place: ``crash.log:1: …``."""
    row = _crash_row(event, unplaced=True)
    return f"{row['source'].rsplit('/', 1)[-1]}:{row['line']}: {row['what']}: {row['detail']}"


AT_START_WORDS = "exit at start through the CLI's main()"


def _fatal_exit_detail(reason: str | None) -> str:
    """A deliberate exit with the reason oMLX gave for it: which of its exits it was is the point."""
    exit_for = f"{FATAL_LOGGER} exit for a supervisor restart"
    return f"{exit_for}: {reason}" if reason else exit_for


def crash_line(row: dict[str, Any]) -> str:
    if row["time"]:
        when = human_time(row["time"])
    else:
        when = f"after {human_time(row['after'])}" if row["after"] else "(untimed)"
    where = f"{row['source'].rsplit('/', 1)[-1]}:{row['line']}"
    return f"{when:<25} {row['what']}: {row['detail'] or '?'}   ({where})"


def _interval_phrase(window: DeadWindow) -> str:
    if not window.intervals_s:
        return ""
    lo, hi = min(window.intervals_s) / 60, max(window.intervals_s) / 60
    if round(lo) == round(hi):
        return f"every ~{round(lo)} min"
    return f"every ~{round(lo)}-{round(hi)} min"


def _same_second(incident: Incident) -> str:
    first = incident.first.time
    record = incident.penalty_record
    ignored = record.time if shows_penalty_box(record) else None
    if first and ignored and first[:19] == ignored[:19]:
        return "in the same second"
    gap = seconds(first, ignored)
    return f"{gap:.1f} s later" if gap is not None else "in the same incident"


def fault_phrase(incident: Incident, requests_visible: bool) -> str:
    """The escalation table's words for what became of the engine after one fault."""
    names = incident.code_names
    first = names[0] if names else incident.kind
    if incident.outcome == "penalty_box":
        if first != PENALTY_BOX_CODE:
            return f"{first} → {PENALTY_BOX_CODE} {_same_second(incident)}"
        return f"{PENALTY_BOX_CODE}: driver penalty box"
    if incident.outcome == "absorbed":
        if incident.later_requests and requests_visible:
            completed = plural(incident.later_requests, "request")
            return f"{first}   absorbed, engine kept serving ({completed} completed after)"
        return f"{first}   absorbed, engine kept serving"
    if incident.outcome == "crash":
        return f"{first}   process crashed"
    if incident.outcome == "fatal_exit":
        return f"{first}   process exited ({FATAL_LOGGER}) for a clean restart"
    # Unknown only when its process wrote nothing after it: the log ends there, or the next start
    # comes with no word of the process in between. Both are that sentence; "the log ends" is not.
    return f"{first}   outcome unknown: its process logged nothing after it"


def window_phrase(window: DeadWindow) -> str:
    parts = [f"{PENALTY_BOX_CODE} {_interval_phrase(window)}".rstrip(), "engine generation-dead"]
    if window.repeats == 0:
        parts[0] = "no further failure logged"
    return ", ".join(parts)


def window_end_phrase(window: DeadWindow, clock: Callable[[str | None], str] = human_time) -> str:
    """How the dead window ended, its times written by ``clock`` (``human_time``, or the time of day alone)."""
    if window.end_reason == "eof":
        return "STILL DEAD when the log ends: the engine may be dead now"
    if window.end_reason == "restart" and window.end is None:
        if window.end_inferred:
            return f"restarted unseen (the failures stopped after {clock(window.last_failure)})"
        return f"ended by a restart after {clock(window.end_after)} (its time is not in the log)"
    when = clock(window.end)
    if window.end_reason == "restart":
        if window.end_exact:
            return f"ended by a restart at {when}"
        return f"ended by a restart between {clock(window.end_after)} and {clock(window.end)}"
    if window.end_reason == "shutdown":
        return f"ended when the process stopped in order at {when}"
    return f"ended by {window.end_reason.replace('_', ' ')} at {when}"


def dead_for(window: DeadWindow) -> str:
    """How long the engine was dead, as exact as the log allows."""
    if window.end is None:
        return f"dead at least {human_duration(window.at_least_s)}"
    if window.end_exact:
        return f"dead {human_duration(window.duration_s)}"
    return f"dead {human_duration(window.at_least_s)} to {human_duration(window.duration_s)}"


def escalation_rows(analysis: Analysis, os_versions: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """The report's escalation table: one row per fault, one per dead window after its entry.

    With ``os_versions`` (session → macOS version, from an OS history) each row names its OS.
    """
    requests_visible = analysis.stream.shows("INFO")
    rows: list[dict[str, Any]] = []
    for incident in analysis.faults:
        rows.append(
            {
                "time": to_second(incident.time),
                "time_exact": incident.first.time is not None,
                "until": None,
                "session": incident.session,
                "text": fault_phrase(incident, requests_visible),
                "outcome": incident.outcome,
            }
        )
        if incident.time is None and incident.first.time_of_day is not None:
            rows[-1]["time_of_day"] = incident.first.time_of_day
        if incident.dead_window is not None:
            window = analysis.dead_windows[incident.dead_window]
            repeat_times = [
                inc.time
                for inc in analysis.repeats
                if inc.session == window.session and inc.time and window.start and inc.time > window.start
            ]
            if repeat_times:
                rows.append(
                    {
                        "time": to_second(repeat_times[0]),
                        "until": to_second(window.last_failure),
                        "session": window.session,
                        "text": window_phrase(window),
                        "outcome": "dead",
                    }
                )
    if os_versions is not None:
        for row in rows:
            row["os_version"] = os_versions.get(row["session"], "unknown")
    return rows


def summary(analysis: Analysis, crash_evidence: list[dict[str, Any]], quote: Callable[[str], str] = str) -> str:
    """One paragraph that says what the log shows, built only from the numbers (``crash_evidence``: the
    ``crash_rows``); the failures' templates (the log's text) through ``quote``."""
    lead = incidents_sentence(analysis.incidents, len(analysis.sessions), quote)
    text = (f"{lead} " if lead else "") + _fault_summary(analysis) + errors_sentence(analysis.errors, quote)
    crashes = Counter(row["what"] for row in crash_evidence)
    if crashes:
        text += " Crash evidence: " + ", ".join(f"{n} × {what}" for what, n in crashes.items()) + "."
    text += outages_sentence(analysis.outages)  # every other kind of outage: output/outages.py
    note = LEVEL_NOTES.get(analysis.stream.lowest_level or "")
    if note and _shows_its_level(analysis.stream):
        text += f" The log was {note}."
    return text


def _shows_its_level(stream: EventStream) -> bool:
    return stream.accounting.records >= LEVEL_EVIDENCE_RECORDS


def _when_written(stream: EventStream) -> str:
    """The input's span: its dates, its times of day, or that it states no time at all."""
    head = header(stream)
    if head["first"]:
        return f"{human_time(head['first'])} → {human_time(head['last'])}"
    if head["first_time_of_day"]:
        return f"times of day {head['first_time_of_day'][:8]} → {head['last_time_of_day'][:8]}"
    return _empty_window(stream) or "the input has no timestamps"


def _fault_summary(analysis: Analysis) -> str:
    faults = analysis.faults
    sessions = analysis.sessions
    if not faults and analysis.incidents:  # the incidents said what happened: no all-clear of one kind
        return f"{plural(len(sessions), 'session')} ({_when_written(analysis.stream)})."
    if not faults:
        return f"No GPU faults in {plural(len(sessions), 'session')} ({_when_written(analysis.stream)})."
    kinds = Counter(f.code_names[0] if f.code_names else f.kind for f in faults)
    outcomes = Counter(f.outcome for f in faults)
    kind_text = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
    outcome_text = ", ".join(f"{n} {o.replace('_', ' ')}" for o, n in outcomes.most_common())
    faulty = sorted({f.session for f in faults})
    timed = [f.time for f in faults if f.time]
    when = f", {human_time(timed[0])} → {human_time(timed[-1])}" if timed else " (no timestamps)"
    text = (
        f"{plural(len(faults), 'GPU fault')} ({kind_text}) in {len(faulty)} of "
        f"{plural(len(sessions), 'session')}{when}: {outcome_text}."
    )
    clean = sum(1 for s in sessions if s.index < faults[0].session)  # numbers need not start at 1 (--since)
    if clean:
        text += (
            f" The {plural(clean, 'earlier session')} ({human_time(analysis.log_start)} → "
            f"{human_time(faults[0].time)}) had none."
        )
    windows = analysis.dead_windows
    if windows:
        dead = sum(w.at_least_s for w in windows)
        repeats = sum(w.repeats for w in windows)
        text += (
            f" {len(windows)} penalty-box entr{'ies' if len(windows) != 1 else 'y'} left the engine "
            f"generation-dead for at least {human_duration(dead)} in all ({plural(repeats, 'repeated failure')})"
        )
        open_windows = [w for w in windows if w.end_reason == "eof"]
        text += "; it was still dead when the log ended." if open_windows else "."
    sigs = analysis.signatures
    with_stack = sum(s.faults for s in sigs)
    if len(sigs) == 1 and with_stack == len(faults):
        text += f" The stack is identical for {every_fault(len(faults))}: {call_site_label(sigs[0])}."
    elif sigs:
        text += f" {plural(len(sigs), 'distinct stack')} among the {plural(with_stack, 'fault')} with a traceback."
    return text


def count_text(value: int | None, what: str = "") -> str:
    """``3 requests completed``, or that the log level hides them (``… not logged``)."""
    if value is None:
        return f"{what} not logged".strip()
    return f"{value} {what}".strip()


def unmatched_phrase(head: dict[str, Any]) -> str:
    """``, 3 records matched no message of oMLX's`` (``events --show-unparsed`` lists them), or nothing."""
    count = head["unmatched_records"]
    return f", {plural(count, 'record')} matched no message of oMLX's" if count else ""


def accounting_lines(stream: EventStream) -> list[str]:
    """The line accounting every command reports: nothing is lost silently."""
    head = header(stream)
    read = [file for file in head["files"] if "skipped" not in file]
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(stream.kind_counts.items()))
    lines = [
        f"read {plural(head['lines'], 'line')} in {plural(len(read), 'file')}: "
        f"{plural(head['records'], 'record')}{unmatched_phrase(head)}, {head['unparsed_lines']} unparsed, "
        f"{head['blank_lines']} blank, "
        f"{head['duplicates_dropped']} duplicate{'' if head['duplicates_dropped'] == 1 else 's'} dropped",
        f"events: {kinds or 'none'}",
    ]
    lines.extend(f"warning: {s.problem}" for s in stream.sources if s.problem)
    lines.extend(f"skipped {s.name}: {s.skipped}" for s in stream.sources if s.skipped)
    lines.extend(
        f"warning: clock went back {human_duration(jump['back_s'])} at {jump['source']}:{jump['line']} "
        f"({human_time(jump['from'])} → {human_time(jump['to'])}); file order kept"
        for jump in stream.clock_jumps[:CLOCK_JUMPS_SHOWN]
    )
    if len(stream.clock_jumps) > CLOCK_JUMPS_SHOWN:
        lines.append(f"warning: {len(stream.clock_jumps) - CLOCK_JUMPS_SHOWN} more backwards clock jumps")
    return lines


CLOCK_JUMPS_SHOWN = 5


def _escalation_when(row: dict[str, Any]) -> str:
    """A row's time column: a fault with no time of its own is placed after the record before it."""
    when: str
    if row["time"]:
        when = str(row["time"]).replace("T", " ")
    else:
        when = f"{row['time_of_day'][:8]} (date unknown)" if row.get("time_of_day") else "(untimed)"
    if row["time"] and not row.get("time_exact", True):
        when = f"after {when}"
    if row["until"]:  # the end's date only when it is another day
        same_day = row["time"] and row["until"][:10] == row["time"][:10]
        when = f"{when} … {row['until'][11:] if same_day else row['until'].replace('T', ' ')}"
    return when


def escalation_column(rows: list[dict[str, Any]]) -> int:
    """Where the escalation table's text begins: after the time column, as wide as its widest entry."""
    return max([32, *(len(_escalation_when(row)) + 1 for row in rows)]) + 1


def escalation_os(rows: list[dict[str, Any]]) -> str | None:
    """``Every row is of macOS 27.0.``: the one macOS version of all rows, said once rather than on each."""
    versions = {row.get("os_version") for row in rows}
    if len(versions) != 1 or None in versions:
        return None
    return f"Every row is of macOS {versions.pop()} (from the OS install history)."


def escalation_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The escalation table as aligned text lines (the time column as wide as its widest entry); each
    row names its macOS version when the rows are of more than one (``escalation_os`` says the one)."""
    times = [_escalation_when(row) for row in rows]
    width = escalation_column(rows) - 1
    tagged = escalation_os(rows) is None
    lines = []
    for when, row in zip(times, rows, strict=True):
        if "os_version" in row and tagged:
            lines.append(f"{when:<{width}} {row['text']}  [macOS {row['os_version']}]")
        else:
            lines.append(f"{when:<{width}} {row['text']}")
    return lines
