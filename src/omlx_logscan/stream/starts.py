"""Startup blocks: the many markers oMLX prints when it starts become one ``process_start``."""

from __future__ import annotations

from collections.abc import Iterator

from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import CRASH_KINDS, RUNNING_PROCESS_KINDS
from omlx_logscan.timeutil import seconds

STARTUP_JOIN_SECONDS = 120.0


# Markers oMLX also writes in a running process (model discovery runs again on every pool
# refresh, settings are saved from the admin page too): they join an open start and never open one.
JOIN_ONLY_MARKERS = frozenset({"discovery", "settings"})


# Markers written once per process, as its modules are imported: one in the open start means the
# next one is another process's.
IMPORT_MARKERS = frozenset({"import"})


# Markers written by functions oMLX's modules call as they are imported, some several times, some later
# too: they join an open start, and open one only where no process is known to run (nothing seen yet
# showed one, or a stop or exit was seen since); in a running process they are routine records.
PRELUDE_MARKERS = frozenset({"prelude"})


# Markers written once per process, but after its first engine started (which closes the open
# start): they belong to the process's start whenever one was seen since the last stop or exit.
# Without one they open a start only after a stop or exit was seen; before any (a paste that
# begins in a running process) they are that process's routine records.
ONCE_PER_PROCESS_MARKERS = frozenset({"enforcer"})


_PROCESS_ENDS = CRASH_KINDS | {"shutdown"}


STARTUP_BLOCK = "startup_block"  # the marker the start's ``markers`` name for the timed INFO lines of either set


class StartCollapser:
    """One ``process_start`` per startup block, decided one event at a time (batch and live alike).

    Each banner opens a start, and so does an import-time marker when the open start has one;
    other markers join the open start unless more than STARTUP_JOIN_SECONDS passed or an event
    showed a running process (or its end) in between. A join-only
    marker that finds no open start, a once-per-process marker that finds no start and no
    stop or exit before it, and a prelude marker that finds no open start in a process seen
    running, is a routine record (kept when ``keep_routine``).
    """

    def __init__(self, *, keep_routine: bool = True) -> None:
        self.keep_routine = keep_routine
        self._open: Event | None = None
        self._current: Event | None = None  # the start of the process running now, until a stop or exit
        self._ended = False  # a stop or exit was seen, and no start since: the next process has not begun
        self._last_marker_time: str | None = None
        self._imported = False  # the open start has an import-time marker
        self._seen_running = False  # an event showed a running process

    def feed(self, event: Event) -> bool:
        """True when the event stands on its own; False when it was folded into a start (or dropped)."""
        if event.kind == "process_start" and self._current is not None and exits_at_start(event):
            _as_exit_at_start(event)  # the CLI's traceback after its startup lines: that process is over
        if event.kind == "process_start":
            marker = event.fields.get("marker")
            if self._open is not None and self._joins(marker, event.time or event.prev_time):
                self._imported = self._imported or marker in IMPORT_MARKERS
                return self._join(self._open, event)
            if marker in ONCE_PER_PROCESS_MARKERS and self._current is not None:
                return self._join(self._current, event)
            if (
                marker in JOIN_ONLY_MARKERS
                or (marker in ONCE_PER_PROCESS_MARKERS and not self._ended)
                or (marker in PRELUDE_MARKERS and self._seen_running and not self._ended)
            ):
                event.kind, event.fields = "record", {}
                return self.keep_routine
            event.fields["markers"] = [_shown(marker)]
            event.fields.pop("marker", None)
            self._open = self._current = event
            self._ended = False
            self._last_marker_time = event.time
            self._imported = marker in IMPORT_MARKERS
            return True
        if event.kind in RUNNING_PROCESS_KINDS:  # its end too
            self._open = None
            self._seen_running = True
        if event.kind in _PROCESS_ENDS:
            self._current = None
            self._ended = True
        return True

    def may_change(self, start: Event, earliest: str) -> bool:
        """Whether a later marker, timed ``earliest`` or later, could still change what this start
        shows: it is open and that marker would be close enough to join it, or it is the running
        process's and lacks what a once-per-process marker adds (the startup block, a time; such a
        line names no pid or version)."""
        if start is self._open and self._joins_at(earliest):
            return True
        return start is self._current and (STARTUP_BLOCK not in start.fields["markers"] or start.time is None)

    def _joins(self, marker: str | None, time: str | None) -> bool:
        """Whether a marker joins the open start: no banner, no second import-time line, close enough."""
        if marker == "banner" or (marker in IMPORT_MARKERS and self._imported):
            return False
        return self._joins_at(time)

    def _joins_at(self, time: str | None) -> bool:
        """Whether a marker at ``time`` is close enough to the last one to join the open start
        (when either time is unknown, it is)."""
        gap = seconds(self._last_marker_time, time)
        return gap is None or gap <= STARTUP_JOIN_SECONDS

    def _join(self, start: Event, marker: Event) -> bool:
        _join_start(start, marker)
        self._last_marker_time = marker.time or self._last_marker_time
        return False


# oMLX's command-line entry point: a traceback through it ended the ``omlx`` process itself.
CLI_ENTRY = ("omlx/cli.py", "main")


def exits_at_start(event: Event) -> bool:
    """Whether a startup line carries a traceback through oMLX's CLI entry (``cli.py main()``): the
    process that printed the startup lines raised out of its ``main`` and exited."""
    frames = event.fields.get("traceback") or []
    return any(
        str(frame.get("path", "")).endswith(CLI_ENTRY[0]) and frame.get("func") == CLI_ENTRY[1]
        for frame in frames
        if isinstance(frame, dict)
    )


def _as_exit_at_start(event: Event) -> None:
    """The startup line that carries the CLI's traceback becomes the process's exit: a fatal exit at
    start, told by the traceback's last line (its exception and message)."""
    text = str(event.fields.get("continuation") or "").rstrip().rsplit("\n", 1)[-1].strip()
    exception = event.fields.get("exception")
    event.kind = "process_exit"
    event.message = text or str(exception or event.message)
    event.entry, event.template, event.entries = None, None, ()  # no longer the startup line's message
    event.fields = {
        "reason": "fatal_exit",
        "reason_text": event.message,
        "at_start": True,
        "exception": exception,
        "traceback": event.fields.get("traceback"),
    }


def collapse_starts(events: Iterator[Event], *, keep_routine: bool = True) -> list[Event]:
    """One ``process_start`` per startup block, however many markers it printed."""
    collapser = StartCollapser(keep_routine=keep_routine)
    return [event for event in events if collapser.feed(event)]


def _shown(marker: str | None) -> str | None:
    """The name a start's ``markers`` give a marker: the join-only, once-per-process, import-time and
    prelude lines are timed lines of the startup block like the others."""
    timed = JOIN_ONLY_MARKERS | ONCE_PER_PROCESS_MARKERS | IMPORT_MARKERS | PRELUDE_MARKERS
    return STARTUP_BLOCK if marker in timed else marker


def _join_start(start: Event, marker: Event) -> None:
    """Fold one more startup marker into the start it belongs to."""
    shown = _shown(marker.fields.get("marker"))
    if shown not in start.fields["markers"]:
        start.fields["markers"].append(shown)
    start.lines += marker.lines
    for key in ("pid", "omlx_version", "default_model"):
        if marker.fields.get(key) is not None and start.fields.get(key) is None:
            start.fields[key] = marker.fields[key]
    if start.time is None and marker.time is not None:
        start.time = marker.time
        start.fields["time_from"] = "startup_block"
    start.next_time = start.next_time or marker.next_time
