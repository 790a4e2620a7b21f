"""The output formats of each command and the one place each format is sent to its renderer.

A format is one enum value plus one ``case`` in its command's ``write_*`` function; each match ends
in ``assert_never``, so a value without a case is a mypy error rather than a silent fall-through to
text. Renderers are imported inside their case: a machine format never loads rich.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Set
from contextlib import contextmanager
from datetime import tzinfo
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, assert_never

from omlx_logscan.errors import LogscanError

if TYPE_CHECKING:
    from omlx_logscan.analysis.bounds import Bounds
    from omlx_logscan.analysis.check import CheckResult
    from omlx_logscan.analysis.investigation import Investigation
    from omlx_logscan.analysis.pooled import Fleet
    from omlx_logscan.analysis.results import Analysis
    from omlx_logscan.output.live import NdjsonSink, TableSink
    from omlx_logscan.output.text import EventRows
    from omlx_logscan.parsing.event import Event
    from omlx_logscan.stream.event_stream import EventStream


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


class CheckFormat(StrEnum):
    text = "text"
    json = "json"
    github = "github"
    junit = "junit"
    sarif = "sarif"


class WatchFormat(StrEnum):
    table = "table"
    ndjson = "ndjson"


class FleetFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


@contextmanager
def writing_stdout() -> Iterator[None]:
    """A block that writes to stdout, flushed at its end; a write that fails is one line, exit 2."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped (head, less): the command's guard ends quietly
        raise
    except OSError as exc:  # a full disk behind a redirection (> /dev/full)
        raise LogscanError(f"stdout: cannot write ({exc.strerror or exc})") from None


@contextmanager
def open_output(path: Path | None) -> Iterator[IO[str]]:
    """The file to write text to, replaced whole once complete, or stdout when none is given."""
    if path is None:
        with writing_stdout():
            yield sys.stdout
        return
    from omlx_logscan.output.files import text_replaced_whole

    with text_replaced_whole(path) as handle:
        yield handle


def check_destination(fmt: EventFormat, output: Path | None) -> None:
    """Refuse a binary format without a file to write it to: the terminal or a pipe is for text."""
    if fmt is EventFormat.parquet and output is None:
        raise LogscanError("--format parquet writes a binary file: give --output FILE")


def write_events(fmt: EventFormat, events: Iterable[Event], stream: EventStream, output: Path | None) -> None:
    """The selected events; parquet is binary and goes straight to its file, every other format is text."""
    check_destination(fmt, output)
    if fmt is EventFormat.parquet:
        assert output is not None  # check_destination refused parquet without one
        _write_parquet(events, stream, output)
        return
    with open_output(output) as out:
        match fmt:
            case EventFormat.table:
                from omlx_logscan.output.text import console, events_table

                events_table(events, console(out), stream.zone)
            case EventFormat.csv:
                from omlx_logscan.output.rows import write_csv
                from omlx_logscan.output.zoned import event_rows

                write_csv(event_rows(stream, events), out)
            case EventFormat.json:
                from omlx_logscan.output.documents import events_document, write_json

                write_json(events_document(stream, events), out)
            case EventFormat.ndjson:
                from omlx_logscan.output.rows import write_ndjson
                from omlx_logscan.output.zoned import event_rows

                write_ndjson(event_rows(stream, events), out)
            case _:
                assert_never(fmt)


def write_markdown(text: str, output: Path | None) -> None:
    """A Markdown document (``report``) as written, to paste: to its file, or to stdout in a pipe. On a
    terminal, raw Markdown reads badly (and lines broken mid-word): it is drawn instead, and a line on
    stderr says how to get the Markdown itself."""
    if output is None and sys.stdout.isatty():
        from omlx_logscan.output.drawn import REPORT_HINT, markdown_on_terminal
        from omlx_logscan.output.text import console, say

        with writing_stdout():
            markdown_on_terminal(text, console())
        say(console(stderr=True), REPORT_HINT, "dim")
        return
    with open_output(output) as out:
        out.write(text)


# The formats ``events`` can write a row at a time, while its input is still being read.
STREAMED_FORMATS = frozenset({EventFormat.table, EventFormat.ndjson, EventFormat.csv})


