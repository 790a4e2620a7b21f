"""Live watch: follow a growing oMLX log like ``tail -F`` and keep the analyzer's state as lines arrive.

In oMLX issue 3706 the server stayed up for hours with an engine that could not generate a token.
Reading the log as it is written lets a supervisor learn that within seconds. Every appended line
goes through the same grammar, record assembly and classification as the batch commands; a small
state machine keeps sessions, fault incidents and dead-engine windows by the analyzer's rules, and
the watcher turns their changes into alerts and the user's hook commands.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from omlx_logscan.analysis import (
    INCIDENT_GAP_S,
    DeadWindow,
    Incident,
    Session,
    joins_incident,
    session_in_progress,
    session_started_by,
    settled_outcome,
)
from omlx_logscan.catalog import INCIDENT_KINDS
from omlx_logscan.document import dead_for
from omlx_logscan.errors import EXIT_DEAD, LogscanError
from omlx_logscan.events import Event, StartCollapser, classify
from omlx_logscan.records import Record, assemble
from omlx_logscan.scan import KeptLine
from omlx_logscan.sources import SNIFF_BYTES, looks_binary, not_text
from omlx_logscan.timeutil import human_duration, human_time, seconds

READ_BYTES = 1 << 20
POLL_BYTES = 8 << 20  # read at most this much per poll, so a long backlog is processed in steps
MAX_LINE_BYTES = 1 << 20  # a "line" this long without a newline is data, not a line being written
RECORD_HOLD_S = 0.5  # how long the last record waits for continuation lines before it counts as complete
MAX_PENDING_LINES = 5000
OUTPUT_KEEP_CHARS = 4000  # how much of a hook command's output is reported
HOOK_WAIT_STEP_S = 0.05


def log_path(path: str | None, base_path: str | None) -> Path:
    """The file to follow: PATH (a folder means its server.log), else oMLX's ``<base>/logs/server.log``."""
    if path is not None and base_path is not None:
        raise LogscanError("give a PATH or --base-path, not both")
    if path == "-":
        raise LogscanError("watch follows a file and cannot follow stdin: give the log's path")
    if path is not None:
        target = Path(path).expanduser()
        target = target / "server.log" if target.is_dir() else target
    else:
        base = base_path or os.environ.get("OMLX_BASE_PATH") or "~/.omlx"
        target = Path(base).expanduser() / "logs" / "server.log"
    if target.is_file():
        with open(target, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
        if looks_binary(head):
            raise LogscanError(not_text(str(target), head))
    return target


# -- following the file -------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    """Something that happened to the followed file rather than in it."""

    kind: str  # following, waiting, unreadable, rotated, truncated
    message: str


class Follower:
    """Read a log as it grows, like ``tail -F``: across rotation (a new inode), truncation, late creation."""

    def __init__(self, path: Path, *, from_start: bool) -> None:
        self.path = path
        self.caught_up = False  # what the file held when watching began has been read
        self._from_start = from_start
        self._started = False
        self._handle: IO[bytes] | None = None
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._line = 0
        self._partial = b""
        self._said: str | None = None  # the last waiting/unreadable notice, so it is said once

    def check(self) -> None:
        """Refuse, before watching starts, a path that exists but can never be followed."""
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise LogscanError(f"{self.path}: cannot open ({exc.strerror or exc})") from None
        if not stat.S_ISREG(info.st_mode):
            raise LogscanError(f"{self.path}: not a regular file")
        if not os.access(self.path, os.R_OK):
            raise LogscanError(f"{self.path}: permission denied")

    def poll(self) -> list[KeptLine | FileChange]:
        """What was appended since the last poll, in file order, with changes of file in between."""
        out: list[KeptLine | FileChange] = []
        if self._handle is None:
            self._open(out)
            self._started = True  # a file that appears later is new: all of it is read
            if self._handle is None:
                self.caught_up = True  # nothing there yet, so nothing to catch up on
                return out
        if os.fstat(self._handle.fileno()).st_size < self._offset:
            self._rewind()
            out.append(FileChange("truncated", f"{self.path} was truncated: reading it again from the start"))
        if not self._read(out):
            return out  # more is waiting: the next poll goes on
        self.caught_up = True
        if self._replaced():
            self._read(out)  # the last lines written to the old file before it was renamed
            self._emit_partial(out)
            self.close()
            out.append(FileChange("rotated", f"{self.path} was rotated: following the new file"))
            self._open(out)
            if self._handle is not None:
                self._read(out)
        return out

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _open(self, out: list[KeptLine | FileChange]) -> None:
        try:
            handle = open(self.path, "rb", buffering=0)  # noqa: SIM115 - kept open while following
        except FileNotFoundError:
            self._say(out, FileChange("waiting", f"waiting for {self.path} to appear"))
            return
        except OSError as exc:
            self._say(out, FileChange("unreadable", f"{self.path}: cannot open ({exc.strerror or exc}); retrying"))
            return
        info = os.fstat(handle.fileno())
        self._handle = handle
        self._identity = (info.st_dev, info.st_ino)
        self._offset = self._line = 0
        self._partial = b""
        if not self._started and not self._from_start:
            self._skip_existing()
        self._said = None
        out.append(FileChange("following", f"following {self.path} from line {self._line + 1}"))

    def _say(self, out: list[KeptLine | FileChange], change: FileChange) -> None:
        if self._said != change.message:
            out.append(change)
            self._said = change.message

    def _skip_existing(self) -> None:
        """Start after the last complete line, counting lines so events keep their true line numbers."""
        assert self._handle is not None
        position = last_break = lines = 0
        while data := self._handle.read(READ_BYTES):
            lines += data.count(b"\n")
            cut = data.rfind(b"\n")
            if cut >= 0:
                last_break = position + cut + 1
            position += len(data)
        self._handle.seek(last_break)
        self._offset, self._line = last_break, lines

    def _rewind(self) -> None:
        assert self._handle is not None
        self._handle.seek(0)
        self._offset = self._line = 0
        self._partial = b""

    def _replaced(self) -> bool:
        """A different file now has the name (rotation); a missing name means the new one is not there yet."""
        try:
            info = os.stat(self.path)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) != self._identity

    def _read(self, out: list[KeptLine | FileChange]) -> bool:
        """Read complete lines; True when the end of the file was reached."""
        assert self._handle is not None
        budget = POLL_BYTES
        while budget > 0:
            data = self._handle.read(min(READ_BYTES, budget))
            if not data:
                return True
            budget -= len(data)
            self._offset += len(data)
            pieces = (self._partial + data).split(b"\n")
            self._partial = pieces.pop()
            for raw in pieces:
                self._emit(raw, out)
            if len(self._partial) > MAX_LINE_BYTES:
                self._emit_partial(out)
        return False

    def _emit_partial(self, out: list[KeptLine | FileChange]) -> None:
        if self._partial:
            self._emit(self._partial, out)
            self._partial = b""

    def _emit(self, raw: bytes, out: list[KeptLine | FileChange]) -> None:
        self._line += 1
        text = raw.decode("utf-8", errors="replace")
        out.append(KeptLine(self._line, text.removeprefix("\ufeff") if self._line == 1 else text))


