"""What a kernel panic report says: the panic's words, the task that panicked, and when.

A panic is written by the kernel, not by oMLX: its time is in the report (the wording is in
``catalog_panics``), never in a log line. The time is kept as the report gives it, with its offset
where it has one; the stream, which knows the log's zone, turns it into the log's local time.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from omlx_logscan.parsing.catalog_panics import (
    CALENDAR,
    DATE_TIME,
    IPS_HEADER,
    IPS_TIMESTAMP,
    PANIC_STRING,
    PANICKED_TASK,
)
from omlx_logscan.parsing.grammar import PANIC, PLAUSIBLE_YEARS
from omlx_logscan.parsing.records import Record


def panic_fields(record: Record) -> dict[str, Any] | None:
    """``panic`` (None when a cut paste has only the header), ``report_time`` and ``panicked_task``
    and ``panicked_pid`` where the report has them; None for a header block that is no panic report."""
    lines = [record.head.message, *(part.strip() for part in record.extra)]
    lines += [part for line in lines for part in _panic_string_lines(line)]
    words = next((m["panic"] for m in map(PANIC.match, lines) if m), None)
    if words is None and IPS_HEADER.match(record.head.message) is None:
        return None
    fields: dict[str, Any] = {"panic": words}
    when = _report_time(record.head.message, lines)
    if when is not None:
        fields["report_time"] = when
    task = next((m for m in map(PANICKED_TASK.match, lines) if m), None)
    if task is not None:
        fields["panicked_task"] = task["process"]
        fields["panicked_pid"] = int(task["pid"])
    return fields


def _panic_string_lines(line: str) -> list[str]:
    """The lines of the panic text an ``.ips`` body holds as one JSON string (none when it holds none)."""
    match = PANIC_STRING.search(line)
    if match is None:
        return []
    text = match["text"].rstrip("\\")  # a paste may cut the string after an escape's backslash
    try:
        return [part.strip() for part in json.loads(f'"{text}"').splitlines()]
    except ValueError:
        return [text]


def _report_time(head: str, lines: list[str]) -> str | None:
    """ISO 8601 time of the panic, with the offset the report gives (``+00:00`` for the epoch table)."""
    header = [*map(DATE_TIME.match, lines), IPS_TIMESTAMP.search(head)]
    for match in filter(None, header):
        if int(match["date"][:4]) in PLAUSIBLE_YEARS:
            return _iso(match)
    for match in filter(None, map(CALENDAR.match, lines)):
        moment = datetime.fromtimestamp(int(match["sec"], 16), UTC) + timedelta(microseconds=int(match["usec"], 16))
        if moment.year in PLAUSIBLE_YEARS:  # all zeros: the kernel could not read its clock
            return moment.isoformat(timespec="milliseconds")
    return None


def _iso(match: re.Match[str]) -> str:
    frac = (match["frac"] or "").ljust(3, "0")[:3]
    stamp = f"{match['date']}T{match['time']}.{frac}"
    offset = match["offset"]
    return f"{stamp}{offset[:3]}:{offset[3:]}" if offset else stamp
