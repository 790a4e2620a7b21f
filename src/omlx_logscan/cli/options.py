"""Options shared by the commands, declared once."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class EventFormat(StrEnum):
    table = "table"
    ndjson = "ndjson"
    json = "json"
    csv = "csv"
    parquet = "parquet"


class ListFormat(StrEnum):
    text = "text"
    json = "json"


class ReportFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


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
    typer.Option("--tz", metavar="ZONE", help="IANA zone of the log's local times (default: this machine's)."),
]


Output = Annotated[
    Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to this file instead of stdout.")
]


Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No line accounting or progress on stderr.")]


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
