"""Terminal text by rich, with markup off (log text is data) and NO_COLOR honoured."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from functools import cache
from typing import IO, TYPE_CHECKING, assert_never

from omlx_logscan.analysis.attribution import WhyFaulted
from omlx_logscan.analysis.results import Analysis, DeadWindow, Session
from omlx_logscan.output.errors import ERRORS_TITLE, EXAMPLE_LABEL, errors_text_lines, sessions_phrase
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
)
from omlx_logscan.output.provenance import an_upgrade, input_versions, session_versions, short_range, versions_phrase
from omlx_logscan.output.sections import (
    Chart,
    Crashes,
    DeadWindows,
    Escalation,
    FirstFault,
    Heading,
    Incidents,
    Limits,
    OtherFailures,
    OutageList,
    Probes,
    Section,
    Signatures,
    Summary,
    VersionBounds,
    Why,
    arranged,
)
from omlx_logscan.output.why import fault_lines, overlay_lines
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.provenance import WriterVersions
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.timeutil import human_time, to_second

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from omlx_logscan.analysis.bounds import Bounds
    from omlx_logscan.analysis.check import CheckResult


def bounds_table(bounds: Bounds, con: Console) -> None:
    """The bounds on a terminal: one column per version (few versions, many measures), then the sentence."""
    from rich.table import Table
    from rich.text import Text

    from omlx_logscan.output.versions import bounds_heading, bounds_measures, bounds_sentence

    con.print(Text("Version bounds", style="bold"))
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
    """A console that never interprets log text as markup and honours NO_COLOR.

    Written to a file or a pipe, it is wide: tables and long lines stay whole instead of being
    folded to 80 columns.
    """
    target = file if file is not None else (sys.stderr if stderr else sys.stdout)
    return _console_class()(
        file=file,
        stderr=stderr,
        markup=False,
        highlight=False,
        emoji=False,
        no_color=bool(os.environ.get("NO_COLOR")) or None,
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


KIND_STYLE = {
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

    def header(self) -> None:
        from rich.text import Text

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


def events_table(events: Iterable[Event], con: Console) -> None:
    """The events as a table, each row flushed as it is made."""
    rows = EventRows(con)
    rows.header()
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


SEVERITY_STYLES = {"critical": "bold red", "error": "red", "warning": "yellow", "notice": ""}


# The terminal's order: the list's, except that the probes come before the bounds table.
TEXT_ORDER: tuple[type[Section], ...] = (
    Heading,
    Incidents,
    Escalation,
    OtherFailures,
    Crashes,
    DeadWindows,
    OutageList,
    Signatures,
    Why,
    Summary,
    Chart,
    Probes,
    VersionBounds,
    FirstFault,
    Limits,
)


def timeline_text(sections: list[Section], con: Console) -> None:
    """The terminal timeline: header, escalation, other failures, dead windows, signatures, summary."""
    for section in arranged(sections, TEXT_ORDER):
        _text_section(section, con)


def _text_section(section: Section, con: Console) -> None:
    match section:
        case Heading():
            _heading(section, con)
        case Escalation():
            _escalation(section, con)
        case Incidents():
            if section.items:
                _section(con, INCIDENTS_TITLE)
                for line in incident_lines(section.items, section.sessions):
                    say(con, printable(f"  {line}"), SEVERITY_STYLES[line.split(" ", 1)[0]], hang=4)
        case OtherFailures():
            errors = errors_text_lines(section.errors)
            if errors:
                _section(con, ERRORS_TITLE)
                for line in errors:
                    say(con, printable(f"  {line}"), "" if line.startswith(EXAMPLE_LABEL) else "red", hang=4)
        case Crashes():
            if section.rows:
                _section(con, "Crash evidence")
                for row in section.rows:
                    say(con, printable(f"  {crash_line(row)}"), "bold red", hang=4)
        case DeadWindows():
            _dead_windows(section.windows, con)
        case OutageList():
            _section(con, "Outages")  # every kind of outage: output/outages.py
            for line in outage_lines(section.outages):
                say(con, printable(f"  {line}"), hang=4)
        case Signatures():
            _signatures(section, con)
        case Why():
            if section.faults:
                con.print()
                write_why_text(section.why, con, full=False)
        case Summary():
            _section(con, "Summary")
            say(con, summary(section.analysis, section.crashes), hang=2)
        case Probes():
            from omlx_logscan.output.probes import probes_text

            probes_text(section.evidence, section.analysis, con)
        case VersionBounds():
            con.print()
            bounds_table(section.bounds, con)
        case Chart() | FirstFault() | Limits():  # the chart is drawn in Markdown; the others are the report's
            pass
        case _:
            assert_never(section)


def _heading(section: Heading, con: Console) -> None:
    analysis, head = section.analysis, section.head
    files = ", ".join(os.path.basename(f["name"]) for f in head["files"])
    inexact = sum(1 for s in analysis.sessions if not s.start_exact and s.start_in_log)
    say(con, "oMLX log timeline", "bold")
    for name, value in (
        ("files", printable(files)),
        ("span", span_phrase(head, analysis.stream)),
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


OUTCOME_STYLE = {"penalty_box": "bold red", "dead": "red", "crash": "bold red", "absorbed": "yellow"}


def _escalation(section: Escalation, con: Console) -> None:
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


def _signatures(section: Signatures, con: Console) -> None:
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


SESSION_COLUMNS = ("#", "start", "end", "end reason", "oMLX", "messages of", "engine starts", "requests", "faults")


FAULT_MARK = "✗"  # before a session that had a GPU fault, on a terminal


def sessions_table(analysis: Analysis, con: Console) -> None:
    """The sessions: a table on a terminal wide enough for it, else one line each (key fields first),
    and in a pipe or a file plain columns that ``cut`` and ``grep`` take. On a
    terminal a session with a fault is marked and red, and a last line names them all: the list is long
    and the faults are usually near its end, where the terminal leaves the reader."""
    from rich.table import Table
    from rich.text import Text

    from omlx_logscan.output.wrap import NARROW_COLUMNS

    width = wrap_width(con)
    rows = [_session_cells(s, found) for s, found in zip(analysis.sessions, session_versions(analysis), strict=True)]
    plain = _plain_columns([list(SESSION_COLUMNS), *rows])
    notes = [f"note: {printable(unplaced_note(event))}" for event in analysis.unplaced]
    if width is None:
        for line in [*plain, *notes]:
            con.print(Text(line))
        return
    table_width = max(map(len, plain)) + len(SESSION_COLUMNS)  # a rule of three cells for two spaces
    if width <= NARROW_COLUMNS or table_width > width:  # a table that wraps takes lines a session
        _sessions_lines(analysis, con, width)
    else:
        table = Table(show_edge=False, pad_edge=False)
        for name in SESSION_COLUMNS:
            table.add_column(name)
        for session, row in zip(analysis.sessions, rows, strict=True):
            table.add_row(*(Text(cell) for cell in row), style=FAULT_STYLE if session.faults else "")
        con.print(table)
    faulted = [s.index for s in analysis.sessions if s.faults]
    if faulted:
        count = f"{len(faulted)} of {plural(len(analysis.sessions), 'session')}"
        say(con, f"{FAULT_MARK} {count} had GPU faults: {sessions_phrase(faulted)}", FAULT_STYLE)
    for note in notes:
        say(con, note, "red", hang=6)


FAULT_STYLE = "bold red"


def _session_cells(s: Session, found: WriterVersions | None) -> list[str]:
    """A session's row, log text made printable."""
    start = human_time(s.start)
    if not s.start_in_log:
        start += " (start not in log)"
    elif not s.start_exact:
        start = f"≤ {start} (after {human_time(s.start_after) if s.start_after else 'the log start'})"
    return [
        str(s.index),
        start,
        human_time(s.end),
        s.end_reason,
        printable(s.omlx_version or "?"),
        short_range(found),
        _unknown_or(s.engine_starts),
        _unknown_or(s.requests_completed),
        str(s.faults),
    ]


