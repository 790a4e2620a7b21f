"""The options that say which machine each input came from, shared by every command that reads logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from omlx_logscan.errors import LogscanError
from omlx_logscan.inputs.hosts import HostFrom, HostLabels

HostName = Annotated[
    str | None,
    typer.Option("--host", metavar="NAME", help="The machine the inputs came from; labels every row."),
]


HostFromOption = Annotated[
    HostFrom | None,
    typer.Option(
        "--host-from",
        help="Take each file's host from the folder that holds it (fleet/mac-07/server.log is mac-07).",
        show_default=False,
    ),
]


HostsFile = Annotated[
    Path | None,
    typer.Option(
        "--hosts",
        metavar="FILE",
        help="A TOML file of [[host]] tables (name, paths or globs, tz, chip, os-history) saying which input is "
        "which machine's.",
        show_default=False,
    ),
]


Redact = Annotated[
    bool,
    typer.Option(
        "--redact",
        help="Mask the host name (a pseudonym keyed by --redact-key) and home folders, user and host names, "
        "addresses, keys, tokens, and prompt, reasoning and tool-call text in log text, in every output.",
    ),
]


RedactKey = Annotated[
    Path | None,
    typer.Option(
        "--redact-key",
        metavar="FILE",
        help="With --redact: the secret that keys the host pseudonyms, to share across the Macs of a fleet (made, "
        "mode 0600, if FILE does not exist). Default: redact.key in ~/.config/logscan, made on first use.",
        show_default=False,
    ),
]


REDACT_OPTION: tuple[tuple[str, Any, Any], ...] = (("redact", Redact, False), ("redact_key", RedactKey, None))


HOST_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("host", HostName, None),
    ("host_from", HostFromOption, None),
    ("hosts_file", HostsFile, None),
)


def host_labels(params: dict[str, Any]) -> HostLabels:
    """The host options' values as one ``HostLabels``; a ``--host`` that names no host is refused, not
    read as this machine's name."""
    name = params.get("host")
    if name is not None and not name.strip():
        raise LogscanError(f"--host {name!r}: names no host (give the machine's name)")
    return HostLabels(name=name.strip() if name else None, from_=params.get("host_from"), file=params.get("hosts_file"))
