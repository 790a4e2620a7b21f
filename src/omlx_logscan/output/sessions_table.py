"""The sessions on a terminal (a table, or a line each when narrow) and as plain columns in a pipe or a file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from omlx_logscan.analysis.results import Analysis, Session
from omlx_logscan.output.failures import sessions_phrase
from omlx_logscan.output.phrases import plural, unplaced_note
from omlx_logscan.output.provenance import session_versions, short_range
from omlx_logscan.output.text import printable, say, wrap_width, zone_line
from omlx_logscan.parsing.provenance import WriterVersions
from omlx_logscan.timeutil import human_time

if TYPE_CHECKING:
    from rich.console import Console


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
    versions = session_versions(analysis)
    rows = [_session_cells(s, found) for s, found in zip(analysis.sessions, versions, strict=True)]
    plain = _plain_columns([list(SESSION_COLUMNS), *rows])
    notes = [f"note: {printable(unplaced_note(event))}" for event in analysis.unplaced]
    zone_line(con, analysis.stream.zone)
    if width is None:
        for line in [*plain, *notes]:
            con.print(Text(line))
        return
    table_width = max(map(len, plain)) + len(SESSION_COLUMNS)  # a rule of three cells for two spaces
    if width <= NARROW_COLUMNS or table_width > width:  # a table that wraps takes lines a session
        _sessions_lines(analysis, versions, con, width)
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


def _sessions_lines(analysis: Analysis, versions: list[WriterVersions | None], con: Console, width: int) -> None:
    """One line per session within ``width``: mark, number, start → end (the end's date only when it is
    another day), end reason, faults; then as many of the other fields as fit."""
    from rich.cells import cell_len

    number_width = len(str(len(analysis.sessions)))
    for s, found in zip(analysis.sessions, versions, strict=True):
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
