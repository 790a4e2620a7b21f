"""``logscan bounds``: fault counts and rate bounds per macOS / oMLX version."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from omlx_logscan.cli.load import host_history, load_host, one_host
from omlx_logscan.cli.options import (
    CommonOptions,
    ReportFormatOption,
    WedgeAfter,
    logs_command,
)
from omlx_logscan.errors import LogscanError
from omlx_logscan.output.formats import ReportFormat


@logs_command(history=True)
def bounds(
    options: CommonOptions,
    by: Annotated[
        str,
        typer.Option(metavar="os|omlx|both", help="One row per macOS version, per oMLX version, or per pair."),
    ] = "os",
    fmt: ReportFormatOption = None,
    wedge_after: WedgeAfter = None,
) -> None:
    """Faults per macOS (or oMLX) version, with exact 95 % upper bounds on the fault rate per start and per hour."""
    from omlx_logscan.analysis.bounds import Grouping, build_bounds
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.cli.values import output_format, parse_grouping, wedge_after_seconds
    from omlx_logscan.output.formats import write_bounds

    grouping = parse_grouping(by)
    chosen = output_format(fmt, options.output, ReportFormat.text)
    host = one_host(options)
    history = host_history(options, host, use_system=True)
    if history is None and grouping is not Grouping.omlx:
        raise LogscanError(
            f"--by {by} needs the OS history: give --os-history FILE, --os VERSION@DATETIME or the host's "
            "os-history in --hosts FILE (on macOS the system's InstallHistory.plist is read by default)"
        )
    if history is not None and history.from_system and not options.quiet:
        from rich.text import Text

        from omlx_logscan.output.text import console

        console(sys.stderr).print(
            Text(f"OS history: {history.sources[0]} (no --os-history or --os given)", style="dim")
        )
    analysis = analyze(load_host(options, host), wedge_after_s=wedge_after_seconds(wedge_after))
    write_bounds(chosen, build_bounds(analysis, history, grouping), analysis, options.output)
