"""Where the watcher writes: a terminal table or NDJSON rows."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from omlx_logscan.parsing.event import Event
    from omlx_logscan.watch.notices import Notice


_NOTICE_STYLE = {"dead": "bold red", "dead_end": "bold green", "fault": "red", "command": "cyan"}


_COLUMN_WIDTHS = (20, 17, 8, 17)  # time, kind, level, where; the message takes the rest of the line


class TableSink:
    """One line per event (the columns of ``events``), alerts and hook results between them."""

    def __init__(self, out: IO[str], quiet: bool) -> None:
        from rich.text import Text

        from omlx_logscan.output import text as render

        self._text = Text
        self._render = render
        self._out = out
        self._con = render.console(out)
        self._err = render.console(sys.stderr)
        self._quiet = quiet

    def event(self, event: Event) -> None:
        cells = self._render.event_cells(event)
        for cell, width in zip(cells, _COLUMN_WIDTHS, strict=False):
            cell.pad_right(max(0, width - cell.cell_len))
        self._con.print(self._text(" ").join(cells), soft_wrap=True)
        self._out.flush()

    def notice(self, notice: Notice) -> None:
        style = _NOTICE_STYLE.get(notice.kind, "")
        self._con.print(self._text(self._render.printable(f"» {notice.message}"), style=style), soft_wrap=True)
        for detail in notice.detail:  # a hook's output: it may echo log lines, or colour its own
            self._con.print(self._text(self._render.printable(f"    {detail}")), soft_wrap=True)
        self._out.flush()

    def info(self, message: str) -> None:
        if not self._quiet:
            self._err.print(self._text(self._render.printable(message), style="dim"), soft_wrap=True)


class NdjsonSink:
    """Events as ``Event.as_dict()`` rows; alerts and hook results as rows with a ``watch`` key."""

    def __init__(self, out: IO[str], quiet: bool) -> None:
        from omlx_logscan.inputs.hosts import this_host
        from omlx_logscan.output.zoned import clock_for

        self._out = out
        self._quiet = quiet
        self._clock = clock_for(None)  # a live log is this machine's: its zone, its host name
        self._host = this_host()

    def event(self, event: Event) -> None:
        from omlx_logscan.output.rows import write_ndjson

        self._clock.observe(event)
        write_ndjson([self._clock.row(event) | {"host": self._host}], self._out)
        self._out.flush()

    def notice(self, notice: Notice) -> None:
        from omlx_logscan.output.rows import write_ndjson

        row = {"watch": notice.kind, "message": notice.message, **notice.data}
        write_ndjson([self._clock.convert(row)], self._out)
        self._out.flush()

    def info(self, message: str) -> None:
        if not self._quiet:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()
