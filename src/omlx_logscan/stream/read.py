"""The event stream: typed events from records, merged across sources in time order.

``read_events`` is the foundation every command stands on. It scans each source, assembles
records, classifies each record with the catalog, removes records that two sources share
(a file log and a capture of the same process), and merges the sources by time.
"""

from __future__ import annotations

import bisect
import gc
import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.inputs.sources import HeadSource, Source
from omlx_logscan.parsing.catalog import LOGGER_PREFIX
from omlx_logscan.parsing.classify import classify
from omlx_logscan.parsing.dense import (
    ARRIVAL_SCHEMA,
    NO_TIME,
    REQUEST_SCHEMA,
    Dense,
    falls,
    form_code,
    from_rows,
    inserted,
    moment_of,
    ms_of,
    order,
    time_span,
)
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import LEVEL_RANK
from omlx_logscan.parsing.kinds import ARRIVAL_KIND
from omlx_logscan.parsing.recognition import Recognition
from omlx_logscan.parsing.records import Assembler, Assembly, Record, assemble_one
from omlx_logscan.parsing.scan import SourceScan, scan_source
from omlx_logscan.stream.dedup import count_once, dedup_key
from omlx_logscan.stream.event_stream import RECORDS_SCHEMA, Accounting, EventStream, SourceInfo
from omlx_logscan.stream.starts import collapse_starts
from omlx_logscan.stream.streaming import EnoughRows, StreamedOrder, keyed_rows
from omlx_logscan.timeutil import parse, stamp_of


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
    recognition: Recognition  # the input's, all sources: whether it is oMLX's
    assembler: Assembler = field(default_factory=Assembler)
    events: list[Event] = field(default_factory=list)
    arrivals: list[Event] = field(default_factory=list)  # the arrivals the grammar read, for the arrival table
    levels: set[str] = field(default_factory=set)
    first: str | None = None
    last: str | None = None
    first_time_of_day: str | None = None  # the first and last undated time-only records, in file order
    last_time_of_day: str | None = None
    records: int = 0  # records classified so far
    stamped: list[tuple[int, str]] = field(default_factory=list)  # (line, time) of dated records, for clock jumps
    unmatched: list[tuple[int, str]] = field(default_factory=list)  # (line, head) of records no template or level told
    omlx_records: list[tuple[int, str | None]] = field(default_factory=list)  # see _note_record

    def feed(self, kept: Iterable[KeptLine]) -> None:
        self.assembler.feed(kept)
        self._classify(self.assembler.take_final())

    def finish(self) -> Assembly:
        self._classify(self.assembler.take_final(everything=True))
        return self.assembler.out

    def idle(self) -> None:
        """The writer of a pipe went idle: its last record is complete."""
        self.assembler.pause()
        self._classify(self.assembler.take_final())

    def _classify(self, records: list[Record]) -> None:
        accounting = self.accounting
        self.records += len(records)
        for record in records:
            accounting.blank += record.blank  # wherever a blank line stands, it is counted blank
            lines = record.lines - record.blank
            if record.log_level:
                self.levels.add(record.log_level)
            if record.stamp is not None:  # the span, earliest to latest: dated lines and those dated from them
                self.first = min(self.first or record.stamp, record.stamp)
                self.last = max(self.last or record.stamp, record.stamp)
                if record.head.date is not None:
                    self.stamped.append((record.line, record.stamp))
            elif record.stamp is None and record.time_of_day is not None:  # undated: a span by the clock alone
                self.first_time_of_day = self.first_time_of_day or record.time_of_day
                self.last_time_of_day = record.time_of_day
            produced = classify(record, self.source.name, self.index)
            self.recognition.see(record, produced)
            _note_record(self.omlx_records, record, produced)
            keep = [ev for ev in produced if self.keep_all or ev.kind != "record"]
            seen = self.seen
            key = dedup_key(produced[0]) if seen is not None else None
            if seen is not None and key is not None and seen.setdefault(key, self.index) != self.index:
                accounting.duplicates += 1
                accounting.record_lines += lines
                continue
            if record.head.level is None and produced[0].kind == "record":  # no template, no level: say so
                self.unmatched.append((record.line, record.head.message))
            if produced[0].kind == ARRIVAL_KIND:  # a dense row of the stream, wherever the scan found it
                self.arrivals.append(produced[0])
                accounting.event_lines += lines
                continue
            if keep:
                accounting.event_lines += lines
                self.events.extend(keep)
            else:
                accounting.record_lines += lines


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
    on_block: Callable[[_SourceEvents, Dense, Dense], None] | None = None,
) -> EventStream:
    """Scan, assemble, classify and merge. Raises InputError only when no source could be read.
    ``on_block`` sees each source's reading after each block, with the block's request and
    arrival rows (``stream_events``). Sources ``skipped`` (files of a folder that are no log) are not
    read: they are named in the stream's sources, with the reason."""
    sources = [_told(src) if src.unsure else src for src in sources]
    skipped = [SourceInfo(src.name, 0, None, None, [], None, skipped=src.skipped) for src in sources if src.skipped]
    sources = [src for src in sources if not src.skipped]
    if not sources:
        raise InputError("no oMLX log to read: " + "; ".join(f"{info.name}: {info.skipped}" for info in skipped))
    accounting = Accounting()
    recognition = Recognition()
    seen: dict[tuple[Any, ...], int] = {}
    scans: list[SourceScan] = []
    readers: list[_SourceEvents] = []
    with _without_cycle_collection():
        for i, src in enumerate(sources):
            reader = _SourceEvents(src, i, keep_all, seen if len(sources) > 1 else None, accounting, recognition)
            scans.append(
                scan_source(
                    src,
                    i,
                    keep_all=keep_all,
                    keep_request_text=keep_request_text,
                    dedup_keys=len(sources) > 1,
                    progress=progress,
                    on_kept=reader.feed,
                    on_dense=None if on_block is None else partial(on_block, reader),
                    on_idle=None if on_block is None else partial(_idle, reader, on_block),
                )
            )
            readers.append(reader)
    if all(scan.problem and scan.lines == 0 for scan in scans):
        raise InputError("; ".join(scan.problem or "" for scan in scans))
    per_source: list[list[Event]] = []
    unparsed: list[tuple[str, int, str]] = []
    unmatched: list[tuple[str, int, str]] = []
    infos: list[SourceInfo] = []
    levels: set[str] = set()
    clock_jumps: list[dict[str, Any]] = []
    for scan, reader in zip(scans, readers, strict=True):
        assembly = reader.finish()
        if on_block is not None:  # the records the end of the input closed, before the starts fold
            on_block(reader, Dense.empty(REQUEST_SCHEMA), Dense.empty(ARRIVAL_SCHEMA))
        src_levels = scan.levels | reader.levels
        accounting.lines += scan.lines
        accounting.records += reader.records + scan.routine_records
        accounting.record_lines += scan.routine_records
        accounting.blank += assembly.blank
        accounting.unparsed += len(assembly.unparsed)
        unparsed.extend((scan.source.name, n, text) for n, text in assembly.unparsed)
        unmatched.extend((scan.source.name, n, text) for n, text in reader.unmatched)
        accounting.unmatched += len(reader.unmatched)
        n_dense = scan.requests.height + scan.arrivals.height
        accounting.event_lines += n_dense
        accounting.records += n_dense
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
                reader.first_time_of_day,
                reader.last_time_of_day,
            )
        )
        per_source.append(reader.events)
    recognition.see_lines(text for _, _, text in unparsed)
    records = _records_table(scans, readers)
    tables = [scan.requests for scan in scans]
    requests, per_source = count_once(tables, REQUEST_SCHEMA, per_source, "request_complete", accounting)
    tables = [scan.arrivals for scan in scans]
    dense_arrivals, sparse_arrivals = count_once(
        tables, ARRIVAL_SCHEMA, [reader.arrivals for reader in readers], ARRIVAL_KIND, accounting
    )
    merged = collapse_starts(
        heapq.merge(*per_source, key=lambda ev: (ev.sort_time, ev.source_index)), keep_routine=keep_all
    )
    counts = Counter(ev.kind for ev in merged)
    if requests.height:
        counts["request_complete"] += requests.height
    arrivals = _arrival_table(dense_arrivals, sparse_arrivals)
    if arrivals.height:
        counts[ARRIVAL_KIND] += arrivals.height
    return EventStream(
        infos + skipped,
        merged,
        requests,
        accounting,
        counts,
        unparsed,
        sorted(levels & set(LEVEL_RANK), key=LEVEL_RANK.__getitem__),
        clock_jumps,
        unmatched,
        records,
        arrivals=arrivals,
        arrival_events=sorted(
            (ev for events in sparse_arrivals for ev in events), key=lambda ev: (ev.sort_time, ev.source_index)
        ),
        recognised=recognition.recognised,
        messages=frozenset(recognition.messages),
    )


