"""Option strings to typed values: times, zones, durations, overlay specs and ``--os`` installs.

The core takes datetimes, tzinfo and seconds; only here is text read, so every message that names
a flag is written in one place.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from omlx_logscan.errors import LogscanError

if TYPE_CHECKING:
    from omlx_logscan.inputs.oshistory import OsInstall
    from omlx_logscan.inputs.overlays import OverlaySpec

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


def parse_when(text: str, tz: tzinfo | None, option: str = "--since") -> datetime:
    """An absolute or relative time (``2026-09-15 20:00``, ``2 days ago``, ``3h``, ``yesterday``) as naive
    local time in ``tz``, the way the log writes its times."""
    from dateutil import parser as date_parser  # only runs with --since/--until: keeps start-up short
    from dateutil.relativedelta import relativedelta

    raw = text.strip().lower()
    now = now_in(tz)
    if raw == "now":
        return now
    if raw in ("today", "yesterday"):
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return day - timedelta(days=1 if raw == "yesterday" else 0)
    try:
        match = _CALENDAR_AGO.match(raw)
        if match:
            amount = int(match["n"])
            months = amount if match["unit"].startswith("mo") else 12 * amount
            moved: datetime = now - relativedelta(months=months)
            return moved
        if _DURATION_PART.match(re.sub(r"\s+", "", raw)):  # 3h, 90 minutes ago, 1h30m
            return now - timedelta(seconds=duration_seconds(raw.removesuffix("ago"), option))
    except (ValueError, OverflowError):
        raise LogscanError(f"{option} {text!r}: too far back") from None
    try:
        moment: datetime = date_parser.parse(text)
        if moment.tzinfo is not None:  # an explicit offset: convert to the log's local time
            moment = moment.astimezone(tz).replace(tzinfo=None)
    except (ValueError, OverflowError):
        raise LogscanError(f"{option} {text!r}: not a date (try '2026-09-15 20:00', '2 days ago' or '3h')") from None
    return moment


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


def time_window(since: str | None, until: str | None, tz: tzinfo | None) -> tuple[datetime | None, datetime | None]:
    """``--since``/``--until`` as local times, refused when the window is empty by construction."""
    lower = parse_when(since, tz, "--since") if since else None
    upper = parse_when(until, tz, "--until") if until else None
    if lower and upper and lower > upper:
        raise LogscanError(f"--since {since!r} is after --until {until!r}")
    return lower, upper


def parse_gap(text: str | None) -> float:
    """``--overlay-gap`` (``5m``, ``300s``, ``1h``) in seconds; the default when not given."""
    from omlx_logscan.inputs.overlays import DEFAULT_GAP_S

    return DEFAULT_GAP_S if text is None else duration_seconds(text, "--overlay-gap")


def overlay_specs(texts: list[str]) -> list[OverlaySpec]:
    """The repeatable ``--overlay NAME=FILE``, each name once."""
    from omlx_logscan.inputs.overlays import OverlaySpec

    specs: list[OverlaySpec] = []
    for text in texts:
        name, sep, path = text.partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise LogscanError(f"--overlay {text!r}: expected NAME=FILE (e.g. gpu=other-server.log)")
        if any(spec.name == name for spec in specs):
            raise LogscanError(f"--overlay {text!r}: the name {name!r} is given twice")
        specs.append(OverlaySpec(name, path))
    return specs


def parse_os_flag(text: str, tz: tzinfo | None) -> OsInstall:
    """``--os VERSION@DATETIME``: a version and the local time it was installed."""
    from omlx_logscan.inputs.oshistory import MACOS_PREFIX, OsInstall  # dateutil and plistlib: only with --os

    version, at, when = text.rpartition("@")
    version = version.strip().removeprefix(MACOS_PREFIX).strip()
    if not at or not version or not when.strip():
        raise LogscanError(f"--os {text!r}: expected VERSION@DATETIME, e.g. --os '27.0@2026-09-15 17:41'")
    stamp = parse_when(when.strip(), tz, "--os").isoformat()
    return OsInstall(stamp, version, f"{MACOS_PREFIX} {version}", "--os")
