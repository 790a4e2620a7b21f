"""Renderers: the terminal (rich, markup off: log text is data), Markdown, JSON, NDJSON and CSV."""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterable
from functools import cache
from typing import IO, TYPE_CHECKING, Any

from omlx_logscan.analysis import Analysis
from omlx_logscan.attribution import WhyFaulted
from omlx_logscan.document import (
    crash_line,
    crash_rows,
    dead_for,
    escalation_rows,
    header,
    level_phrase,
    plural,
    signature_share,
    span_phrase,
    summary,
    window_end_phrase,
)
from omlx_logscan.events import Event, EventStream
from omlx_logscan.timeutil import human_duration, human_time, to_second

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

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
        Text(to_second(event.time) or "·" + (to_second(event.prev_time) or "")),
        Text(event.kind, style=KIND_STYLE.get(event.kind, "")),
        Text(event.level or ""),
        Text(printable(f"{os.path.basename(event.source)}:{event.line}")),
        Text(printable(event.message[:500])),
    ]


def count_text(value: int | None, what: str = "") -> str:
    """``3 requests completed``, or that the log level hides them (``… not logged``)."""
    if value is None:
        return f"{what} not logged".strip()
    return f"{value} {what}".strip()


def write_json(document: Any, out: IO[str]) -> None:
    json.dump(document, out, indent=2, ensure_ascii=False, default=str)
    out.write("\n")


def write_ndjson(rows: Iterable[dict[str, Any]], out: IO[str]) -> None:
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False, default=str))
        out.write("\n")


EVENT_COLUMNS = ("time", "source", "line", "level", "logger", "kind", "message", "fields")


def write_csv(rows: Iterable[dict[str, Any]], out: IO[str]) -> None:
    writer = csv.writer(out)
    writer.writerow(EVENT_COLUMNS)
    for row in rows:
        extra = {k: v for k, v in row.items() if k not in EVENT_COLUMNS}
        writer.writerow(
            [row.get(c) if c != "fields" else json.dumps(extra, ensure_ascii=False, default=str) for c in EVENT_COLUMNS]
        )


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


def accounting_lines(stream: EventStream) -> list[str]:
    """The line accounting every command reports: nothing is lost silently."""
    head = header(stream)
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(stream.kind_counts.items()))
    lines = [
        f"read {plural(head['lines'], 'line')} in {plural(len(head['files']), 'file')}: "
        f"{plural(head['records'], 'record')}, {head['unparsed_lines']} unparsed, {head['blank_lines']} blank, "
        f"{head['duplicates_dropped']} duplicate{'' if head['duplicates_dropped'] == 1 else 's'} dropped",
        f"events: {kinds or 'none'}",
    ]
    lines.extend(f"warning: {s.problem}" for s in stream.sources if s.problem)
    lines.extend(
        f"warning: clock went back {human_duration(jump['back_s'])} at {jump['source']}:{jump['line']} "
        f"({human_time(jump['from'])} → {human_time(jump['to'])}); file order kept"
        for jump in stream.clock_jumps[:CLOCK_JUMPS_SHOWN]
    )
    if len(stream.clock_jumps) > CLOCK_JUMPS_SHOWN:
        lines.append(f"warning: {len(stream.clock_jumps) - CLOCK_JUMPS_SHOWN} more backwards clock jumps")
    return lines


CLOCK_JUMPS_SHOWN = 5


def print_accounting(stream: EventStream, *, quiet: bool) -> None:
    if quiet:
        return
    from rich.text import Text

    err = console(sys.stderr)
    for line in accounting_lines(stream):
        err.print(Text(line, style="dim"), soft_wrap=True)


def _escalation_when(row: dict[str, Any]) -> str:
    """A row's time column: a fault with no time of its own is placed after the record before it."""
    when = row["time"].replace("T", " ") if row["time"] else "(untimed)"
    if row["time"] and not row.get("time_exact", True):
        when = f"after {when}"
    if row["until"]:  # the end's date only when it is another day
        same_day = row["time"] and row["until"][:10] == row["time"][:10]
        when = f"{when} … {row['until'][11:] if same_day else row['until'].replace('T', ' ')}"
    return when