def _plain_columns(rows: list[list[str]]) -> list[str]:
    """Rows as lines of columns two spaces apart, each padded to its widest cell, no trailing space."""
    from rich.cells import cell_len

    widths = [max(cell_len(cell) for cell in column) for column in zip(*rows, strict=True)]
    return [
        "  ".join(cell + " " * (w - cell_len(cell)) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _unknown_or(count: int | None) -> str:
    return "?" if count is None else str(count)


def _sessions_lines(analysis: Analysis, con: Console, width: int) -> None:
    """One line per session within ``width``: mark, number, start → end (the end's date only when it is
    another day), end reason, faults; then as many of the other fields as fit."""
    from rich.cells import cell_len

    number_width = len(str(len(analysis.sessions)))
    for s, found in zip(analysis.sessions, session_versions(analysis), strict=True):
        bounded = s.start_in_log and not s.start_exact
        start, end = human_time(s.start), human_time(s.end)
        if end[:10] == start[:10]:
            end = end[11:]
        line = (
            f"{FAULT_MARK if s.faults else ' '} {s.index:>{number_width}}  {'≤ ' if bounded else ''}{start} → {end}  "
            f"{s.end_reason}  {plural(s.faults, 'fault')}"
        )
        details = [
            f"oMLX {printable(s.omlx_version or '?')}",
            f"requests {_unknown_or(s.requests_completed)}",
            f"engine starts {_unknown_or(s.engine_starts)}",
            f"messages of {short_range(found)}",
        ]
        for number, detail in enumerate(details):
            longer = f"{line}{'  ' if number == 0 else ', '}{detail}"
            if cell_len(longer) > width:
                break
            line = longer
        say(con, line, FAULT_STYLE if s.faults else "", hang=number_width + 4)
