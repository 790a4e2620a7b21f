"""The native block scanner (the C extension ``omlx_logscan._scanner``), when it is built.

It computes for a block what the polars plan does (``parsing.plan``), in one pass over its lines
with the GIL released, and hands the dense columns over as buffers, copied into arrays without a
Python object per row. Every text it tests is the catalog's, handed over here: no oMLX wording is written in C.
A run that needs what only polars gives (every record, de-duplication keys, request text) uses
the plan, and so does every run when the extension is not built or ``LOGSCAN_SCANNER=polars``;
with ``LOGSCAN_REQUIRE_NATIVE=1`` a missing extension is an error instead.
"""

from __future__ import annotations

import os
from functools import cache
from types import ModuleType

from omlx_logscan.errors import LogscanError
from omlx_logscan.inputs.byte_blocks import ByteBlock
from omlx_logscan.inputs.decoding import mend_lines
from omlx_logscan.parsing.catalog import CHAT_COMPLETION, CHAT_COUNTS, NO_REQUEST_ID
from omlx_logscan.parsing.catalog_arrivals import ARRIVAL_FORMS, ARRIVALS
from omlx_logscan.parsing.dense import Dense, numbers
from omlx_logscan.parsing.grammar import MAX_LINE_CHARS, PLAUSIBLE_YEARS
from omlx_logscan.parsing.shapes import (
    INTERESTING_LITERALS,
    LEVEL_RECORD,
    NOT_DENSE,
    NOT_ROUTINE,
    REQUEST_HEAD,
    BlockOutput,
    arrival_head,
    arrival_levels,
)
from omlx_logscan.parsing.unkept import unkept_records

SCANNER_VARIABLE = "LOGSCAN_SCANNER"  # "polars" forces the fallback


REQUIRE_VARIABLE = "LOGSCAN_REQUIRE_NATIVE"  # "1": a missing native scanner is an error


# The fixed parts of the catalog's chat counts, in the order the scanner tests them; a test checks
# that they rebuild CHAT_COUNTS exactly.
COUNTS_PARTS = ("model=", ", ", " tokens in ", "s")


def counts_pattern(parts: tuple[str, ...]) -> str:
    """The chat counts' regex the parts make (plain text: none is a regex metacharacter), the
    catalog's named groups between them."""
    model, model_end, tokens_end, seconds_end = parts
    return rf"(?:{model}(?P<model>[^,]+){model_end})?(?P<tokens>\d+){tokens_end}(?P<seconds>[\d.]+){seconds_end}"


_LEVELS = tuple(LEVEL_RECORD)  # TRACE, DEBUG, INFO: bit i of the scanner's level mask is _LEVELS[i]


class NativeScannerMissing(LogscanError):
    """``LOGSCAN_REQUIRE_NATIVE=1`` and the native scanner is not built (or is turned off)."""


def _encoded(texts: tuple[str, ...]) -> tuple[bytes, ...]:
    return tuple(text.encode() for text in texts)


@cache
def _module() -> tuple[ModuleType | None, str]:
    """The configured extension, or None, and why (for ``--version``)."""
    if os.environ.get(SCANNER_VARIABLE, "").strip().lower() == "polars":
        return None, f"polars ({SCANNER_VARIABLE}=polars)"
    try:
        from omlx_logscan import _scanner
    except ImportError:
        return None, "polars (the native scanner is not built)"
    if counts_pattern(COUNTS_PARTS) != CHAT_COUNTS:  # the catalog changed its chat line: the plan reads it
        return None, "polars (the catalog's chat counts changed shape)"
    _scanner.configure(
        debug=(b" - DEBUG - ",),
        not_routine=_encoded(NOT_ROUTINE),
        not_dense=_encoded(NOT_DENSE),
        interesting=_encoded(INTERESTING_LITERALS),
        levels=_encoded(tuple(f" - {level} - " for level in _LEVELS)),
        request_head=REQUEST_HEAD.encode(),
        request_id=NO_REQUEST_ID.encode(),
        request_opening=CHAT_COMPLETION.encode(),
        counts=_encoded(COUNTS_PARTS),
        arrivals=tuple((arrival_head(a.logger, a.level).encode(), a.opening.encode()) for a in ARRIVALS),
        max_line=MAX_LINE_CHARS,
        years=(PLAUSIBLE_YEARS.start, PLAUSIBLE_YEARS.stop),
    )
    return _scanner, f"native ({_scanner.searches()[0]} search)"


