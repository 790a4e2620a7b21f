"""Terminal text by rich, with markup off (log text is data) and NO_COLOR honoured."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from datetime import tzinfo
from functools import cache
from typing import IO, TYPE_CHECKING, Literal, assert_never

from omlx_logscan.analysis.attribution import WhyFaulted
from omlx_logscan.analysis.results import DeadWindow, Outcome
from omlx_logscan.analysis.severity import Severity
from omlx_logscan.output import sections as timeline
from omlx_logscan.output.failures import ERRORS_TITLE, EXAMPLE_LABEL, errors_text_lines
from omlx_logscan.output.incidents import INCIDENTS_TITLE, incident_lines
from omlx_logscan.output.outages import outage_lines
from omlx_logscan.output.phrases import (
    accounting_lines,
    call_site_label,
    count_text,
    crash_line,
    dead_for,
    escalation_column,
    escalation_lines,
    escalation_os,
    level_phrase,
    plural,
    signature_share,
    span_phrase,
    summary,
    unmatched_phrase,
    unplaced_note,
    window_end_phrase,
    zone_phrase,
)
from omlx_logscan.output.provenance import an_upgrade, input_versions, versions_phrase
from omlx_logscan.output.why import fault_lines, overlay_lines
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import EventKind
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.timeutil import human_time, to_second

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from omlx_logscan.analysis.bounds import Bounds
    from omlx_logscan.analysis.check import CheckResult


def bounds_table(bounds: Bounds, con: Console, zone: tzinfo | Literal[False] | None = False) -> None:
    """The bounds on a terminal: one column per version (few versions, many measures), then the sentence;
    ``zone``: the zone line under the title, where the bounds stand alone (not in a timeline)."""
    from rich.table import Table
    from rich.text import Text

    from omlx_logscan.output.versions import bounds_heading, bounds_measures, bounds_sentence

    con.print(Text("Version bounds", style="bold"))
    if zone is not False:
        zone_line(con, zone)
    table = Table(show_edge=False, pad_edge=False, box=None, padding=(0, 2, 0, 0))
    table.add_column("")
    for row in bounds.rows:
        table.add_column(Text("\n".join(bounds_heading(row, bounds.by)), style="red" if row.fault_count else ""))
    columns = [bounds_measures(row) for row in bounds.rows]
    for position, (name, _value) in enumerate(columns[0] if columns else []):
        table.add_row(Text(f"  {name}"), *(Text(column[position][1]) for column in columns))
    con.print(table)
    say(con, bounds_sentence(bounds), hang=2)


def check_text(result: CheckResult, con: Console) -> None:
    """The terminal view: one line per rule, then one per finding."""
    from rich.text import Text

    from omlx_logscan.output.findings import (
        check_headline,
        finding_message,
        rule_threshold,
        rule_verdict,
        warning_message,
    )
    from omlx_logscan.stream.event_stream import skipped_files

    con.print(Text(check_headline(result), style="bold"))
    if result.stream is not None:
        zone_line(con, result.stream.zone)
    for rule in result.rules.names:
        count = result.count(rule)
        threshold = rule_threshold(result.rules, rule)
        word = rule_verdict(result, rule)
        verdict = Text(word, style={"fail": "bold red", "pass": "green"}.get(word, "yellow"))
        con.print(Text(f"  {rule:<20} "), verdict, Text(f"  {count}" + (f"  ({threshold})" if threshold else "")))
    for finding in result.findings:
        where = f"{finding.source}:{finding.line}" if finding.source else "(no record)"
        style = "bold red" if finding.worst_case else ""
        say(con, printable(f"{where}: {finding.rule}: {finding_message(finding)}"), style, hang=4)
    for item in result.warnings:  # under the --fail-level: said, never failed
        where = f"{item.example.source}:{item.example.line}"
        message = warning_message(item, result.sessions_read)
        say(con, printable(f"{where}: warning: {item.kind}: {message}"), "yellow", hang=4)
    for event in result.notes:
        say(con, printable(f"note: {unplaced_note(event)}"), "yellow", hang=4)
    for name, reason in skipped_files(result.stream).items():  # what was not checked is said with the verdict
        say(con, printable(f"skipped {name}: {reason}"), "dim", hang=4)


def zone_line(con: Console, zone: tzinfo | None) -> None:
    """The header line that names the zone a text output's times were read in (``--tz`` changes it)."""
    say(con, f"times: {zone_phrase(zone)}", "dim", hang=2)


