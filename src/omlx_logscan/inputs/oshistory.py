"""When each macOS version was installed: the one fact about the OS that no oMLX log carries.

A Mac keeps its install history in ``/Library/Receipts/InstallHistory.plist`` (dates in UTC)
and prints it with ``softwareupdate --history`` (dates in local time); a user who only knows
the dates can write ``DATETIME VERSION`` lines or pass ``--os VERSION@DATETIME``. All of them
become one list of installs in the log's local time, so a session can be given the version in
force when it started.
"""

from __future__ import annotations

import bisect
import plistlib
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from xml.parsers.expat import ExpatError

from dateutil import parser as date_parser

from omlx_logscan.errors import LogscanError
from omlx_logscan.timeutil import wall_clock

SYSTEM_HISTORY = Path("/Library/Receipts/InstallHistory.plist")


MACOS_PREFIX = "macOS"


_SOFTWAREUPDATE_HEADER = re.compile(r"^\s*Display Name\s+Version\s+Date\s*$")


_SOFTWAREUPDATE_ROW = re.compile(
    r"^(?P<name>\S.*?)\s+(?P<version>\S+(?: \([a-z]\))?)\s+"
    r"(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4},?\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp]\.?[Mm]\.?)?)\s*$"
)


_SEPARATOR = re.compile(r"^[\s-]+$")


_LEADING_DAY = re.compile(r"^(?P<first>\d{1,2})(?P<sep>[./-])\d{1,2}[./-]\d{4}")


_PLAIN_LINE = re.compile(
    r"^(?P<when>\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)\s+"
    r"(?:macOS\s+)?(?P<version>\d+(?:\.\d+)*(?: \([a-z]\))?)\s*(?:#.*)?$"
)


_PLAIN_FORMAT = "'YYYY-MM-DD HH:MM[:SS] VERSION'"


@dataclass(frozen=True)
class OsInstall:
    """One macOS install: when (ISO local time, like the log's), which version, and where it was read."""

    time: str
    version: str
    name: str
    source: str

    def as_dict(self) -> dict[str, str]:
        return {"time": self.time, "version": self.version, "name": self.name, "source": self.source}


@dataclass
class OsHistory:
    """The macOS installs of one Mac in time order; the version in force at any moment follows from it."""

    installs: list[OsInstall]
    sources: list[str] = field(default_factory=list)
    from_system: bool = False  # read from this Mac's InstallHistory.plist because nothing was given

    def in_force(self, stamp: str | None) -> OsInstall | None:
        """The latest install at or before ``stamp``; None before the first one (or for an unknown time)."""
        if not stamp:
            return None
        position = bisect.bisect_right([install.time for install in self.installs], stamp)
        return self.installs[position - 1] if position else None

    def version_at(self, stamp: str | None) -> str | None:
        install = self.in_force(stamp)
        return install.version if install else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "sources": self.sources,
            "from_system": self.from_system,
            "installs": [install.as_dict() for install in self.installs],
        }


def _plist_installs(data: bytes, name: str, tz: tzinfo | None) -> list[OsInstall]:
    try:
        entries = plistlib.loads(data)
    except (plistlib.InvalidFileException, ValueError, OverflowError, ExpatError) as exc:
        raise LogscanError(f"{name}: not a readable property list ({exc})") from None
    if not isinstance(entries, list):
        raise LogscanError(f"{name}: a property list, but not an install history (expected an array of installs)")
    installs: list[OsInstall] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        display, version, date = entry.get("displayName"), entry.get("displayVersion"), entry.get("date")
        if not (isinstance(display, str) and display.startswith(MACOS_PREFIX)):
            continue  # Safari, XProtect, MRT and the other background updates
        if not isinstance(version, str) or not version.strip() or not isinstance(date, datetime):
            continue
        utc = date.replace(tzinfo=UTC) if date.tzinfo is None else date  # plist dates are UTC
        try:
            installs.append(OsInstall(wall_clock(utc, tz).isoformat(), version.strip(), display, name))
        except OverflowError:  # a date at the edge of the calendar cannot be a real install
            continue
    return installs


