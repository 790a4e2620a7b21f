"""A live log's events as the ``EventStream`` the batch analyzer reads, grown as lines arrive.

A watch runs ``analyze`` on what it has read so far, so what it holds must be what ``read_events``
would give for the same lines: the events but routine records, arrivals and timed finished requests
(those are dense rows, numbers only), and the dated oMLX records that say when a process last wrote.
Of the routine records, which a batch read only counts, the records table keeps what the bulk scan
keeps (``parsing/unkept.py``): the one just before each line it hands over, and the first and last.
A server runs for months, so the lifetimes before the last start are let go once the watch has said
all it had to about them (``cut``).
"""

from __future__ import annotations

import bisect
from collections import Counter

from omlx_logscan.analysis.requests import request_row
from omlx_logscan.parsing.catalog import LOGGER_PREFIX
from omlx_logscan.parsing.dense import ARRIVAL_SCHEMA, REQUEST_SCHEMA, Dense, form_code, from_rows, ms_of
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import LEVEL_RANK
from omlx_logscan.parsing.kinds import ARRIVAL_KIND
from omlx_logscan.parsing.messages import foreign
from omlx_logscan.parsing.recognition import Recognition, is_omlx
from omlx_logscan.stream.event_stream import RECORDS_SCHEMA, Accounting, EventStream, SourceInfo
from omlx_logscan.timeutil import parse
from omlx_logscan.watch.own_requests import OWN_FIELD

RecordRow = tuple[int, int, str | None]  # source, line, time (None: undated)
_DENSE = frozenset({"request_complete", ARRIVAL_KIND})


