"""The wedge, watched live: requests keep arriving and none finishes, aborts or fails.

The batch rule (``analysis/outages.py``) sees a wedge when its lifetime is over; a watch must say so
while it happens. It counts the arrivals since anything last settled, in log time, and reports once
per lifetime when, at an arrival, nothing has settled for ``wedge_after_s`` while at least
WEDGE_MIN_UNFINISHED requests wait. Arrivals are DEBUG (and TRACE) lines: at INFO it never fires.
"""

from __future__ import annotations

from dataclasses import dataclass

from omlx_logscan.analysis.outages import ARRIVAL_FORMS, SETTLING_KINDS, WEDGE_MIN_UNFINISHED
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import ARRIVAL_KIND, CRASH_KINDS
from omlx_logscan.timeutil import seconds

# Events that end a stall: the batch rule's, and finished requests, which a watch sees as events.
_SETTLING = SETTLING_KINDS | {"request_complete"}
_FORMS = ARRIVAL_FORMS


@dataclass
class WedgeSeen:
    """A live wedge: since ``since`` (the last settled moment) ``unfinished`` requests wait."""

    since: str | None
    unfinished: int
    event: Event  # the arrival that showed it


class LiveWedge:
    """One event at a time: is the current lifetime wedged? Re-armed by each process start, disarmed
    by a process's end (a fatal exit or a crash: its supervisor restarts it, nothing is wedged)."""

    def __init__(self, wedge_after_s: float) -> None:
        self.wedge_after_s = wedge_after_s
        self.settled: str | None = None  # log time of the last finish, abort or failure (or the start)
        self.unfinished = 0
        self.form: str | None = None  # the arrival form counted
        self.armed = True
        self.current: WedgeSeen | None = None  # the wedge shown and not ended since

    def feed(self, event: Event) -> WedgeSeen | None:
        """Take one event; a WedgeSeen the first time the lifetime shows a wedge."""
        if event.kind == "process_start":
            self.settled, self.unfinished, self.armed, self.current = event.time, 0, True, None
        elif event.kind in CRASH_KINDS:
            self.armed, self.current = False, None
        elif event.kind in _SETTLING:
            self.settled = event.time or self.settled
            self.unfinished, self.current = 0, None
        elif event.kind == ARRIVAL_KIND and self.armed:
            return self._arrived(event)
        return None

    def _arrived(self, event: Event) -> WedgeSeen | None:
        form = str(event.fields.get("form", ""))
        if form not in _FORMS:
            return None
        if self.form is None or _FORMS.index(form) < _FORMS.index(self.form):
            self.form = form  # a better-counting form came: count by it from now on
        if form != self.form:
            return None
        if self.settled is None:
            self.settled = event.time  # watching began mid-lifetime: the first arrival starts the clock
        self.unfinished += 1
        quiet = seconds(self.settled, event.time)
        if self.unfinished >= WEDGE_MIN_UNFINISHED and quiet is not None and quiet >= self.wedge_after_s:
            self.armed = False  # once per lifetime: the next start re-arms it
            self.current = WedgeSeen(self.settled, self.unfinished, event)
            return self.current
        return None
