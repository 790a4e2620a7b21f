"""When ``watch --probe`` spends a token: only where the log cannot tell whether the engine generates.

A request the log shows finishing proves the engine alive, and a penalty box, a proven wedge, a stop,
a fatal exit or a crash in the log say all there is to say; a probe then would only cost the server
a token. The clocks here are the watch's wall clock (a log's times may be hours behind a slow disk
or a replay), and each probe restarts them, so an idle healthy server is probed once per
``--wedge-after``. What a probe's answer proves is the analysis's (``analysis/probes.py``).
"""

from __future__ import annotations

from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import CRASH_KINDS, PROBE_KIND
from omlx_logscan.parsing.probes import ProbeTrigger
from omlx_logscan.watch.probe_client import ProbeResult, ProbeTarget

FAULT_WAIT_S = 5.0  # a closed GPU fault whose outcome is still unknown this long after: probe it
STOP_KINDS = CRASH_KINDS | {"shutdown"}  # the process logged its end (a process_exit is one of CRASH_KINDS)
NOTED_KINDS = STOP_KINDS | {"request_complete", "process_start"}  # what the schedule reads of the events


class ProbeSchedule:
    """The probe triggers: a possible wedge, an unsettled fault, a silent log, the heartbeat."""

    def __init__(self, wedge_after_s: float, every_s: float | None, now: float | None = None) -> None:
        """``now``: when the watch began (None: at the first ``due``)."""
        self.wedge_after_s = wedge_after_s
        self.every_s = every_s
        self.started = now is not None
        now = now or 0.0
        self.finished_at = now  # the last request the log showed finishing, or the last probe
        self.line_at = now  # the last line read, or the last probe
        self.probed_at = now
        self.fault_at: float | None = None  # when a fault's outcome was left unknown
        self.stopped = False  # the running process logged a stop, a fatal exit or a crash

    def lines(self, now: float) -> None:
        self.line_at = now

    def note(self, event: Event, now: float) -> None:
        """An event of NOTED_KINDS read from the log."""
        if event.kind == "request_complete":
            self.finished_at, self.fault_at = now, None
        elif event.kind == "process_start":  # a new lifetime: its wait counts from its start
            self.stopped, self.finished_at = False, now
        else:
            self.stopped, self.fault_at = True, None

    def unsettled_fault(self, now: float) -> None:
        self.fault_at = now

    def restart(self, now: float) -> None:
        """A probe went out (or came back): every clock starts again."""
        self.finished_at = self.line_at = self.probed_at = now
        self.fault_at, self.started = None, True

    def due(self, now: float, arrivals_hidden: bool) -> ProbeTrigger | None:
        """The trigger of a probe to send now, if one is due (the caller checks the log proves no outage)."""
        if not self.started:
            self.restart(now)
        if self.stopped:
            return None
        if self.fault_at is not None and now - self.fault_at >= FAULT_WAIT_S:
            return "fault"
        if arrivals_hidden and now - self.finished_at >= self.wedge_after_s:
            return "possible_wedge"
        if now - self.line_at >= self.wedge_after_s:
            return "silence"
        if self.every_s is not None and now - max(self.probed_at, self.finished_at) >= self.every_s:
            return "heartbeat"
        return None


def probe_event(
    source: str, sent: str, trigger: ProbeTrigger, target: ProbeTarget, result: ProbeResult, message: str
) -> Event:
    """A probe's answer as an event of the watch's stream, timed when it was ``sent``: from then on the
    engine did not answer, if it did not. Line 0: it is no line of the log. The URL has no credentials
    and the key is not in it."""
    fields = {
        "trigger": trigger,
        "outcome": result.outcome,
        "latency_s": result.latency_s,
        "status": result.status,
        "model": result.model,
        "url": target.url,
        "detail": result.detail or None,
    }
    return Event(PROBE_KIND, sent, source, 0, None, None, message, fields)
