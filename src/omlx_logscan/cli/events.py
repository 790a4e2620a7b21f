"""``logscan events``: the typed event stream."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from omlx_logscan.cli.load import load_stream
from omlx_logscan.cli.options import (
    CommonOptions,
    EventFormatOption,
    Kinds,
    logs_command,
)
from omlx_logscan.output.formats import EventFormat


@logs_command()
def events(
    options: CommonOptions,
    kind: Kinds = None,
    fmt: EventFormatOption = None,
    all_records: Annotated[bool, typer.Option("--all", help="Also emit routine records as kind 'record'.")] = False,
    show_unparsed: Annotated[
        bool,
        typer.Option(help="List the lines no grammar matched, and the records no template matched, on stderr."),
    ] = False,
) -> None:
    """The typed event stream: every fault, start, stop, request and warning, in time order."""
    from omlx_logscan.cli.values import checked_kinds
    from omlx_logscan.output.formats import check_destination, write_events
    from omlx_logscan.stream.read import all_events

    wanted = checked_kinds(kind)
    fmt = fmt or (EventFormat.table if sys.stdout.isatty() and options.output is None else EventFormat.ndjson)
    check_destination(fmt, options.output)  # before the log is read, not after
    need_requests = not wanted or bool({"request_complete", "request_arrival"} & wanted)  # the dense kinds
    stream = load_stream(options, keep_all=all_records, keep_request_text=need_requests)
    selected = (ev for ev in all_events(stream) if not wanted or ev.kind in wanted)
    if show_unparsed:
        from omlx_logscan.output.text import printable

        for source, line, text in stream.unparsed:
            sys.stderr.write(f"unparsed {source}:{line}: {printable(text[:300])}\n")
        for source, line, text in stream.unmatched:
            sys.stderr.write(f"unmatched {source}:{line}: {printable(text[:300])}\n")
    write_events(fmt, selected, stream, options.output)
