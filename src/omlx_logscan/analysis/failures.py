"""Failures other than GPU faults, grouped by the message they are: the timeline's *Errors* part.

A failure is a record at ERROR or CRITICAL, one logged in an exception handler that did not
recover as designed, one that carries a traceback, or an HTTP answer of 5xx. GPU faults
(``gpu_error``) have the escalation and crash evidence (``CRASH_KINDS``) has its own part: neither
is counted here again. An HTTP 4xx answer, or a 507 (oMLX's refusal for lack of memory or disk), is a
request the server rejected, not a failure of its own: it is counted apart.

Failures of one template are one group. Which template a record is comes from ``template_of``: the
catalog's fields where they name a message's parts (an HTTP answer), else the message as oMLX's
source writes it (its lexicon entry, placeholders shown ``<…>``, numbers ``<n>``), else the message
with its variable parts masked. The entry also tells ``in_exception_handler``: a warning oMLX logs
while handling an exception is a failure too.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from omlx_logscan.analysis.severity import entry_severity, status_kind
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.grammar import LEVELS
from omlx_logscan.parsing.kinds import CRASH_KINDS, EventKind
from omlx_logscan.parsing.lexicon import ANY, Entry, lexicon

FAILURE_LEVELS = frozenset({"ERROR", "CRITICAL"})


# The escalation and the crash evidence show these.
SHOWN_ELSEWHERE: frozenset[EventKind] = frozenset({"gpu_error", *CRASH_KINDS})


DETAIL = "<detail>"  # what follows a message's first ": ", most often the text of the exception it reports


TRACEBACK_HEADER = "Traceback (most recent call last):"


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


_TOKEN = re.compile(r"[^\s()\[\]{}<>,;=]*\d[^\s()\[\]{}<>,;=]*")  # a token with a digit in it


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?P<unit>[A-Za-z%]{0,3})")  # 3, 0.5, 21.13GB, 40ms, 85%: the unit stays


# A path where a token begins, up to a space, quote or bracket, without the punctuation after it.
_PATH = re.compile(r"(?<![^\s(\[=])(?:~|\.{1,2})?/(?:[^\s'\"()\[\]]*[^\s'\"()\[\].,:;])?")


class Template(NamedTuple):
    """Which message a failure is: its ``text`` with placeholders, and its lexicon ``entry`` (None when
    the message is none the lexicon knows)."""

    text: str
    entry: str | None


ANY_SHOWN = "<…>"  # how an entry's placeholder for any text is shown; a number's is NUMBER_SHOWN
NUMBER_SHOWN = "<n>"


def template_of(event: Event) -> Template:
    """The template of ``event``'s message: an HTTP answer by its method, path and status (the catalog's
    fields), a traceback with no message of its own by its exception, a message of oMLX's by its
    lexicon entry, else the message masked."""
    fields = event.fields
    if fields.get("status") is not None and fields.get("method"):
        return Template(f"{fields['method']} {fields.get('path', '')} → {fields['status']}", event.entry)
    message = event.message
    if _opens_traceback(message):  # its exception names it; a traceback cut before that line, its header
        exception = fields.get("exception")
        return Template(f"{exception}: {DETAIL}" if exception else TRACEBACK_HEADER, None)
    entry = _entry(event)
    if entry is not None and entry.specificity:  # a bare ``{any}`` (``logger.error(e)``) names nothing
        return Template(shown(entry), entry.id)
    return Template(masked(message), entry.id if entry is not None else None)


def shown(entry: Entry) -> str:
    """An entry's template as the Errors part shows it: its first line, placeholders as ``<…>``/``<n>``."""
    parts = [entry.pieces[0]]
    for kind, text in zip(entry.placeholders, entry.pieces[1:], strict=False):
        parts += [ANY_SHOWN if kind == ANY else NUMBER_SHOWN, text]
    return "".join(parts).rstrip()


def in_exception_handler(event: Event) -> bool | None:
    """Whether oMLX writes ``event``'s message in an exception handler (or by ``logger.exception``),
    as its lexicon entry says; None when the message is none the lexicon knows."""
    entry = _entry(event)
    return entry.in_handler if entry is not None else None


def _entry(event: Event) -> Entry | None:
    return lexicon().entry(event.entry) if event.entry is not None else None


def _opens_traceback(message: str) -> bool:
    """Whether a record's message is its traceback's header or a frame (a paste that begins inside one)."""
    return message.lstrip().startswith((TRACEBACK_HEADER, 'File "'))


