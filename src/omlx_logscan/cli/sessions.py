"""``logscan sessions``: process lifetimes and how each ended."""

from __future__ import annotations

from omlx_logscan.cli.app import app, guarded
from omlx_logscan.cli.load import load_stream
from omlx_logscan.cli.options import (
    CommonOptions,
    Debug,
    ListFormatOption,
    Output,
    Paths,
    Quiet,
    Since,
    Strict,
    Tz,
    Until,
)
from omlx_logscan.output.formats import ListFormat


@app.command()
@guarded
def sessions(
    paths: Paths,
    since: Since = None,
    until: Until = None,
    tz: Tz = None,
    fmt: ListFormatOption = ListFormat.text,
    output: Output = None,
    quiet: Quiet = False,
    strict: Strict = False,
    debug: Debug = False,
) -> None:
    """Process lifetimes (like journalctl --list-boots): start, end, why it ended, faults."""
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.output.formats import write_sessions

    options = CommonOptions.from_params(locals())
    write_sessions(fmt, analyze(load_stream(options)), options.output)
