"""Which machine each input came from: ``--host``, ``--host-from folder`` or a ``--hosts`` file.

A host is one Mac: its own zone, chip and macOS history, and its own server. Inputs of different
hosts are never read as one stream, so lifetimes, faults, dead windows and duplicate records stay
within their host; inputs with no label are one host (a file log and its capture still pair up).

The ``--hosts`` file is TOML, one ``[[host]]`` table per Mac::

    [[host]]
    name = "mac-07"
    paths = ["fleet/mac-07/*", "captures/mac-07.log"]   # files, folders or globs
    tz = "Europe/Berlin"
    chip = "M3 Max"
    os-history = "fleet/mac-07/InstallHistory.plist"     # one file or a list
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from datetime import tzinfo
from enum import StrEnum
from pathlib import Path
from typing import Any

from omlx_logscan.errors import InputError
from omlx_logscan.inputs.sources import Source, path_name, resolve
from omlx_logscan.timeutil import named_zone


class HostFrom(StrEnum):
    """Where ``--host-from`` takes each file's host name from."""

    folder = "folder"


@dataclass
class Host:
    """One machine's inputs and what is known of it; ``name`` None is the one unlabelled host."""

    name: str | None
    sources: list[Source] = field(default_factory=list)
    zone: tzinfo | None = None  # None: the --tz zone, else this machine's
    chip: str | None = None
    os_history: list[Path] = field(default_factory=list)


@dataclass(frozen=True)
class HostLabels:
    """What the host options say: one name for all, a rule, or a file of hosts."""

    name: str | None = None
    from_: HostFrom | None = None
    file: Path | None = None


def this_host() -> str:
    """This machine's short host name (``watch`` and the default log path are this machine's)."""
    import socket

    return socket.gethostname().split(".")[0] or "localhost"


def plan_hosts(paths: list[str], labels: HostLabels, zone: tzinfo | None) -> list[Host]:
    """The inputs grouped by host, in the order their first input was given."""
    chosen = [
        option
        for option, given in (("--host", labels.name), ("--host-from", labels.from_), ("--hosts", labels.file))
        if given
    ]
    if len(chosen) > 1:
        raise InputError(f"{' and '.join(chosen)}: give one way of naming hosts")
    sources = resolve(paths)
    if labels.file is not None:
        return _from_file(sources, labels.file, zone)
    if labels.from_ is HostFrom.folder:
        return _from_folders(sources, zone)
    return [Host(labels.name, sources, zone)]


def _from_folders(sources: list[Source], zone: tzinfo | None) -> list[Host]:
    hosts: dict[str, Host] = {}
    for source in sources:
        if source.path is None:
            raise InputError("--host-from folder: stdin has no folder; give --host NAME for it")
        folder = path_name(source.path.resolve().parent.name)
        hosts.setdefault(folder, Host(folder, zone=zone)).sources.append(source)
    return list(hosts.values())


def _from_file(sources: list[Source], path: Path, zone: tzinfo | None) -> list[Host]:
    """Each source to the first host of the file whose paths or globs name it (or a folder holding it)."""
    declared = read_hosts_file(path, zone)
    for source in sources:
        owner = next((host for host, patterns in declared if _claims(patterns, source)), None)
        if owner is None and source.skipped:  # not read (another file of the folder): no host needs it
            continue
        if owner is None:
            raise InputError(f"{source.name}: no host of {path} lists it (add it to a host's paths)")
        owner.sources.append(source)
    return [host for host, _ in declared if host.sources]


def _claims(patterns: list[str], source: Source) -> bool:
    """Whether a host's patterns name ``source``: a glob matching it, the file itself, or a folder holding it."""
    if source.path is None:
        return "-" in patterns
    name = source.path.expanduser().absolute()
    for pattern in patterns:
        target = Path(pattern).expanduser().absolute()
        if is_glob(pattern):
            if fnmatch.fnmatch(str(name), str(target)):
                return True
        elif target == name or target in name.parents:
            return True
    return False


def is_glob(pattern: str) -> bool:
    """Whether a path has glob characters (it names the files it matches)."""
    return any(char in pattern for char in "*?[")


def read_hosts_file(path: Path, zone: tzinfo | None) -> list[tuple[Host, list[str]]]:
    """The hosts a ``--hosts`` TOML file declares, each with its path patterns."""
    import tomllib  # here, not at import: only --hosts needs it

    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the hosts file ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a TOML hosts file ({exc})") from None
    tables = document.get("host")
    if not isinstance(tables, list) or not tables:
        raise InputError(f"{path}: no [[host]] tables")
    return [_host_of(table, number, path, zone) for number, table in enumerate(tables, 1)]


def _host_of(table: Any, number: int, path: Path, zone: tzinfo | None) -> tuple[Host, list[str]]:
    where = f"{path}: host {number}"
    if not isinstance(table, dict):
        raise InputError(f"{where}: not a table")
    name = table.get("name", table.get("host"))
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{where}: needs a name")
    patterns = _strings(table.get("paths", []), f"{where} ({name}): paths")
    if not patterns:
        raise InputError(f"{where} ({name}): needs paths")
    own_zone = zone
    if "tz" in table:
        own_zone = named_zone(str(table["tz"]))
        if own_zone is None:
            raise InputError(f"{where} ({name}): tz {table['tz']!r} is not a time zone")
    base = path.parent
    history = [base / item for item in _strings(table.get("os-history", []), f"{where} ({name}): os-history")]
    chip = table.get("chip")
    host = Host(name.strip(), zone=own_zone, chip=str(chip) if chip is not None else None, os_history=history)
    return host, [item if Path(item).is_absolute() or item == "-" else str(base / item) for item in patterns]


def _strings(value: Any, what: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise InputError(f"{what}: give a string or a list of strings")
    return list(items)