def _softwareupdate_installs(lines: list[str], name: str) -> list[OsInstall]:
    """The table ``softwareupdate --history`` prints; its dates are already the Mac's local time.

    Every row after the header must parse: a row skipped silently could be the install that matters.
    """
    start = next(number for number, line in enumerate(lines) if _SOFTWAREUPDATE_HEADER.match(line)) + 1
    rows = []
    for number, line in enumerate(lines[start:], start=start + 1):
        if not line.strip() or _SEPARATOR.match(line):
            continue
        match = _SOFTWAREUPDATE_ROW.match(line.rstrip())
        if match is None:
            raise LogscanError(f"{name}:{number}: softwareupdate row not understood: {line.strip()[:80]!r}")
        rows.append(match)
    # Month first as in the US locale, unless the file writes dates with dots or one can only be day first.
    leads = [lead for row in rows if (lead := _LEADING_DAY.match(row["date"]))]
    day_first = any(lead["sep"] == "." or int(lead["first"]) > 12 for lead in leads)
    installs: list[OsInstall] = []
    for row in rows:
        if not row["name"].startswith(MACOS_PREFIX):
            continue
        try:
            moment = date_parser.parse(row["date"], dayfirst=day_first)
        except (ValueError, OverflowError):
            raise LogscanError(f"{name}: softwareupdate date {row['date']!r} not understood") from None
        installs.append(OsInstall(moment.isoformat(), row["version"], row["name"].strip(), name))
    return installs


def _plain_installs(lines: list[str], name: str, tz: tzinfo | None) -> list[OsInstall]:
    """``DATETIME VERSION`` lines in local time (an explicit offset is converted); ``#`` starts a comment."""
    installs: list[OsInstall] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        match = _PLAIN_LINE.match(text)
        if match is None:
            if not installs:
                raise LogscanError(
                    f"{name}: not an InstallHistory.plist, softwareupdate --history output or "
                    f"{_PLAIN_FORMAT} lines (line {number}: {text[:60]!r})"
                )
            raise LogscanError(f"{name}:{number}: expected {_PLAIN_FORMAT}, got {text[:60]!r}")
        try:
            moment = datetime.fromisoformat(match["when"].replace(",", "."))
        except ValueError:
            raise LogscanError(f"{name}:{number}: {match['when']!r} is not a valid date and time") from None
        when = wall_clock(moment, tz).isoformat()
        installs.append(OsInstall(when, match["version"], f"{MACOS_PREFIX} {match['version']}", name))
    return installs


def parse_history(data: bytes, name: str, tz: tzinfo | None) -> list[OsInstall]:
    """The macOS installs in one history file, its format told by its content.

    Raises LogscanError when the content is none of the three formats or holds no macOS install.
    """
    if data.startswith(b"bplist"):
        installs = _plist_installs(data, name, tz)
    else:
        try:
            text = data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            raise LogscanError(
                f"{name}: binary data that is not a property list; expected an InstallHistory.plist, "
                f"softwareupdate --history output or {_PLAIN_FORMAT} lines"
            ) from None
        lines = text.splitlines()
        head = text.lstrip()
        if head.startswith(("<?xml", "<!DOCTYPE plist", "<plist")):
            installs = _plist_installs(data, name, tz)
        elif any(_SOFTWAREUPDATE_HEADER.match(line) for line in lines):
            installs = _softwareupdate_installs(lines, name)
        else:
            installs = _plain_installs(lines, name, tz)
    if not installs:
        raise LogscanError(f"{name}: no macOS install in it (only entries whose name starts with 'macOS' count)")
    return installs


def read_history(path: Path, tz: tzinfo | None) -> list[OsInstall]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LogscanError(f"{path}: cannot read the OS history ({exc.strerror or exc})") from None
    return parse_history(data, str(path), tz)


def load_history(
    files: list[Path],
    given: list[OsInstall],
    tz: tzinfo | None,
    *,
    use_system: bool,
) -> OsHistory | None:
    """All OS history the user gave (history files and single installs), merged; with none given
    and ``use_system``, this Mac's own. ``tz`` is the zone of the log's local times.

    None when there is nothing to read (not a Mac, or ``use_system`` is off).
    """
    installs = [install for path in files for install in read_history(path, tz)] + given
    sources = [str(path) for path in files] + list(dict.fromkeys(install.source for install in given))
    from_system = False
    if not files and not given:
        if not (use_system and sys.platform == "darwin" and SYSTEM_HISTORY.is_file()):
            return None
        installs, sources, from_system = read_history(SYSTEM_HISTORY, tz), [str(SYSTEM_HISTORY)], True
    unique = {(install.time, install.version): install for install in installs}
    return OsHistory(sorted(unique.values(), key=lambda install: install.time), sources, from_system)
