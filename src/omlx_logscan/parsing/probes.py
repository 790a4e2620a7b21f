"""Reading back what ``watch --probe`` wrote: the probe rows of watch's NDJSON, as ``probe`` events.

A probe row is evidence of what a generation probe found, not a line of the log: it is read apart
from the logs, so it never enters their line accounting. Watch's NDJSON also holds the log's own
events and its notices; those rows are counted, not read again (the log itself is read for them).
Times come back in the log's zone, as the stream's times are (watch writes them with an offset).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any, Literal, get_args

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.sources import Source
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import PROBE_KIND
from omlx_logscan.timeutil import parse, stamp_of, wall_clock

# What a probe of ``watch --probe`` found, and why the watch sent it (``watch/probing.py``).
ProbeOutcome = Literal["alive", "error", "hung", "down", "needs_key", "failed"]
ProbeTrigger = Literal["possible_wedge", "fault", "silence", "heartbeat"]
OUTCOMES: frozenset[str] = frozenset(get_args(ProbeOutcome))
SNIFF_BYTES = 65536  # enough for watch's first row, however long its message
_EVENT_KEYS = frozenset({"kind", "source", "line"})  # an event's row (``Event.as_dict``)
_NOTICE_KEY = "watch"  # an alert's or a hook's row


@dataclass
class ProbeFile:
    """The probes one NDJSON file held, and how many of its rows were other rows of the watch."""

    name: str
    probes: list[Event] = field(default_factory=list)
    other_rows: int = 0


def is_watch_row(row: object) -> bool:
    """Whether a JSON value is a row of watch's NDJSON: an event's or a notice's."""
    return isinstance(row, dict) and (_NOTICE_KEY in row or row.keys() >= _EVENT_KEYS)


def is_watch_output(source: Source) -> bool:
    """Whether an input file is watch's NDJSON rather than a log: its first line is a watch row. Only
    a regular file is looked at: what a pipe gives is read once, by the log reader."""
    if source.path is None or source.skipped is not None or not source.path.is_file():
        return False
    try:
        head = _read(source, SNIFF_BYTES)
    except (OSError, InputError):
        return False  # the log reader reports what it cannot read
    first = next((line for line in head.splitlines() if line.strip()), b"")
    if not first.lstrip().startswith(b"{"):
        return False
    try:
        return is_watch_row(json.loads(first))
    except ValueError:
        return False


def watch_outputs(sources: list[Source]) -> list[Source]:
    """The inputs that are watch's NDJSON: read for their probes, never as log lines."""
    return [source for source in sources if is_watch_output(source)]


def read_probes(source: Source, zone: tzinfo | None, what: str) -> ProbeFile:
    """The probe rows of watch's NDJSON ``source``; ``what`` names it in errors (``--probes FILE``).
    Anything else than watch's rows is refused in one line: a file half read would hide probes."""
    try:
        text = _read(source, None).decode("utf-8")
    except (OSError, InputError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"{what}: cannot read ({reason})") from None
    except UnicodeDecodeError:
        raise InputError(f"{what}: not watch's NDJSON (not UTF-8 text)") from None
    found = ProbeFile(source.name)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise InputError(f"{what}: line {number}: not watch's NDJSON (not JSON)") from None
        if not is_watch_row(row):
            raise InputError(f"{what}: line {number}: not watch's NDJSON (no event or notice row)")
        if row.get("kind") == PROBE_KIND:
            found.probes.append(_probe(row, zone, f"{what}: line {number}"))
        else:
            found.other_rows += 1
    return found


def _probe(row: dict[str, Any], zone: tzinfo | None, where: str) -> Event:
    """One probe row as the event watch made of it, its time in the log's zone."""
    stamp = row.get("time")
    try:
        time = stamp_of(wall_clock(parse(stamp), zone)) if isinstance(stamp, str) else None
    except ValueError:
        time = None
    if time is None:
        raise InputError(f"{where}: a probe row without a valid time")
    outcome = row.get("outcome")
    if outcome not in OUTCOMES:
        raise InputError(f"{where}: a probe row whose outcome is not one of {', '.join(sorted(OUTCOMES))}")
    latency, status, trigger = row.get("latency_s"), row.get("status"), row.get("trigger")
    if not (latency is None or (isinstance(latency, int | float) and not isinstance(latency, bool) and latency >= 0)):
        raise InputError(f"{where}: a probe row whose latency_s is no number of seconds")
    if not (status is None or (isinstance(status, int) and not isinstance(status, bool))):
        raise InputError(f"{where}: a probe row whose status is no HTTP status")
    if not isinstance(trigger, str):
        raise InputError(f"{where}: a probe row without a trigger")
    fields = {
        "trigger": trigger,
        "outcome": outcome,
        "latency_s": latency,
        "status": status,
        "model": _text(row.get("model")),
        "url": _text(row.get("url")),
        "detail": _text(row.get("detail")),
    }
    message = row.get("message")
    return Event(PROBE_KIND, time, str(row.get("source") or ""), 0, None, None, _text(message) or "", fields)


def _read(source: Source, limit: int | None) -> bytes:
    """The source's bytes, decompressed, up to ``limit`` (None: all)."""
    stream = source.open()
    chunks: list[bytes] = []
    got = 0
    try:
        while limit is None or got < limit:
            chunk = stream.read(SNIFF_BYTES if limit is None else limit - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    finally:
        stream.close()
    return b"".join(chunks)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