class RowWriter:
    """``events`` on stdout one row at a time, for rows written while the input is read: the kinds
    ``wanted`` (all when empty) at a level of rank ``least`` or worse, the first ``limit`` of them (then
    ``EnoughRows`` stops the reading)."""

    def __init__(
        self,
        fmt: EventFormat,
        zone: tzinfo | None,
        host: str | None,
        wanted: Set[str],
        limit: int | None,
        *,
        least: int = 0,
    ):
        from omlx_logscan.stream.zone_clock import clock_for

        assert fmt in STREAMED_FORMATS
        self._fmt, self._host, self._wanted, self._left, self._least = fmt, host, wanted, limit, least
        self._zone = zone
        self._clock = clock_for(zone)  # no event seen: only a fall-back hour's times need them
        self._table: EventRows | None = None
        self._started = False

    def can_write(self, event: Event) -> bool:
        return self._fmt is EventFormat.table or not self._clock.hard(event.time)

    def write(self, event: Event) -> None:
        from omlx_logscan.parsing.grammar import shown_at
        from omlx_logscan.stream.streaming import EnoughRows

        if (self._wanted and event.kind not in self._wanted) or not shown_at(event.level, self._least):
            return
        self.start()
        if self._table is not None:
            self._table.row(event)
        else:
            from omlx_logscan.output import rows

            row = self._row(event)
            match self._fmt:
                case EventFormat.csv:
                    rows.write_csv([row], sys.stdout, header=False)
                case EventFormat.ndjson:
                    rows.write_ndjson([row], sys.stdout)
                case EventFormat.table | EventFormat.json | EventFormat.parquet:  # a table has its own writer
                    raise AssertionError(f"{self._fmt} rows are not written one at a time")
                case _:
                    assert_never(self._fmt)
        if self._left is not None:
            self._left -= 1
            if self._left == 0:
                sys.stdout.flush()
                raise EnoughRows

    def _row(self, event: Event) -> dict[str, Any]:
        from omlx_logscan.output.zoned import host_row

        return host_row(self._clock, event, self._host)

    def start(self) -> None:
        """The table's or the CSV's header, once (before the first row, or at the end when there is none)."""
        if self._started:
            return
        self._started = True
        if self._fmt is EventFormat.table:
            from omlx_logscan.output.text import EventRows, console

            self._table = EventRows(console(sys.stdout))
            self._table.header(self._zone)
        elif self._fmt is EventFormat.csv:
            from omlx_logscan.output.rows import write_csv

            write_csv([], sys.stdout)

    def flush(self) -> None:
        sys.stdout.flush()

    def settle(self, stream: EventStream) -> None:
        """The input ended: the clock sees every event, as the batch read's does, for the rows left."""
        self._clock = stream.clock()


def _write_parquet(events: Iterable[Event], stream: EventStream, output: Path) -> None:
    """The export's events table, with the host and day columns its partitions give a reader."""
    import polars as pl

    from omlx_logscan.output.export import RowStyle, event_frame, write_parquet

    frame = event_frame(events, RowStyle(stream.clock()))
    write_parquet(frame.with_columns(host=pl.lit(stream.host, pl.String)), output, "events")


def write_timeline(fmt: ReportFormat, found: Investigation, output: Path | None) -> None:
    """The incident timeline, followed by the version bounds when an OS history was given."""
    from omlx_logscan.output.sections import timeline_sections

    sections = timeline_sections(found)
    with open_output(output) as out:
        match fmt:
            case ReportFormat.json:
                from omlx_logscan.output.documents import timeline_document, write_json

                write_json(timeline_document(sections), out)
            case ReportFormat.markdown:
                from omlx_logscan.output.markdown import timeline_markdown

                out.write(timeline_markdown(sections))
            case ReportFormat.text:
                from omlx_logscan.output.text import console, timeline_text

                timeline_text(sections, console(out))
            case _:
                assert_never(fmt)


