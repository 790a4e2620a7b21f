"""``logscan events``: the typed event stream."""

from __future__ import annotations

import heapq
import sys
from typing import Annotated

import typer

from omlx_logscan.cli.app import app, checked_kinds, guarded
from omlx_logscan.cli.load import load_stream, open_output
from omlx_logscan.cli.options import Debug, EventFormat, Output, Paths, Quiet, Since, Strict, Tz, Until
from omlx_logscan.errors import LogscanError
from omlx_logscan.parsing.kinds import KINDS


@app.command()
@guarded
def events(
    paths: Paths,
    kind: Annotated[
        list[str] | None,
        typer.Option(
            "--kind", "-k", metavar="KIND", help="Only these event kinds (repeatable): " + ", ".join(KINDS) + "."
        ),
    ] = None,
    since: Since = None,
    until: Until = None,
    tz: Tz = None,
    fmt: Annotated[
        EventFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="table (default on a terminal), ndjson (default otherwise), json (one document with the line "
            "accounting, schema omlx-logscan/events/1), csv, or parquet (needs -o).",
        ),
    ] = None,
    output: Output = None,
    all_records: Annotated[bool, typer.Option("--all", help="Also emit routine records as kind 'record'.")] = False,
    show_unparsed: Annotated[bool, typer.Option(help="List the lines no grammar matched, on stderr.")] = False,
    quiet: Quiet = False,
    strict: Strict = False,
    debug: Debug = False,
) -> None:
    """The typed event stream: every fault, start, stop, request and warning, in time order."""
    from omlx_logscan.output.documents import events_document, write_json
    from omlx_logscan.output.rows import write_csv, write_ndjson
    from omlx_logscan.output.text import console, events_table, printable
    from omlx_logscan.stream.read import iter_requests

    wanted = checked_kinds(kind)
    fmt = fmt or (EventFormat.table if sys.stdout.isatty() and output is None else EventFormat.ndjson)
    if fmt is EventFormat.parquet and output is None:
        raise LogscanError("--format parquet writes a binary file: give --output FILE")
    need_requests = not wanted or "request_complete" in wanted
    stream = load_stream(
        paths,
        since,
        until,
        tz,
        quiet=quiet,
        strict=strict,
        keep_all=all_records,
        keep_request_text=need_requests,
    )
    names = [s.name for s in stream.sources]
    merged = heapq.merge(
        stream.events,
        iter_requests(stream, names) if need_requests else iter(()),
        key=lambda ev: (ev.sort_time, ev.source_index),
    )
    selected = (ev for ev in merged if not wanted or ev.kind in wanted)
    if show_unparsed:
        for source, line, text in stream.unparsed:
            sys.stderr.write(f"unparsed {source}:{line}: {printable(text[:300])}\n")
    if fmt is EventFormat.parquet:
        from omlx_logscan.output.rows import events_frame

        assert output is not None
        try:
            events_frame(selected).write_parquet(output)
        except OSError as exc:
            raise LogscanError(f"{output}: cannot write ({exc.strerror or exc})") from None
        return
    with open_output(output) as out:
        if fmt is EventFormat.table:
            events_table(selected, console(out))
        elif fmt is EventFormat.csv:
            write_csv((ev.as_dict() for ev in selected), out)
        elif fmt is EventFormat.json:
            write_json(events_document(stream, selected), out)
        else:
            write_ndjson((ev.as_dict() for ev in selected), out)
