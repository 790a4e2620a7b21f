"""``logscan sessions``: the sessions (runs of the server process) and how each ended."""

from __future__ import annotations

from omlx_logscan.cli.load import load_stream
from omlx_logscan.cli.options import (
    CommonOptions,
    ListFormatOption,
    logs_command,
)
from omlx_logscan.output.formats import ListFormat


@logs_command()
def sessions(
    options: CommonOptions,
    fmt: ListFormatOption = ListFormat.text,
) -> None:
    """Sessions, one per run of the server (like journalctl --list-boots): start, end, why it ended, faults."""
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.output.formats import write_sessions

    write_sessions(fmt, analyze(load_stream(options)), options.output)
