"""The catalog's wording, as the grammar and the bulk scanner take it from there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from omlx_logscan import read_events, resolve
from omlx_logscan.parsing import plan
from omlx_logscan.parsing.catalog import CATALOG, CHAT_COMPLETION, bare_openings
from omlx_logscan.parsing.grammar import parse_line
from omlx_logscan.parsing.template import Template

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
    scanned = re.match(plan._CHAT_TAIL, counts)
    assert (scanned[1] if scanned else None) == tokens
    if tokens is not None:
        template_match = _CHAT_TEMPLATE.regex.match(CHAT_COMPLETION + counts)
        assert template_match is not None
        assert template_match["tokens"] == tokens


_INFO_LINES = [
    ("omlx.server", "Completion: model=qwen, 20 tokens in 2.00s (10.0 tok/s), prompt: 5", "request_complete"),
    ("omlx.server", "Anthropic message: model=qwen, 300 tokens in 10.00s (30.0 tok/s)", "request_complete"),
    ("omlx.server", "Responses API: model=qwen, 300 tokens in 10.00s (30.0 tok/s)", "request_complete"),
    ("omlx.server", "Embedding: model=emb, 4 inputs, 1024 dims, 80 tokens in 0.120s", "request_complete"),
    ("omlx.server", "Rerank: model=rr, 10 docs, 900 tokens in 0.300s", "request_complete"),
    ("omlx.engine.batched", "[stream_generate] Aborting request r1 (finished_normally=False)", "request_abort"),
    ("omlx.server", "Request r1 cancelled, aborting", "request_abort"),
    ("omlx.server", "Client disconnected, cancelling generation task", "request_abort"),
    ("omlx.scheduler", "Prefill interrupted at 10240/18745 tokens: 1 request(s) aborted", "request_abort"),
    ("omlx.scheduler", "Idle reclaim: trimmed Metal transients between turns (12.3GB -> 8.1GB)", "cache_clear"),
    (
        "omlx.process_memory_enforcer",
        "Hard memory pressure: deferring destructive enforcement (poll 1/5) while "
        "pooled Metal buffers drain on 2 scheduler(s)",
        "memory_pressure",
    ),
    ("omlx.engine_pool", "Manually unloaded model: qwen", "model_unload"),
    ("omlx.engine_pool", "Successfully loaded qwen as LLM (fallback from VLM)", "model_load"),
]


def test_the_scan_keeps_the_info_lines_of_every_template(tmp_path: Path) -> None:
    """INFO lines are dropped as routine unless a catalog literal occurs in them: each new template's
    literal keeps its lines for the grammar (read without ``--all``, so the prefilter runs)."""
    log = tmp_path / "server.log"
    lines = [
        f"2026-09-15 20:19:{i:02d},123 - {logger} - INFO - [-] - {message}"
        for i, (logger, message, _) in enumerate(_INFO_LINES)
    ]
    log.write_text("\n".join(["2026-09-15 20:18:00,000 - omlx.x - INFO - [-] - routine", *lines, *lines[:1]]) + "\n")
    kinds = [event.kind for event in read_events(resolve([str(log)])).events]
    assert kinds[: len(_INFO_LINES)] == [kind for _, _, kind in _INFO_LINES]


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"^Loading model(?: as LM \(force_lm=True\))?: (?P<model>\S+)", "Loading model"),
        (r"^Started server process \[(?P<pid>\d+)\]", "Started server process ["),
        (r"^Discovered \d+ models\b", "Discovered "),
        (r"^Shrank (?:shared )?hot cache", "Shrank "),
        (r"^Memory pressure post-eviction(?:: x)?", "Memory pressure post-eviction"),
        (r"^Shutting down$", "Shutting down"),
        (r"^Client disconnectedx?", "Client disconnected"),
    ],
)
def test_a_templates_literal_is_the_fixed_text_its_pattern_opens_with(pattern: str, literal: str) -> None:
    assert Template("record", pattern).literal == literal


def test_a_pattern_without_fixed_opening_text_needs_a_literal() -> None:
    with pytest.raises(ValueError, match="give one"):
        Template("record", r"(?:a|b) c")


def test_every_template_compiles() -> None:
    """Patterns are compiled at first use, so a bad one would show only on a log that needs it: here, all of them."""
    from omlx_logscan.parsing.catalog import CATALOG

    assert all(template.regex.pattern == template.pattern for template in CATALOG)
    assert all(template.regex is template.regex for template in CATALOG)
