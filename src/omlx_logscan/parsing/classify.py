"""Classification: the events one record yields, by the catalog and the Metal error codes."""

from __future__ import annotations

import re
from typing import Any

from omlx_logscan.parsing.catalog import (
    ABORT,
    BANNER_VERSION,
    CELLAR_VERSION,
    ECHOES_CLIENT,
    FATAL_EXIT,
    GPU_CODE,
    GPU_CODE_NAMES,
    GPU_CONTEXTS,
    GPU_MARKERS,
    GPU_RESOURCE_LIMIT,
    LOGGER_PREFIX,
    NUMERIC_FIELDS,
    RESOURCE_LIMIT_CODE,
    may_be_fatal_exit,
)
from omlx_logscan.parsing.catalog_evidence import EXCEPTION_TYPE
from omlx_logscan.parsing.catalog_lookup import catalog_match
from omlx_logscan.parsing.dumps import DUMP_FRAME, dump_fields
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import FAULTHANDLER_OPENING, Line
from omlx_logscan.parsing.kinds import TAG_FIELDS, EventKind
from omlx_logscan.parsing.messages import Known, known, messages
from omlx_logscan.parsing.panics import panic_fields
from omlx_logscan.parsing.records import Record
from omlx_logscan.parsing.template import Template

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')


_EXCEPTION_LINE = re.compile(rf"^(?P<type>{EXCEPTION_TYPE}): ")


_EXCEPTION_TYPE = re.compile(r"^\s*Exception Type:\s+(?P<type>.+)$")


def _frames(lines: list[str]) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    for index, text in enumerate(lines):
        match = _FRAME.match(text) or DUMP_FRAME.match(text)
        if match is None:
            continue
        source_line = ""
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if following and not (_FRAME.match(following) or DUMP_FRAME.match(following)):
            candidate = following.strip()
            if candidate and set(candidate) - set("^~ "):
                source_line = candidate
        frames.append({"path": match["path"], "line": int(match["line"]), "func": match["func"], "code": source_line})
    return frames


def _exception(lines: list[str]) -> str | None:
    for text in reversed(lines):
        match = _EXCEPTION_LINE.match(text.strip())
        if match:
            return match["type"]
    return None


def _gpu_fields(record: Record, text: str) -> dict[str, Any] | None:
    match = GPU_CODE.search(text)
    if match:
        code = match.group(1).lower()
        name = GPU_CODE_NAMES.get(code, match.group(3))
    else:
        limit = GPU_RESOURCE_LIMIT.search(text)
        if limit is None:
            return None
        code, name = None, RESOURCE_LIMIT_CODE
    context = "other"
    for regex, ctx in GPU_CONTEXTS:
        if regex.search(record.head.message):
            context = ctx
            break
    out: dict[str, Any] = {"code": code, "code_name": name, "context": context}
    return {**out, **_traceback_fields(_body(record))}


def _values(match: re.Match[str]) -> dict[str, Any]:
    """The fields a catalog row's match captured, numbers as numbers."""
    return {k: _number_or_text(v) if k in NUMERIC_FIELDS else v for k, v in match.groupdict().items() if v is not None}


def _number_or_text(value: str) -> Any:
    """A captured numeric field as an int or float, or as written when it is no number."""
    # Tested before converting: an exception per value costs more than the tests, and a memory
    # pressure line alone carries four decimal numbers.
    if value.isdecimal():
        return int(value)
    if "." in value:
        try:
            return float(value)
        except ValueError:
            return value
    try:
        return int(value)
    except ValueError:
        try:
            return float(value)  # "1e3", "inf"
        except ValueError:
            return value


# Forms of lines a paste cut the level or logger from: the message oMLX writes tells them.
_HEADLESS_RECORD_FORMS = frozenset({"text", "snippet", "elided", "short_log", "dated", "timeonly", "level_first"})


# Forms whose head is no message: a crash block's first line, a traceback's.
NOT_MESSAGES = frozenset({"headless", "thread_dump", "report_json", "panic", "panic_header", "crash_report"})


def identify(record: Record, row: Template | None) -> Known | None:
    """The oMLX message a record is: of a record whose paste dropped its level or logger, its head
    line's (or the whole record's, when wrapped); of a full record, the entries of the catalog
    ``row`` it matched, or of its logger and level. None for a crash block or a traceback."""
    head = record.head
    if head.form in NOT_MESSAGES:
        return None
    if head.form not in _HEADLESS_RECORD_FORMS or (head.level and (head.logger or "").startswith(LOGGER_PREFIX)):
        found = messages().of_record(head.message, head.logger, head.level, row)
        if found is None and record.extra and not record.holds_traceback():  # a message wrapped over lines
            return messages().of_opening(head.message, head.logger, head.level)
        return found
    return head.identity or known(head.message) or (known(record.text) if record.extra else None)


def _logger_of(head: Line, identity: Known | None) -> str | None:
    """The record's logger: as written, or the one oMLX's source names when the paste dropped it or
    gave its last part only (``scheduler   - …``)."""
    if identity is None or identity.logger is None:
        return head.logger
    if head.logger is None or identity.logger.rsplit(".", 1)[-1] == head.logger:
        return identity.logger
    return head.logger