# -- lines to events ----------------------------------------------------------------------------


class LiveStream:
    """Appended lines → events, with ``records.assemble`` and ``events.classify``.

    The last record stays open until the next head line (or ``flush``), so a traceback joins the
    record it belongs to. The last dated head line is kept as context: it dates time-only lines
    and gives untimed records the time before them, as in a batch read.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.unparsed = 0
        self._pending: list[KeptLine] = []
        self._context: str | None = None
        self._starts = StartCollapser()

    @property
    def holding(self) -> bool:
        return bool(self._pending)

    def add(self, lines: Iterable[KeptLine]) -> list[Event]:
        before = len(self._pending)
        self._pending.extend(lines)
        if len(self._pending) == before:
            return []
        return self._settle(keep_last=len(self._pending) <= MAX_PENDING_LINES)

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
        self.unparsed += sum(1 for n, _ in assembly.unparsed if n != context_line and (cut is None or n < cut))
        heads = {kept.line: kept.text for kept in self._pending}
        for record in done:
            if record.head.date is not None:
                self._context = heads[record.line]
        self._pending = [kept for kept in self._pending if cut is not None and kept.line >= cut]
        return self._events(done)

    def _events(self, records: list[Record]) -> list[Event]:
        events = [ev for record in records for ev in classify(record, self.source, 0)]
        return [ev for ev in events if self._starts.feed(ev)]


# -- live analyzer state ------------------------------------------------------------------------


@dataclass
class FaultClosed:
    """A new fault incident is complete (not a repeat inside a dead window)."""

    incident: Incident


@dataclass
class WindowOpened:
    """The engine entered the penalty box: generation-dead until the process ends."""

    window: DeadWindow
    entry: Incident


@dataclass
class WindowClosed:
    """A dead window ended: a new process start, an inferred restart, a fatal exit or a crash."""

    window: DeadWindow
    inferred: bool


Change = FaultClosed | WindowOpened | WindowClosed


class LiveState:
    """Sessions, fault incidents and dead windows, updated one event at a time by the analyzer's rules.

    An incident is complete when a record two seconds later arrives (log time) or when nothing was
    added to it for two seconds (wall time, see ``settle``): only then is its outcome known.
    """

    def __init__(self) -> None:
        self.sessions: list[Session] = []
        self.faults: list[Incident] = []
        self.windows: list[DeadWindow] = []
        self.repeats = 0
        self.window: DeadWindow | None = None  # the open dead window
        self.window_entry: Incident | None = None
        self.last_stamp: str | None = None
        self._incident: Incident | None = None
        self._incident_seen = 0.0
        self._last_incident_start: str | None = None
        self.info_seen = False  # an oMLX INFO record so far: the log level shows finished requests

    def feed(self, event: Event, now: float) -> list[Change]:
        changes: list[Change] = []
        if event.logger is not None and event.level in ("INFO", "DEBUG", "TRACE"):
            self.info_seen = True
        if self._incident is not None and event.time is not None:
            gap = seconds(self._incident.last_time, event.time)
            if gap is not None and gap >= INCIDENT_GAP_S:
                changes += self.close_incident()
        if event.kind == "process_start":
            changes += self.close_incident()
            changes += self._end_window("restart", event)
            self._open_session(event, inferred=False)
        elif event.kind == "gpu_error":
            changes += self._add_failure(event, now)
        elif event.kind in ("process_exit", "faulthandler_dump"):
            changes += self.close_incident()
            reason = "fatal_exit" if event.fields.get("reason") == "fatal_exit" else "crash"
            self._session(event).end_reason = reason
            changes += self._end_window(reason, event)
        else:
            self._count(event)
        if event.time is not None:
            self.last_stamp = event.time
            self._session(event).end = event.time
            if self.window is not None:
                self.window.log_end = event.time
        return changes

    def settle(self, now: float) -> list[Change]:
        """Close the open incident once nothing joined it for INCIDENT_GAP_S of wall time."""
        if self._incident is not None and now - self._incident_seen >= INCIDENT_GAP_S:
            return self.close_incident()
        return []

    def _session(self, event: Event) -> Session:
        if not self.sessions:  # the log began (or watching began) inside a running process
            self.sessions.append(session_in_progress(event))
        return self.sessions[-1]

    def _open_session(self, event: Event, *, inferred: bool) -> None:
        previous = self.sessions[-1].omlx_version if inferred and self.sessions else None
        self.sessions.append(
            session_started_by(
                len(self.sessions) + 1, event, inferred=inferred, after=self.last_stamp, version=previous
            )
        )

    def _count(self, event: Event) -> None:
        session = self._session(event)
        if event.kind == "request_complete":
            session.requests_completed = (session.requests_completed or 0) + 1
            if self.window is not None:
                self.window.requests_completed = (self.window.requests_completed or 0) + 1
        elif event.kind == "engine_start":
            session.engine_starts = (session.engine_starts or 0) + 1

    def _add_failure(self, event: Event, now: float) -> list[Change]:
        incident = self._incident
        if incident is not None and joins_incident(incident.last_time, event):
            incident.records.append(event)
            self._incident_seen = now
            return []
        changes = self.close_incident()
        if self.window is not None and event.fields.get("code_name") != "SubmissionsIgnored":
            # A penalty-boxed process fails only with SubmissionsIgnored: another fault means a new process.
            changes += self._end_window("restart", event, inferred=True)
            self._open_session(event, inferred=True)
        name = str(event.fields.get("code_name"))
        self._incident = Incident([event], self._session(event).index, INCIDENT_KINDS.get(name, "other_gpu"))
        self._incident_seen = now
        return changes

    def close_incident(self) -> list[Change]:
        """The open incident is complete: its outcome is settled and it is a new fault or a window's repeat."""
        incident = self._incident
        if incident is None:
            return []
        self._incident = None
        failure_times = [t for ev in incident.records if (t := ev.time)]
        window = self.window
        if window is not None:  # already dead: a repeat of the window, not a new fault
            self.repeats += 1
            window.repeats += 1
            gap = seconds(self._last_incident_start, incident.time)
            if gap is not None:
                window.intervals_s.append(gap)
            self._last_incident_start = incident.time
            window.last_failure = max([*failure_times, window.last_failure or ""]) or None
            return []
        incident.outcome = settled_outcome(incident) or "unknown"
        self.faults.append(incident)
        self.sessions[incident.session - 1].faults += 1
        changes: list[Change] = [FaultClosed(incident)]
        if incident.outcome == "penalty_box":
            opened = DeadWindow(
                incident.session,
                incident.time,
                max(failure_times, default=incident.time),
                None,
                False,
                None,
                "eof",
                0,
                [],
                0 if self.info_seen else None,  # finished requests are INFO lines: unknown at WARNING level
                self.last_stamp,
            )
            incident.dead_window = len(self.windows)
            self.windows.append(opened)
            self.window, self.window_entry = opened, incident
            self._last_incident_start = incident.time
            changes.append(WindowOpened(opened, incident))
        return changes

    def _end_window(self, reason: str, event: Event, *, inferred: bool = False) -> list[Change]:
        window = self.window
        if window is None:
            return []
        window.end = event.time
        window.end_exact = event.time is not None and not inferred
        window.end_after = None if window.end_exact else (self.last_stamp if inferred else event.prev_time)
        window.end_reason = reason
        self.window = self.window_entry = None
        return [WindowClosed(window, inferred)]


