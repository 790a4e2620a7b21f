"""``logscan events``: the typed event stream."""

from __future__ import annotations

import itertools
import sys
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

import typer

from omlx_logscan.cli.load import load_stream, stream_host, streamed_host
from omlx_logscan.cli.options import (
    CommonOptions,
    EventFormatOption,
    Kinds,
    Priority,
    logs_command,
)
from omlx_logscan.errors import LogscanError
from omlx_logscan.output.formats import EventFormat

if TYPE_CHECKING:
    from omlx_logscan.parsing.event import Event


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
    priority: Priority = None,
    lines: Annotated[
        int | None,
        typer.Option(
            "--lines", "-n", min=0, metavar="N", help="Only the newest N events, as journalctl -n and tail -n."
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=0, metavar="N", help="Only the first N events.")] = None,
) -> None:
    """The typed event stream: every fault, start, stop, request and warning, in time order.

    From stdin or a named pipe, to stdout as a table, NDJSON or CSV, the rows come while the input
    is read, in the same order (not with -o, -n, --strict, --redact, --all or --show-unparsed).
    """
    from omlx_logscan.cli.values import checked_kinds, output_format, priority_rank
    from omlx_logscan.output.formats import (
        STREAMED_FORMATS,
        RowWriter,
        check_destination,
        write_events,
        writing_stdout,
    )
    from omlx_logscan.parsing.grammar import shown_at
    from omlx_logscan.stream.read import all_events

    wanted = checked_kinds(kind)
    least = priority_rank(priority)
    if lines is not None and limit is not None:
        raise LogscanError("-n/--lines (the newest N) and --limit (the first N): give one of them")
    terminal = sys.stdout.isatty() and options.output is None
    fmt = output_format(fmt, options.output, EventFormat.table if terminal else EventFormat.ndjson)
    check_destination(fmt, options.output)  # before the log is read, not after
    need_requests = not wanted or bool({"request_complete", "request_arrival"} & wanted)  # the dense kinds
    streamed = fmt in STREAMED_FORMATS and lines is None and not (all_records or show_unparsed or limit == 0)
    host = streamed_host(options) if streamed else None
    if host is not None:
        writer = RowWriter(fmt, host.zone, host.name, wanted, limit, least=least)
        with writing_stdout():
            stream_host(options, host, writer, wanted, keep_request_text=need_requests)
        return
    stream = load_stream(options, keep_all=all_records, keep_request_text=need_requests)
    chosen = (ev for ev in all_events(stream) if (not wanted or ev.kind in wanted) and shown_at(ev.level, least))
    selected: Iterable[Event] = itertools.islice(chosen, limit) if lines is None else deque(chosen, maxlen=lines)
    if show_unparsed:
        from omlx_logscan.output.text import printable

        for source, line, text in stream.unparsed:
            sys.stderr.write(f"unparsed {source}:{line}: {printable(text[:300])}\n")
        for source, line, text in stream.unmatched:
            sys.stderr.write(f"unmatched {source}:{line}: {printable(text[:300])}\n")
    write_events(fmt, selected, stream, options.output)
