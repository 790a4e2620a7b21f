"""The options the commands share, each declared once, and the typed values they become.

A command that reads logs is declared with ``logs_command``: its own parameters are only the
options it alone takes, the shared ones are added to its signature here, and it is called with
one ``CommonOptions`` holding their typed values, which it hands to the core as one object.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from omlx_logscan.cli.app import guarded
from omlx_logscan.cli.hostopts import HOST_OPTIONS, REDACT_OPTION, host_labels
from omlx_logscan.cli.pager import paged
from omlx_logscan.inputs.hosts import HostLabels
from omlx_logscan.output.formats import CheckFormat, EventFormat, ListFormat, ReportFormat, WatchFormat
from omlx_logscan.parsing.catalog import BASE_PATH_VARIABLE, DEFAULT_BASE_PATH
from omlx_logscan.parsing.kinds import KINDS

if TYPE_CHECKING:
    from omlx_logscan.inputs.oshistory import OsInstall
    from omlx_logscan.inputs.overlays import OverlaySpec


@dataclass(frozen=True, kw_only=True)
class CommonOptions:
    """What the shared options say, as typed values; the investigation extras are empty where a
    command does not take them."""

    paths: list[str]  # the PATH arguments as given (none: stdin or the default folder, see cli.values)
    base_path: str | None  # --base-path: where the default folder is
    since: datetime | None  # naive local time, like the log's
    until: datetime | None
    tz: tzinfo | None  # None: this machine's zone
    output: Path | None  # None: stdout (no -o, or -o -)
    quiet: bool
    strict: bool
    force: bool
    color: Color
    debug: bool
    os_history: list[Path]
    os_installs: list[OsInstall]
    overlay: list[OverlaySpec]
    overlay_gap: float  # seconds
    hosts: HostLabels = field(default_factory=HostLabels)  # which machine each input came from
    redact: bool = False  # mask host names and personal data in every output
    redact_key: Path | None = None  # the key file of the host pseudonyms (None: the user's own)
    pager: bool = True  # --no-pager: off; only ever on a terminal (cli/pager.py)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> CommonOptions:
        """From the shared options' values as typer converted them; a bad value fails here, before
        any log is read."""
        from omlx_logscan.cli.values import output_path, overlay_specs, parse_gap, parse_os_flag, time_window, zone

        tz = zone(params.get("tz"))
        since, until = time_window(params.get("since"), params.get("until"), tz)
        return cls(
            paths=params.get("paths") or [],
            base_path=params.get("base_path"),
            since=since,
            until=until,
            tz=tz,
            output=output_path(params.get("output")),
            quiet=params.get("quiet", False),
            strict=params.get("strict", False),
            force=params.get("force", False),
            color=params.get("color") or Color.auto,
            debug=params.get("debug", False),
            os_history=params.get("os_history") or [],
            os_installs=[parse_os_flag(text, tz) for text in params.get("os_installs") or []],
            overlay=overlay_specs(params.get("overlay") or []),
            overlay_gap=parse_gap(params.get("overlay_gap")),
            hosts=host_labels(dict(params)),
            redact=params.get("redact", False),
            redact_key=params.get("redact_key"),
            pager=not params.get("no_pager", False),
        )

    @property
    def has_os_history(self) -> bool:
        return bool(self.os_history or self.os_installs)


class Color(StrEnum):
    """``--color``: colour on a terminal only, always, or never (``NO_COLOR``/``FORCE_COLOR`` as set)."""

    auto = "auto"
    always = "always"
    never = "never"


# One declaration per flag; only its help varies, where the values differ (--format) or the flag
# means something else (watch's --quiet and --kind).


def _format_option(formats: type[StrEnum], notes: Mapping[str, str], default: str = "") -> Any:
    """``--format``, its help listing every value of ``formats`` in order, with its note if it has one,
    and the default: the one the ``-o`` file's extension names, else ``default``."""
    words = [f"{value} ({notes[value]})" if value in notes else str(value) for value in formats]
    fallback = f"Default: the one -o's extension names, else {default}." if default else ""
    return typer.Option("--format", "-f", help=f"{', '.join(words[:-1])} or {words[-1]}. {fallback}".strip())


def completing(names: Sequence[str]) -> Callable[[str], list[str]]:
    """Shell completion of a comma list of ``names``: the names the last item typed so far begins."""

    def complete(incomplete: str) -> list[str]:
        done, comma, last = incomplete.rpartition(",")
        return [done + comma + name for name in names if name.startswith(last)]

    return complete


def _kind_option(help_text: str) -> Any:
    return typer.Option("--kind", "-k", metavar="KIND", help=help_text, autocompletion=completing(KINDS))


def _quiet_option(help_text: str) -> Any:
    return typer.Option("--quiet", "-q", help=help_text)


Paths = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[PATH]...",
        help="Log files, folders of logs, or - for stdin. Without PATH: stdin when it is a pipe or a file, "
        f"else <base>/logs/ (base: --base-path, ${BASE_PATH_VARIABLE}, else {DEFAULT_BASE_PATH}).",
        show_default=False,
    ),
]