class _RecordTable:
    """The records table (RECORDS_SCHEMA) kept in its order as rows come: the undated first, then by
    time, then by line; a row goes in place, so no poll sorts it again."""

    def __init__(self, rows: list[RecordRow]) -> None:
        rows = sorted(rows, key=lambda row: (row[2] is not None, row[2] or "", row[1]))
        self.dense = from_rows(rows, RECORDS_SCHEMA)
        self._undated = sum(1 for row in rows if row[2] is None)

    def _place(self, row: RecordRow) -> int:
        times = self.dense.texts("time")
        if row[2] is None:
            return bisect.bisect_right(self.dense.ints("line"), row[1], 0, self._undated)
        return bisect.bisect_right(times, row[2], self._undated)

    def insert(self, row: RecordRow) -> None:
        at = self._place(row)
        for column, value in zip(self.dense.columns.values(), row, strict=True):
            column.insert(at, value)  # type: ignore[arg-type]
        self._undated += row[2] is None

    def remove(self, row: RecordRow) -> None:
        at = self._place(row) - 1  # the last of its place: a row is put after its equals
        columns = list(self.dense.columns.values())
        while tuple(column[at] for column in columns) != row:
            at -= 1
        for column in columns:
            del column[at]
        self._undated -= row[2] is None


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
        self._recognition = Recognition()  # whether the records show oMLX's, as a batch read tells
        self._line: int | None = None  # the line of the last record counted (a record may give several events)
        self._records: list[RecordRow] = []  # in file order
        self._table = _RecordTable([])  # the same rows, in the table's order
        self._shown: RecordRow | None = None  # the last record, in the table while it is the last
        self._unkept: tuple[Event, RecordRow] | None = None  # the last record, if one the scan only counts
        self.levels: set[str] = set()  # the log levels the records showed (the live reading's, shared)
        # For each event kept: the rows of each table before it, where a cut at it falls.
        self._marks: list[tuple[int, int, int]] = []
        self._waiting: list[Event] = []  # untimed events kept whose next time came in no poll yet

    @property
    def info(self) -> SourceInfo:
        return self.stream.sources[0]

    def add(self, event: Event) -> None:
        """One event, in file order, of any kind."""
        info, stream = self.info, self.stream
        if event.line != self._line:  # the records read, as a batch read counts them and recognises them
            self._line = event.line
            stream.accounting.records += 1
            recognition = self._recognition
            if not recognition.recognised:
                recognition.recognised = is_omlx(event) or (event.logger or "").startswith(LOGGER_PREFIX)
                recognition.see_lines((event.message,), messages=not foreign(event.logger))
                stream.recognised = recognition.recognised
        if event.time is not None:
            info.first = min(info.first or event.time, event.time)
            info.last = max(info.last or event.time, event.time)
            for waiting in self._waiting:  # a batch read gives an untimed event the next time after it
                waiting.next_time = waiting.next_time or event.time
            self._waiting = []
        self._note_record(event)
        if event.fields.get(OWN_FIELD):
            return  # a line of the watch's own probe: no user's request (its answer is its evidence)
        if event.kind == "request_complete" and event.time is not None:
            _append(stream.requests, request_row(event))
        elif event.kind == ARRIVAL_KIND:
            time = ms_of(parse(event.time)) if event.time else None
            if time is not None:
                _append(stream.arrivals, (event.source_index, event.line, time, form_code(event.fields.get("form"))))
        elif event.kind != "record":
            self._marks.append((stream.requests.height, stream.arrivals.height, len(self._records)))
            stream.events.append(event)
            if event.time is None and event.next_time is None:
                self._waiting.append(event)

    def _note_record(self, event: Event) -> None:
        """A record that shows its process alive, as the batch records table holds it: a dated oMLX
        record the scan hands over, an undated one of the log's own, and of the records the scan
        only counts (and of the dense rows), the first, the one just before a record it hands over,
        and the last."""
        own = (event.logger or "").startswith(LOGGER_PREFIX)
        row = (event.source_index, event.line, event.time)
        previous, self._unkept = self._unkept, None
        if _counted_only(event):
            if own and event.time is not None:
                self._unkept = (event, row)
                if not self._records and previous is None:  # the source's first line
                    self._keep(row)
            return
        if previous is not None and previous[0].line == event.line - 1 and previous[1] is not self._last_row():
            self._keep(previous[1])
        if (event.time is not None and own) or (event.time is None and event.kind == "record" and _own(event)):
            self._keep(row)

    def _keep(self, row: RecordRow) -> None:
        self._records.append(row)
        if row is self._shown:
            self._shown = None  # in the table already, and there to stay
        else:
            self._table.insert(row)

    def _last_row(self) -> RecordRow | None:
        return self._records[-1] if self._records else None

    def ready(self) -> EventStream:
        """The stream with what was added so far, for ``analyze``."""
        stream = self.stream
        stream.levels = sorted(self.levels, key=LEVEL_RANK.__getitem__)
        last = self._unkept[1] if self._unkept is not None and self._unkept[1] is not self._last_row() else None
        if last is not self._shown:  # the source's last line, while it is a record the scan only counts
            if self._shown is not None:
                self._table.remove(self._shown)
            if last is not None:
                self._table.insert(last)
            self._shown = last
        stream.records = self._table.dense
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
        self._table, self._shown = _RecordTable(self._records), None
        self.info.first = since  # nothing before the start: no process running before it


def _counted_only(event: Event) -> bool:
    """Whether the bulk scan only counts ``event``'s line (a routine one-line INFO or DEBUG record) or
    makes it a dense row (a finished request, an arrival): it hands over all else."""
    if event.time is None or event.lines != 1:
        return False
    return (event.kind == "record" and event.level in ("INFO", "DEBUG")) or event.kind in _DENSE


def _own(event: Event) -> bool:
    """Whether an undated record is the log's own: an oMLX logger's or a time-only line's (a user's
    note or a crash report's text says nothing of whether its process went on)."""
    return event.time_of_day is not None or (event.logger or "").startswith(LOGGER_PREFIX)


def _append(table: Dense, row: tuple[int, int, int, int]) -> None:
    for column, value in zip(table.columns.values(), row, strict=True):
        column.append(value)
