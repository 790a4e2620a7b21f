"""Where the watcher writes: a terminal table or NDJSON rows."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from omlx_logscan.inputs.lines import KeptLine
    from omlx_logscan.output.notices import Notice, NoticeKind
    from omlx_logscan.parsing.event import Event


# Every kind of notice's style; an alert's own line is drawn apart (``alert_line``).
_NOTICE_STYLE: dict[NoticeKind, str] = {
    "dead_end": "bold green",
    "fault": "red",
    "command": "cyan",
    "dead": "",
    "wedge": "",
    "probe_dead": "",
}


# The lines that must not be missed in a scrolling log.
_ALERTS: frozenset[NoticeKind] = frozenset({"dead", "wedge", "probe_dead"})


class TableSink:
    """One row per event (the rows of ``events``), alerts and hook results between them."""

    def __init__(self, out: IO[str], quiet: bool, *, bell: bool = False, console: Console | None = None) -> None:
        from rich.text import Text

        from omlx_logscan.output import text as render

        self._text = Text
        self._render = render
        self._out = out
        self._con = console or render.console(out)  # ``console``: one of a given width, in tests
        self._rows = render.EventRows(self._con)
        self._err = render.console(sys.stderr)
        self._quiet = quiet
        self._bell = bell

    def event(self, event: Event) -> None:
        self._rows.row(event)
        self._out.flush()

    def notice(self, notice: Notice) -> None:
        if notice.kind in _ALERTS:
            self._render.alert_line(self._con, notice.message, bell=self._bell)
        else:
            style = _NOTICE_STYLE[notice.kind]
            self._render.say(self._con, self._text(self._render.printable(f"» {notice.message}"), style=style))
        for detail in notice.detail:  # a hook's output: it may echo log lines, or colour its own
            self._render.say(self._con, self._text(self._render.printable(f"    {detail}")))
        self._out.flush()

    def unparsed(self, line: KeptLine) -> None:
        """A line no grammar matched, shown as it comes (dimmed), so nothing read is out of sight."""
        text = self._render.printable(f"unparsed  line {line.line}: {line.text}")
        self._rows.line(self._text(text, style="dim"))
        self._out.flush()

    def info(self, message: str) -> None:
        if not self._quiet:
            self._render.say(self._err, self._text(self._render.printable(message), style="dim"))


class NdjsonSink:
    """Events as ``Event.as_dict()`` rows; alerts and hook results as rows with a ``watch`` key."""

    def __init__(self, out: IO[str], quiet: bool) -> None:
        from omlx_logscan.inputs.hosts import this_host
        from omlx_logscan.stream.zone_clock import clock_for

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

    def unparsed(self, line: KeptLine) -> None:
        """Rows stay events and notices, as docs/watch.md lists them; the summary counts these lines."""

    def info(self, message: str) -> None:
        if not self._quiet:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()
