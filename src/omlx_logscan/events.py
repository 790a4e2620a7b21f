"""The event stream: typed events from records, merged across sources in time order.

``read_events`` is the foundation every command stands on. It scans each source, assembles
records, classifies each record with the catalog, removes records that two sources share
(a file log and a capture of the same process), and merges the sources by time.
"""

from __future__ import annotations

import gc
import heapq
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from omlx_logscan.catalog import (
    ABORT,
    BANNER_VERSION,
    CELLAR_VERSION,
    FATAL_EXIT,
    GPU_CODE,
    GPU_CODE_NAMES,
    GPU_CONTEXTS,
    GPU_MARKERS,
    GPU_RESOURCE_LIMIT,
    NUMERIC_FIELDS,
    candidates,
)
from omlx_logscan.errors import InputError
from omlx_logscan.grammar import LEVEL_RANK, parse_line
from omlx_logscan.records import Assembler, Assembly, Record
from omlx_logscan.scan import REQUEST_SCHEMA, KeptLine, SourceScan, scan_source
from omlx_logscan.sources import Source
from omlx_logscan.timeutil import parse, seconds, stamp_of

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_FAULTHANDLER_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)): ")
_EXCEPTION_TYPE = re.compile(r"^\s*Exception Type:\s+(?P<type>.+)$")
_PANIC = re.compile(r"^panic\(cpu \d+ caller 0x[0-9a-fA-F]+\): (?P<panic>.*)$")


@dataclass
class Event:
    """One typed event. ``time`` is ISO local time or None; ``fields`` are kind-specific."""

    kind: str
    time: str | None
    source: str
    line: int
    level: str | None
    logger: str | None
    message: str
    fields: dict[str, Any] = field(default_factory=dict)
    lines: int = 1  # lines of the record it came from
    prev_time: str | None = None  # nearest timestamps around an untimed event, for ordering and bounds
    next_time: str | None = None
    source_index: int = 0

    @property
    def sort_time(self) -> str:
        return self.time or self.prev_time or ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "time": self.time,
            "source": self.source,
            "line": self.line,
            "level": self.level,
            "logger": self.logger,
            "kind": self.kind,
            "message": self.message,
        }
        out.update(self.fields)
        return out


@dataclass
class Accounting:
    """Where every input line went; ``lines == event_lines + record_lines + blank + unparsed``."""

    lines: int = 0
    records: int = 0
    event_lines: int = 0
    record_lines: int = 0
    blank: int = 0
    unparsed: int = 0
    duplicates: int = 0

    @property
    def accounted(self) -> int:
        """The lines that ended up somewhere; always equal to ``lines``."""
        return self.event_lines + self.record_lines + self.blank + self.unparsed


@dataclass
class SourceInfo:
    name: str
    lines: int
    first: str | None
    last: str | None
    levels: list[str]
    problem: str | None


@dataclass
class EventStream:
    """Everything the analyzers need from the input."""

    sources: list[SourceInfo]
    events: list[Event]
    requests: pl.DataFrame  # dense finished-request rows: source, line, time, key, tokens, text
    accounting: Accounting
    kind_counts: Counter[str]
    unparsed: list[tuple[str, int, str]]
    levels: list[str]  # levels present anywhere, lowest first
    clock_jumps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def has_omlx_records(self) -> bool:
        """Whether anything here is an oMLX record (a README or a shell history has none)."""
        return self.requests.height > 0 or any(
            (ev.logger or "").startswith("omlx") or ev.kind in _OMLX_ONLY_KINDS for ev in self.events
        )

    @property
    def lowest_level(self) -> str | None:
        return self.levels[0] if self.levels else None

    def shows(self, level: str) -> bool:
        """Whether records of ``level`` would have been written (the log level is at or below it)."""
        lowest = self.lowest_level
        return lowest is not None and LEVEL_RANK[lowest] <= LEVEL_RANK[level]


