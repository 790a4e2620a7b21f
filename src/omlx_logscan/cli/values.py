"""Option values to what the core takes: times, zones, durations, seconds, event kinds, check rules,
the bounds grouping, overlay specs, ``--os`` installs and the file ``watch`` follows.

The core takes datetimes, tzinfo, seconds, names and paths; only here are the options read and
checked, so every message that names a flag is written in one place.
"""

from __future__ import annotations

import io
import math
import os
import re
import stat
import sys
from collections.abc import Iterable
from datetime import datetime, timedelta, tzinfo
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from omlx_logscan.analysis.rules import CHOOSABLE_RULES, RuleId, is_rule
from omlx_logscan.errors import LogscanError, did_you_mean
from omlx_logscan.parsing.catalog import BASE_PATH_VARIABLE, DEFAULT_BASE_PATH
from omlx_logscan.parsing.kinds import KINDS

if TYPE_CHECKING:
    from omlx_logscan.analysis.bounds import Grouping
    from omlx_logscan.analysis.severity import Severity
    from omlx_logscan.inputs.oshistory import OsInstall
    from omlx_logscan.inputs.overlays import OverlaySpec

# Months and years have no fixed length: "3 months ago" goes back by the calendar.
_CALENDAR_AGO = re.compile(r"^(?P<n>\d+)\s*(?P<unit>months?|mo|years?|y)(?:\s+ago)?$")


def zone(name: str | None) -> tzinfo | None:
    """The zone named by ``--tz`` (IANA, ``UTC`` or a fixed offset); None means this machine's zone."""
    if not name:
        return None
    from omlx_logscan.timeutil import named_zone

    found = named_zone(name)
    if found is None:
        raise LogscanError(f"--tz {name!r}: not a time zone (an IANA name such as Europe/Berlin, UTC, or +02:00)")
    return found


def now_in(tz: tzinfo | None) -> datetime:
    """Wall-clock time now, as the log would write it (naive local time in ``tz``)."""
    return datetime.now(tz).replace(tzinfo=None) if tz else datetime.now()


def parse_when(text: str, tz: tzinfo | None, option: str = "--since") -> datetime:
    """A time as naive local time in ``tz``, the way the log writes its times: first a duration ago
    (``3h``, ``-3h`` as journalctl reads it, ``2 days ago``, ``1h30m``, ``3 months``), then a word (``now``, ``today``,
    ``yesterday``), then any date dateutil reads (``2026-09-15 20:00``, ``15 Sep 2026``, ``1 Dec``,
    ISO with an offset). A bare number is refused: hours, days or a date, nobody can tell."""
    from dateutil import parser as date_parser  # only runs with --since/--until: keeps start-up short
    from dateutil.relativedelta import relativedelta

    raw = text.strip().lower()
    if raw.startswith("@"):
        return _epoch(text, tz, option)
    if _BARE_NUMBER.fullmatch(raw):
        raise LogscanError(
            f"{option} {text!r}: a bare number is ambiguous (give a unit, 3h or 2d, or a date, 2026-09-15)"
        )
    now = now_in(tz)
    if raw == "now":
        return now
    if raw in ("today", "yesterday"):
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return day - timedelta(days=1 if raw == "yesterday" else 0)
    sign = raw[0] if raw.startswith(("+", "-")) else ""  # journalctl's -1h is an hour ago
    span = raw.removeprefix(sign).strip()
    try:
        match = _CALENDAR_AGO.match(span)
        if match:
            amount = int(match["n"])
            months = amount if match["unit"].startswith("mo") else 12 * amount
            moved: datetime | None = now - relativedelta(months=months)
        else:
            span = span.removesuffix("ago")
            compact = re.sub(r"\s+", "", span)  # 3h, 90 minutes ago, 1h30m
            moved = now - timedelta(seconds=duration_seconds(span, option)) if _DURATION.fullmatch(compact) else None
    except (ValueError, OverflowError):
        raise LogscanError(f"{option} {text!r}: too far back") from None
    if moved is not None and sign == "+":
        ago = text.strip()[1:].strip()
        raise LogscanError(f"{option} {text!r}: a time in the future (for {ago} ago give -{ago} or {ago})")
    if moved is not None:
        return moved
    try:
        moment: datetime = date_parser.parse(text)
        if moment.tzinfo is not None:  # an explicit offset: convert to the log's local time
            moment = moment.astimezone(tz).replace(tzinfo=None)
    except (ValueError, OverflowError):
        hint = "try '3h', '2 days ago', '15 Sep 2026' or '2026-09-15 20:00'"
        raise LogscanError(f"{option} {text!r}: neither a duration nor a date ({hint})") from None
    return moment


