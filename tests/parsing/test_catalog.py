"""The catalog's wording, as the grammar and the bulk scanner take it from there."""

from __future__ import annotations

import re

import pytest

from omlx_logscan.parsing import scan
from omlx_logscan.parsing.catalog import CATALOG, CHAT_COMPLETION, bare_openings
from omlx_logscan.parsing.grammar import parse_line

_CHAT_TEMPLATE = next(t for t in CATALOG if t.kind == "request_complete" and t.literal == CHAT_COMPLETION)


@pytest.mark.parametrize("tag", ["banner", "capture"])
def test_bare_lines_are_known_by_their_templates_openings(tag: str) -> None:
    openings = bare_openings(tag)
    assert openings
    for opening in openings:
        template = next(t for t in CATALOG if t.literal == opening)
        assert template.pattern.startswith("^" + opening)
        assert parse_line(opening + "something").form == tag


@pytest.mark.parametrize(
    ("counts", "tokens"),
    [
        ("5 tokens in 1.0s", "5"),
        ("model=qwen-3, 1234 tokens in 12.50s (98.7 tok/s), prompt: 40", "1234"),
        ("model=a b, 7 tokens in 0.1s, finish_reason=stop", "7"),
        ("tokens in 1.0s", None),
        ("5 tokens in s", None),
        ("٥ tokens in 1.0s", None),  # a digit polars and Python disagree on: the grammar reads it
        ("5 tokens in ١.0s", None),
    ],
)
def test_the_scanner_reads_the_tokens_the_chat_template_reads(counts: str, tokens: str | None) -> None:
    """The scanner's counts test is the catalog's, in ASCII digits, capturing the tokens only."""
    scanned = re.match(scan._CHAT_TAIL, counts)
    assert (scanned[1] if scanned else None) == tokens
    if tokens is not None:
        template_match = _CHAT_TEMPLATE.regex.match(CHAT_COMPLETION + counts)
        assert template_match is not None
        assert template_match["tokens"] == tokens
