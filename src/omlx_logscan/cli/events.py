"""``logscan events``: the typed event stream."""

from __future__ import annotations

import heapq
import sys
from typing import Annotated

import typer

from omlx_logscan.cli.app import app, checked_kinds, guarded
from omlx_logscan.cli.load import load_stream
from omlx_logscan.cli.options import (
    CommonOptions,
    Debug,
    EventFormatOption,
    Kinds,
    Output,
    Paths,
    Quiet,
    Since,
    Strict,
    Tz,
    Until,
)
from omlx_logscan.errors import LogscanError
from omlx_logscan.output.formats import EventFormat


@app.command()
@guarded
def events(
    paths: Paths,
    kind: Kinds = None,
    since: Since = None,
    until: Until = None,
    tz: Tz = None,
    fmt: EventFormatOption = None,
    output: Output = None,
    all_records: Annotated[bool, typer.Option("--all", help="Also emit routine records as kind 'record'.")] = False,
    show_unparsed: Annotated[bool, typer.Option(help="List the lines no grammar matched, on stderr.")] = False,
    quiet: Quiet = False,
    strict: Strict = False,
    debug: Debug = False,
) -> None:
    """The typed event stream: every fault, start, stop, request and warning, in time order."""
    from omlx_logscan.output.formats import write_events
    from omlx_logscan.stream.read import iter_requests

    wanted = checked_kinds(kind)
    fmt = fmt or (EventFormat.table if sys.stdout.isatty() and output is None else EventFormat.ndjson)
    if fmt is EventFormat.parquet and output is None:
        raise LogscanError("--format parquet writes a binary file: give --output FILE")
    options = CommonOptions.from_params(locals())
    need_requests = not wanted or "request_complete" in wanted
    stream = load_stream(options, keep_all=all_records, keep_request_text=need_requests)
    names = [s.name for s in stream.sources]
    merged = heapq.merge(
        stream.events,
        iter_requests(stream, names) if need_requests else iter(()),
        key=lambda ev: (ev.sort_time, ev.source_index),
    )
    selected = (ev for ev in merged if not wanted or ev.kind in wanted)
    if show_unparsed:
        from omlx_logscan.output.text import printable

        for source, line, text in stream.unparsed:
            sys.stderr.write(f"unparsed {source}:{line}: {printable(text[:300])}\n")
    write_events(fmt, selected, stream, options.output)