def _epoch(text: str, tz: tzinfo | None, option: str) -> datetime:
    """``@SECONDS`` since 1970 (a fraction allowed), as ``date -d`` and journalctl read it."""
    seconds = text.strip()[1:]
    if not _EPOCH.fullmatch(seconds):
        raise LogscanError(f"{option} {text!r}: not seconds since 1970 (e.g. @1789488000 or @1789488000.5)")
    try:
        from omlx_logscan.timeutil import local_zone

        moment = datetime.fromtimestamp(float(seconds), tz or local_zone())
    except (ValueError, OverflowError, OSError):
        raise LogscanError(f"{option} {text!r}: out of range") from None
    return moment.replace(tzinfo=None)


_EPOCH = re.compile(r"\d+(?:\.\d+)?")
_BARE_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(weeks?|w|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)")
_DURATION = re.compile(f"(?:{_DURATION_PART.pattern})+")
_UNIT_SECONDS = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}


def duration_seconds(text: str, option: str) -> float:
    """A positive duration (``90s``, ``10m``, ``1.5h``, ``1h30m``, ``2 days``) in seconds."""
    compact = re.sub(r"\s+", "", text.lower())
    if not _DURATION.fullmatch(compact):
        raise LogscanError(f"{option} {text!r}: not a duration (try 90s, 10m, 2h or 1h30m)")
    total = sum(float(m.group(1)) * _UNIT_SECONDS[m.group(2)[0]] for m in _DURATION_PART.finditer(compact))
    if total <= 0:
        raise LogscanError(f"{option} {text!r}: must be longer than zero")
    return total


def wedge_after_seconds(text: str | None) -> float:
    """``--wedge-after``: how long no request may finish while requests arrive (default 10 min)."""
    from omlx_logscan.analysis.outage_model import WEDGE_AFTER_S

    return WEDGE_AFTER_S if text is None else duration_seconds(text, "--wedge-after")


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
        specs.append(OverlaySpec(name, path, f"--overlay {name}={path}"))
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


def comma_list(values: list[str] | None) -> list[str]:
    """A repeatable option's values, each of which may itself be a comma list (``-k a,b -k c``)."""
    return [name.strip() for value in values or () for name in value.split(",") if name.strip()]


def checked_kinds(kind: list[str] | None) -> frozenset[str]:
    """The ``--kind`` values (repeated or comma lists), refused unless each is an event kind."""
    wanted = frozenset(comma_list(kind))
    unknown = wanted - set(KINDS)
    if unknown:
        named = sorted(unknown)
        raise LogscanError(
            f"--kind {', '.join(named)}: unknown (kinds: {', '.join(KINDS)}){did_you_mean(named, KINDS)}"
        )
    return wanted


# journalctl's priority names and numbers (syslog's) and oMLX's level names, as the levels oMLX writes.
_PRIORITIES = {
    **dict.fromkeys(("0", "1", "2", "emerg", "alert", "crit", "critical", "fatal"), "CRITICAL"),
    **dict.fromkeys(("3", "err", "error"), "ERROR"),
    **dict.fromkeys(("4", "warning", "warn"), "WARNING"),
    **dict.fromkeys(("5", "6", "notice", "info"), "INFO"),
    **dict.fromkeys(("7", "debug"), "DEBUG"),
    "trace": "TRACE",
}


