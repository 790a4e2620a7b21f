"""Whether an input is oMLX's: the one decision every command and ``watch`` ask before they read
anything out of it, made while it is read.

An input is oMLX's when a line of it is: a message oMLX writes (``messages.known``), in whatever
shape the paste gave it; a record of an oMLX logger; an event only oMLX's logs hold (a Metal fault,
a start, a panic of the Mac running it, ...); a Metal or ANE error; or a traceback, crash report or
crash stack with an oMLX install or process in it. Anything else (a README, a shell history, another
program's log or traceback, a Homebrew install console) is refused: a clean bill for it would be false.
"""

from __future__ import annotations

from collections.abc import Iterable

from omlx_logscan.parsing.catalog import LOGGER_PREFIX, UVICORN_TAG, carries_metal_error
from omlx_logscan.parsing.catalog_evidence import CRASH, OMLX_INSTALL, OMLX_LOGGER
from omlx_logscan.parsing.classify import NOT_MESSAGES
from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.kinds import OMLX_ONLY_KINDS
from omlx_logscan.parsing.messages import foreign, known
from omlx_logscan.parsing.records import Record


def written_by_omlx(event: Event) -> bool:
    """An oMLX logger's record, or a message of oMLX's source: what ties an event to oMLX by more
    than its kind (a Metal error alone any program on the Mac may print)."""
    return (event.logger or "").startswith(LOGGER_PREFIX) or event.entry is not None


def is_omlx(event: Event) -> bool:
    """An oMLX logger's record, a kind only oMLX's logs hold (``OMLX_ONLY_KINDS``; not a start uvicorn
    alone tells, which every uvicorn server writes), or an oMLX message; never a record of another
    program's logger (``myapp.engine``), whatever its message (a Metal error in it is known by its text)."""
    if foreign(event.logger):
        return False
    if written_by_omlx(event):
        return True
    if event.kind == "process_start":
        return event.fields.get("marker", "") != UVICORN_TAG and event.fields.get("markers") != [UVICORN_TAG]
    return event.kind in OMLX_ONLY_KINDS


class Recognition:
    """What an input has shown so far; ``recognised`` once it showed something oMLX's. Fed every
    record as it is classified and the lines left unparsed; after the first sign it does no work."""

    def __init__(self) -> None:
        self.recognised = False
        self._crash = False  # a traceback, crash report or crash stack was seen
        self._install = False  # an oMLX install or process was named
        self.messages: set[tuple[str, ...]] = set()  # the entries of each message seen (``Event.entries``)

    def see(self, record: Record, events: list[Event]) -> None:
        """One record and the events it yielded."""
        if events and events[0].entries:
            self.messages.add(events[0].entries)
        if self.recognised:
            return
        head = record.head
        own = not foreign(head.logger)  # another program's record: its message is no sign, whatever it says
        self.recognised = (
            any(map(is_omlx, events))
            or (head.logger or "").startswith(LOGGER_PREFIX)
            or (own and head.form not in NOT_MESSAGES and known(head.message) is not None)
        )
        if not self.recognised:
            self.see_lines((head.message,), messages=own)
            self.see_lines(record.extra)

    def see_lines(self, lines: Iterable[str], messages: bool = True) -> None:
        """Lines of text: unparsed ones, or those of a record (``messages``: whether one of oMLX's
        messages in them is a sign; not in the message of another program's logger)."""
        for text in lines:
            if self.recognised:
                return
            if (
                carries_metal_error(text)
                or OMLX_LOGGER.search(text)
                or (messages and text[:1].isalnum() and known(text))
            ):
                self.recognised = True
                return
            self._crash = self._crash or CRASH.search(text) is not None
            self._install = self._install or OMLX_INSTALL.search(text) is not None
            self.recognised = self._crash and self._install
