"""What both block scanners (the polars plan, ``parsing.plan``, and the native one,
``parsing.native``) test lines for and give for a block, without polars: the native path, a small
log's, never imports it."""

from __future__ import annotations

from dataclasses import dataclass, field

from omlx_logscan.parsing.catalog import (
    FATAL_EXIT_SUFFIX,
    GPU_LITERALS,
    GPU_MARKERS,
    PREFILTER_LITERALS,
    REQUEST_LOGGER,
)
from omlx_logscan.parsing.catalog_arrivals import ARRIVALS
from omlx_logscan.parsing.catalog_starts import PRELUDE_LITERALS
from omlx_logscan.parsing.dense import ARRIVAL_SCHEMA, REQUEST_SCHEMA, Dense
from omlx_logscan.parsing.unkept import Unkept

# A line the grammar reads as a dated record, not as the continuation of the one before: a date
# and time (with up to six digits of fraction) and a separator after them. In ASCII digits and
# blanks, on which Python's re and polars' regex engine agree (not on every Unicode digit or
# space): block edges are tested with the one, the block's other lines with the other.
DATED_LINE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[,.][0-9]{1,6})?(?:[ \t]*[-—][ \t]*|[ \t]+)"


# The file/console record prefix up to the level: level tests are anchored, so a message that
# merely mentions " - DEBUG - " is never taken for a DEBUG record.
_RECORD_PREFIX = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+ - [\w.]+ - "


LEVEL_RECORD = {level: f"{_RECORD_PREFIX}{level} - " for level in ("TRACE", "DEBUG", "INFO")}


STAMP_LEN = 23


REQUEST_HEAD = f" - {REQUEST_LOGGER} - INFO - "


def arrival_head(logger: str, level: str) -> str:
    """What follows the stamp of a dense arrival line, up to the request-id field."""
    return f" - {logger} - {level} - "


# Text the grammar reads otherwise, anywhere in a line: a GPU error makes the record a gpu_error,
# the fatal exit's suffix a process_exit, and colour codes are removed before the message is matched.
NOT_DENSE: tuple[str, ...] = (*GPU_MARKERS, FATAL_EXIT_SUFFIX, "\x1b")


# Text that makes a line worth the grammar's look (WARNING and above, a catalog literal, a GPU error).
INTERESTING_LITERALS: tuple[str, ...] = ("WARN", "ERROR", "CRITICAL", "FATAL", *PREFILTER_LITERALS, *GPU_LITERALS)


# A DEBUG line that holds one of these is no routine record: a level above DEBUG (a warning quoting
# a DEBUG line), a GPU error, an arrival the grammar reads when it is not a dense row, or a line
# written as oMLX's modules are imported (it opens a start).
NOT_ROUTINE: tuple[str, ...] = (
    " - WARNING - ",
    " - ERROR - ",
    " - CRITICAL - ",
    *GPU_LITERALS,
    *(arrival.opening for arrival in ARRIVALS),
    *PRELUDE_LITERALS,
)


def arrival_levels(forms: set[str]) -> set[str]:
    """The levels the dense arrivals of these forms show: each form's level is part of its shape."""
    return {arrival.level for arrival in ARRIVALS if arrival.form in forms}


# A block's dense rows, before they are lines of the source: "n" counts from the block's first line.
BLOCK_REQUESTS = {"n": "I", **{name: code for name, code in REQUEST_SCHEMA.items() if name not in ("source", "line")}}


BLOCK_ARRIVALS = {"n": "I", **{name: code for name, code in ARRIVAL_SCHEMA.items() if name not in ("source", "line")}}


@dataclass(slots=True)
class BlockOutput:
    """What one block's scan found; its line numbers ``n`` count from the block's first line."""

    size: int  # bytes read from the source, for progress
    lines: int
    requests: Dense  # n, time, tokens, and key/text when asked for
    kept: list[tuple[int, str]]  # (n, text) of the lines for the grammar
    levels: set[str]
    records: Unkept  # records not handed over, next to lines that were
    # n, time, form, and key/text when asked for
    arrivals: Dense = field(default_factory=lambda: Dense.empty(BLOCK_ARRIVALS))
    idle: bool = False  # the block was a pipe's pause after which its writer stayed idle (``ByteBlock.idle``)
