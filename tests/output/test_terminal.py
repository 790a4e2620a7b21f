"""Text fitted to the terminal: wrapped at spaces with a hanging indent, compact tables when narrow."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from dataclasses import replace

import pytest
from rich.console import Console

from conftest import EXAMPLE, ROOT
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.output.sessions_table import sessions_table
from omlx_logscan.output.text import UNTIMED_LEGEND, EventRows, events_table, say
from omlx_logscan.output.wrap import wrap_spans
from omlx_logscan.parsing.event import Event

LOGSCAN = [sys.executable, "-m", "omlx_logscan"]
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _environment(columns: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES")}
    # No pager: these runs read what the terminal shows (tests/cli/test_pty.py tries the pager).
    fitted = {"COLUMNS": str(columns), "LINES": "24", "TERM": "xterm", "LOGSCAN_PAGER": ""}
    return env | {"PYTHONPATH": str(ROOT / "src"), **fitted}


def on_terminal(args: list[str], columns: int) -> str:
    """What ``logscan ARGS`` shows on a pseudo-terminal ``columns`` wide (stdout and stderr), colour removed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin, stdout and stderr are the terminal
        try:
            os.execvpe(LOGSCAN[0], [*LOGSCAN, *args], _environment(columns))
        finally:
            os._exit(127)  # exec failed: never run the rest of the test suite in the child
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    shown = bytearray()
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, shown.decode()
    return _COLOUR.sub("", shown.decode()).replace("\r\n", "\n")


@pytest.mark.slow
def test_the_timeline_fits_80_columns_without_breaking_a_word() -> None:
    shown = on_terminal(["timeline", str(EXAMPLE)], 80)
    piped = subprocess.run(
        [*LOGSCAN, "timeline", str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=_environment(80),
        check=True,
    )
    whole = piped.stderr + piped.stdout  # in a pipe nothing is wrapped
    assert max(len(line) for line in whole.splitlines()) > 80  # so there was something to fit
    lines = shown.splitlines()
    assert "Escalation" in lines and len(lines) > len(whole.splitlines())
    assert max(len(line) for line in lines) <= 80
    assert shown.split() == whole.split()  # only spaces and line breaks differ: no word was cut


def test_continuation_lines_hang_under_their_line() -> None:
    shown = on_terminal(["timeline", str(EXAMPLE)], 80).splitlines()
    start = next(n for n, line in enumerate(shown) if line.startswith("  session 157: dead from"))
    assert shown[start + 1].startswith("    ") and not shown[start + 1].startswith("     ")
    summary = shown.index("Summary")
    assert shown[summary + 2].startswith("  ") and shown[summary + 1][0] != " "


def wrap_text(text: str, width: int, hang: int) -> list[str]:
    """The lines ``say`` prints for ``text``, as plain strings."""
    return [(" " * hang if n else "") + text[a:b] for n, (a, b) in enumerate(wrap_spans(text, width, hang))]


def test_only_a_word_wider_than_the_line_is_split() -> None:
    assert wrap_text("  short words then a " + "x" * 30 + " end", 20, 4) == [
        "  short words then a",
        "    xxxxxxxxxxxxxxxx",
        "    xxxxxxxxxxxxxx",
        "    end",
    ]
    assert wrap_text("fits", 20, 4) == ["fits"] and wrap_text("", 20, 4) == [""]
    assert wrap_text("一二三四五六 七八", 10, 2) == ["一二三四五", "  六 七八"]  # cells, not characters


def _terminal(width: int) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, force_terminal=True, color_system=None, markup=False), out


def test_say_keeps_log_text_as_data_and_a_file_gets_whole_lines() -> None:
    con, out = _terminal(30)
    say(con, "  [bold]not markup[/bold] and a line long enough to wrap", hang=4)
    assert out.getvalue().splitlines() == ["  [bold]not markup[/bold] and", "    a line long enough to wrap"]
    file_out = io.StringIO()
    say(Console(file=file_out, width=30, markup=False), "a line long enough to wrap " * 3)
    assert len(file_out.getvalue().splitlines()) == 1


def _event() -> Event:
    return Event(
        kind="gpu_error",
        time="2026-09-15T22:20:21.140",
        source="/var/log/server.log",
        line=1870,
        level="ERROR",
        logger="omlx.engine_core",
        message="Engine loop error: [METAL] Command buffer execution failed: Ignored (for causing prior/excessive "
        "GPU errors) (00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)",
    )


def test_a_narrow_events_table_puts_the_key_fields_on_one_line() -> None:
    con, out = _terminal(80)
    EventRows(con).row(_event())
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("2026-09-15T22:20:21 gpu_error ERROR server.log:1870 Engine loop error:")
    assert all(len(line) <= 80 for line in lines) and all(line.startswith("    ") for line in lines[1:])


def test_a_message_wraps_under_itself_at_120_columns() -> None:
    con, out = _terminal(120)
    rows = EventRows(con)
    rows.header(None)
    rows.row(_event())
    zone, _, row, *rest = out.getvalue().splitlines()
    assert zone.startswith("times: read in ")
    assert row.index("Engine loop error") == 69 and rest  # not under column 60, half the width
    assert all(line.startswith(" " * 69) and not line[69].isspace() and len(line) <= 120 for line in rest)


