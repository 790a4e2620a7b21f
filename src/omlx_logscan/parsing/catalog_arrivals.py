"""The catalog's request arrivals: the lines oMLX writes below INFO when a request comes in.

A DEBUG log holds millions of them, so the bulk scanner keeps them as dense rows (like finished
requests) when a line has exactly the shape written here: a ``,mmm`` stamp, then
`` - {logger} - {level} - ``, the request-id field of a record outside a request or none, and the
opening. Any other line that holds an opening goes to the grammar, whose catalog template (built
from ``pattern``) reads it as a ``request_arrival`` event of the same ``form``.
"""

from __future__ import annotations

from typing import NamedTuple


class Arrival(NamedTuple):
    """One arrival line: its form (the event's ``form`` field), who writes it and how it opens."""

    form: str
    logger: str
    level: str
    opening: str  # the text every such message begins with (the template's literal)
    pattern: str  # the catalog template: it matches every message that begins with ``opening``


# Every form, in the order a request's lines come (the TRACE body first when the log shows TRACE): an
# endpoint's (``create_chat_completion`` and ``create_anthropic_message`` of ``omlx.server`` log the
# request they take, from 0.1.2 on; the completions endpoint logs none), then the scheduler's
# (``Scheduler.add_request``, once the engine's MLX executor runs it for the request).
ARRIVALS: tuple[Arrival, ...] = (
    Arrival("incoming", "omlx.server", "TRACE", "Incoming ", r"^Incoming (?:(?P<method>[A-Z]+) (?P<path>\S+))?"),
    Arrival(
        "chat_received",
        "omlx.server",
        "DEBUG",
        "Chat completion request received: ",
        r"^Chat completion request received: (?:model=(?P<model>[^,]+))?",
    ),
    Arrival(
        "messages_received",
        "omlx.server",
        "DEBUG",
        "Anthropic Messages request: ",
        r"^Anthropic Messages request: (?:model=(?P<model>[^,]+))?",
    ),
    Arrival(
        "scheduler_added",
        "omlx.scheduler",
        "DEBUG",
        "Added request ",
        r"^Added request (?:(?P<request_id>\S+) with (?P<prompt_tokens>\d+) prompt tokens)?",
    ),
)


ARRIVAL_FORMS: tuple[str, ...] = tuple(arrival.form for arrival in ARRIVALS)