FollowedPath = Annotated[
    str | None,
    typer.Argument(
        metavar="[PATH]",
        help="The log to follow (a folder means its server.log). Default: <base>/logs/server.log.",
        show_default=False,
    ),
]


BasePath = Annotated[
    str | None,
    typer.Option(
        metavar="DIR",
        help=f"oMLX's base folder, as given to oMLX (default: ${BASE_PATH_VARIABLE}, else {DEFAULT_BASE_PATH}).",
        show_default=False,
    ),
]


Since = Annotated[
    str | None,
    typer.Option(
        "--since",
        "-S",
        metavar="WHEN",
        help="Only records at or after this time: a duration ago ('3h' or '-3h', '2 days ago', '1h30m'), or a date "
        "('2026-09-15 20:00', '15 Sep 2026', '1 Dec', 'yesterday'), or @SECONDS since 1970 ('@1789488000'). A bare "
        "number is refused as ambiguous.",
    ),
]


Until = Annotated[
    str | None,
    typer.Option("--until", "-U", metavar="WHEN", help="Only records at or before this time (same forms as --since)."),
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
    str | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write to FILE (- for stdout), replaced whole only once complete; its extension (.json, .ndjson, "
        ".jsonl, .csv, .parquet, .md, .xml, .sarif) picks the format when -f is not given.",
    ),
]


WatchOutput = Annotated[
    str | None,
    typer.Option("--output", "-o", metavar="FILE", help="Append what the watch prints to FILE (- for stdout)."),
]


Force = Annotated[bool, typer.Option(help="Read input that does not look like an oMLX log instead of refusing it.")]


ColorOption = Annotated[
    Color,
    typer.Option(
        "--color", help="Colour on a terminal (auto), always or never; NO_COLOR and FORCE_COLOR are honoured by auto."
    ),
]


NoPager = Annotated[
    bool,
    typer.Option(
        "--no-pager",
        help="Never page. On a terminal, output taller than the screen goes through $LOGSCAN_PAGER, else $PAGER, "
        "else less -FRX (one set but empty: no pager).",
    ),
]


Quiet = Annotated[bool, _quiet_option("No line accounting or progress on stderr.")]


WatchQuiet = Annotated[bool, _quiet_option("No notes about the file (following, rotated) on stderr.")]


Kinds = Annotated[
    list[str] | None,
    _kind_option("Only these event kinds (a comma list, or repeated): " + ", ".join(KINDS) + "."),
]


Priority = Annotated[
    str | None,
    typer.Option(
        "--priority",
        "-p",
        metavar="LEVEL",
        help="Only events at LEVEL or worse, as journalctl -p: emerg, alert, crit (CRITICAL), err, warning, notice, "
        "info, debug, or 0-7; any case. An event whose record states no level is kept (its level is unknown).",
        show_default=False,
    ),
]


WatchKinds = Annotated[list[str] | None, _kind_option("Only print these event kinds (a comma list, or repeated).")]


EventFormatOption = Annotated[
    EventFormat | None,
    _format_option(
        EventFormat,
        {
            "json": "one document with the line accounting, schema omlx-logscan/events/2",
            "parquet": "needs -o",
        },
        "table on a terminal, ndjson otherwise",
    ),
]


ListFormatOption = Annotated[ListFormat | None, _format_option(ListFormat, {}, "text")]


ReportFormatOption = Annotated[ReportFormat | None, _format_option(ReportFormat, {}, "text")]


CheckFormatOption = Annotated[
    CheckFormat | None,
    _format_option(
        CheckFormat,
        {"json": "schema omlx-logscan/check/2", "github": "workflow annotations + step summary"},
        "text",
    ),
]


WatchFormatOption = Annotated[
    WatchFormat | None, _format_option(WatchFormat, {}, "table on a terminal, ndjson otherwise")
]


# -- the outage options (issue 20): each command that shows or checks outages takes them as its own --


WedgeAfter = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="A wedge: no request finished, aborted or failed for this long while requests kept arriving (default "
        "10m). Arrivals are logged only at DEBUG level; at INFO a silence after steady traffic is a possible wedge.",
        show_default=False,
    ),
]


# -- the generation probe of watch (issue 31): command-line only, as it sends requests elsewhere --


def _valued(metavar: str, text: str) -> Any:
    """An option that takes a value and has no default to show (the help says what none means)."""
    return typer.Option(metavar=metavar, help=text, show_default=False)