def _frames(lines: list[str]) -> list[dict[str, Any]]:
    frames: list[dict[str, Any]] = []
    for index, text in enumerate(lines):
        match = _FRAME.match(text) or _FAULTHANDLER_FRAME.match(text)
        if match is None:
            continue
        source_line = ""
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if following and not (_FRAME.match(following) or _FAULTHANDLER_FRAME.match(following)):
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
        code, name = None, "ResourceLimit"
    context = "other"
    for regex, ctx in GPU_CONTEXTS:
        if regex.search(record.head.message):
            context = ctx
            break
    out: dict[str, Any] = {"code": code, "code_name": name, "context": context}
    frames = _frames(record.extra)
    if frames:
        out["traceback"] = frames
        out["exception"] = _exception(record.extra)
    return out


def _catalog_match(message: str) -> tuple[str, str, dict[str, Any]] | None:
    for template in candidates(message):
        if template.literal not in message:  # every match contains it, and ``in`` is far cheaper than a search
            continue
        match = template.regex.search(message)
        if match:
            values = {
                k: _number(v) if k in NUMERIC_FIELDS else v for k, v in match.groupdict().items() if v is not None
            }
            return template.kind, template.tag, values
    return None


def _number(value: str) -> Any:
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


def classify(record: Record, source: str, index: int) -> list[Event]:
    """The events one record yields: usually one, two for an abort or fatal exit, none for routine lines."""
    head = record.head

    def make(kind: str, fields: dict[str, Any], level: str | None = head.level) -> Event:
        return Event(
            kind,
            record.stamp,
            source,
            record.line,
            level,
            head.logger,
            head.message,
            fields,
            record.lines,
            record.prev_stamp,
            record.next_stamp,
            index,
        )

    if head.form == "panic":
        match = _PANIC.match(head.message)
        return [make("kernel_panic", {"panic": match["panic"] if match else head.message}, "CRITICAL")]
    if head.form == "crash_report":
        exc = next((m["type"] for m in map(_EXCEPTION_TYPE.match, record.extra) if m), None)
        return [make("crash_report", {"exception_type": exc}, "CRITICAL")]
    if head.form == "faulthandler":
        return [
            make(
                "faulthandler_dump",
                {
                    "error": head.message.removeprefix("Fatal Python error: "),
                    "traceback": _frames(record.extra),
                },
                "CRITICAL",
            )
        ]
    text = record.text
    events: list[Event] = []
    gpu = _gpu_fields(record, text) if any(marker in text for marker in GPU_MARKERS) else None
    level = head.level or ("CRITICAL" if head.form == "abort" else None)
    if gpu is not None:
        events.append(make("gpu_error", gpu, level or "ERROR"))
    if ABORT.match(head.message):
        events.append(make("process_exit", {"reason": "abort"}, "CRITICAL"))
    elif FATAL_EXIT.match(head.message):
        events.append(make("process_exit", {"reason": "fatal_exit"}, "CRITICAL"))
    if events:
        return events
    matched = _catalog_match(head.message)
    if matched is not None:
        kind, tag, values = matched
        fields = dict(values)
        if kind == "memory_pressure":
            fields["action"] = tag
        elif kind == "process_start":
            fields["marker"] = tag
            if tag == "banner":
                version = next((m["version"] for m in map(BANNER_VERSION.search, record.extra) if m), None)
                fields["omlx_version"] = version
        elif kind in ("request_complete", "model_load", "model_unload", "request_error") and tag:
            fields.setdefault("type" if kind == "request_complete" else "stage", tag)
        return [make(kind, fields)]
    if level in ("ERROR", "CRITICAL"):
        fields = {}
        frames = _frames(record.extra)
        if frames:
            fields = {"traceback": frames, "exception": _exception(record.extra)}
        return [make("error", fields)]
    if level == "WARNING":
        return [make("warning", {})]
    return [make("record", {})]