def classify(record: Record, source: str, index: int) -> list[Event]:
    """The events one record yields: usually one, two for an abort or fatal exit or a stop line that
    quotes a GPU fault, none for routine lines."""
    head = record.head
    matched = catalog_match(head.message) if head.form not in NOT_MESSAGES else None
    identity = identify(record, matched[0] if matched is not None else None)
    logger = _logger_of(head, identity)
    level = head.level or ("CRITICAL" if head.form == "abort" else identity.level if identity is not None else None)

    def make(kind: EventKind, fields: dict[str, Any], level: str | None = level) -> Event:
        continuation = record.continuation
        if continuation is not None:
            fields["continuation"] = continuation
        if record.dropped:
            fields["continuation_dropped"] = record.dropped
        return Event(
            kind,
            record.stamp,
            source,
            record.line,
            level,
            logger,
            head.message,
            fields,
            record.lines,
            record.prev_stamp,
            record.next_stamp,
            index,
            record.time_of_day,
            entry=identity.entry if identity is not None else None,
            template=identity.template if identity is not None else None,
            entries=identity.entries if identity is not None else (),
        )

    if head.form in ("panic", "panic_header"):
        fields = panic_fields(record)
        return [make("kernel_panic", fields, "CRITICAL")] if fields is not None else [make("record", {})]
    if head.form == "crash_report":
        exc = next((m["type"] for m in map(_EXCEPTION_TYPE.match, record.extra) if m), None)
        return [make("crash_report", {"exception_type": exc}, "CRITICAL")]
    if head.form in ("faulthandler", "thread_dump"):
        return [make("faulthandler_dump", _dump_fields(record), "CRITICAL")]
    text = record.text
    events: list[Event] = []
    gpu = _gpu_fields(record, text) if any(marker in text for marker in GPU_MARKERS) else None
    echoed = {}
    if gpu is not None and ECHOES_CLIENT.match(head.message):  # a client's text quoted back: a note, not a fault
        echoed, gpu = {"echoed_gpu_code": gpu["code_name"]}, None
    if gpu is not None:
        events.append(make("gpu_error", gpu, level or "ERROR"))
    fatal = FATAL_EXIT.match(head.message) if may_be_fatal_exit(head.message) else None
    if ABORT.match(head.message):
        events.append(make("process_exit", {"reason": "abort", **_traceback_fields(record.extra)}, "CRITICAL"))
    elif fatal is not None:
        reason = {"reason": "fatal_exit", "reason_text": fatal["reason_text"] or fatal["submissions"]}
        events.append(make("process_exit", {**reason, **_traceback_fields(record.extra)}, "CRITICAL"))
    if events:
        if matched is not None and matched[0].kind == "shutdown":  # a stop step that quotes the fault it met
            events.append(make("shutdown", _values(matched[1])))
        return events
    if matched is not None:
        row, found = matched
        kind, tag, fields = row.kind, row.tag, _values(found)
        tag_field = TAG_FIELDS.get(kind)
        if tag_field is not None and tag:
            fields.setdefault(tag_field, tag)
        if kind == "process_start" and tag == "banner":
            fields["omlx_version"] = next((m["version"] for m in map(BANNER_VERSION.search, record.extra) if m), None)
        return [make(kind, {**fields, **echoed, **_traceback_fields(_body(record))})]
    if level in ("ERROR", "CRITICAL"):
        return [make("error", _traceback_fields(record.extra))]
    if level == "WARNING":
        return [make("warning", _traceback_fields(record.extra) | echoed)]
    if head.form == "headless":
        return [make("error", _traceback_fields(_body(record)), "ERROR")]
    return [make("record", echoed)]


def _body(record: Record) -> list[str]:
    """The lines that may hold a record's traceback: its continuation, and the head line too when
    that is itself part of one (a paste that begins inside a traceback, at a frame)."""
    return [record.head.message, *record.extra] if record.head.form == "headless" else record.extra


def _traceback_fields(lines: list[str]) -> dict[str, Any]:
    """``traceback`` and ``exception`` of a record's lines (``threads`` and the current thread's
    ``traceback`` of a faulthandler dump in them), or nothing when they hold neither."""
    dump = dump_fields(lines)  # a dump's threads stay apart, each its own stack
    if dump:
        return dump
    frames = _frames(lines)
    return {"traceback": frames, "exception": _exception(lines)} if frames else {}


def _dump_fields(record: Record) -> dict[str, Any]:
    """A faulthandler dump's error (None when the paste began at a thread stack) and its frames."""
    head = record.head.message
    opened = head.startswith(FAULTHANDLER_OPENING)
    lines = record.extra if opened else [head, *record.extra]
    # A paste of a dump's frames without their thread's header: innermost first as dumped, turned round.
    stacks = dump_fields(lines) or {"traceback": _frames(lines)[::-1]}
    return {"error": head.removeprefix(FAULTHANDLER_OPENING) if opened else None, **stacks}


def cellar_version(event: Event) -> str | None:
    """The Homebrew keg version in an event's traceback paths, if any: its own stack's, or any thread's
    of a faulthandler dump (a crash in a thread that ran no Python still lists the others)."""
    threads = [thread["frames"] for thread in event.fields.get("threads", ())]
    for frames in (event.fields.get("traceback", ()), *threads):
        for frame in frames:
            match = CELLAR_VERSION.search(frame["path"]) if "/Cellar/omlx" in frame["path"] else None
            if match:
                return match["version"]
    return None