def scanner_name() -> str:
    """Which scanner reads plain files, as ``logscan --version`` says it."""
    return _module()[1]


def native_scanner() -> ModuleType | None:
    """The native scanner, or None for the polars plan; raises when it is required but missing."""
    module, why = _module()
    if module is None and os.environ.get(REQUIRE_VARIABLE) == "1":
        raise NativeScannerMissing(f"{REQUIRE_VARIABLE}=1 but the scanner is {why}")
    return module


# The scanner's buffers, by the columns they fill: native-endian items of these typecodes.
_CODES = {"n": "I", "time": "q", "tokens": "i", "form": "B"}


def _columns(**buffers: bytes) -> Dense:
    """A block's dense rows from the scanner's buffers: copied into arrays as they are."""
    return Dense({name: numbers(_CODES[name], buffer) for name, buffer in buffers.items()})


def native_block(scanner: ModuleType, block: ByteBlock, source_name: str) -> BlockOutput:
    """One block by the native scanner: what ``plan.plan_block`` gives for it (without keys or text),
    its bytes mended as for the plan (lines that are not UTF-8 read as Windows-1252)."""
    data: bytes | memoryview = block.data
    out = scanner.scan_block(data, block.prev_timed, block.next_timed)  # it checks UTF-8 where a byte is not ASCII
    if out is None:  # not UTF-8: scanned again with its lines mended
        data = mend_lines(bytes(block.data))
        out = scanner.scan_block(data, block.prev_timed, block.next_timed)
    (first, last), req_n, req_ms, req_tokens, arr_n, arr_ms, arr_form, rows, undecided, lines, any_debug, mask = out
    requests = _columns(n=req_n, time=req_ms, tokens=req_tokens)
    arrivals = _columns(n=arr_n, time=arr_ms, form=arr_form)
    levels = {level for bit, level in enumerate(_LEVELS) if mask >> bit & 1}
    levels |= _undecided_levels(memoryview(undecided).cast("q"), data, levels)
    levels |= {"DEBUG"} if any_debug else set()
    levels |= {"INFO"} if requests.height else set()
    levels |= arrival_levels({form for code, form in enumerate(ARRIVAL_FORMS) if bytes((code,)) in arr_form})
    unkept = unkept_records(rows, first, last, lines)
    block.free()  # every text wanted is copied out: the buffer can be read into again
    kept = [(n, line) for n, line, _ in rows]
    return BlockOutput(block.size, lines, requests, kept, levels, unkept, arrivals)


def _undecided_levels(triples: memoryview, data: bytes | memoryview, known: set[str]) -> set[str]:
    """The levels the lines the scanner could not decide show, decided by the plan's own regex."""
    found: set[str] = set()
    for bit, level in enumerate(_LEVELS):
        if level in known:
            continue
        texts = [
            str(data[triples[k + 1] : triples[k + 2]], "utf-8") for k in range(0, len(triples), 3) if triples[k] == bit
        ]
        if texts and _shows(texts, LEVEL_RECORD[level]):
            found.add(level)
    return found


def _shows(texts: list[str], pattern: str) -> bool:
    """Whether one of the lines matches the plan's regex, by polars' regex engine as in the plan
    (not Python's: the two differ on some Unicode digits and letters). Only lines the scanner
    could not decide come here, lines with bytes that are not ASCII: polars is imported then."""
    import polars as pl

    return bool(pl.Series(texts, dtype=pl.String).str.contains(pattern).any())