def priority_rank(text: str | None) -> int:
    """``-p/--priority LEVEL`` (case-blind) as the rank of the least level shown; 0 (every level) without one."""
    from omlx_logscan.parsing.grammar import LEVEL_RANK

    if text is None:
        return 0
    level = _PRIORITIES.get(text.strip().lower())
    if level is None:
        names = [name for name in _PRIORITIES if not name.isdigit()]
        raise LogscanError(
            f"--priority {text!r}: not a level (one of {', '.join(names)}, or 0-7){did_you_mean([text], names)}"
        )
    return LEVEL_RANK[level]


def checked_seconds(option: str, value: float, least: float, most: float = math.inf) -> float:
    """A number of seconds in [least, most]; inf and nan would never time out (or overflow a sleep)."""
    if math.isfinite(value) and least <= value <= most:
        return value
    wanted = (
        f"a number of seconds from {least:g} to {most:g}"
        if math.isfinite(most)
        else f"a finite number of seconds, at least {least:g}"
    )
    raise LogscanError(f"{option} {value:g}: must be {wanted}")


def parse_fail_on(text: str) -> tuple[RuleId, ...]:
    """``--fail-on penalty_box,crash``: the rule names, in order, without repeats; unknown names are an error."""

    names = comma_list([text])
    chosen = [name for name in names if is_rule(name) and name in CHOOSABLE_RULES]
    unknown = [name for name in names if name not in chosen]
    if unknown:
        rules = ", ".join(CHOOSABLE_RULES)
        raise LogscanError(
            f"--fail-on {', '.join(unknown)}: unknown rule (rules: {rules}){did_you_mean(unknown, CHOOSABLE_RULES)}"
        )
    return tuple(dict.fromkeys(chosen))


def parse_fail_level(text: str) -> Severity:
    """``--fail-level error``: one of the severities, worst first; anything else is an error."""
    from omlx_logscan.analysis.severity import SEVERITIES

    for severity in SEVERITIES:
        if text == severity:
            return severity
    raise LogscanError(f"--fail-level {text}: unknown severity (severities: {', '.join(SEVERITIES)})")


def parse_grouping(by: str) -> Grouping:
    """``bounds --by``: one row per macOS version, per oMLX version, or per pair."""
    from omlx_logscan.analysis.bounds import Grouping  # the bounds load only when bounds runs

    if by not in Grouping.__members__:
        raise LogscanError(f"--by {by!r}: expected os, omlx or both{did_you_mean([by], Grouping.__members__)}")
    return Grouping(by)


def output_path(text: str | None) -> Path | None:
    """``-o FILE`` as a path; ``-o -`` (like no ``-o``) is stdout, None."""
    return None if text is None or text == "-" else Path(text).expanduser()


# What an ``-o`` file's extension says about the format it wants (the enum value names).
_SUFFIX_FORMATS = {
    ".json": "json",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".csv": "csv",
    ".parquet": "parquet",
    ".md": "markdown",
    ".markdown": "markdown",
    ".xml": "junit",
    ".sarif": "sarif",
}

FormatT = TypeVar("FormatT", bound=StrEnum)


def output_format(given: FormatT | None, output: Path | None, fallback: FormatT) -> FormatT:
    """``-f`` when given, else the format the ``-o`` file's extension names, else ``fallback``; an
    extension naming a format this command does not write is refused rather than ignored."""
    if given is not None:
        return given
    name = _SUFFIX_FORMATS.get(output.suffix.lower()) if output is not None else None
    if output is None or name is None:
        return fallback
    formats = type(fallback)
    if name not in formats.__members__:
        choices = ", ".join(formats.__members__)
        raise LogscanError(
            f"-o {output}: {output.suffix} is {name}, which this command does not write ({choices}): give -f"
        )
    return formats(name)


def stdin_has_input() -> bool:
    """Whether stdin brings a log: a pipe, a socket or a regular file does; a terminal, /dev/null or a
    closed stdin does not (then the default folder is read, as journalctl and rg do)."""
    stream = sys.stdin
    if stream is None:
        return False
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return True  # an in-memory stdin, as a test runner or a library caller gives
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


