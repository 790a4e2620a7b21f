"""What the analyzers receive: events, dense request rows, sources and the line accounting.

``header`` describes the input (its files, span, level and line accounting): every JSON document
opens with it, so each result says what it was computed from.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from omlx_logscan.parsing.dense import ARRIVAL_SCHEMA, Dense
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import LEVEL_RANK
from omlx_logscan.parsing.kinds import EventKind
from omlx_logscan.parsing.recognition import is_omlx
from omlx_logscan.timeutil import clock_seconds, seconds

if TYPE_CHECKING:
    from omlx_logscan.stream.zone_clock import ZoneClock

RECORDS_SCHEMA = {"source": "I", "line": "I", "time": ""}  # the time: ISO text, or None when undated


def skipped_files(stream: EventStream | None) -> dict[str, str]:
    """The files of a log folder that were not read, each with the reason."""
    return {s.name: s.skipped for s in stream.sources if s.skipped} if stream is not None else {}


def header(stream: EventStream) -> dict[str, Any]:
    """What the input is: files, span, the level it was written at, line accounting."""
    acc = stream.accounting
    first = min((s.first for s in stream.sources if s.first), default=None)
    last = max((s.last for s in stream.sources if s.last), default=None)
    if first is None:  # no dated line: a report's own time (a dated kernel panic) is the only one
        dated = [event.time for event in stream.events if event.time]
        first, last = min(dated, default=None), max(dated, default=None)
    # Only a paste with no date at all is spanned by its times of day (file order, across midnight).
    starts = [s.first_time_of_day for s in stream.sources if s.first_time_of_day]
    ends = [s.last_time_of_day for s in stream.sources if s.last_time_of_day]
    clock = (starts[0], ends[-1]) if starts and ends and not first else None
    return {
        "files": [
            {
                "name": s.name,
                "lines": s.lines,
                "first": s.first,
                "last": s.last,
                "levels": s.levels,
                "problem": s.problem,
                **({"skipped": s.skipped} if s.skipped else {}),
            }
            for s in stream.sources
        ],
        "first": first,
        "last": last,
        "first_time_of_day": clock[0] if clock else None,
        "last_time_of_day": clock[1] if clock else None,
        "hours": round((seconds(first, last) or (clock_seconds(*clock) if clock else 0)) / 3600, 2),
        "written_at_level": stream.lowest_level,
        "lines": acc.lines,
        "records": acc.records,
        "event_lines": acc.event_lines,
        "record_lines": acc.record_lines,
        "blank_lines": acc.blank,
        "unparsed_lines": acc.unparsed,
        "unmatched_records": acc.unmatched,
        "duplicates_dropped": acc.duplicates,
        "events": dict(sorted(stream.kind_counts.items())),
        "clock_jumps": stream.clock_jumps,
    }


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
    unmatched: int = 0  # records (counted above) that no template matched and that carry no level

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
    # A paste of time-only lines whose date cannot be known spans these times of day (file order).
    first_time_of_day: str | None = None
    last_time_of_day: str | None = None
    skipped: str | None = None  # a folder's file that is not read, and why


@dataclass
class EventStream:
    """Everything the analyzers need from the input."""

    sources: list[SourceInfo]
    events: list[Event]
    requests: Dense  # dense finished-request rows (REQUEST_SCHEMA, and "key"/"text" when asked for)
    accounting: Accounting
    kind_counts: Counter[EventKind]
    unparsed: list[tuple[str, int, str]]
    levels: list[str]  # levels present anywhere, lowest first
    clock_jumps: list[dict[str, Any]] = field(default_factory=list)
    # (source, line, head) of records no template matched and without a level: log text of unknown meaning
    unmatched: list[tuple[str, int, str]] = field(default_factory=list)
    # Dated oMLX records of every kind, event or not (RECORDS_SCHEMA, in time order): not every line,
    # but the first and last of each stretch, so when a process last wrote anything is known.
    records: Dense = field(default_factory=lambda: Dense.empty(RECORDS_SCHEMA))
    # The whole input a --since/--until window was cut from: its lifetimes keep their numbers in it.
    cut_from: EventStream | None = None
    # Every request arrival (ARRIVAL_SCHEMA, and "key"/"text" when asked for), in file order per
    # source: DEBUG and TRACE logs only. Never among ``events``, wherever the scan found one.
    arrivals: Dense = field(default_factory=lambda: Dense.empty(ARRIVAL_SCHEMA))
    # The arrivals the grammar read (rows of ``arrivals`` too), as events, for ``all_events``.
    arrival_events: list[Event] = field(default_factory=list)
    zone: tzinfo | None = None  # the zone its local times were written in (None: this machine's)
    host: str | None = None  # the machine it came from, when one is named
    recognised: bool = False  # a line of it showed it is oMLX's (``parsing.recognition``)
    # The lexicon entries of every record the grammar read (one tuple a message: any of them may have
    # written it), kept or not as an event: what the oMLX versions that wrote the input rest on.
    messages: frozenset[tuple[str, ...]] = frozenset()
    # The zone clock of ``events`` and what it was built from (``clock``): built once while they stay the same.
    _clock: tuple[list[Event], int, tzinfo | None, ZoneClock] | None = field(default=None, repr=False, compare=False)

    def clock(self) -> ZoneClock:
        """The clock that zones these events' times (``zone_clock.clock_for`` of the zone and events);
        a command may ask for it more than once (``events -f json``: for its rows, then for its notes),
        and each build is a pass over every event, so it is built again only when they changed."""
        from omlx_logscan.stream import zone_clock

        cached = self._clock
        if cached is not None and cached[0] is self.events and cached[1] == len(self.events) and cached[2] is self.zone:
            return cached[3]
        clock = zone_clock.clock_for(self.zone, self.events)
        self._clock = (self.events, len(self.events), self.zone, clock)
        return clock

    @property
    def has_omlx_records(self) -> bool:
        """Whether anything here is oMLX's (a README or a shell history has nothing): what its
        reading recognised, or what it holds."""
        return (
            self.recognised
            or self.requests.height > 0
            or self.arrivals.height > 0
            or self.records.height > 0  # routine records only counted by the scan: timed omlx.* records
            or any(map(is_omlx, self.events))
        )

    @property
    def lowest_level(self) -> str | None:
        return self.levels[0] if self.levels else None

    def shows(self, level: str) -> bool:
        """Whether records of ``level`` would have been written (the log level is at or below it)."""
        lowest = self.lowest_level
        return lowest is not None and LEVEL_RANK[lowest] <= LEVEL_RANK[level]
