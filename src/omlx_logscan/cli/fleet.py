"""``logscan fleet``: many hosts pooled, on DuckDB, from exports or timeline documents."""

from __future__ import annotations

from typing import Annotated

import typer

from omlx_logscan.cli.app import guarded
from omlx_logscan.cli.options import Debug, Output, Quiet
from omlx_logscan.output.formats import FleetFormat


@guarded
def fleet(
    sources: Annotated[
        list[str],
        typer.Argument(
            metavar="SOURCE",
            help="Export folders (logscan export -o), globs of them, s3:// or https:// export prefixes, or "
            "timeline -f json documents (files, folders, globs, URLs).",
            show_default=False,
        ),
    ],
    fmt: Annotated[FleetFormat, typer.Option("--format", "-f", help="text, json or markdown.")] = FleetFormat.text,
    output: Output = None,
    quiet: Quiet = False,  # fleet writes nothing on stderr but errors: taken so that -q works with every command
    debug: Debug = False,
) -> None:
    """Pool many hosts: faults, penalty-box entries and dead hours per host; hosts, process starts and hours
    and faults per macOS × oMLX version with exact 95 % upper bounds; the first fault after each OS upgrade.

    Runs on DuckDB; the SQL it runs is in the package (omlx_logscan/fleet/sql) and runs unchanged on Spark.
    """
    from omlx_logscan.cli.values import check_output, output_path
    from omlx_logscan.fleet.summary import read_fleet
    from omlx_logscan.fleet.tables import local_inputs
    from omlx_logscan.output.files import protect
    from omlx_logscan.output.formats import write_fleet

    destination = output_path(output)
    if destination is not None:
        inputs = local_inputs(sources)
        protect(path.stat() for path in inputs)
        check_output(destination, [("a source", path) for path in inputs])
    write_fleet(fmt, read_fleet(sources), sources, destination)
