"""The options the commands share, each declared once, and the typed values they become.

A command that reads logs is declared with ``logs_command``: its own parameters are only the
options it alone takes, the shared ones are added to its signature here, and it is called with
one ``CommonOptions`` holding their typed values, which it hands to the core as one object.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from omlx_logscan.cli.app import guarded
from omlx_logscan.cli.hostopts import HOST_OPTIONS, REDACT_OPTION, host_labels
from omlx_logscan.inputs.hosts import HostLabels
from omlx_logscan.output.formats import CheckFormat, EventFormat, ListFormat, ReportFormat, WatchFormat
from omlx_logscan.parsing.kinds import KINDS

if TYPE_CHECKING:
    from omlx_logscan.inputs.oshistory import OsInstall
    from omlx_logscan.inputs.overlays import OverlaySpec


@dataclass(frozen=True, kw_only=True)
class CommonOptions:
    """What the shared options say, as typed values; the investigation extras are empty where a
    command does not take them."""

    paths: list[str]
    since: datetime | None  # naive local time, like the log's
    until: datetime | None
    tz: tzinfo | None  # None: this machine's zone
    output: Path | None
    quiet: bool
    strict: bool
    debug: bool
    os_history: list[Path]
    os_installs: list[OsInstall]
    overlay: list[OverlaySpec]
    overlay_gap: float  # seconds
    hosts: HostLabels = field(default_factory=HostLabels)  # which machine each input came from
    redact: bool = False  # mask host names and personal data in every output

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> CommonOptions:
        """From the shared options' values as typer converted them; a bad value fails here, before
        any log is read."""
        from omlx_logscan.cli.values import overlay_specs, parse_gap, parse_os_flag, time_window, zone

        tz = zone(params.get("tz"))
        since, until = time_window(params.get("since"), params.get("until"), tz)
        return cls(
            paths=params["paths"],
            since=since,
            until=until,
            tz=tz,
            output=params.get("output"),
            quiet=params.get("quiet", False),
            strict=params.get("strict", False),
            debug=params.get("debug", False),
            os_history=params.get("os_history") or [],
            os_installs=[parse_os_flag(text, tz) for text in params.get("os_installs") or []],
            overlay=overlay_specs(params.get("overlay") or []),
            overlay_gap=parse_gap(params.get("overlay_gap")),
            hosts=host_labels(dict(params)),
            redact=params.get("redact", False),
        )

    @property
    def has_os_history(self) -> bool:
        return bool(self.os_history or self.os_installs)


# One declaration per flag; only its help varies, where the values differ (--format) or the flag
# means something else (watch's --quiet and --kind).


def _format_option(formats: type[StrEnum], notes: Mapping[str, str]) -> Any:
    """``--format``, its help listing every value of ``formats`` in order, with its note if it has one."""
    words = [f"{value} ({notes[value]})" if value in notes else str(value) for value in formats]
    return typer.Option("--format", "-f", help=f"{', '.join(words[:-1])} or {words[-1]}.")


def _kind_option(help_text: str) -> Any:
    return typer.Option("--kind", "-k", metavar="KIND", help=help_text)


def _quiet_option(help_text: str) -> Any:
    return typer.Option("--quiet", "-q", help=help_text)


Paths = Annotated[
    list[str], typer.Argument(metavar="PATH", help="Log files, folders of logs, or - for stdin.", show_default=False)
]


Since = Annotated[
    str | None,
    typer.Option(
        metavar="WHEN", help="Only records at or after this time: '2026-09-15 20:00', '2 days ago', '3h', 'yesterday'."
    ),
]


Until = Annotated[
    str | None, typer.Option(metavar="WHEN", help="Only records at or before this time (same forms as --since).")
]


Tz = Annotated[
    str | None,
    typer.Option(
        "--tz",
        metavar="ZONE",
        help="Zone of the log's local times: an IANA name, UTC or +02:00 (default: this machine's).",
    ),
]


Output = Annotated[
    Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to this file instead of stdout.")
]


Quiet = Annotated[bool, _quiet_option("No line accounting or progress on stderr.")]


WatchQuiet = Annotated[bool, _quiet_option("No notes about the file (following, rotated) on stderr.")]


Kinds = Annotated[list[str] | None, _kind_option("Only these event kinds (repeatable): " + ", ".join(KINDS) + ".")]


WatchKinds = Annotated[list[str] | None, _kind_option("Only print these event kinds.")]


_TERMINAL_DEFAULTS = {"table": "default on a terminal", "ndjson": "default otherwise"}


EventFormatOption = Annotated[
    EventFormat | None,
    _format_option(
        EventFormat,
        {
            **_TERMINAL_DEFAULTS,
            "json": "one document with the line accounting, schema omlx-logscan/events/2",
            "parquet": "needs -o",
        },
    ),
]


ListFormatOption = Annotated[ListFormat, _format_option(ListFormat, {})]


ReportFormatOption = Annotated[ReportFormat, _format_option(ReportFormat, {})]


CheckFormatOption = Annotated[
    CheckFormat,
    _format_option(
        CheckFormat, {"json": "schema omlx-logscan/check/2", "github": "workflow annotations + step summary"}
    ),
]


WatchFormatOption = Annotated[WatchFormat | None, _format_option(WatchFormat, _TERMINAL_DEFAULTS)]


Strict = Annotated[bool, typer.Option(help="Fail (exit 2) when any line could not be parsed.")]


Debug = Annotated[bool, typer.Option(help="Show Python tracebacks for internal errors.")]


Overlays = Annotated[
    list[str] | None,
    typer.Option(
        "--overlay",
        metavar="NAME=FILE",
        help="Other activity to test the faults against: a CSV of start,end local times, or another log whose "
        "timestamped lines mark activity (repeatable).",
        show_default=False,
    ),
]


OverlayGap = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="Silence that splits an overlay log into separate runs: 90s, 5m, 1h (default 5m).",
        show_default=False,
    ),
]


OsHistoryFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--os-history",
        metavar="FILE",
        help="When each macOS version was installed: InstallHistory.plist, 'softwareupdate --history' output, or "
        "'YYYY-MM-DD HH:MM:SS VERSION' lines (repeatable). Default on macOS: /Library/Receipts/InstallHistory.plist.",
        show_default=False,
    ),
]


OsInstalls = Annotated[
    list[str] | None,
    typer.Option(
        "--os",
        metavar="VERSION@DATETIME",
        help="A macOS version and its install time in the log's local time, e.g. 27.0@'2026-09-15 17:41' (repeatable).",
        show_default=False,
    ),
]


# The options every log-reading command takes, with their defaults, and the two groups that only
# the commands about versions and about other activity take; each becomes a keyword parameter.
_SHARED: tuple[tuple[str, Any, Any], ...] = (
    ("since", Since, None),
    ("until", Until, None),
    ("tz", Tz, None),
    ("output", Output, None),
    ("quiet", Quiet, False),
    ("strict", Strict, False),
    ("debug", Debug, False),
    *HOST_OPTIONS,
)
_HISTORY: tuple[tuple[str, Any, Any], ...] = (("os_history", OsHistoryFiles, None), ("os_installs", OsInstalls, None))
_OVERLAYS: tuple[tuple[str, Any, Any], ...] = (("overlay", Overlays, None), ("overlay_gap", OverlayGap, None))


def logs_command(
    *, history: bool = False, overlays: bool = False, redact: bool = True
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Declare a command that reads logs: ``PATH...``, then its own options, then the shared ones
    (with ``history`` the OS-history options, with ``overlays`` the overlay options). The command's
    first parameter is ``options: CommonOptions``; its other parameters are its own options. It is
    registered on the app, in ``COMMANDS`` order, by ``cli/__init__.py``."""
    shared = (
        *_SHARED,
        *(REDACT_OPTION if redact else ()),  # report has its own --redact/--no-redact
        *(_HISTORY if history else ()),
        *(_OVERLAYS if overlays else ()),
    )
    keyword = inspect.Parameter.KEYWORD_ONLY

    def register(command: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())[1:]

        @functools.wraps(command)
        def run(**values: Any) -> None:
            common = {name: values.pop(name) for name in ("paths", *(name for name, _, _ in shared))}
            command(CommonOptions.from_params(common), **values)

        run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # what typer reads the options from
            [
                inspect.Parameter("paths", keyword, annotation=Paths),
                *(parameter.replace(kind=keyword) for parameter in own),
                *(inspect.Parameter(name, keyword, annotation=kind, default=default) for name, kind, default in shared),
            ]
        )
        return guarded(run)

    return register
