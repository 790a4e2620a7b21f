"""Lifetime numbers that do not depend on the time window: a window's lifetimes keep the numbers
they have in the whole input, so ``sessions --since 2h`` and ``sessions`` name a process alike."""

from __future__ import annotations

from omlx_logscan.analysis.results import Session


def number_as_in(sessions: list[Session], whole: list[Session]) -> None:
    """Give each of a window's ``sessions`` the number of the whole input's lifetime its first event
    belongs to; one with no such event (a process already running when the window begins, seen only
    in routine records) is the one just before the next numbered lifetime, or just after the last.
    The numbers keep rising, whatever the window cut."""
    owner = {id(event): session.index for session in whole for event in session.events}
    found = [next((owner[id(ev)] for ev in session.events if id(ev) in owner), None) for session in sessions]
    previous = 0
    for position, session in enumerate(sessions):
        number = found[position]
        if number is None:
            later = next((n for n in found[position + 1 :] if n is not None), None)
            number = later - 1 if later is not None else previous + 1
        session.index = max(number, previous + 1)
        previous = session.index
