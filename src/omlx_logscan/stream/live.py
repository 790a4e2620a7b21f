"""Lines appended to a live log become events by the same assembly and classification as a batch read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.parsing.classify import classify
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.records import Record, assemble
from omlx_logscan.stream.starts import StartCollapser

MAX_PENDING_LINES = 5000


class LiveStream:
    """Appended lines → events, with ``parsing/records.py`` ``assemble`` and ``parsing/classify.py`` ``classify``.

    The last record stays open until the next head line (or ``flush``, which the watcher calls once
    the file has been quiet for a while), so a traceback joins the record it belongs to even when
    its lines arrive in a later poll. The last dated head line is kept as context: it dates time-only lines
    and gives untimed records the time before them, as in a batch read.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.unparsed = 0
        self.fresh_unparsed: list[KeptLine] = []  # unparsed lines since the watcher last took them
        self._pending: list[KeptLine] = []
        self._context: str | None = None
        self._starts = StartCollapser()
        self.levels: set[str] = set()  # the log levels records showed, as a batch read gathers them

    @property
    def holding(self) -> bool:
        return bool(self._pending)

    def add(self, lines: Iterable[KeptLine]) -> list[Event]:
        before = len(self._pending)
        self._pending.extend(lines)
        if len(self._pending) == before:
            return []
        return self._settle(keep_last=len(self._pending) <= MAX_PENDING_LINES)

    def take_unparsed(self) -> list[KeptLine]:
        """The lines no grammar matched since the last call, so a watch can show them as they come."""
        taken, self.fresh_unparsed = self.fresh_unparsed, []
        return taken

    def flush(self) -> list[Event]:
        """Everything held counts as complete: the file went quiet, ended, or was replaced."""
        return self._settle(keep_last=False)

    def _settle(self, *, keep_last: bool) -> list[Event]:
        if not self._pending:
            return []
        first = self._pending[0].line
        context_line = first - 2  # a gap, so no pending line can continue the context record
        context = [KeptLine(context_line, self._context)] if self._context is not None else []
        assembly = assemble([*context, *self._pending])
        records = [r for r in assembly.records if not (context and r.line == context_line)]
        if keep_last and not records:
            return []
        cut = records[-1].line if keep_last else None
        done = [r for r in records if cut is None or r.line < cut]
        unparsed = [
            KeptLine(n, text) for n, text in assembly.unparsed if n != context_line and (cut is None or n < cut)
        ]
        self.unparsed += len(unparsed)
        self.fresh_unparsed.extend(unparsed)
        heads = {kept.line: kept.text for kept in self._pending}
        for record in done:
            if record.head.date is not None:
                self._context = heads[record.line]
        self._pending = [kept for kept in self._pending if cut is not None and kept.line >= cut]
        return self._events(done)

    def _events(self, records: list[Record]) -> list[Event]:
        self.levels.update(record.log_level for record in records if record.log_level)
        events = [ev for record in records for ev in classify(record, self.source, 0)]
        # A marker folded into the start it belongs to is still a record its process wrote: the live
        # state sees it as one, as batch sees it among the records that say when a process last wrote.
        return [ev if self._starts.feed(ev) else replace(ev, kind="record", fields={}) for ev in events]