def write_sessions(fmt: ListFormat, analysis: Analysis, output: Path | None) -> None:
    """The process lifetimes."""
    with open_output(output) as out:
        match fmt:
            case ListFormat.json:
                from omlx_logscan.output.documents import sessions_document, write_json

                write_json(sessions_document(analysis), out)
            case ListFormat.text:
                from omlx_logscan.output.sessions_table import sessions_table
                from omlx_logscan.output.text import console

                sessions_table(analysis, console(out))
            case _:
                assert_never(fmt)


def write_bounds(fmt: ReportFormat, bounds: Bounds, analysis: Analysis, output: Path | None) -> None:
    """The version-bounds table."""
    with open_output(output) as out:
        match fmt:
            case ReportFormat.json:
                from omlx_logscan.output.documents import bounds_document, write_json

                write_json(bounds_document(bounds, analysis), out)
            case ReportFormat.markdown:
                from omlx_logscan.output.markdown import bounds_section

                out.write(bounds_section(bounds, level=2))
            case ReportFormat.text:
                from omlx_logscan.output.text import bounds_table, console

                bounds_table(bounds, console(out), analysis.stream.zone)
            case _:
                assert_never(fmt)


def write_check(
    fmt: CheckFormat, result: CheckResult, output: Path | None, step_summary: str | None, sarif_root: Path
) -> None:
    """The CI gate's verdict in any format; when the workflow names a ``step_summary`` file, the summary
    is appended to it too."""
    with open_output(output) as out:
        match fmt:
            case CheckFormat.json:
                from omlx_logscan.output.documents import check_document, write_json

                write_json(check_document(result), out)
            case CheckFormat.junit:
                from omlx_logscan.output.junit import write_junit

                write_junit(result, out)
            case CheckFormat.sarif:
                from omlx_logscan.output.sarif import write_sarif

                write_sarif(result, out, sarif_root)
            case CheckFormat.github:
                from omlx_logscan.output.ci import github_annotations

                out.write("".join(line + "\n" for line in github_annotations(result)))
            case CheckFormat.text:
                from omlx_logscan.output.text import check_text, console

                check_text(result, console(out))
            case _:
                assert_never(fmt)
    if step_summary:
        from omlx_logscan.output.ci import append_step_summary

        append_step_summary(result, step_summary)


def write_fleet(fmt: FleetFormat, fleet: Fleet, sources: list[str], output: Path | None) -> None:
    """The hosts pooled, read from ``sources``."""
    with open_output(output) as out:
        match fmt:
            case FleetFormat.json:
                from omlx_logscan.output.documents import fleet_document, write_json

                write_json(fleet_document(fleet, sources), out)
            case FleetFormat.markdown:
                from omlx_logscan.output.pooled import fleet_markdown

                out.write(fleet_markdown(fleet))
            case FleetFormat.text:
                from omlx_logscan.output.pooled import fleet_text

                out.write(fleet_text(fleet))
            case _:
                assert_never(fmt)


def watch_sink(fmt: WatchFormat, out: IO[str], *, quiet: bool, bell: bool) -> TableSink | NdjsonSink:
    """Where what the watch sees is printed, in the chosen format."""
    from omlx_logscan.output.live import NdjsonSink, TableSink

    match fmt:
        case WatchFormat.table:
            return TableSink(out, quiet, bell=bell)
        case WatchFormat.ndjson:
            return NdjsonSink(out, quiet)
        case _:
            assert_never(fmt)


def write_check_error(fmt: CheckFormat, reason: str, output: Path | None) -> None:
    """What the formats CI tools collect say when the check could not run (a JUnit error, a failed
    SARIF invocation, an error annotation); text and JSON say nothing beyond the error on stderr."""
    if fmt in (CheckFormat.text, CheckFormat.json):
        return
    with open_output(output) as out:
        match fmt:
            case CheckFormat.junit:
                from omlx_logscan.output.junit import write_junit_error

                write_junit_error(reason, out)
            case CheckFormat.sarif:
                from omlx_logscan.output.sarif import write_sarif_error

                write_sarif_error(reason, out)
            case CheckFormat.github:
                from omlx_logscan.output.ci import error_annotation

                out.write(error_annotation(reason) + "\n")
            case _:
                assert_never(fmt)