# rich is imported where text for a terminal is made, not with this module: machine formats
# (JSON, NDJSON, CSV) never need it, and loading it costs a run on a small log about 12 ms.


@cache
def _console_class() -> type[Console]:
    from rich.console import Console

    class LogConsole(Console):
        """rich's Console, except that a closed pipe (``logscan … | head``) ends the run quietly with 0."""

        def on_broken_pipe(self) -> None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise SystemExit(0)

    return LogConsole


def console(file: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A console that never interprets log text as markup and honours NO_COLOR (and ``--color never``,
    which sets it): then it writes no escape at all, bold, dim and reverse included, as ripgrep.

    Written to a file or a pipe, it is wide: tables and long lines stay whole instead of being
    folded to 80 columns.
    """
    target = file if file is not None else (sys.stderr if stderr else sys.stdout)
    plain = bool(os.environ.get("NO_COLOR"))
    return _console_class()(
        file=file,
        stderr=stderr,
        markup=False,
        highlight=False,
        emoji=False,
        no_color=plain or None,
        color_system=None if plain else "auto",  # no colour is no bold or dim either: no escape at all
        soft_wrap=False,
        width=None if target.isatty() else PIPE_WIDTH,
    )


PIPE_WIDTH = 250


_CONTROL = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0)) if code != 0x09}


def printable(text: str) -> str:
    """Text from a log or a hook, safe to print on a terminal: control characters shown as ``\\xNN``."""
    return text.translate(_CONTROL)


def wrap_width(con: Console) -> int | None:
    """The width lines are fitted to: a terminal's. In a file or a pipe a line stays one line."""
    return con.width if con.is_terminal else None


def say(con: Console, text: str | Text, style: str = "", *, hang: int | None = None) -> None:
    """Print one line, on a terminal broken at spaces to its width with a hanging indent (``hang``
    columns; by default two more than the line's own indent). Markup is never read from it."""
    print_fitted(con, text, wrap_width(con), style, hang=hang)


def print_fitted(
    con: Console, text: str | Text, width: int | None, style: str = "", *, hang: int | None = None
) -> None:
    """``say`` for a width known already (a table's rows ask for it once, not once a row)."""
    from rich.cells import cell_len
    from rich.text import Text

    from omlx_logscan.output.wrap import hang_room, wrap_spans

    line = text if isinstance(text, Text) else Text(text, style=style)
    plain = line.plain
    if width is None or cell_len(plain) <= width:
        con.print(line, soft_wrap=True)
        return
    indent = hang_room(hang if hang is not None else len(plain) - len(plain.lstrip(" ")) + 2, width)
    for number, (start, end) in enumerate(wrap_spans(plain, width, indent)):
        piece = line[start:end]
        con.print(Text(" " * indent) + piece if number else piece, soft_wrap=True)


UNTIMED = "·"  # before a time in the time column: the record states none; this is the record's before it


UNTIMED_LEGEND = (
    f"{UNTIMED} before a time: the record states no time of its own; the time is that of the record before it"
)


def untimed(event: Event) -> bool:
    """The event's time column shows ``UNTIMED`` (no date and time, nor time of day, of its own)."""
    return not to_second(event.time) and not event.time_of_day


def event_cells(event: Event) -> list[Text]:
    """The columns ``events`` prints for one event: time, kind, level, where, message."""
    from rich.text import Text

    return [
        Text(to_second(event.time) or (event.time_of_day or "")[:8] or UNTIMED + (to_second(event.prev_time) or "")),
        Text(event.kind, style=KIND_STYLE.get(event.kind, "")),
        Text(event.level or ""),
        Text(printable(f"{os.path.basename(event.source)}:{event.line}")),
        Text(printable(event.message[:500])),
    ]


KIND_STYLE: dict[EventKind, str] = {
    "gpu_error": "bold red",
    "process_exit": "bold red",
    "kernel_panic": "bold red",
    "process_start": "cyan",
    "error": "red",
    "warning": "yellow",
    "shutdown": "cyan",
}


EVENT_COLUMNS = (("time", 19), ("kind", 17), ("level", 8), ("where", 17))  # the message takes the rest


class EventRows:
    """The events table, one row at a time, so rows show while the input is still being read.

    Columns have fixed widths (a table that sized them to their contents could print nothing before
    the last row). On a terminal of NARROW_COLUMNS or less, the key fields stand unpadded on one
    line; in both layouts the message wraps at spaces under itself (or, narrow, under a short indent).
    """

    def __init__(self, con: Console) -> None:
        from omlx_logscan.output.wrap import NARROW_COLUMNS

        width = wrap_width(con)
        self._con = con
        self._width = width
        self._compact = width is not None and width <= NARROW_COLUMNS
        self._message_column = sum(size + 2 for _, size in EVENT_COLUMNS)
        self._explained = False

    def header(self, zone: tzinfo | None) -> None:
        from rich.text import Text

        zone_line(self._con, zone)
        names = [name for name, _ in EVENT_COLUMNS] + ["message"]
        cells = [Text(name, style="bold") for name in names]
        self.line(self._joined(cells))

    def row(self, event: Event) -> None:
        if not self._explained and untimed(event):  # said once, where the marker is first seen
            from rich.text import Text

            self._explained = True
            self.line(Text(UNTIMED_LEGEND, style="dim"))
        self.line(self._joined(event_cells(event)))

    def line(self, text: Text) -> None:
        """A row, or a line among the rows that is no event (an unparsed line)."""
        print_fitted(self._con, text, self._width, hang=4 if self._compact else self._message_column)

    def _joined(self, cells: list[Text]) -> Text:
        from rich.text import Text

        if not self._compact:
            for cell, (_, size) in zip(cells, EVENT_COLUMNS, strict=False):
                cell.pad_right(max(0, size - cell.cell_len))
        return Text("  " if not self._compact else " ").join(cell for cell in cells if cell.plain)


def alert_line(con: Console, message: str, *, bell: bool = False) -> None:
    """An alert as one unmistakable line: its headline (the text before the first ``; ``) in reverse
    video across the whole width, the rest under it; ``bell`` rings the terminal's bell first."""
    from rich.text import Text

    headline, _, rest = printable(message).partition("; ")
    if bell:
        con.file.write("\a")
    width = wrap_width(con)
    line = Text(f" {headline} ", style="bold reverse red")
    if width is not None and line.cell_len <= width:  # the band runs across the whole terminal
        line.pad_right(width - line.cell_len)
        con.print(line, soft_wrap=True)
    else:
        say(con, line, hang=1)
    if rest:
        say(con, Text(f"  {rest}", style="bold red"))


def events_table(events: Iterable[Event], con: Console, zone: tzinfo | None) -> None:
    """The events as a table, each row flushed as it is made."""
    rows = EventRows(con)
    rows.header(zone)
    for event in events:
        rows.row(event)
        con.file.flush()


def print_accounting(stream: EventStream, *, quiet: bool) -> None:
    """The accounting on stderr: dimmed on a terminal, plain text otherwise, so a machine format's
    run (a CI job, a script) never loads rich for it."""
    if quiet:
        return
    if not sys.stderr.isatty():
        sys.stderr.write("".join(printable(line) + "\n" for line in accounting_lines(stream)))
        return
    from rich.text import Text

    err = console(sys.stderr)
    for line in accounting_lines(stream):
        say(err, Text(printable(line), style="dim"))


SEVERITY_STYLES: dict[Severity, str] = {"critical": "bold red", "error": "red", "warning": "yellow", "notice": ""}


# The terminal's order: the list's, except that the probes come before the bounds table.
TEXT_ORDER: tuple[type[timeline.Section], ...] = (
    timeline.Heading,
    timeline.Incidents,
    timeline.Escalation,
    timeline.OtherFailures,
    timeline.Crashes,
    timeline.DeadWindows,
    timeline.OutageList,
    timeline.Signatures,
    timeline.Why,
    timeline.Summary,
    timeline.Chart,
    timeline.Probes,
    timeline.VersionBounds,
    timeline.FirstFault,
    timeline.Limits,
)


def timeline_text(sections: list[timeline.Section], con: Console) -> None:
    """The terminal timeline: header, escalation, other failures, dead windows, signatures, summary."""
    for section in timeline.arranged(sections, TEXT_ORDER):
        _text_section(section, con)


def _text_section(section: timeline.Section, con: Console) -> None:
    match section:
        case timeline.Heading():
            _heading(section, con)
        case timeline.Escalation():
            _escalation(section, con)
        case timeline.Incidents():
            if section.items:
                _section(con, INCIDENTS_TITLE)
                lines = incident_lines(section.items, section.sessions)
                for item, line in zip(section.items, lines, strict=True):
                    say(con, printable(f"  {line}"), SEVERITY_STYLES[item.severity], hang=4)
        case timeline.OtherFailures():
            errors = errors_text_lines(section.errors)
            if errors:
                _section(con, ERRORS_TITLE)
                for line in errors:
                    say(con, printable(f"  {line}"), "" if line.startswith(EXAMPLE_LABEL) else "red", hang=4)
        case timeline.Crashes():
            if section.rows:
                _section(con, "Crash evidence")
                for row in section.rows:
                    say(con, printable(f"  {crash_line(row)}"), "bold red", hang=4)
        case timeline.DeadWindows():
            _dead_windows(section.windows, con)
        case timeline.OutageList():
            _section(con, "Outages")  # every kind of outage: output/outages.py
            for line in outage_lines(section.outages):
                say(con, printable(f"  {line}"), hang=4)
        case timeline.Signatures():
            _signatures(section, con)
        case timeline.Why():
            if section.faults:
                con.print()
                write_why_text(section.why, con, full=False)
        case timeline.Summary():
            _section(con, "Summary")
            say(con, summary(section.analysis, section.crashes), hang=2)
        case timeline.Probes():
            from omlx_logscan.output.probes import probes_text

            probes_text(section.evidence, section.analysis, con)
        case timeline.VersionBounds():
            con.print()
            bounds_table(section.bounds, con)
        case timeline.Chart() | timeline.FirstFault() | timeline.Limits():
            pass  # the chart is drawn in Markdown; the others are the report's
        case _:
            assert_never(section)


def _heading(section: timeline.Heading, con: Console) -> None:
    analysis, head = section.analysis, section.head
    files = ", ".join(os.path.basename(f["name"]) for f in head["files"])
    inexact = sum(1 for s in analysis.sessions if not s.start_exact and s.start_in_log)
    say(con, "oMLX log timeline", "bold")
    for name, value in (
        ("files", printable(files)),
        ("span", span_phrase(head, analysis.stream)),
        ("times", zone_phrase(analysis.stream.zone)),
        ("level", level_phrase(head["written_at_level"], head["records"])),
        ("oMLX", printable(versions_phrase(input_versions(analysis.stream), upgrade=an_upgrade(analysis)))),
        (
            "sessions",
            str(len(analysis.sessions))
            + (f" ({inexact} with start times bounded by neighbouring records)" if inexact else ""),
        ),
        ("lines", f"{head['lines']} read, {head['unparsed_lines']} unparsed{unmatched_phrase(head)}"),
    ):
        say(con, f"  {name:<9} {value}", hang=12)


# An escalation row's style: a fault's by its outcome, a dead window's repeats ("dead") red.
OUTCOME_STYLE: dict[Outcome | Literal["dead"], str] = {
    "penalty_box": "bold red",
    "dead": "red",
    "crash": "bold red",
    "absorbed": "yellow",
}


def _escalation(section: timeline.Escalation, con: Console) -> None:
    _section(con, "Escalation")
    rows = section.rows
    if not rows:
        say(con, "  no GPU faults")
    os_line = escalation_os(rows)
    if os_line:
        say(con, f"  {os_line}")
    text_column = 2 + escalation_column(rows)
    for row, line in zip(rows, escalation_lines(rows), strict=True):
        say(con, printable(f"  {line}"), OUTCOME_STYLE.get(row["outcome"], ""), hang=text_column)


def _dead_windows(windows: list[DeadWindow], con: Console) -> None:
    if not windows:
        return
    _section(con, "Dead-engine windows")
    for window in windows:
        line = (
            f"  session {window.session}: dead from {human_time(window.start)}, last failure "
            f"{human_time(window.last_failure)}, {window_end_phrase(window)}; {dead_for(window)}, "
            f"{plural(window.repeats, 'repeat')}, {count_text(window.requests_completed, 'requests completed')}"
        )
        say(con, line, "red", hang=4)


def _signatures(section: timeline.Signatures, con: Console) -> None:
    if not section.signatures:
        return
    _section(con, "Stack signatures")
    for sig in section.signatures:
        say(
            con,
            printable(f"  [{sig.id}] {signature_share(sig.faults, section.faults)}: {call_site_label(sig)}"),
            hang=6,
        )
        for frame in sig.frames:
            say(con, printable(f"      {frame['module']}:{frame['line']} in {frame['func']}"), hang=10)
        if sig.innermost_code:
            say(con, printable(f"      → {sig.innermost_code}"), hang=10)


def _section(con: Console, title: str) -> None:
    con.print()
    say(con, title, "bold")


def write_why_text(why: WhyFaulted, con: Console, *, full: bool) -> None:
    """The *Why it faulted* section on a terminal; log text stays data (no markup)."""
    say(con, "Why it faulted", "bold")
    for line in fault_lines(why, full=full) + overlay_lines(why, full=full):
        say(con, printable(f"  {line}"), hang=4)