def test_the_untimed_marker_is_explained_where_it_is_first_seen() -> None:
    out = io.StringIO()
    rows = EventRows(Console(file=out, color_system=None))  # a file: every row one line
    untimed = replace(_event(), time=None, prev_time="2026-09-15T22:20:20.000")
    for event in (_event(), untimed, untimed):
        rows.row(event)
    lines = out.getvalue().splitlines()
    assert lines[1] == UNTIMED_LEGEND and lines[2].startswith("·2026-09-15T22:20:20  gpu_error")
    assert lines.count(UNTIMED_LEGEND) == 1 and len(lines) == 4


def test_a_wide_events_table_keeps_its_columns() -> None:
    con, out = _terminal(160)
    rows = EventRows(con)
    rows.header(None)
    rows.row(_event())
    _, header, row, *rest = out.getvalue().splitlines()  # under the zone line
    assert header.index("message") == row.index("Engine loop error") == 69  # 19 + 17 + 8 + 17, two spaces after each
    assert rest and all(line.startswith(" " * 69) and len(line) <= 160 for line in rest)


@pytest.mark.slow
@pytest.mark.parametrize("columns", [80, 100, 120])
def test_a_sessions_list_narrower_than_its_table_gives_each_session_one_line(columns: int) -> None:
    zone, *shown = on_terminal(["sessions", str(EXAMPLE), "-q"], columns).splitlines()
    *rows, last = shown
    assert zone.startswith("times: read in ")
    assert len(rows) == 160 and all(len(line) <= columns for line in shown)  # one line each, nothing wrapped
    assert re.match(r" +1 +≤ 2026-06-20 12:07:22 → 2026-06-21 00:56:01 +restart +0 faults", rows[0])
    # a session with a fault is marked, the end's date is left out on the same day, and the faults are named last
    assert rows[156].startswith("✗ 157  ≤ 2026-09-15 17:56:38 → 23:07:36  restart  3 faults  oMLX 0.5.7")
    assert [row[:1] for row in rows] == [" "] * 156 + ["✗"] * 4
    assert last == "✗ 4 of 160 sessions had GPU faults: sessions 157–160"


def test_a_faulted_session_is_red_on_a_terminal(example_analysis: Analysis) -> None:
    for width in (80, 200):
        out = io.StringIO()
        sessions_table(example_analysis, Console(file=out, width=width, force_terminal=True, color_system="standard"))
        faulted = [line for line in out.getvalue().splitlines() if "\x1b[1;31m" in line]
        assert len(faulted) == 5, width  # four sessions and the line that names them


def test_the_events_table_prints_each_row_before_the_next_event_exists() -> None:
    """Rows are flushed one by one: a table laid out from all rows would print nothing until the last."""
    out = io.StringIO()
    con = Console(file=out, width=200, markup=False, color_system=None)
    seen_before: list[bool] = []

    def events() -> Iterator[Event]:
        for number in range(3):
            seen_before.append(number == 0 or f"server.log:{1869 + number}" in out.getvalue())
            yield replace(_event(), line=1870 + number)

    events_table(events(), con, None)
    assert seen_before == [True, True, True] and out.getvalue().count("server.log:18") == 3


@pytest.mark.slow
def test_a_report_on_a_terminal_is_drawn_and_says_how_to_get_its_markdown() -> None:
    shown = on_terminal(["report", str(EXAMPLE), "-q"], 100)
    lines = shown.splitlines()
    assert "Escalation" in shown and "Why it faulted" in shown and all(len(line) <= 100 for line in lines)
    assert not any(line.startswith(("```", "### ", "| ")) for line in lines)  # no raw Markdown
    assert "gantt" not in shown and "(A chart: GitHub draws it from the report's Markdown.)" in shown
    hint = " ".join(line.strip() for line in lines[-3:])
    assert "write its Markdown with `logscan report LOG -o report.md`" in hint
    piped = subprocess.run(
        [*LOGSCAN, "report", str(EXAMPLE), "-q"], capture_output=True, text=True, env=_environment(100)
    )
    assert piped.stdout.startswith("## oMLX log report\n") and "```mermaid" in piped.stdout and piped.stderr == ""


def test_markdown_is_drawn_with_a_line_for_each_chart() -> None:
    from rich.console import Console

    from omlx_logscan.output.drawn import markdown_on_terminal

    console = Console(record=True, width=60, color_system=None)
    chart = ["```mermaid", "gantt", "  a :crit, 1, 2", "```"]
    table = ["| a | b |", "|---|---|", "| 1 | 2 |"]
    text = "\n".join(["### Escalation", "", "```", "20:19:38  Timeout", "```", "", *chart, "", *table, ""])
    markdown_on_terminal(text, console)
    shown = console.export_text()
    assert "Escalation" in shown and "20:19:38  Timeout" in shown
    assert "gantt" not in shown and "(A chart: GitHub draws it from the report's Markdown.)" in shown
    assert not any(line.startswith(("```", "### ", "|---")) for line in shown.splitlines())
