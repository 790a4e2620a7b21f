"""Dated oMLX records of every kind, by time: when each process last wrote anything.

Events alone miss most of a log (routine records are only counted), so a lifetime's end, a
lifetime of routine records only and "did the process go on after this fault" are read here.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property

from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.timeutil import parse

# Records this close before a process start are the new process's startup output (what it writes
# before its first start marker), not the old process's last words: a restart takes longer.
STARTUP_OUTPUT_S = 1.0


@dataclass(frozen=True)
class RecordAt:
    """One dated oMLX record: when a process wrote it, and where."""

    time: str
    source: str
    line: int


class RecordIndex:
    """The stream's dated oMLX records (events or not) by time: when each process last wrote anything."""

    def __init__(self, stream: EventStream) -> None:
        self._names = [s.name for s in stream.sources]
        table = stream.records
        sources, lines, times = table.ints("source"), table.ints("line"), table.texts("time")
        self._table = (sources, lines, times)
        dated = next((row for row, time in enumerate(times) if time is not None), len(times))  # undated first
        self.times: list[str] = times[dated:]
        self._sources = sources[dated:]
        self._lines = lines[dated:]
        # Each source's first record, timed or not, with the first time of it (a lifetime's start).
        first_lines: dict[int, int] = {}
        first_times: dict[int, str] = {}
        if len(set(sources)) <= 1:  # one source (the usual case): no loop over its rows
            first_lines = {source: min(lines) for source in set(sources)}
            first_times = {self._sources[0]: self.times[0]} if self.times else {}
        else:
            for source, line in zip(sources, lines, strict=True):
                first_lines[source] = min(line, first_lines.get(source, line))
            for source, time in zip(self._sources, self.times, strict=True):
                first_times.setdefault(source, time)
        self.firsts = {
            self._names[source]: RecordAt(first_times[source], self._names[source], first_lines[source])
            for source in sorted(first_lines)
            if source in first_times  # a source of undated text only shows no oMLX process
        }

    @cached_property
    def _in_file(self) -> dict[str, tuple[list[int], list[str | None]]]:
        """Each source's records in file order, lines and times: the order places undated ones.
        Built at the first fault that needs it (a log without one never pays for it)."""
        in_file: dict[str, tuple[list[int], list[str | None]]] = {}
        for source, line, time in sorted(zip(*self._table, strict=True), key=lambda row: (row[0], row[1])):
            lines, times = in_file.setdefault(self._names[source], ([], []))
            lines.append(line)
            times.append(time)
        return in_file

    def written_after(
        self, source: str, after_line: int, before_line: int | None, after: str | None, cutoff: str | None
    ) -> bool:
        """Whether ``source`` has a record between two lines that is undated, or timed after ``after``
        (when known) and before ``cutoff`` (None: no bound)."""
        lines, times = self._in_file.get(source, ([], []))
        for index in range(bisect.bisect_right(lines, after_line), len(lines)):
            line, time = lines[index], times[index]
            if before_line is not None and line >= before_line:
                return False
            if time is None or ((after is None or time > after) and (cutoff is None or time < cutoff)):
                return True
        return False

    def last_between(self, start: str | None, before: str | None, *, after_start: bool = False) -> RecordAt | None:
        """The latest record at or (``after_start``) after ``start``, before ``before`` (None: the log's end)."""
        lo = (bisect.bisect_right if after_start else bisect.bisect_left)(self.times, start) if start else 0
        hi = bisect.bisect_left(self.times, before) if before else len(self.times)
        if hi <= lo:
            return None
        return RecordAt(self.times[hi - 1], self._names[self._sources[hi - 1]], self._lines[hi - 1])

    def any_between(self, after: str | None, before: str | None) -> bool:
        """Whether a record lies after ``after`` and before ``before`` (None: the end of the log)."""
        lo = bisect.bisect_right(self.times, after) if after else 0
        hi = bisect.bisect_left(self.times, before) if before else len(self.times)
        return hi > lo

    def first_of_log(self, source: str | None) -> RecordAt | None:
        """The first record in file order of ``source`` (else of the source whose first is earliest)."""
        if source in self.firsts:
            return self.firsts[source]
        return min(self.firsts.values(), key=lambda record: record.time, default=None)


def before_startup_output(start: str | None) -> str | None:
    """The moment before which a record is the old process's, for a process starting at ``start``."""
    moment = parse(start) - timedelta(seconds=STARTUP_OUTPUT_S) if start else None
    return moment.isoformat(timespec="microseconds") if moment else None