# -- what the watcher says ----------------------------------------------------------------------


@dataclass
class Notice:
    """An alert, a fault or a hook result: words for people and a row for machines."""

    kind: str  # fault, dead, dead_end, command
    message: str
    data: dict[str, Any]
    detail: list[str] = field(default_factory=list)  # a hook's output lines


def penalty_event(incident: Incident) -> Event:
    """The record that shows the penalty box (the first SubmissionsIgnored one), else the first."""
    return next((ev for ev in incident.records if ev.fields.get("code_name") == "SubmissionsIgnored"), incident.first)


def fault_notice(incident: Incident, number: int) -> Notice:
    codes = " → ".join(incident.code_names) or incident.kind
    message = (
        f"GPU fault {number} in session {incident.session} at {human_time(incident.time)}: {codes} ({incident.context})"
    )
    consequence = {
        "penalty_box": "the driver's penalty box",
        "fatal_exit": "the process exits for a clean restart",
        "crash": "the process crashed",
    }.get(incident.outcome)
    if consequence:
        message += f"; {consequence}"
    return Notice("fault", message, {"fault": incident.as_dict()})


def dead_notice(window: DeadWindow, entry: Incident, log: Path) -> Notice:
    event = penalty_event(entry)
    message = (
        f"ALERT engine generation-dead since {human_time(window.start)}; {window.repeats} repeats "
        f"(session {window.session}, {os.path.basename(event.source)}:{event.line}). The GPU driver ignores "
        "this process's submissions: only a restart recovers it"
    )
    return Notice("dead", message, {"window": window.as_dict(), "log": str(log), "event": event.as_dict()})


