"""``logscan sessions``: process lifetimes and how each ended."""

from __future__ import annotations

from typing import Annotated

import typer

from omlx_logscan.cli.app import app, guarded
from omlx_logscan.cli.load import load_stream, open_output
from omlx_logscan.cli.options import Debug, ListFormat, Output, Paths, Quiet, Since, Strict, Tz, Until


@app.command()
@guarded
def sessions(
    paths: Paths,
    since: Since = None,
    until: Until = None,
    tz: Tz = None,
    fmt: Annotated[ListFormat, typer.Option("--format", "-f", help="text or json.")] = ListFormat.text,
    output: Output = None,
    quiet: Quiet = False,
    strict: Strict = False,
    debug: Debug = False,
) -> None:
    """Process lifetimes (like journalctl --list-boots): start, end, why it ended, faults."""
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.output.documents import write_json
    from omlx_logscan.output.text import console, sessions_table

    analysis = analyze(load_stream(paths, since, until, tz, quiet=quiet, strict=strict))
    with open_output(output) as out:
        if fmt is ListFormat.json:
            write_json(
                {"schema": "omlx-logscan/sessions/1", "sessions": [s.as_dict() for s in analysis.sessions]},
                out,
            )
        else:
            sessions_table(analysis, console(out))
