"""The zone clock: a stream's local times with the offset of the zone they were read in.

The stream carries naive local times, as the log writes them; only on the way out does each get
its offset (``2026-09-15T20:19:38.663+02:00``), so two Macs in different zones can be compared. In
a DST fall-back hour a wall time names two instants: the order of the file decides (a time that
goes back inside that hour is the second pass), and such times are marked. A wall time skipped by
spring-forward names none: it keeps the offset before the gap and is reported, never moved quietly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from omlx_logscan.timeutil import LOCAL_STAMP, LocalTime, local_time_kind, local_zone, offset_text, zone_label

if TYPE_CHECKING:
    from omlx_logscan.parsing.event import Event


@dataclass
class _Fallback:
    """What one source showed of one repeated hour: the latest time of its first pass, and whether it went back."""

    latest: str
    second_pass: bool = False


@dataclass
class ZoneClock:
    """Turns the stream's naive local times into zoned ones, the file order resolving fall-back hours."""

    zone: tzinfo
    second_pass: set[str] = field(default_factory=set)  # stamps of a repeated hour seen after the clock went back
    ambiguous: dict[str, int] = field(default_factory=dict)  # day of a repeated hour → its times seen
    resolved_days: set[str] = field(default_factory=set)  # days whose repeated hour the order resolved
    nonexistent: list[dict[str, Any]] = field(default_factory=list)  # wall times a spring-forward skipped
    _kinds: dict[str, LocalTime] = field(default_factory=dict, repr=False)
    _offsets: dict[tuple[str, int], str] = field(default_factory=dict, repr=False)
    _fallbacks: dict[tuple[int, str], _Fallback] = field(default_factory=dict, repr=False)
    _steady_days: dict[str, bool] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return zone_label(self.zone)

    def kind(self, stamp: str) -> LocalTime:
        minute = stamp[:16]
        known = self._kinds.get(minute)
        if known is None:
            steady = self._steady(stamp[:10])
            known = LocalTime.single if steady else local_time_kind(datetime.fromisoformat(stamp), self.zone)
            self._kinds[minute] = known
        if known is not LocalTime.single and len(stamp) > 16:
            # A zone whose change falls inside a minute is rare; the minute's verdict is only a hint then.
            return local_time_kind(datetime.fromisoformat(stamp), self.zone)
        return known

    def _steady(self, day: str) -> bool:
        """Whether the zone keeps one offset all ``day`` (both folds at its first and last moment):
        then every time of it is single, and a log's months cost a check a day, not one a minute."""
        steady = self._steady_days.get(day)
        if steady is None:
            first = datetime.fromisoformat(day)
            last = first + timedelta(days=1, microseconds=-1)
            offsets = {
                moment.replace(tzinfo=self.zone, fold=fold).utcoffset() for moment in (first, last) for fold in (0, 1)
            }
            steady = self._steady_days[day] = len(offsets) == 1
        return steady

    def hard(self, stamp: str | None) -> bool:
        """Whether a time is one a zone change makes hard: in a repeated or a skipped hour (cached per minute)."""
        if stamp is None:
            return False
        known = self._kinds.get(stamp[:16])
        if known is LocalTime.single:
            return False
        return LOCAL_STAMP.fullmatch(stamp) is not None and self.kind(stamp) is not LocalTime.single

    def observe(self, event: Event) -> None:
        """Take one event, in its source's file order: how its time is read can depend on the times before it."""
        stamp = event.time
        if stamp is None or not self.hard(stamp):
            return
        if self.kind(stamp) is LocalTime.nonexistent:
            self.nonexistent.append({"local": stamp, "source": event.source, "line": event.line})
            return
        day = stamp[:10]
        self.ambiguous[day] = self.ambiguous.get(day, 0) + 1
        seen = self._fallbacks.get((event.source_index, day))
        if seen is None:
            self._fallbacks[(event.source_index, day)] = _Fallback(stamp)
        elif seen.second_pass or stamp < seen.latest:
            seen.second_pass = True
            self.resolved_days.add(day)
            self.second_pass.add(stamp)
        else:
            seen.latest = stamp

    def fold(self, stamp: str) -> int:
        return 1 if stamp in self.second_pass else 0

    def instant(self, stamp: str) -> datetime:
        """The moment a local time names, in UTC."""
        moment = datetime.fromisoformat(stamp).replace(tzinfo=self.zone, fold=self.fold(stamp))
        return moment.astimezone(UTC)

    def zoned(self, stamp: str) -> str:
        """``2026-09-15T20:19:38.663+02:00``: the stamp as written, with its offset."""
        key = (stamp[:16], self.fold(stamp))
        offset = self._offsets.get(key)
        if offset is None:
            moment = datetime.fromisoformat(stamp).replace(tzinfo=self.zone, fold=key[1])
            offset = offset_text(moment.utcoffset() or timedelta(0))
            if self.kind(stamp) is LocalTime.single:  # only a minute of one offset may be reused
                self._offsets[key] = offset
        return stamp + offset

    def convert(self, value: Any) -> Any:
        """Every naive local time in a document (any depth) zoned; everything else as it was."""
        if isinstance(value, str):
            return self.zoned(value) if LOCAL_STAMP.fullmatch(value) else value
        if isinstance(value, dict):
            return {key: self.convert(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.convert(item) for item in value]
        return value

    def row(self, event: Event) -> dict[str, Any]:
        """One event's row with its time zoned (an event's one time), and a mark when it was ambiguous or skipped."""
        row = event.as_dict()
        stamp = event.time
        if stamp is not None and LOCAL_STAMP.fullmatch(stamp):
            row["time"] = self.zoned(stamp)
            if self.hard(stamp):
                row[f"time_{self.kind(stamp).value}"] = True
        return row

    def notes(self) -> dict[str, Any]:
        """What a document says about its zone's hard cases: repeated hours and skipped times."""
        return {
            "ambiguous": [
                {
                    "day": day,
                    "times": count,
                    "second_pass": sum(1 for stamp in self.second_pass if stamp.startswith(day)),
                    "resolved_by": "file order" if day in self.resolved_days else "assumed first pass",
                }
                for day, count in sorted(self.ambiguous.items())
            ],
            "nonexistent": self.nonexistent,
        }


def clock_for(zone: tzinfo | None, events: Iterable[Event] = ()) -> ZoneClock:
    """A clock for ``zone`` (None: this machine's) that has seen ``events`` in each source's file order."""
    clock = ZoneClock(zone or local_zone())
    # Only times in a repeated or skipped hour need the file's order; most logs have none.
    for event in sorted((ev for ev in events if clock.hard(ev.time)), key=lambda ev: (ev.source_index, ev.line)):
        clock.observe(event)
    return clock
