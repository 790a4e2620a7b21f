"""Small helpers for the ISO local times the event stream carries, and for the zones they were written in."""

from __future__ import annotations

import contextlib
import os
import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from enum import Enum
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


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


# A naive ISO local time as the stream carries it (``2026-09-15T20:19:38.663``); only these are zoned.
LOCAL_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{1,6})?)?")
_FIXED_OFFSET = re.compile(r"(?P<sign>[+-])(?P<hours>\d\d):?(?P<minutes>\d\d)")


def named_zone(name: str) -> tzinfo | None:
    """``UTC``/``utc``/``Z``, a fixed offset (``+02:00``, ``-0530``) or an IANA name; None when it is none."""
    if name.strip().upper() in ("UTC", "Z"):
        return UTC
    fixed = _FIXED_OFFSET.fullmatch(name.strip())
    if fixed:
        if int(fixed["minutes"]) > 59:  # +02:99 is no offset (not +03:39)
            return None
        offset = timedelta(hours=int(fixed["hours"]), minutes=int(fixed["minutes"]))
        if offset > timedelta(hours=18):
            return None
        return timezone(-offset if fixed["sign"] == "-" else offset)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def local_zone() -> tzinfo:
    """This machine's zone with its DST rules (``$TZ``, else ``/etc/localtime``), not today's fixed offset."""
    name = os.environ.get("TZ", "").lstrip(":")
    if name and (zone := named_zone(name)) is not None:
        return zone
    localtime = Path("/etc/localtime")
    with contextlib.suppress(OSError, ValueError, ZoneInfoNotFoundError):
        target = str(localtime.resolve())
        if "zoneinfo/" in target:
            return ZoneInfo(target.split("zoneinfo/", 1)[1])
        with localtime.open("rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    return UTC


def zone_label(zone: tzinfo) -> str:
    """The name a document records for a zone: its IANA key, ``UTC``, or a fixed offset ``+02:00``."""
    key = getattr(zone, "key", None)
    if isinstance(key, str):
        return key
    if zone is UTC:
        return "UTC"
    return offset_text(zone.utcoffset(None) or timedelta(0))


def offset_text(offset: timedelta) -> str:
    """``+02:00`` for an offset (ISO 8601, minutes always shown)."""
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    hours, minutes = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{minutes:02d}"


class LocalTime(Enum):
    """What a zone says of a wall-clock time: one instant, two (DST fall-back), or none (spring forward)."""

    single = "single"
    ambiguous = "ambiguous"
    nonexistent = "nonexistent"


def local_time_kind(moment: datetime, zone: tzinfo) -> LocalTime:
    """Whether a naive wall time in ``zone`` is one instant, falls in a repeated hour, or in a skipped one."""
    early, late = moment.replace(tzinfo=zone, fold=0), moment.replace(tzinfo=zone, fold=1)
    if early.utcoffset() == late.utcoffset():
        return LocalTime.single
    # In a gap the two folds straddle it; a round trip through UTC does not land on the same wall time.
    if early.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != moment:
        return LocalTime.nonexistent
    return LocalTime.ambiguous