def dead_end_notice(window: DeadWindow, inferred: bool) -> Notice:
    if inferred:
        how = f"a new kind of GPU fault at {human_time(window.end)} shows the process was restarted"
    elif window.end_reason == "restart":
        how = (
            f"a new process started at {human_time(window.end)}"
            if window.end_exact
            else f"a new process started after {human_time(window.end_after)}"
        )
    else:
        what = "exited for a restart (fatal exit)" if window.end_reason == "fatal_exit" else "crashed"
        when = f"at {human_time(window.end)}" if window.end else f"after {human_time(window.end_after)}"
        how = f"the process {what} {when}"
    message = (
        f"engine dead window of session {window.session} ended: {how}; {dead_for(window)}, {window.repeats} repeats"
    )
    return Notice("dead_end", message, {"window": window.as_dict(), "inferred_restart": inferred})


# -- hook commands ------------------------------------------------------------------------------


@dataclass
class HookRun:
    """A running --on-dead / --on-fault command and where its output goes."""

    hook: str
    command: str
    session: int
    process: subprocess.Popen[bytes]
    output: IO[bytes]
    started: float

    def result(self, now: float, timeout: float) -> Notice | None:
        """The report once the command ended (or was killed for running too long); None while it runs."""
        code = self.process.poll()
        timed_out = code is None and now - self.started > timeout
        if timed_out:
            with contextlib.suppress(ProcessLookupError):  # it may have ended a moment ago
                os.killpg(self.process.pid, signal.SIGKILL)
            code = self.process.wait()
        if code is None:
            return None
        self.output.seek(0)
        text = self.output.read().decode("utf-8", errors="replace")[-OUTPUT_KEEP_CHARS:]
        self.output.close()
        if timed_out:
            message = f"{self.hook} command timed out after {human_duration(timeout)} and was killed"
        else:
            message = f"{self.hook} command exited {code}"
        data = {
            "hook": self.hook,
            "command": self.command,
            "session": self.session,
            "exit_code": code,
            "timed_out": timed_out,
            "output": text,
        }
        return Notice("command", message, data, text.splitlines())