Probe = Annotated[
    str | None,
    _valued(
        "URL",
        "Send a generation probe (one token) to the oMLX server at URL when the log cannot tell whether the "
        "engine generates; 'auto': the host and port of oMLX's settings.json in the base folder (--base-path, "
        "which may go with a PATH here). The API key: --probe-key-file, else $OMLX_API_KEY, else the settings' "
        "(never printed).",
    ),
]
ProbeKeyFile = Annotated[
    Path | None,
    _valued("FILE", "Read the probe's API key from FILE (its first line), e.g. a secret only you may read."),
]
ProbeModel = Annotated[
    str | None,
    _valued(
        "MODEL",
        "The model a probe asks (default: the one the log's last start named, else the first /v1/models lists).",
    ),
]
ProbeTimeout = Annotated[
    str | None,
    _valued("DURATION", "How long a probe waits for its token before the engine counts as hung (default 120s)."),
]
Probes = Annotated[
    Path | None,
    _valued(
        "FILE",
        "Show the generation probes of watch's NDJSON (watch --probe -o FILE) on the timeline: a possible wedge "
        "confirmed or cleared, a dead window proven. Watch's NDJSON given as an input is read so too.",
    ),
]
ProbeEvery = Annotated[
    str | None, _valued("DURATION", "Also probe this often while no request finishes (a heartbeat; default: off).")
]


MaxOutage = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="Also fail on outages of every kind (penalty box, wedge, fatal exit, crash, reboot, retry loop) that "
        "the log proves longer than this; one still going when the log ends always fails.",
        show_default=False,
    ),
]


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


# The options every log-reading command takes, in the order --help lists them, with their defaults;
# each becomes a keyword parameter. The window, --strict and the host labels belong to finished logs
# read by a batch command: not watch's, which follows this machine's own log.
# A new shared option is one row here and one field of CommonOptions.
_SHARED: tuple[tuple[str, Any, Any, bool], ...] = (  # name, annotation, default, batch commands only
    ("since", Since, None, True),
    ("until", Until, None, True),
    ("tz", Tz, None, False),
    ("base_path", BasePath, None, False),
    ("output", Output, None, False),
    ("quiet", Quiet, False, False),
    ("strict", Strict, False, True),
    ("force", Force, False, False),
    ("color", ColorOption, Color.auto, False),
    ("no_pager", NoPager, False, True),
    ("debug", Debug, False, False),
    *((name, kind, default, True) for name, kind, default in HOST_OPTIONS),
)
_HISTORY: tuple[tuple[str, Any, Any], ...] = (("os_history", OsHistoryFiles, None), ("os_installs", OsInstalls, None))
_OVERLAYS: tuple[tuple[str, Any, Any], ...] = (("overlay", Overlays, None), ("overlay_gap", OverlayGap, None))
# What the same option says in watch, which follows one file and appends to its -o.
_FOLLOW_OWN = {"output": WatchOutput, "quiet": WatchQuiet}


def logs_command(
    *, history: bool = False, overlays: bool = False, follow: bool = False, redact: bool = True
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Declare a command that reads logs: ``[PATH]...`` (with ``follow`` one ``[PATH]``), then its
    own options, then the shared ones (with ``history`` the OS-history options, with ``overlays``
    the overlay options; without ``follow`` the time window and --strict). The command's first
    parameter is ``options: CommonOptions``; its other parameters are its own options. It is
    registered on the app, in ``COMMANDS`` order, by ``cli/__init__.py``."""
    own_kinds = _FOLLOW_OWN if follow else {}
    shared = (
        *(
            (name, own_kinds.get(name, kind), default)
            for name, kind, default, batch in _SHARED
            if not follow or not batch
        ),
        *(REDACT_OPTION if redact and not follow else ()),  # report has its own --redact/--no-redact
        *(_HISTORY if history else ()),
        *(_OVERLAYS if overlays else ()),
    )
    keyword = inspect.Parameter.KEYWORD_ONLY

    def register(command: Callable[..., None]) -> Callable[..., None]:
        own = list(inspect.signature(command, eval_str=True).parameters.values())[1:]

        @functools.wraps(command)
        def run(**values: Any) -> None:
            common = {name: values.pop(name) for name in ("paths", *(name for name, _, _ in shared))}
            if follow:
                common["paths"] = [] if common["paths"] is None else [common["paths"]]
            options = CommonOptions.from_params(common)
            with colour_setting(options.color), paged(options.pager and not follow and options.output is None):
                command(options, **values)

        run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # what typer reads the options from
            [
                inspect.Parameter("paths", keyword, annotation=FollowedPath if follow else Paths, default=None),
                *(parameter.replace(kind=keyword) for parameter in own),
                *(inspect.Parameter(name, keyword, annotation=kind, default=default) for name, kind, default in shared),
            ]
        )
        return guarded(run)

    return register


@contextmanager
def colour_setting(color: Color) -> Iterator[None]:
    """``--color always|never`` as the environment every renderer (rich included) already reads:
    ``FORCE_COLOR`` or ``NO_COLOR``; restored afterwards, so a library caller's environment is kept."""
    if color is Color.auto:
        yield
        return
    saved = {name: os.environ.get(name) for name in ("NO_COLOR", "FORCE_COLOR")}
    os.environ.pop("NO_COLOR" if color is Color.always else "FORCE_COLOR", None)
    os.environ["FORCE_COLOR" if color is Color.always else "NO_COLOR"] = "1"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