def cellar_version(event: Event) -> str | None:
    """The Homebrew keg version in an event's traceback paths, if any."""
    for frame in event.fields.get("traceback", ()):
        match = CELLAR_VERSION.search(frame["path"])
        if match:
            return match["version"]
    return None


def _dedup_key(event: Event) -> tuple[Any, ...] | None:
    """What makes two sources' records the same record: their time, or for untimed lines (a
    banner, an abort) the timestamps around them. None when nothing could tell two apart."""
    if event.time is not None:
        return (event.time, event.logger, event.level, event.message, event.kind)
    if event.prev_time is None and event.next_time is None:
        return None
    return ("untimed", event.prev_time, event.next_time, event.message, event.kind)


def _requests_frame(scans: list[SourceScan]) -> pl.DataFrame:
    frames = [scan.requests for scan in scans if scan.requests.height]
    if not frames:
        return pl.DataFrame(schema=REQUEST_SCHEMA)
    if len(frames) == 1:
        return frames[0]
    table = pl.concat(frames)  # one record in two sources: keep the copy of the first source that has it
    return table.filter(pl.col("source") == pl.col("source").min().over("time", "key"))


def _log_line(event: Event) -> str:
    """A request event written back as the console-format line its key is computed from."""
    stamp = (event.time or "").replace("T", " ").replace(".", ",")
    return f"{stamp} - {event.logger} - {event.level} - {event.message}"


def _drop_shared_requests(per_source: list[list[Event]], requests: pl.DataFrame) -> tuple[pl.DataFrame, list[Event]]:
    """A finished request can be a dense row in one source and an event in another (there an
    untimed line touched it): keep the copy of the first source, as for any other record.

    Returns the dense rows to keep and the request events to drop.
    """
    sparse = [ev for events in per_source for ev in events if ev.kind == "request_complete" and ev.time]
    if not sparse or not requests.height:
        return requests, []
    keys = pl.DataFrame({"line": [_log_line(ev) for ev in sparse]}).select(pl.col("line").hash())["line"]
    both = pl.concat(
        [
            requests.select("source", "time", "key", row=pl.lit(-1, dtype=pl.Int64)),
            pl.DataFrame(
                {
                    "source": [ev.source_index for ev in sparse],
                    "time": [parse(ev.time or "") for ev in sparse],
                    "key": keys,
                    "row": list(range(len(sparse))),
                },
                schema={"source": pl.UInt32, "time": pl.Datetime("ms"), "key": pl.UInt64, "row": pl.Int64},
            ),
        ]
    ).with_columns(owner=pl.col("source").min().over("time", "key"))
    losers = both.filter(pl.col("source") != pl.col("owner"))
    dropped_rows = set(losers.filter(pl.col("row") >= 0)["row"].to_list())
    shared = losers.filter(pl.col("row") < 0).select("source", "time", "key").unique()
    kept = requests.join(shared, on=["source", "time", "key"], how="anti") if shared.height else requests
    return kept, [sparse[i] for i in sorted(dropped_rows)]


