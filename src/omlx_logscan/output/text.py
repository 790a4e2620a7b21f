"""Terminal text by rich, with markup off (log text is data) and NO_COLOR honoured."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from functools import cache
from typing import IO, TYPE_CHECKING

from omlx_logscan.analysis.attribution import WhyFaulted
from omlx_logscan.analysis.model import Analysis
from omlx_logscan.output.outages import outage_lines
from omlx_logscan.output.phrases import (
    accounting_lines,
    call_site_label,
    count_text,
    crash_line,
    crash_rows,
    dead_for,
    escalation_lines,
    escalation_rows,
    level_phrase,
    plural,
    signature_share,
    span_phrase,
    summary,
    window_end_phrase,
)
from omlx_logscan.output.why import fault_lines, overlay_lines
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.model import EventStream, header
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
    con.print(Text(bounds_sentence(bounds)), soft_wrap=True)


def check_text(result: CheckResult, con: Console) -> None:
    """The terminal view: one line per rule, then one per finding."""
    from rich.text import Text

    from omlx_logscan.output.findings import check_headline, finding_message, rule_threshold

    con.print(Text(check_headline(result), style="bold"))
    for rule in result.rules.names:
        count = result.count(rule)
        threshold = rule_threshold(result.rules, rule)
        verdict = Text("fail" if count else "pass", style="bold red" if count else "green")
        con.print(Text(f"  {rule:<20} "), verdict, Text(f"  {count}" + (f"  ({threshold})" if threshold else "")))
    for finding in result.findings:
        where = f"{finding.source}:{finding.line}" if finding.source else "(no record)"
        style = "bold red" if finding.worst_case else ""
        con.print(Text(f"{where}: {finding.rule}: {finding_message(finding)}", style=style), soft_wrap=True)


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


def event_cells(event: Event) -> list[Text]:
    """The columns ``events`` prints for one event: time, kind, level, where, message."""
    from rich.text import Text

    return [
        Text(to_second(event.time) or (event.time_of_day or "")[:8] or "·" + (to_second(event.prev_time) or "")),
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


def events_table(events: Iterable[Event], con: Console) -> None:
    from rich.table import Table

    table = Table(show_edge=False, pad_edge=False, expand=False)
    for name in ("time", "kind", "level", "where", "message"):
        table.add_column(name, overflow="fold" if name == "message" else "ellipsis", no_wrap=name != "message")
    for ev in events:
        table.add_row(*event_cells(ev))
    con.print(table)


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
        err.print(Text(line, style="dim"), soft_wrap=True)


def timeline_text(
    analysis: Analysis, con: Console, os_versions: dict[int, str] | None = None, why: WhyFaulted | None = None
) -> None:
    """The terminal timeline: header, escalation, dead windows, signatures, summary."""
    from rich.text import Text

    head = header(analysis.stream)
    files = ", ".join(os.path.basename(f["name"]) for f in head["files"])
    con.print(Text("oMLX log timeline", style="bold"))
    con.print(Text(f"  files     {files}"))
    con.print(Text(f"  span      {span_phrase(head)}"))
    con.print(Text(f"  level     {level_phrase(head['written_at_level'], head['records'])}"))
    inexact = sum(1 for s in analysis.sessions if not s.start_exact and s.start_in_log)
    con.print(
        Text(
            f"  processes {plural(len(analysis.sessions), 'lifetime')}"
            + (f" ({inexact} with start times bounded by neighbouring records)" if inexact else "")
        )
    )
    con.print(Text(f"  lines     {head['lines']} read, {head['unparsed_lines']} unparsed"))
    con.print()
    con.print(Text("Escalation", style="bold"))
    rows = escalation_rows(analysis, os_versions)
    if not rows:
        con.print(Text("  no GPU faults"))
    for row, line in zip(rows, escalation_lines(rows), strict=True):
        style = {"penalty_box": "bold red", "dead": "red", "crash": "bold red", "absorbed": "yellow"}.get(
            row["outcome"], ""
        )
        con.print(Text(printable(f"  {line}"), style=style), soft_wrap=True)
    crashes = crash_rows(analysis)
    if crashes:
        con.print()
        con.print(Text("Crash evidence", style="bold"))
        for row in crashes:
            con.print(Text(printable(f"  {crash_line(row)}"), style="bold red"), soft_wrap=True)
    if analysis.dead_windows:
        con.print()
        con.print(Text("Dead-engine windows", style="bold"))
        for window in analysis.dead_windows:
            line = (
                f"  session {window.session}: dead from {human_time(window.start)}, last failure "
                f"{human_time(window.last_failure)}, {window_end_phrase(window)}; {dead_for(window)}, "
                f"{window.repeats} repeats, {count_text(window.requests_completed, 'requests completed')}"
            )
            con.print(Text(line, style="red"), soft_wrap=True)
    con.print()  # every kind of outage: output/outages.py
    con.print(Text("Outages", style="bold"))
    for line in outage_lines(analysis.outages):
        con.print(Text(printable(f"  {line}")), soft_wrap=True)
    if analysis.signatures:
        con.print()
        con.print(Text("Stack signatures", style="bold"))
        total = len(analysis.faults)
        for sig in analysis.signatures:
            con.print(
                Text(printable(f"  [{sig.id}] {signature_share(sig.faults, total)}: {call_site_label(sig)}")),
                soft_wrap=True,
            )
            for frame in sig.frames:
                con.print(Text(printable(f"      {frame['module']}:{frame['line']} in {frame['func']}")))
            if sig.innermost_code:
                con.print(Text(printable(f"      → {sig.innermost_code}")))
    if why is not None and analysis.faults:
        con.print()
        write_why_text(why, con, full=False)
    con.print()
    con.print(Text("Summary", style="bold"))
    con.print(Text(summary(analysis)), soft_wrap=True)


def write_why_text(why: WhyFaulted, con: Console, *, full: bool) -> None:
    """The *Why it faulted* section on a terminal; log text stays data (no markup)."""
    from rich.text import Text

    con.print(Text("Why it faulted", style="bold"))
    for line in fault_lines(why, full=full) + overlay_lines(why, full=full):
        con.print(Text(f"  {line}"), soft_wrap=True)


def sessions_table(analysis: Analysis, con: Console) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, pad_edge=False)
    for name in ("#", "start", "end", "end reason", "oMLX", "engine starts", "requests", "faults"):
        table.add_column(name)
    for s in analysis.sessions:
        start = human_time(s.start)
        if not s.start_in_log:
            start += " (start not in log)"
        elif not s.start_exact:
            start = f"≤ {start} (after {human_time(s.start_after) if s.start_after else 'the log start'})"
        table.add_row(
            str(s.index),
            Text(start),
            Text(human_time(s.end)),
            s.end_reason,
            Text(s.omlx_version or "?"),
            "?" if s.engine_starts is None else str(s.engine_starts),
            "?" if s.requests_completed is None else str(s.requests_completed),
            str(s.faults),
        )
    con.print(table)