def masked(message: str) -> str:
    """``message`` with its variable parts as placeholders: what follows its first ``": "`` (the
    exception text oMLX's ``f"…: {e}"`` messages end with), quoted strings, paths, and tokens with a digit
    in them (numbers, hex and request ids, model names)."""
    head, colon, _ = message.partition(": ")
    head = _QUOTED.sub("<str>", head)
    head = _PATH.sub("<path>", head)
    head = _TOKEN.sub(_token_placeholder, head)
    return f"{head}: {DETAIL}" if colon else head


def _token_placeholder(match: re.Match[str]) -> str:
    token = match[0]
    core = token.rstrip(".:")
    number = _NUMBER.fullmatch(core)
    return (f"<n>{number['unit']}" if number else "<id>") + token[len(core) :]


def is_failure(event: Event) -> bool:
    """Whether ``event`` is a failure this part shows (see the module's docstring)."""
    if event.kind in SHOWN_ELSEWHERE:
        return False
    status = http_status(event)
    if status is not None:  # a 5xx other than 507 (oMLX's refusal for lack of memory or disk)
        return status_kind(status) == "error"
    if event.level in FAILURE_LEVELS or "traceback" in event.fields:
        return True
    # A warning written while handling an exception, unless the handler recovered as designed (flow
    # control: ``analysis/severity.py`` ranks it a notice); a record below WARNING is routine wherever
    # it is written (and the native scanner only counts those: the Errors part is the same on every path).
    entry = _entry(event)
    return event.level == "WARNING" and entry is not None and entry.in_handler and entry_severity(entry) != "notice"


def http_status(event: Event) -> int | None:
    """The status of an HTTP answer oMLX logged as an error (a ``request_error`` with one), else None."""
    status = event.fields.get("status") if event.kind == "request_error" else None
    return status if isinstance(status, int) else None


def _severity(level: str | None) -> int:
    return LEVELS.index(level) if level in LEVELS else -1


@dataclass
class ErrorGroup:
    """The failures of one template: how many, when, in which sessions, at which level."""

    template: Template
    events: list[Event] = field(default_factory=list)
    sessions: list[int] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.events)

    @property
    def level(self) -> str | None:
        """The most severe level among its records."""
        return max((ev.level for ev in self.events), key=_severity)

    @property
    def example(self) -> Event:
        return self.events[0]

    @property
    def first(self) -> str | None:
        """Its first time: the earliest date and time stated, or in a log without dates the time of day
        of its first record (times of day cannot be ordered across days)."""
        dated = self._dated()
        return min(dated) if dated else next(iter(self._times_of_day()), None)

    @property
    def last(self) -> str | None:
        dated = self._dated()
        return max(dated) if dated else next(reversed(self._times_of_day()), None)

    @property
    def dated(self) -> bool:
        """Whether ``first`` and ``last`` are dates and times (not times of day)."""
        return bool(self._dated())

    def _dated(self) -> list[str]:
        return [ev.time for ev in self.events if ev.time]

    def _times_of_day(self) -> list[str]:
        return [ev.time_of_day for ev in self.events if ev.time_of_day]

    def as_dict(self) -> dict[str, Any]:
        example = self.example
        return {
            "template": self.template.text,
            "entry": self.template.entry,
            "level": self.level,
            "count": self.count,
            "first": self.first,
            "last": self.last,
            "sessions": self.sessions,
            "example": {"source": example.source, "line": example.line, "message": example.message},
        }


@dataclass
class Errors:
    """The failures by template, in the order each first appears, and the rejected requests by status."""

    groups: list[ErrorGroup] = field(default_factory=list)
    rejected: Counter[int] = field(default_factory=Counter)  # HTTP 4xx and 507 answers by status
    sessions: int = 0  # how many sessions were read, for ``in 61 of 160 sessions``

    @property
    def failures(self) -> int:
        return sum(group.count for group in self.groups)

    def rejected_dict(self) -> dict[str, Any]:
        by_status = {str(status): count for status, count in sorted(self.rejected.items())}
        return {"count": sum(self.rejected.values()), "by_status": by_status}


def errors_of(sessions: Iterable[tuple[int, Iterable[Event]]]) -> Errors:
    """The failures and rejected requests of the sessions' events (each session's number and events),
    each failure in its template's group."""
    out = Errors()
    by_template: dict[Template, ErrorGroup] = {}
    for number, events in sessions:
        out.sessions += 1
        for event in events:
            status = http_status(event)
            if status is not None and status_kind(status) == "rejected":
                out.rejected[status] += 1
            if not is_failure(event):
                continue
            template = template_of(event)
            group = by_template.get(template)
            if group is None:
                group = by_template[template] = ErrorGroup(template)
                out.groups.append(group)
            group.events.append(event)
            if number not in group.sessions:
                group.sessions.append(number)
    return out