@dataclass
class _SourceEvents:
    """One source's records, classified as the scan hands its kept lines over: Python's share of
    a big file then runs while polars scans the next blocks instead of after it."""

    source: Source
    index: int
    keep_all: bool
    # Record keys of all sources so far, to drop a copy's records; None when there is one source.
    seen: dict[tuple[Any, ...], int] | None
    accounting: Accounting
    assembler: Assembler = field(default_factory=Assembler)
    events: list[Event] = field(default_factory=list)
    levels: set[str] = field(default_factory=set)
    first: str | None = None
    last: str | None = None
    records: int = 0  # records classified so far
    stamped: list[tuple[int, str]] = field(default_factory=list)  # (line, time) of dated records, for clock jumps

    def feed(self, kept: Iterable[KeptLine]) -> None:
        self.assembler.feed(kept)
        self._classify(self.assembler.take_final())

    def finish(self) -> Assembly:
        self._classify(self.assembler.take_final(everything=True))
        return self.assembler.out

    def _classify(self, records: list[Record]) -> None:
        accounting = self.accounting
        self.records += len(records)
        for record in records:
            if record.head.level and record.head.form not in _LEVELLESS_FORMS:
                self.levels.add(record.head.level)
            if record.stamp is not None and record.head.date is not None:  # the span: earliest to latest
                self.first = min(self.first or record.stamp, record.stamp)
                self.last = max(self.last or record.stamp, record.stamp)
                self.stamped.append((record.line, record.stamp))
            produced = classify(record, self.source.name, self.index)
            keep = [ev for ev in produced if self.keep_all or ev.kind != "record"]
            seen = self.seen
            key = _dedup_key(produced[0]) if seen is not None else None
            if seen is not None and key is not None and seen.setdefault(key, self.index) != self.index:
                accounting.duplicates += 1
                accounting.record_lines += record.lines
            elif keep:
                accounting.event_lines += record.lines
                self.events.extend(keep)
            else:
                accounting.record_lines += record.lines


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """The scan makes many small objects and no reference cycles; Python's cycle collector would
    walk them hundreds of times, holding the lock the scan's worker threads need."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_events(
    sources: list[Source],
    *,
    keep_all: bool = False,
    keep_request_text: bool = False,
    progress: Callable[[int], None] | None = None,
) -> EventStream:
    """Scan, assemble, classify and merge. Raises InputError only when no source could be read."""
    accounting = Accounting()
    seen: dict[tuple[Any, ...], int] = {}
    scans: list[SourceScan] = []
    readers: list[_SourceEvents] = []
    with _without_cycle_collection():
        for i, src in enumerate(sources):
            reader = _SourceEvents(src, i, keep_all, seen if len(sources) > 1 else None, accounting)
            scans.append(
                scan_source(
                    src,
                    i,
                    keep_all=keep_all,
                    keep_request_text=keep_request_text,
                    dedup_keys=len(sources) > 1,
                    progress=progress,
                    on_kept=reader.feed,
                )
            )
            readers.append(reader)
    if all(scan.problem and scan.lines == 0 for scan in scans):
        raise InputError("; ".join(scan.problem or "" for scan in scans))
    per_source: list[list[Event]] = []
    unparsed: list[tuple[str, int, str]] = []
    infos: list[SourceInfo] = []
    levels: set[str] = set()
    clock_jumps: list[dict[str, Any]] = []
    for scan, reader in zip(scans, readers, strict=True):
        assembly = reader.finish()
        src_levels = scan.levels | reader.levels
        accounting.lines += scan.lines
        accounting.records += reader.records + scan.routine_records
        accounting.record_lines += scan.routine_records
        accounting.blank += assembly.blank
        accounting.unparsed += len(assembly.unparsed)
        unparsed.extend((scan.source.name, n, text) for n, text in assembly.unparsed)
        n_requests = scan.requests.height
        accounting.event_lines += n_requests
        accounting.records += n_requests
        first, last = _span_with_requests(reader.first, reader.last, scan)
        clock_jumps.extend(_clock_jumps(scan, reader.stamped))
        levels |= src_levels
        infos.append(
            SourceInfo(
                scan.source.name,
                scan.lines,
                first,
                last,
                sorted(src_levels, key=LEVEL_RANK.__getitem__),
                scan.problem,
            )
        )
        per_source.append(reader.events)
    requests = _requests_frame(scans)
    if len(scans) > 1:
        requests, shared_events = _drop_shared_requests(per_source, requests)
        dropped_ids = {id(ev) for ev in shared_events}
        per_source = [[ev for ev in events if id(ev) not in dropped_ids] for events in per_source]
        moved = sum(ev.lines for ev in shared_events)
        accounting.duplicates += len(shared_events)
        accounting.event_lines -= moved
        accounting.record_lines += moved
    dropped = sum(scan.requests.height for scan in scans) - requests.height
    accounting.duplicates += dropped
    accounting.event_lines -= dropped
    accounting.record_lines += dropped
    merged = _collapse_starts(heapq.merge(*per_source, key=lambda ev: (ev.sort_time, ev.source_index)))
    counts = Counter(ev.kind for ev in merged)
    if requests.height:
        counts["request_complete"] += requests.height
    return EventStream(
        infos,
        merged,
        requests,
        accounting,
        counts,
        unparsed,
        sorted(levels & set(LEVEL_RANK), key=LEVEL_RANK.__getitem__),
        clock_jumps,
    )


CLOCK_JUMP_S = 60.0  # a timestamp this far before the one above it is reported, not silently reordered


def _clock_jumps(scan: SourceScan, stamped: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """Places where a source's timestamps go backwards by more than a minute, in file order.

    DST ends, clock fixes and two machines' logs pasted together all look like this. Only the
    dated records the scan kept (``stamped``: line and time) and the finished-request rows are
    checked, so the line given is the first such record after the jump. Both are in file order
    already, so one merge puts them together.
    """
    records = (
        pl.LazyFrame(
            {"line": [line for line, _ in stamped], "time": [stamp for _, stamp in stamped]},
            schema={"line": pl.UInt32(), "time": pl.String()},
        )
        .with_columns(pl.col("time").str.to_datetime(strict=False, time_unit="ms"))
        .drop_nulls()
        .set_sorted("line")
    )
    requests = scan.requests.lazy().select("line", "time").set_sorted("line")
    jumps = (
        records.merge_sorted(requests, key="line")
        .with_columns(before=pl.col("time").shift(1))
        .filter((pl.col("before") - pl.col("time")).dt.total_milliseconds() > CLOCK_JUMP_S * 1000)
        .collect()
    )
    return [
        {
            "source": scan.source.name,
            "line": line,
            "from": stamp_of(before),
            "to": stamp_of(time),
            "back_s": (before - time).total_seconds(),
        }
        for line, time, before in jumps.iter_rows()
    ]


# Kinds only oMLX text yields, whatever logger name (if any) the line carries.
_OMLX_ONLY_KINDS = frozenset(
    {
        "process_start",
        "gpu_error",
        "process_exit",
        "kernel_panic",
        "crash_report",
        "faulthandler_dump",
        "engine_start",
        "request_complete",
        "memory_pressure",
    }
)

# Lines whose level is not the oMLX log level (uvicorn's own), so they say nothing of it.
_LEVELLESS_FORMS = frozenset({"uvicorn", "banner", "capture", "abort"})
# Events that show a process already running: a startup marker after one of these is a new start.
_CLOSES_STARTUP = frozenset(
    {
        "engine_start",
        "engine_stop",
        "request_complete",
        "gpu_error",
        "shutdown",
        "process_exit",
        "model_unload",
        "restart_requested",
        "faulthandler_dump",
        "kernel_panic",
        "crash_report",
    }
)
STARTUP_JOIN_SECONDS = 120.0


class StartCollapser:
    """One ``process_start`` per startup block, decided one event at a time (batch and live alike).

    Each banner opens a start; other markers join the open start unless more than
    STARTUP_JOIN_SECONDS passed or an event showed a running process in between.
    """

    def __init__(self) -> None:
        self._open: Event | None = None
        self._last_marker_time: str | None = None

    def feed(self, event: Event) -> bool:
        """True when the event stands on its own; False when it was folded into the open start."""
        if event.kind == "process_start":
            marker = event.fields.get("marker")
            gap = seconds(self._last_marker_time, event.time or event.prev_time)
            if self._open is not None and marker != "banner" and (gap is None or gap <= STARTUP_JOIN_SECONDS):
                _join_start(self._open, event)
                self._last_marker_time = event.time or self._last_marker_time
                return False
            event.fields["markers"] = [marker]
            event.fields.pop("marker", None)
            self._open = event
            self._last_marker_time = event.time
            return True
        if event.kind in _CLOSES_STARTUP:
            self._open = None
        return True


def _collapse_starts(events: Iterator[Event]) -> list[Event]:
    """One ``process_start`` per startup block, however many markers it printed."""
    collapser = StartCollapser()
    return [event for event in events if collapser.feed(event)]


def _join_start(start: Event, marker: Event) -> None:
    """Fold one more startup marker into the start it belongs to."""
    if marker.fields.get("marker") not in start.fields["markers"]:
        start.fields["markers"].append(marker.fields.get("marker"))
    start.lines += marker.lines
    for key in ("pid", "omlx_version"):
        if marker.fields.get(key) is not None and start.fields.get(key) is None:
            start.fields[key] = marker.fields[key]
    if start.time is None and marker.time is not None:
        start.time = marker.time
        start.fields["time_from"] = "startup_block"
    start.next_time = start.next_time or marker.next_time


def _span_with_requests(first: str | None, last: str | None, scan: SourceScan) -> tuple[str | None, str | None]:
    """A source's earliest and latest timestamps, counting the dense request rows too.

    Earliest and latest, not first and last in file order: a request is a dense row or an
    event depending on where the scan's blocks fell, and the span must not depend on that.
    """
    stamps = [s for s in (first, last) if s]
    if scan.requests.height:
        lo, hi = scan.requests.select(lo=pl.col("time").min(), hi=pl.col("time").max()).row(0)
        stamps += [stamp_of(lo), stamp_of(hi)]
    if not stamps:
        return None, None
    return min(stamps), max(stamps)


def iter_requests(stream: EventStream, sources: list[str]) -> Iterator[Event]:
    """The dense request rows as events (needs ``keep_request_text``), for the events command."""
    if "text" not in stream.requests.columns:  # no request rows at all
        return
    rows = stream.requests.sort("time", "source", "line").select("source", "line", "text")
    for source, line, text in rows.iter_rows():
        if text is None:
            continue
        record = assemble_one(text, line)
        yield from classify(record, sources[source], source)


def assemble_one(text: str, line: int) -> Record:
    """A single-line record (the dense request rows are single lines by construction)."""
    parsed = parse_line(text)
    return Record(line, parsed, stamp=parsed.timestamp, prev_stamp=parsed.timestamp, next_stamp=parsed.timestamp)


def within(stream: EventStream, since: str | None, until: str | None) -> EventStream:
    """The part of the stream between two local times (untimed events go by the time before them)."""
    if since is None and until is None:
        return stream
    lower = parse(since) if since else None
    upper = parse(until) if until else None

    def inside(stamp: str | None) -> bool:
        if not stamp:
            return lower is None
        moment = parse(stamp)
        return (lower is None or moment >= lower) and (upper is None or moment <= upper)

    events = [ev for ev in stream.events if inside(ev.time or ev.prev_time)]
    requests = stream.requests
    if requests.height:
        if lower is not None:
            requests = requests.filter(pl.col("time") >= lower)
        if upper is not None:
            requests = requests.filter(pl.col("time") <= upper)
    counts = Counter(ev.kind for ev in events)
    if requests.height:
        counts["request_complete"] += requests.height
    sources = [_clip(info, since, until) for info in stream.sources]
    return EventStream(
        sources, events, requests, stream.accounting, counts, stream.unparsed, stream.levels, stream.clock_jumps
    )


def _clip(info: SourceInfo, since: str | None, until: str | None) -> SourceInfo:
    """A source's span inside the window; no span at all when they do not overlap."""
    first = max(info.first, since) if info.first and since else info.first
    last = min(info.last, until) if info.last and until else info.last
    if first and last and parse(first) > parse(last):
        first = last = None
    return replace(info, first=first, last=last)