def base_folder(base_path: str | None) -> Path:
    """oMLX's base folder: ``--base-path``, else ``$OMLX_BASE_PATH``, else ``~/.omlx``."""
    return Path(base_path or os.environ.get(BASE_PATH_VARIABLE) or DEFAULT_BASE_PATH).expanduser()


def input_paths(paths: list[str], base_path: str | None) -> list[str]:
    """What a batch command reads: its PATHs; without any, stdin when it brings input, else oMLX's
    ``<base>/logs/`` folder."""
    if paths and base_path is not None:
        raise LogscanError("give a PATH or --base-path, not both")
    if paths:
        return paths
    if base_path is None and stdin_has_input():
        return ["-"]
    folder = base_folder(base_path) / "logs"
    if not folder.is_dir():
        raise LogscanError(
            f"{folder}: no such folder (no PATH given and no input on stdin): give a log file or - for stdin"
        )
    return [str(folder)]


def log_path(path: str | None, base_path: str | None) -> Path:
    """The file ``watch`` follows: PATH (a folder means its server.log), else oMLX's
    ``<base>/logs/server.log`` with the base from ``--base-path``, ``$OMLX_BASE_PATH`` or ``~/.omlx``.
    A file that is there already and is binary is refused now rather than followed."""
    from omlx_logscan.inputs.decoding import file_head, refuse_binary

    if path is not None and base_path is not None:
        raise LogscanError("give a PATH or --base-path, not both")
    if path == "-":
        raise LogscanError("watch follows a file and cannot follow stdin: give the log's path")
    if path is not None:
        target = Path(path).expanduser()
        target = target / "server.log" if target.is_dir() else target
    else:
        target = base_folder(base_path) / "logs" / "server.log"
    if target.is_file():
        try:
            head = file_head(target)
        except OSError as exc:  # a log it may not read is refused now, not once something was written
            raise LogscanError(f"{target}: cannot read ({exc.strerror or exc})") from None
        refuse_binary(str(target), head)
    return target


def same_file(one: Path, other: os.stat_result | Path) -> bool:
    """Whether ``one`` is ``other`` (a path, or the status of an open file such as stdin): the same
    resolved path, or the same inode however it is reached (a hard link, a bind mount)."""
    if isinstance(other, Path) and one.resolve() == other.resolve():
        return True
    try:
        mine = one.stat()
        theirs = other.stat() if isinstance(other, Path) else other
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)


def stdin_status() -> os.stat_result | None:
    """The status of stdin when it is a regular file, for telling ``< log -o log`` (a terminal that is
    both stdin and ``-o /dev/stdout`` is no log to destroy)."""
    try:
        status = os.fstat(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return None
    return status if stat.S_ISREG(status.st_mode) else None


# Something a command reads, named as the refusal of an ``-o`` that is it names it, and the file
# (or, for stdin, the status of the open file).
ReadInput = tuple[str, os.stat_result | Path]


def check_output(output: Path, inputs: Iterable[ReadInput]) -> None:
    """Refuse, before anything is read, an ``-o`` that is something the command reads (writing it
    would destroy it) or that cannot be written: its folder is missing or read-only, or it is a folder."""
    for what, source in inputs:
        if same_file(output, source):
            raise LogscanError(f"-o {output}: is {what}; writing it would destroy it (choose another file)")
    if output.is_dir():
        raise LogscanError(f"-o {output}: is a folder")
    if output.exists() and not output.is_file():  # a device or a pipe: written to itself, not beside it
        writable = os.access(output, os.W_OK)
    else:
        folder = output.parent
        if not folder.is_dir():
            raise LogscanError(f"-o {output}: cannot write (no folder {folder})")
        writable = os.access(folder, os.W_OK | os.X_OK) and (not output.exists() or os.access(output, os.W_OK))
    if not writable:
        raise LogscanError(f"-o {output}: cannot write (permission denied)")