def hook_environment(hook: str, log: Path, session: int, dead_since: str | None, event: Event) -> dict[str, str]:
    """What a hook command learns from its environment (docs/watch.md lists these)."""
    return {
        "LOGSCAN_HOOK": hook,
        "LOGSCAN_LOG": str(log),
        "LOGSCAN_SESSION": str(session),
        "LOGSCAN_DEAD_SINCE": dead_since or "",
        "LOGSCAN_EVENT": json.dumps(event.as_dict(), ensure_ascii=False, default=str),
    }


# -- the watcher --------------------------------------------------------------------------------


class WatchSink(Protocol):
    """Where the watcher's output goes; the CLI supplies the table and NDJSON renderers."""

    def event(self, event: Event) -> None: ...

    def notice(self, notice: Notice) -> None: ...

    def info(self, message: str) -> None: ...


@dataclass
class WatchOptions:
    path: Path
    from_start: bool = False
    interval: float = 0.5
    on_dead: str | None = None
    on_fault: str | None = None
    exit_on_dead: bool = False
    command_timeout: float = 300.0
    kinds: frozenset[str] = frozenset()  # empty: every kind but routine records


class Watcher:
    """Follow, assemble, classify and track; alert and run hooks on changes of the live state."""

    def __init__(self, options: WatchOptions, sink: WatchSink) -> None:
        self.options = options
        self.sink = sink
        self.follower = Follower(options.path, from_start=options.from_start)
        self.stream = LiveStream(str(options.path))
        self.state = LiveState()
        self.lines = 0
        self.events = 0
        self.hook_runs: dict[str, int] = {}
        self._running: list[HookRun] = []
        self._catching_up = options.from_start
        self._last_line_at = 0.0
        self._began = time.monotonic()
        self._exit: int | None = None

    def run(self, should_stop: Callable[[], bool]) -> int:
        """Watch until ``should_stop`` says so (exit 0) or, with exit_on_dead, the engine is dead (3)."""
        self.follower.check()
        self._began = time.monotonic()
        try:
            while not should_stop() and self._exit is None:
                if not self.step(time.monotonic()):
                    time.sleep(self.options.interval)
            if self._exit is not None:
                self._wait_for_hooks()
        finally:
            self.follower.close()
        return self._exit or 0

    def step(self, now: float) -> bool:
        """One poll of the file and everything that follows from it; True when lines arrived."""
        items = self.follower.poll()
        arrived = sum(1 for item in items if isinstance(item, KeptLine))
        batch: list[KeptLine] = []
        for item in items:
            if isinstance(item, KeptLine):
                batch.append(item)
                continue
            self._feed(self.stream.add(batch), now)  # the lines before the change belong to the old file
            batch = []
            if item.kind in ("rotated", "truncated"):
                self._feed(self.stream.flush(), now)
            self.sink.info(item.message)
        if arrived:
            self.lines += arrived
            self._last_line_at = now
            self._feed(self.stream.add(batch), now)
        elif self.stream.holding and now - self._last_line_at >= RECORD_HOLD_S:
            self._feed(self.stream.flush(), now)
        self._apply(self.state.settle(now), now)
        if self._catching_up and self.follower.caught_up:
            self._caught_up(now)
        self._reap(now)
        return arrived > 0

    def _feed(self, events: list[Event], now: float) -> None:
        kinds = self.options.kinds
        for event in events:
            if (event.kind in kinds) if kinds else event.kind != "record":
                self.events += 1
                self.sink.event(event)
            self._apply(self.state.feed(event, now), now)

    def _apply(self, changes: list[Change], now: float) -> None:
        if self._catching_up:
            return  # history: the state is kept, the alert for what is still true comes at catch-up
        for change in changes:
            if isinstance(change, FaultClosed):
                self.sink.notice(fault_notice(change.incident, len(self.state.faults)))
                if self.options.on_fault:
                    entry = change.incident
                    since = entry.time if entry.outcome == "penalty_box" else None
                    self._hook("on-fault", self.options.on_fault, entry.session, since, entry.first, now)
            elif isinstance(change, WindowOpened):
                self._alert(change.window, change.entry, now)
            else:
                self.sink.notice(dead_end_notice(change.window, change.inferred))

    def _caught_up(self, now: float) -> None:
        """End the replay: what the history left open (its last record, its last incident) is history too.

        Waiting for more lines here would report a replayed fault as new, run --on-fault for it and
        leave it out of the replay's counts. Closing them changes only history, so nothing is reported
        but a dead window still open at the end.
        """
        self._feed(self.stream.flush(), now)
        self.state.close_incident()
        self._catching_up = False
        state = self.state
        self.sink.info(f"replayed {_plural(self.lines, 'line')}: {_counts(state)}; now following")
        if state.window is not None and state.window_entry is not None:
            self._alert(state.window, state.window_entry, now)

    def _alert(self, window: DeadWindow, entry: Incident, now: float) -> None:
        self.sink.notice(dead_notice(window, entry, self.options.path))
        if self.options.on_dead:
            self._hook("on-dead", self.options.on_dead, window.session, window.start, penalty_event(entry), now)
        if self.options.exit_on_dead:
            self._exit = EXIT_DEAD

    def _hook(self, hook: str, command: str, session: int, since: str | None, event: Event, now: float) -> None:
        self.hook_runs[hook] = self.hook_runs.get(hook, 0) + 1
        environment = os.environ | hook_environment(hook, self.options.path, session, since, event)
        output = tempfile.TemporaryFile()  # noqa: SIM115 - closed when the run is reaped
        try:
            process = subprocess.Popen(
                command,
                shell=True,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C on the watcher must not kill a restart half-way
            )
        except OSError as exc:
            output.close()
            data = {"hook": hook, "command": command, "session": session, "exit_code": None, "error": str(exc)}
            self.sink.notice(Notice("command", f"{hook} command could not start: {exc}", data))
            return
        self._running.append(HookRun(hook, command, session, process, output, now))

    def _reap(self, now: float) -> None:
        for run in list(self._running):
            notice = run.result(now, self.options.command_timeout)
            if notice is not None:
                self._running.remove(run)
                self.sink.notice(notice)

    def _wait_for_hooks(self) -> None:
        """Before exiting on a dead engine, let the hooks finish (each is bounded by its timeout)."""
        while self._running:
            self._reap(time.monotonic())
            if self._running:
                time.sleep(HOOK_WAIT_STEP_S)

    def summary(self) -> str:
        """The one line printed when watching stops."""
        state = self.state
        elapsed = time.monotonic() - self._began
        parts = [
            f"logscan watch: stopped after {human_duration(elapsed)}: {_plural(self.lines, 'line')}, "
            f"{_plural(self.events, 'event')} shown",
            _counts(state),
        ]
        if state.window is not None:
            parts.append(f"engine dead since {human_time(state.window.start)} ({state.window.repeats} repeats)")
        if self.hook_runs:
            parts.append(", ".join(f"{hook} ran {n}x" for hook, n in sorted(self.hook_runs.items())))
        if self._running:
            parts.append(f"{_plural(len(self._running), 'hook command')} still running, left to finish")
        if self.stream.unparsed:
            parts.append(f"{_plural(self.stream.unparsed, 'unparsed line')}")
        return "; ".join(parts)


def _counts(state: LiveState) -> str:
    """The tallies both the end of the replay and the stop summary give."""
    return (
        f"{_plural(len(state.sessions), 'session')}, {_plural(len(state.faults), 'GPU fault')}, "
        f"{_plural(len(state.windows), 'dead window')}"
    )


def _plural(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
