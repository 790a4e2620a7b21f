"""The watch's own probes in the log it follows: oMLX logs a probe like a user's request.

A probe's completion is a ``Completion: model=…, 1 tokens in …`` line (and below INFO its arrival is
an ``Added request … with 2 prompt tokens`` line, at TRACE an ``Incoming POST /v1/completions`` one
too). Counted, they would make the watch report the users' requests plus its own (191 for 189).
While a probe is out, and for LINGER_S after its answer came (a console capture through a pipe
flushes late), the first such lines are the probe's: they are marked ``watch_probe`` in the watch's
rows and left out of what it counts. The probe's answer is its own evidence of the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import ARRIVAL_KIND

OWN_FIELD = "watch_probe"  # the event field that marks a line of the watch's own probe
PROMPT_TOKENS_MAX = 4  # the probe's prompt "Hi": a token or two, three with a start token
LINGER_S = 10.0  # how long after its answer a probe's line may still be read


@dataclass
class _Out:
    """One probe sent: when (the watch's clock), the model it asks (None: not known yet), what of it was found."""

    sent: float
    model: str | None
    answered: float | None = None
    found: set[str] = field(default_factory=set)  # "completion", and the arrival forms


class OwnRequests:
    """The probes whose lines may still come, and the marking of those lines."""

    def __init__(self) -> None:
        self._out: list[_Out] = []

    def sent(self, now: float, model: str | None) -> None:
        self._let_go(now)  # a silent log brings no line to do it: each probe does
        self._out.append(_Out(now, model))

    def _let_go(self, now: float) -> None:
        """Forget the probes whose lines can no longer come."""
        self._out = [out for out in self._out if out.answered is None or now - out.answered <= LINGER_S]

    def answered(self, now: float, model: str | None) -> None:
        """The probe out got its answer (``model``: the one it asked, once /v1/models named it)."""
        if self._out and self._out[-1].answered is None:
            self._out[-1].answered = now
            self._out[-1].model = self._out[-1].model or model

    def mark(self, event: Event, now: float) -> bool:
        """Whether ``event`` is a line of a probe of the watch's; if so it is marked (``OWN_FIELD``)."""
        self._let_go(now)
        line = _line_of(event)
        probe = next((out for out in self._out if line is not None and _fits(event, line, out)), None)
        if probe is None or line is None:
            return False
        probe.found.add(line)
        event.fields[OWN_FIELD] = True
        return True


def _line_of(event: Event) -> str | None:
    """Which of a probe's lines ``event`` could be: its completion, or an arrival of the probe's shape."""
    fields = event.fields
    prompt = fields.get("prompt_tokens")
    small = prompt is None or (isinstance(prompt, int) and prompt <= PROMPT_TOKENS_MAX)
    if event.kind == "request_complete" and fields.get("type") == "completion" and fields.get("tokens") == 1:
        return "completion" if small else None
    if event.kind != ARRIVAL_KIND:
        return None
    form = fields.get("form")
    if form == "scheduler_added" and isinstance(prompt, int) and prompt <= PROMPT_TOKENS_MAX:
        return str(form)
    return str(form) if form == "incoming" and fields.get("path") == "/v1/completions" else None


def _fits(event: Event, line: str, out: _Out) -> bool:
    model = event.fields.get("model")
    return line not in out.found and (out.model is None or model is None or model == out.model)
