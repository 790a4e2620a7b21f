"""User-typed times for ``--since``/``--until`` and the ``--tz`` the log's local times are in."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from omlx_logscan.errors import LogscanError

# Months and years have no fixed length: "3 months ago" goes back by the calendar.
_CALENDAR_AGO = re.compile(r"^(?P<n>\d+)\s*(?P<unit>months?|mo|years?|y)(?:\s+ago)?$")


def zone(name: str | None) -> tzinfo | None:
    """The IANA zone named by ``--tz``; None means this machine's zone."""
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise LogscanError(f"--tz {name!r}: not an IANA time zone (e.g. Europe/Berlin, America/New_York)") from None


def now_in(tz: tzinfo | None) -> datetime:
    """Wall-clock time now, as the log would write it (naive local time in ``tz``)."""
    return datetime.now(tz).replace(tzinfo=None) if tz else datetime.now()


def parse_when(text: str, tz: tzinfo | None, option: str = "--since") -> str:
    """An absolute or relative time (``2026-09-15 20:00``, ``2 days ago``, ``3h``, ``yesterday``) as ISO."""
    from dateutil import parser as date_parser  # only runs with --since/--until: keeps start-up short
    from dateutil.relativedelta import relativedelta

    raw = text.strip().lower()
    now = now_in(tz)
    if raw == "now":
        return now.isoformat()
    if raw in ("today", "yesterday"):
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return (day - timedelta(days=1 if raw == "yesterday" else 0)).isoformat()
    try:
        match = _CALENDAR_AGO.match(raw)
        if match:
            amount = int(match["n"])
            months = amount if match["unit"].startswith("mo") else 12 * amount
            return str((now - relativedelta(months=months)).isoformat())
        if _DURATION_PART.match(re.sub(r"\s+", "", raw)):  # 3h, 90 minutes ago, 1h30m
            return (now - timedelta(seconds=duration_seconds(raw.removesuffix("ago"), option))).isoformat()
    except (ValueError, OverflowError):
        raise LogscanError(f"{option} {text!r}: too far back") from None
    try:
        moment = date_parser.parse(text)
        if moment.tzinfo is not None:  # an explicit offset: convert to the log's local time
            moment = moment.astimezone(tz).replace(tzinfo=None)
    except (ValueError, OverflowError):
        raise LogscanError(f"{option} {text!r}: not a date (try '2026-09-15 20:00', '2 days ago' or '3h')") from None
    return str(moment.isoformat())


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(weeks?|w|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)")
_UNIT_SECONDS = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}


def duration_seconds(text: str, option: str) -> float:
    """A positive duration (``90s``, ``10m``, ``1.5h``, ``1h30m``, ``2 days``) in seconds."""
    compact = re.sub(r"\s+", "", text.lower())
    parts = list(_DURATION_PART.finditer(compact))
    if not parts or "".join(m.group(0) for m in parts) != compact:
        raise LogscanError(f"{option} {text!r}: not a duration (try 90s, 10m, 2h or 1h30m)")
    total = sum(float(m.group(1)) * _UNIT_SECONDS[m.group(2)[0]] for m in parts)
    if total <= 0:
        raise LogscanError(f"{option} {text!r}: must be longer than zero")
    return total
