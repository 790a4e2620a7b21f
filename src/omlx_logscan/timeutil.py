"""Small helpers for the ISO local times the event stream carries."""

from __future__ import annotations

from datetime import datetime, tzinfo


def parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def wall_clock(moment: datetime, zone: tzinfo | None) -> datetime:
    """A time as the log writes it: naive local time in ``zone`` (None: this machine's zone).
    A naive ``moment`` is taken to be in the log's local time already."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(zone).replace(tzinfo=None)


def stamp_of(moment: datetime) -> str:
    """A time from a polars column in the stream's form: milliseconds, as oMLX writes them, so a
    request time reads the same whether it came from the dense table or from the grammar."""
    return moment.isoformat(timespec="milliseconds")


def seconds(earlier: str | None, later: str | None) -> float | None:
    """Seconds from ``earlier`` to ``later``; None when either is unknown."""
    if not earlier or not later:
        return None
    return (parse(later) - parse(earlier)).total_seconds()


def clock_seconds(earlier: str, later: str) -> float:
    """Seconds from one ``HH:MM:SS.mmm`` time of day to the next, across midnight when it goes back
    (what a paste of time-only lines, dated nowhere, can still tell)."""

    def of_day(time_of_day: str) -> float:
        hours, minutes, rest = time_of_day.split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(rest)

    return (of_day(later) - of_day(earlier)) % 86400


def to_second(stamp: str | None) -> str | None:
    """``YYYY-MM-DDTHH:MM:SS`` without the fraction (how tables print times)."""
    return stamp[:19] if stamp else None


def human_time(stamp: str | None) -> str:
    """``YYYY-MM-DD HH:MM:SS`` for people; ``?`` when unknown."""
    return stamp[:19].replace("T", " ") if stamp else "?"


def human_duration(total: float | None) -> str:
    """``42 s``, ``12 min``, ``2 h 05 min``, ``3 d 4 h``: the one unit style of every output."""
    if total is None:
        return "?"
    total = abs(total)
    if total < 60:
        return f"{total:.0f} s"
    minutes = int(total // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"