def _arrival_table(dense: Dense, sparse: list[list[Event]]) -> Dense:
    """Every arrival, the scan's dense rows and those the grammar read (``sparse``, per source), in
    file order per source: where the scan's blocks fell decides which is which, not what is there."""
    events = [ev for source in sparse for ev in source]
    if not events:
        return dense
    rows = from_rows(
        [
            (ev.source_index, ev.line, ms_of(parse(ev.time)) if ev.time else NO_TIME, form_code(ev.fields.get("form")))
            for ev in events
        ],
        ARRIVAL_SCHEMA,
    )
    # The few rows the grammar read go in between the dense ones (in source and line order): the
    # table is copied once, not sorted (that would cost more, at millions of rows in a DEBUG log).
    sources, lines = dense.ints("source"), dense.ints("line")
    places = [
        bisect.bisect_left(range(dense.height), (ev.source_index, ev.line), key=lambda row: (sources[row], lines[row]))
        for ev in events
    ]
    return inserted(dense, rows, places)


def _note_record(records: list[tuple[int, str | None]], record: Record, produced: list[Event]) -> None:
    """Keep the line and time of a dated record an oMLX logger wrote (it shows its process alive
    then), and the line of an undated one of no event (a paste may begin with the cut tail of
    one; one after a fault shows the process went on). Only the log's own, an oMLX logger's, a
    time-only line's or a cut tail's: a user's note, a quoted command or a crash report's text
    under a fault says nothing of whether its process went on."""
    omlx = (record.head.logger or "").startswith(LOGGER_PREFIX)
    if record.head.date is None:
        own = omlx or record.head.form == "tail" or record.head.time is not None
        if own and all(ev.kind == "record" for ev in produced):
            records.append((record.line, None))
    elif record.stamp is not None and omlx:
        records.append((record.line, record.stamp))