def escalation_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The escalation table as aligned text lines (the time column as wide as its widest entry)."""
    times = [_escalation_when(row) for row in rows]
    width = max([32, *(len(when) + 1 for when in times)])
    lines = []
    for when, row in zip(times, rows, strict=True):
        if "os_version" in row:
            lines.append(f"{when:<{width}} {row['text']:<62} [macOS {row['os_version']}]")
        else:
            lines.append(f"{when:<{width}} {row['text']}")
    return lines


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
    if analysis.signatures:
        con.print()
        con.print(Text("Stack signatures", style="bold"))
        total = len(analysis.faults)
        for sig in analysis.signatures:
            con.print(
                Text(printable(f"  [{sig.id}] {signature_share(sig.faults, total)}: {sig.call_site_label}")),
                soft_wrap=True,
            )
            for frame in sig.frames:
                con.print(Text(printable(f"      {frame['module']}:{frame['line']} in {frame['func']}")))
            if sig.innermost_code:
                con.print(Text(printable(f"      → {sig.innermost_code}")))
    if why is not None and analysis.faults:
        con.print()
        why.write_text(con, full=False)
    con.print()
    con.print(Text("Summary", style="bold"))
    con.print(Text(summary(analysis)), soft_wrap=True)


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def timeline_markdown(
    analysis: Analysis, os_versions: dict[int, str] | None = None, why: WhyFaulted | None = None
) -> str:
    """The same tables as the terminal view, as GitHub Markdown."""
    head = header(analysis.stream)
    out = ["## oMLX log timeline", ""]
    out.append(f"- **Files:** {', '.join('`' + os.path.basename(f['name']) + '`' for f in head['files'])}")
    out.append(f"- **Span:** {span_phrase(head)}")
    out.append(f"- **Level:** {level_phrase(head['written_at_level'], head['records'])}")
    out.append(f"- **Process lifetimes:** {len(analysis.sessions)}")
    out += ["", "### Escalation", "", "```"]
    rows = escalation_rows(analysis, os_versions)
    out.extend(escalation_lines(rows))
    if not rows:
        out.append("no GPU faults")
    out.append("```")
    crashes = crash_rows(analysis)
    if crashes:
        out += ["", "### Crash evidence", "", "```", *(crash_line(row) for row in crashes), "```"]
    if analysis.dead_windows:
        out += [
            "",
            "### Dead-engine windows",
            "",
            "| session | from | last failure | end | repeats | requests completed |",
            "|---|---|---|---|---|---|",
        ]
        for w in analysis.dead_windows:
            out.append(
                f"| {w.session} | {human_time(w.start)} | {human_time(w.last_failure)} | "
                f"{md_escape(window_end_phrase(w))}; {dead_for(w)} | {w.repeats} | "
                f"{count_text(w.requests_completed)} |"
            )
    if analysis.signatures:
        out += ["", "### Stack signatures", ""]
        for sig in analysis.signatures:
            out.append(f"**{sig.faults} of {len(analysis.faults)} faults** — {md_escape(sig.call_site_label)}")
            out.append("```")
            out.extend(f"{f['module']}:{f['line']} in {f['func']}" for f in sig.frames)
            if sig.innermost_code:
                out.append(f"  → {sig.innermost_code}")
            out += ["```", ""]
    if why is not None and analysis.faults:
        out += ["", *why.markdown(full=False)]
    out += ["", "### Summary", "", summary(analysis), ""]
    return "\n".join(out)


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


def events_frame(events: Iterable[Event]) -> Any:
    """Events as a polars frame (kind-specific fields as one JSON column), for Parquet."""
    import polars as pl

    rows = []
    for ev in events:
        row = ev.as_dict()
        extra = {k: v for k, v in row.items() if k not in EVENT_COLUMNS}
        rows.append({c: row.get(c) for c in EVENT_COLUMNS[:-1]} | {"fields": json.dumps(extra, default=str)})
    schema = {
        "time": pl.String,
        "source": pl.String,
        "line": pl.Int64,
        "level": pl.String,
        "logger": pl.String,
        "kind": pl.String,
        "message": pl.String,
        "fields": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)
