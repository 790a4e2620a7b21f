"""The watch loop: follow a growing oMLX log like ``tail -F`` and act on what its lines change.

In oMLX issue 3706 the server stayed up for hours with an engine that could not generate a token.
Reading the log as it is written lets a supervisor learn that within seconds. The follower
(``inputs/follow.py``) gives appended lines, ``stream/live.py`` turns them into events by the batch
grammar and classification, and ``watch/state.py`` runs the batch analysis on them and says what it
changed; this loop drives them, times the held last record, and turns the changes into notices and
hook commands.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from omlx_logscan.analysis.outage_model import WEDGE_AFTER_S
from omlx_logscan.analysis.probes import NEEDS_KEY
from omlx_logscan.analysis.results import DeadWindow, Incident
from omlx_logscan.errors import EXIT_DEAD, LogscanError
from omlx_logscan.inputs.follow import Follower
from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.output.notices import (
    Notice,
    counts_phrase,
    dead_end_notice,
    dead_notice,
    fault_notice,
    hook_start_failure_message,
    replayed_line,
    summary_line,
)
from omlx_logscan.output.outages import wedge_alert_message
from omlx_logscan.output.probes import needs_key_note, probe_dead_message, probe_message, probes_phrase
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import shown_at
from omlx_logscan.parsing.kinds import PROBE_KIND
from omlx_logscan.stream.live import LiveStream
from omlx_logscan.watch.head import Head, read_head
from omlx_logscan.watch.hooks import HookRun, hook_environment
from omlx_logscan.watch.own_requests import OwnRequests
from omlx_logscan.watch.probe_client import API_KEY_VARIABLE, ProbeResult, ProbeRunner, ProbeTarget
from omlx_logscan.watch.probe_schedule import NOTED_KINDS, ProbeSchedule, probe_event
from omlx_logscan.watch.state import Change, FaultClosed, ProbeProved, WatchState, WedgeSeen, WindowOpened

# How long the last record waits for continuation lines before it counts as complete. oMLX writes a
# record and its traceback in one go, but a busy Mac (or a capture through a pipe) can deliver the
# rest of it a poll or more later; a record torn there would lose its traceback to "unparsed".
RECORD_HOLD_S = 2.0


HOOK_WAIT_STEP_S = 0.05


class WatchSink(Protocol):
    """Where the watcher's output goes: the terminal table and NDJSON rows of ``output/live.py``, or a test's."""

    def event(self, event: Event) -> None: ...

    def notice(self, notice: Notice) -> None: ...

    def info(self, message: str) -> None: ...

    def unparsed(self, line: KeptLine) -> None: ...


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
    least: int = 0  # --priority: the rank of the least level printed (0: every level)
    exit_at_end: bool = False  # replay the file from its start as a finished log, then stop (implies from_start)
    wedge_after: float = WEDGE_AFTER_S  # a live wedge: nothing settled for this long while requests arrive
    probe: ProbeTarget | None = None  # --probe: where to send a generation probe when the log cannot tell
    probe_every: float | None = None  # --probe-every: a heartbeat probe


class Watcher:
    """Follow, assemble, classify and track; alert and run hooks on changes of the live state."""

    def __init__(self, options: WatchOptions, sink: WatchSink) -> None:
        self.options = options
        self.sink = sink
        self.follower = Follower(options.path, from_start=options.from_start or options.exit_at_end)
        self.stream = LiveStream(str(options.path))
        self.state = WatchState(str(options.path), options.wedge_after)
        self.state.growing.levels = self.stream.levels  # one set: the levels the records show, as batch reads them
        self.lines = 0
        self.events = 0
        self.hook_runs: dict[str, int] = {}
        self._running: list[HookRun] = []
        self._catching_up = options.from_start or options.exit_at_end
        self._last_line_at = 0.0
        self._began = time.monotonic()
        self._exit: int | None = None
        self.prober = ProbeRunner(options.probe) if options.probe is not None else None
        self.own = OwnRequests()  # the probes' own lines in the log
        self._told_key = False  # the note that the server wants a key was given (since the last other answer)
        self.schedule = ProbeSchedule(options.wedge_after, options.probe_every)
        self._head_levels: frozenset[str] = frozenset()  # the levels of what a watch from the end skipped
        self._default_model: str | None = None  # ... and the default model its last start named
        self._started: Event | None = None  # the last process start read
        self._due_at: float | None = None  # when the probe now due fell due

    def run(self, should_stop: Callable[[], bool]) -> int:
        """Watch until ``should_stop`` says so (exit 0) or, with exit_on_dead, the engine is dead (3).

        With exit_at_end it stops at the end of the file instead, as ``replay_to_end`` does.
        """
        if self.options.exit_at_end:
            return self.replay_to_end(should_stop)
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

    def replay_to_end(
        self, should_stop: Callable[[], bool] = lambda: False, clock: Callable[[], float] = time.monotonic
    ) -> int:
        """Read the file from its start to its end as a finished log and stop: the batch analysis, live.

        Nothing more will come, so what a live watch leaves open (the last record, the last incident)
        is complete, and the analysis is the one ``timeline`` gives. Returns 3 when
        exit_on_dead is set and the engine is dead at the end, else 0.
        """
        self.follower.check()
        if not self.options.path.is_file():  # nothing to wait for: the log is taken as finished
            raise LogscanError(f"{self.options.path}: no such file (--exit-at-end reads a log that exists)")
        self._began = clock()
        try:
            while not self.follower.caught_up and not should_stop():
                self.step(clock())
            if self._catching_up:  # stopped early: what was read still counts as the whole log
                self._caught_up(clock())
            self._wait_for_hooks()
        finally:
            self.follower.close()
        return self._exit or 0

    def step(self, now: float) -> bool:
        """One poll of the file and everything that follows from it; True when lines arrived."""
        opened = self.follower.skipped
        items = self.follower.poll()
        if self.follower.skipped != opened:  # the file was opened at its end: take what its head says
            self._take_head(read_head(self.options.path, self.follower.skipped), now)
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
            self.schedule.lines(now)
            self._feed(self.stream.add(batch), now)
        elif self.stream.holding and now - self._last_line_at >= RECORD_HOLD_S:
            self._feed(self.stream.flush(), now, seen=self._last_line_at)
        if not self._catching_up and self.state.due(now):
            self._apply(self.state.refresh(now), now)
        if self._catching_up and self.follower.caught_up:
            self._caught_up(now)
        if self.prober is not None and not self._catching_up:
            self._probe(now)
        self._reap(now)
        return arrived > 0

    def _take_head(self, head: Head, now: float) -> None:
        """Number on from the skipped part's lifetimes; for the probe, its process's end if it logged
        one last, its log levels, and its default model."""
        self.state.sessions_before = head.sessions
        self._head_levels = head.levels
        if head.ended is not None:
            self.schedule.note(head.ended, now)
        self._default_model = head.default_model

    def _target(self, target: ProbeTarget) -> ProbeTarget:
        """What to probe: --probe-model, else the default model oMLX's last start named (read when the
        probe goes, as a start's lines may come after its first), else None: the first /v1/models lists."""
        if self.options.probe is None or self.options.probe.model is not None:
            return target
        started = self._started.fields.get("default_model") if self._started is not None else self._default_model
        return replace(target, model=started)

    def _feed(self, events: list[Event], now: float, *, seen: float | None = None) -> None:
        """Print ``events`` and add them to the state; ``seen``: when their lines arrived, if earlier
        (a record held for its continuation), as the wall-clock incident gap runs from there."""
        kinds = self.options.kinds
        # Unparsed lines are shown among the events in file order, unless only chosen kinds are asked
        # for; the summary counts them either way.
        fresh = self.stream.take_unparsed()
        unparsed = [] if kinds else fresh
        started = False
        for event in events:
            while unparsed and unparsed[0].line < event.line:
                self.sink.unparsed(unparsed.pop(0))
            own = self.prober is not None and self.own.mark(event, now)
            shown = (event.kind in kinds) if kinds else event.kind != "record"
            if shown and shown_at(event.level, self.options.least):
                self.events += 1
                self.sink.event(event)
            self.state.add(event, now if seen is None else seen)
            if event.kind in NOTED_KINDS and not own:  # when its line came, as the silence is counted from the lines
                self.schedule.note(event, now if seen is None else seen)
                if event.kind == "process_start":
                    self._started = event
            started = started or event.kind == "process_start"
        for line in unparsed:
            self.sink.unparsed(line)
        if started and self._catching_up:  # history: analysed only to let go of the lifetimes before it
            self.state.refresh(now, history=True)

    def _apply(self, changes: list[Change], now: float) -> None:
        for change in changes:
            if isinstance(change, FaultClosed):
                self.sink.notice(fault_notice(change.incident, change.number))
                if change.incident.outcome == "unknown":  # the log may never settle it: a probe will
                    self.schedule.unsettled_fault(now)
                if self.options.on_fault:
                    entry = change.incident
                    since = entry.time if entry.outcome == "penalty_box" else None
                    self._hook("on-fault", self.options.on_fault, entry.session, since, entry.first, now)
            elif isinstance(change, WindowOpened):
                self._alert(change.window, change.entry, now)
            elif isinstance(change, WedgeSeen):
                self._wedge_alert(change, now)
            elif isinstance(change, ProbeProved):
                self._probe_alert(change, now)
            else:
                self.sink.notice(dead_end_notice(change.window, change.inferred))

    def _caught_up(self, now: float) -> None:
        """End the replay: what the history left open (its last record, its last incident) is history too.

        Waiting for more lines here would report a replayed fault as new, run --on-fault for it and
        leave it out of the replay's counts. Closing them changes only history, so nothing is reported
        but a dead window (or a wedge) still open at the end. With exit_at_end the log is finished: the
        analysis is the batch one, and the alert is for a window still open by its rules.
        """
        if self.options.exit_at_end:  # nothing more will come: the log is finished
            unfinished = self.follower.take_unfinished()
            self.lines += len(unfinished)
            self._feed(self.stream.add(unfinished), now)
        self._feed(self.stream.flush(), now)
        state = self.state
        state.refresh(now, history=True, finished=self.options.exit_at_end)
        self._catching_up = False
        self.sink.info(replayed_line(self.lines, self._counts(), at_end=self.options.exit_at_end))
        opened, wedged = state.open_window(), state.wedged()
        if opened is not None:
            self._alert(*opened, now)
        elif wedged is not None:
            self._wedge_alert(wedged, now)

    def _alert(self, window: DeadWindow, entry: Incident, now: float) -> None:
        notice = dead_notice(window, entry, self.options.path)
        self._engine_dead(notice, window.session, window.start, entry.penalty_record, now)

    def _wedge_alert(self, seen: WedgeSeen, now: float) -> None:
        """A live wedge: alert and run --on-dead once (the process is alive; a dead window already alerted)."""
        session = seen.session
        data = {"session": session, "since": seen.since, "unfinished": seen.unfinished, "event": seen.event.as_dict()}
        notice = Notice("wedge", wedge_alert_message(seen.since, seen.unfinished, session), data)
        self._engine_dead(notice, session, seen.since, seen.event, now)

    def _probe(self, now: float) -> None:
        """Take a finished probe's answer into the stream, or send one if the log cannot tell and none is out."""
        prober = self.prober
        assert prober is not None
        taken = prober.take()
        if taken is not None:
            trigger, sent, result = taken
            self.own.answered(now, result.model)
            self._key_note(result)
            message = probe_message(trigger, result.outcome, result.latency_s, result.status, result.detail)
            event = probe_event(str(self.options.path), sent, trigger, prober.target, result, message)
            self.schedule.restart(now)
            if not self.options.kinds or PROBE_KIND in self.options.kinds:
                self.events += 1
                self.sink.event(event)
            self._apply(self.state.add_probe(event), now)
        if prober.busy or self._exit is not None:
            return
        due = self.schedule.due(now, arrivals_hidden=not (self.stream.levels | self._head_levels) & {"DEBUG", "TRACE"})
        if due is None:
            self._due_at = None
            return
        self._due_at = now if self._due_at is None else self._due_at
        if self.stream.holding and now - self._due_at < RECORD_HOLD_S:
            return  # the last record read, held for its continuation, may be a request that finished
        self._due_at = None
        self.schedule.restart(now)  # probed, or the log proves the outage: the wait starts again
        if not self.state.proven_outage():
            prober.target = self._target(prober.target)
            prober.start(due)
            self.own.sent(now, prober.target.model)

    def _key_note(self, result: ProbeResult) -> None:
        """Say once (until an answer of another kind) that the server wants an API key the probe lacks."""
        wants_key = result.outcome == NEEDS_KEY
        if wants_key and not self._told_key and self.prober is not None:
            target = self.prober.target
            self.sink.info(needs_key_note(target.url, result.status, target.key_from if target.api_key else None))
        self._told_key = wants_key

    def _probe_alert(self, change: ProbeProved, now: float) -> None:
        """Probes proved the engine generation-dead: alert and run --on-dead once for this outage."""
        proof = change.proof
        data = {
            "session": proof.session,
            "since": proof.since,
            "outcome": proof.outcome,
            "probes": [probe.as_dict() for probe in proof.probes],
        }
        notice = Notice("probe_dead", probe_dead_message(proof), data)
        self._engine_dead(notice, proof.session, proof.since, proof.last, now)

    def _engine_dead(self, notice: Notice, session: int, since: str | None, event: Event, now: float) -> None:
        """What every proof of a generation-dead engine does once (a penalty box, a wedge, probes): the
        alert, --on-dead, and with --exit-on-dead the exit code."""
        self.sink.notice(notice)
        if self.options.on_dead:
            self._hook("on-dead", self.options.on_dead, session, since, event, now)
        if self.options.exit_on_dead:
            self._exit = EXIT_DEAD

    def _hook(self, hook: str, command: str, session: int, since: str | None, event: Event, now: float) -> None:
        self.hook_runs[hook] = self.hook_runs.get(hook, 0) + 1
        environment = self._environment() | hook_environment(hook, self.options.path, session, since, event)
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
            self.sink.notice(Notice("command", hook_start_failure_message(hook, exc), data))
            return
        self._running.append(HookRun(hook, command, session, process, output, now))

    def _environment(self) -> dict[str, str]:
        """The watch's environment for a hook, without the probe's API key (by name and by value)."""
        target = self.options.probe
        if target is None:
            return dict(os.environ)
        key = target.api_key
        return {name: value for name, value in os.environ.items() if name != API_KEY_VARIABLE and value != (key or "")}

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
        """The one line printed when watching stops (with --probe, the probes' outcomes too)."""
        line = summary_line(
            time.monotonic() - self._began,
            self.lines,
            self.events,
            self._counts(),
            dead=self.state.window,
            hook_runs=self.hook_runs,
            hooks_running=len(self._running),
            unparsed=self.stream.unparsed,
        )
        if self.prober is None:
            return line
        return f"{line}; {probes_phrase([str(probe.fields['outcome']) for probe in self.state.probes])}"

    def _counts(self) -> str:
        state = self.state
        return counts_phrase(len(state.sessions), len(state.faults), len(state.windows))
