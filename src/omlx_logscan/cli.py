"""The ``logscan`` command line: parse options, call the core, render. Nothing else lives here."""

from __future__ import annotations

import functools
import gc
import heapq
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import IO, Annotated, Any, TypeVar

import typer

from omlx_logscan import __version__
from omlx_logscan.errors import EXIT_INPUT, EXIT_INTERNAL, LogscanError
from omlx_logscan.kinds import KINDS

F = TypeVar("F", bound=Callable[..., Any])

app = typer.Typer(
    name="logscan",
    help=(
        "Turn oMLX server logs into incident timelines: GPU faults, the driver's penalty box, "
        "dead-engine windows, and what the log can and cannot show.\n\n"
        "PATH may be a log file (server.log, a rotated server.log.YYYY-MM-DD, crash.log, the app's or "
        "Homebrew's omlx.log capture, .gz/.bz2/.xz), a folder of them, or - for stdin.\n\n"
        "Exit codes: 0 ok; 1 findings (check only); 2 input or usage error; 3 dead engine (watch "
        "--exit-on-dead); 70 internal error."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain help and plain usage errors: no boxes, nothing read as markup
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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


def _version(value: bool) -> None:
    if value:
        typer.echo(f"logscan {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Global options."""


def _fail(message: str, code: int) -> None:
    sys.stderr.write(f"logscan: error: {message}\n")
    raise typer.Exit(code)


def guarded(func: F) -> F:
    """Turn user mistakes into one-line errors and internal bugs into a pointer to --debug."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except LogscanError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(0) from None
        except Exception as exc:
            if kwargs.get("debug"):
                raise
            _fail(
                f"internal error ({type(exc).__name__}: {exc}); rerun with --debug for the traceback",
                EXIT_INTERNAL,
            )
        return None

    return wrapper  # type: ignore[return-value]


def checked_kinds(kind: list[str] | None) -> frozenset[str]:
    """The ``--kind`` values, refused unless each is an event kind."""
    wanted = frozenset(kind or ())
    unknown = wanted - set(KINDS)
    if unknown:
        raise LogscanError(f"--kind {', '.join(sorted(unknown))}: unknown (kinds: {', '.join(KINDS)})")
    return wanted


@contextmanager
def open_output(path: Path | None) -> Iterator[IO[str]]:
    if path is None:
        yield sys.stdout
        return
    try:
        handle = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise LogscanError(f"{path}: cannot write ({exc.strerror or exc})") from None
    with handle:
        yield handle


def load_investigation(
    paths: list[str],
    since: str | None,
    until: str | None,
    tz: str | None,
    *,
    quiet: bool,
    strict: bool,
    os_history: list[Path] | None,
    os_installs: list[str] | None,
    overlay: list[str] | None,
    overlay_gap: str | None,
) -> Any:
    """The options of timeline and report → one Investigation (bad options fail before the log is read)."""
    from omlx_logscan.investigation import investigate
    from omlx_logscan.overlay import parse_overlays
    from omlx_logscan.when import zone

    history = None
    if os_history or os_installs:  # plist and XML support load only when asked for
        from omlx_logscan.oshistory import load_history

        history = load_history(os_history or [], os_installs or [], zone(tz), use_system=False)
    overlays = parse_overlays(overlay, overlay_gap, tz)
    return investigate(load_stream(paths, since, until, tz, quiet=quiet, strict=strict), history, overlays)


def _warn_empty_window(whole: Any) -> None:
    """Say so when --since/--until leave nothing, and what the log does cover."""
    from omlx_logscan.timeutil import human_time

    firsts = [s.first for s in whole.sources if s.first]
    lasts = [s.last for s in whole.sources if s.last]
    covers = f"{human_time(min(firsts))} → {human_time(max(lasts))}" if firsts and lasts else "no timed records"
    sys.stderr.write(f"logscan: warning: no records in the --since/--until window; the log covers {covers}\n")


def load_stream(
    paths: list[str],
    since: str | None,
    until: str | None,
    tz: str | None,
    *,
    quiet: bool,
    strict: bool,
    keep_all: bool = False,
    keep_request_text: bool = False,
) -> Any:
    """Sources → event stream, with the time window applied and the accounting reported."""
    from omlx_logscan.events import read_events, within
    from omlx_logscan.progress import progress_for
    from omlx_logscan.render import print_accounting
    from omlx_logscan.sources import resolve
    from omlx_logscan.timeutil import parse
    from omlx_logscan.when import parse_when, zone

    zone_info = zone(tz)
    lower = parse_when(since, zone_info, "--since") if since else None
    upper = parse_when(until, zone_info, "--until") if until else None
    if lower and upper and parse(lower) > parse(upper):
        raise LogscanError(f"--since {since!r} is after --until {until!r}")
    sources = resolve(paths)
    with progress_for(sources, quiet=quiet) as tick:
        whole = read_events(sources, keep_all=keep_all, keep_request_text=keep_request_text, progress=tick)
    stream = within(whole, lower, upper)
    print_accounting(stream, quiet=quiet)
    if (lower or upper) and not quiet and not any(s.first for s in stream.sources):
        _warn_empty_window(whole)
    if strict and stream.accounting.unparsed:
        raise LogscanError(
            f"{stream.accounting.unparsed} line(s) could not be parsed (--strict); "
            "see them with: logscan events --show-unparsed"
        )
    return stream


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
    from omlx_logscan.document import events_document
    from omlx_logscan.events import iter_requests
    from omlx_logscan.render import console, events_table, printable, write_csv, write_json, write_ndjson

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
        from omlx_logscan.render import events_frame

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


@app.command()
@guarded
def timeline(
    paths: Paths,
    os_history: OsHistoryFiles = None,
    os_installs: OsInstalls = None,
    overlay: Overlays = None,
    overlay_gap: OverlayGap = None,
    since: Since = None,
    until: Until = None,
    tz: Tz = None,
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="text, json or markdown.")] = ReportFormat.text,
    output: Output = None,
    quiet: Quiet = False,
    strict: Strict = False,
    debug: Debug = False,
) -> None:
    """The incident timeline: escalation, dead-engine windows, stack signatures, why each fault happened, summary.

    With --os-history or --os, each fault shows its macOS version and a version-bounds table follows.

    With --overlay, the faults are tested against other activity (another GPU process, say).
    """
    from omlx_logscan.document import timeline_document
    from omlx_logscan.render import console, timeline_markdown, timeline_text, write_json

    found = load_investigation(
        paths,
        since,
        until,
        tz,
        quiet=quiet,
        strict=strict,
        os_history=os_history,
        os_installs=os_installs,
        overlay=overlay,
        overlay_gap=overlay_gap,
    )
    analysis, why, versions, bounds = found.analysis, found.why, found.os_versions, found.bounds
    if bounds is not None:  # loaded only with --os-history or --os
        from omlx_logscan.bounds import bounds_document, bounds_markdown, bounds_table
    with open_output(output) as out:
        if fmt is ReportFormat.json:
            document = timeline_document(analysis, versions, why)
            if bounds is not None:
                document["bounds"] = bounds_document(bounds, analysis)
            write_json(document, out)
        elif fmt is ReportFormat.markdown:
            out.write(timeline_markdown(analysis, versions, why))
            if bounds is not None:
                out.write(f"\n### Version bounds\n\n{bounds_markdown(bounds)}")
        else:
            con = console(out)
            timeline_text(analysis, con, versions, why)
            if bounds is not None:
                con.print()
                bounds_table(bounds, con)


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
    from omlx_logscan.analysis import analyze
    from omlx_logscan.render import console, sessions_table, write_json

    analysis = analyze(load_stream(paths, since, until, tz, quiet=quiet, strict=strict))
    with open_output(output) as out:
        if fmt is ListFormat.json:
            write_json(
                {"schema": "omlx-logscan/sessions/1", "sessions": [s.as_dict() for s in analysis.sessions]},
                out,
            )
        else:
            sessions_table(analysis, console(out))


# polars' allocator keeps one arena per thread and holds on to freed memory for seconds; one
# shared arena that hands freed pages back within a quarter second keeps a gigabyte scan about
# 150 MB smaller at the same speed, and its peak nearly flat in the size of the log. Set before
# polars loads (commands import it lazily); a user's own setting wins.
ALLOCATOR_SETTINGS = ("_RJEM_MALLOC_CONF", "narenas:1,dirty_decay_ms:250,muzzy_decay_ms:0")


def main() -> None:
    """Console-script entry point."""
    os.environ.setdefault(*ALLOCATOR_SETTINGS)
    # A one-shot run makes few reference cycles and exits within seconds: Python's cycle collector
    # would only walk the objects of polars' import and of the analysis again and again.
    gc.disable()
    try:
        app()
    except SystemExit as exc:
        if isinstance(exc.code, int | None):
            _leave(exc.code or 0)
        raise
    except Exception as exc:  # a bug outside any command's own guard
        if "--debug" in sys.argv[1:] or os.environ.get("LOGSCAN_DEBUG"):
            raise
        sys.stderr.write(f"logscan: error: internal error ({type(exc).__name__}: {exc})\n")
        raise SystemExit(EXIT_INTERNAL) from None


def _leave(code: int) -> None:
    """Exit once the output is out, without tearing the interpreter down: freeing a big scan's
    objects one by one and unloading polars takes a tenth of a second that nobody waits for."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: let the normal exit report it
        return
    os._exit(code)


__all__ = ["EXIT_INPUT", "app", "main"]

# Commands that live in their own modules register themselves on ``app`` when imported.
from omlx_logscan import cli_bounds, cli_report, cli_watch  # noqa: E402,F401