def _records_table(scans: list[SourceScan], readers: list[_SourceEvents]) -> Dense:
    """Where each source shows an oMLX process alive: the dated oMLX records the grammar read, and
    those the scan only counted where they border on the rest (RECORDS_SCHEMA), in time order; and
    the undated records, without a time, first."""
    rows: list[tuple[int, int, str | None]] = []
    for scan, reader in zip(scans, readers, strict=True):
        rows += [(scan.index, line, time) for line, time in scan.records.rows("line", "time")]
        rows += [(scan.index, line, time) for line, time in reader.omlx_records]
    rows.sort(key=lambda row: (row[2] is not None, row[2] or "", row[0], row[1]))
    return from_rows(rows, RECORDS_SCHEMA)


CLOCK_JUMP_S = 60.0  # a timestamp this far before the one above it is reported, not silently reordered


def _clock_jumps(scan: SourceScan, stamped: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """Places where a source's timestamps go backwards by more than a minute, in file order.

    DST ends, clock fixes and two machines' logs pasted together all look like this. Only the
    dated records the scan kept (``stamped``: line and time) and the finished-request rows are
    checked, so the line given is the first such record after the jump. Both are in file order
    already, so one merge puts them together.
    """
    records = [(line, ms_of(parse(stamp))) for line, stamp in stamped]
    requests = scan.requests
    found = falls(
        requests.ints("line"),
        requests.ints("time"),
        [line for line, _ in records],
        [ms for _, ms in records],
        int(CLOCK_JUMP_S * 1000),
    )
    return [
        {
            "source": scan.source.name,
            "line": line,
            "from": stamp_of(moment_of(before)),
            "to": stamp_of(moment_of(time)),
            "back_s": (before - time) / 1000,
        }
        for line, before, time in found
    ]


def _span_with_requests(first: str | None, last: str | None, scan: SourceScan) -> tuple[str | None, str | None]:
    """A source's earliest and latest timestamps, counting the dense request rows too.

    Earliest and latest, not first and last in file order: a request is a dense row or an
    event depending on where the scan's blocks fell, and the span must not depend on that.
    """
    stamps = [s for s in (first, last) if s]
    span = time_span(scan.requests.ints("time"))
    if span is not None:
        stamps += [stamp_of(moment_of(ms)) for ms in span]
    if not stamps:
        return None, None
    return min(stamps), max(stamps)


def all_events(stream: EventStream) -> Iterator[Event]:
    """Every event in time order with the dense request and arrival rows among them (those need
    ``keep_request_text``): what ``events`` prints, and what a reader of the log sees."""
    names = [source.name for source in stream.sources]
    return heapq.merge(
        stream.events,
        _row_events(stream.requests, names),
        _row_events(stream.arrivals, names),
        stream.arrival_events,
        key=lambda ev: (ev.sort_time, ev.source_index),
    )


def _row_events(table: Dense, sources: list[str]) -> Iterator[Event]:
    """A dense table's rows that carry their text (``keep_request_text``) as events, for the events command."""
    if "text" not in table:  # no rows at all, or no text asked for
        return
    rows = table.take(order(table["time"], table["source"], table["line"]))
    for source, line, text in rows.rows("source", "line", "text"):
        if text is not None:
            yield from row_events(text, line, sources[source], source)


def row_events(text: str, line: int, name: str, index: int) -> list[Event]:
    """The events of one dense row's line (a single-line record by construction)."""
    return classify(assemble_one(text, line), name, index)


def _idle(reader: _SourceEvents, on_block: Callable[[_SourceEvents, Dense, Dense], None]) -> None:
    """A pipe's writer went idle while ``events`` writes its rows: the last record is taken as complete
    (a logger writes each whole) and its events handed on. Only the rows written while reading see it."""
    reader.idle()
    on_block(reader, Dense.empty(REQUEST_SCHEMA), Dense.empty(ARRIVAL_SCHEMA))


def _told(source: Source) -> Source:
    """A folder's file named as no oMLX file is (a paste saved as ``omlx-3706.log``): read when its head
    is oMLX text, else skipped, saying why."""
    assert source.path is not None
    try:
        head = read_events([HeadSource(source.name, None, file=source.path)])
    except InputError as exc:
        return replace(source, unsure=False, skipped=f"not read: {exc}")
    if head.has_omlx_records:
        return replace(source, unsure=False)
    return replace(source, unsure=False, skipped="no oMLX text in its first MiB")


def pending_floor(reader: _SourceEvents) -> str | None:
    """The earliest time an event still to come from this reading can sort at: the records it holds
    open (a dated one until the next dated line; an untimed one sorts at the time before it); None
    when it holds none. What is not read yet sorts at least at the time of the last record read,
    as long as the log's clock goes forward."""
    return min((record.stamp or record.prev_stamp or "" for record in reader.assembler.out.records), default=None)


def stream_events(source: Source, order: StreamedOrder, *, keep_request_text: bool) -> EventStream | None:
    """One source read as ``read_events`` reads it, its events handed to ``order`` after each block
    (``order.finish`` writes the rest); None when a sink had all the rows it wanted first."""
    taken = [0, 0]  # the reading's events and grammar arrivals handed over so far

    def on_block(reader: _SourceEvents, requests: Dense, arrivals: Dense) -> None:
        events, grammar_arrivals = reader.events[taken[0] :], reader.arrivals[taken[1] :]
        taken[:] = [len(reader.events), len(reader.arrivals)]

        def events_of(text: str, line: int, index: int) -> list[Event]:
            return row_events(text, line, source.name, index)

        dense = bool(requests.height or arrivals.height)
        rows = keyed_rows(requests, events_of), keyed_rows(arrivals, events_of)
        recognised = dense or reader.recognition.recognised
        order.take(events, *rows, grammar_arrivals, recognised=recognised, floor=pending_floor(reader))

    try:
        return read_events([source], keep_request_text=keep_request_text, on_block=on_block)
    except EnoughRows:
        return None
