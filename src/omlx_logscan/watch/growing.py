"""A live log's events as the ``EventStream`` the batch analyzer reads, grown as lines arrive.

A watch runs ``analyze`` on what it has read so far, so what it holds must be what ``read_events``
would give for the same lines: the events but routine records, arrivals and timed finished requests
(those are dense rows, numbers only), and the dated oMLX records that say when a process last wrote.
A server runs for months, so what no answer can need any more is let go: of a stretch of routine
records between two events only those a query can tell apart are kept (``_RecordRun``), and the
lifetimes before the last start are dropped once the watch has said all it had to about them (``cut``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from omlx_logscan.analysis.records import before_startup_output
from omlx_logscan.analysis.requests import request_row
from omlx_logscan.parsing.catalog import LOGGER_PREFIX
from omlx_logscan.parsing.dense import ARRIVAL_SCHEMA, REQUEST_SCHEMA, Dense, form_code, from_rows, ms_of
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import LEVEL_RANK
from omlx_logscan.parsing.kinds import ARRIVAL_KIND
from omlx_logscan.stream.model import RECORDS_SCHEMA, Accounting, EventStream, SourceInfo
from omlx_logscan.timeutil import parse

RecordRow = tuple[int, int, str | None]  # source, line, time (None: undated)


@dataclass
class _RecordRun:
    """The dated records between two events, as few as answer every question the analyzer asks.

    Its queries are bounded by event times (a fault, a start, an exit) and by a next start less
    STARTUP_OUTPUT_S, so the run keeps its first record, its last, those within STARTUP_OUTPUT_S of
    its newest and the latest before them: any record in between answers no query differently.
    """

    first: RecordRow | None = None
    settled: RecordRow | None = None  # the latest older than the recent ones
    recent: list[RecordRow] = field(default_factory=list)  # within STARTUP_OUTPUT_S of the newest
    limit: int = 64  # settled again when ``recent`` grows to this many

    def add(self, row: RecordRow) -> None:
        if self.first is None:
            self.first = row
            return
        self.recent.append(row)
        if len(self.recent) >= self.limit:
            self._settle()
            self.limit = max(64, 2 * len(self.recent))

    def _settle(self) -> None:
        timed = [row for row in self.recent if row[2] is not None]
        newest = max((row[2] for row in timed), default=None)  # type: ignore[type-var]
        old = before_startup_output(newest) or ""
        older = [row for row in timed if row[2] < old]  # type: ignore[operator]
        if older:
            latest = max(older, key=lambda row: row[2])  # type: ignore[arg-type, return-value]
            if self.settled is None or (self.settled[2] or "") <= (latest[2] or ""):
                self.settled = latest
        self.recent = [row for row in self.recent if row[2] is None or row[2] >= old]

    def rows(self) -> list[RecordRow]:
        self._settle()
        kept = [self.first, self.settled, *self.recent]
        return [row for row in kept if row is not None]


class GrowingStream:
    """Events appended in file order become an ``EventStream`` for ``analyze`` (``stream``)."""

    def __init__(self, source: str) -> None:
        self.stream = EventStream(
            [SourceInfo(source, 0, None, None, [], None)],
            [],
            Dense.empty(REQUEST_SCHEMA),
            Accounting(),
            Counter(),
            [],
            [],
        )
        self.stream.arrivals = Dense.empty(ARRIVAL_SCHEMA)
        self._records: list[RecordRow] = []  # the closed runs' records, in file order
        self._run = _RecordRun()
        self._levels: set[str] = set()
        # For each event kept: the rows of each table before it, where a cut at it falls.
        self._marks: list[tuple[int, int, int]] = []
        self._waiting: list[Event] = []  # untimed events kept whose next time came in no poll yet

    @property
    def info(self) -> SourceInfo:
        return self.stream.sources[0]

    def add(self, event: Event) -> None:
        """One event, in file order, of any kind."""
        info, stream = self.info, self.stream
        if event.logger is not None and event.level in LEVEL_RANK:
            self._levels.add(event.level)
        if event.time is not None:
            info.first = min(info.first or event.time, event.time)
            info.last = max(info.last or event.time, event.time)
            for waiting in self._waiting:  # a batch read gives an untimed event the next time after it
                waiting.next_time = waiting.next_time or event.time
            self._waiting = []
        self._note_record(event)
        if event.kind == "request_complete" and event.time is not None:
            _append(stream.requests, request_row(event))
        elif event.kind == ARRIVAL_KIND:
            time = ms_of(parse(event.time)) if event.time else None
            if time is not None:
                _append(stream.arrivals, (event.source_index, event.line, time, form_code(event.fields.get("form"))))
        elif event.kind != "record":
            self._close_run()
            self._marks.append((stream.requests.height, stream.arrivals.height, len(self._records)))
            stream.events.append(event)
            if event.time is None and event.next_time is None:
                self._waiting.append(event)

    def _note_record(self, event: Event) -> None:
        """A record that shows its process alive: a dated oMLX one, or an undated one of the log's own."""
        if event.time is not None and (event.logger or "").startswith(LOGGER_PREFIX):
            self._run.add((event.source_index, event.line, event.time))
        elif event.time is None and event.kind == "record" and _own(event):
            self._run.add((event.source_index, event.line, None))

    def _close_run(self) -> None:
        self._records += self._run.rows()
        self._run = _RecordRun()

    def ready(self) -> EventStream:
        """The stream with what was added so far, for ``analyze``."""
        stream = self.stream
        stream.levels = sorted(self._levels, key=LEVEL_RANK.__getitem__)
        rows = sorted([*self._records, *self._run.rows()], key=lambda row: (row[2] is not None, row[2] or "", row[1]))
        stream.records = from_rows(rows, RECORDS_SCHEMA)
        return stream

    def cut(self, first: Event, since: str | None) -> None:
        """Let go of everything before ``first`` (an event kept, a process start), which began at ``since``."""
        stream = self.stream
        at = next(i for i, event in enumerate(stream.events) if event is first)
        requests, arrivals, records = self._marks[at]
        stream.events = stream.events[at:]
        self._marks = [(r - requests, a - arrivals, n - records) for r, a, n in self._marks[at:]]
        stream.requests = stream.requests.slice(requests)
        stream.arrivals = stream.arrivals.slice(arrivals)
        self._records = self._records[records:]
        self.info.first = since  # nothing before the start: no process running before it


def _own(event: Event) -> bool:
    """Whether an undated record is the log's own: an oMLX logger's or a time-only line's (a user's
    note or a crash report's text says nothing of whether its process went on)."""
    return event.time_of_day is not None or (event.logger or "").startswith(LOGGER_PREFIX)


def _append(table: Dense, row: tuple[int, int, int, int]) -> None:
    for column, value in zip(table.columns.values(), row, strict=True):
        column.append(value)
