"""The lexicon answers ``parsing.messages`` (issue 27, items 2 and 3): which of oMLX's messages a text
is, in the shapes people paste it, and nothing for text that tells nothing; and its look-ups find
what trying every entry's regex one by one finds."""

from __future__ import annotations

import re

import pytest

from conftest import FIXTURES
from omlx_logscan.parsing.catalog_lookup import candidates
from omlx_logscan.parsing.lexicon import lexicon
from omlx_logscan.parsing.messages import foreign, known, messages

RECORD = re.compile(r"^\S+ \S+ - (\S+) - (\S+) - (?:\[[^]]*\] - )?(.*)$")


@pytest.mark.parametrize(
    ("text", "level", "logger"),
    [
        ("Engine loop error: boom", "ERROR", "omlx.engine_core"),  # whole
        ("507: Model 'qwen' (21.13GB) does not fit under the dynamic memory ceiling (16.18GB)", None, None),  # a row's
        ("Speculative backend selected … Lightning MTP (model_type=qwen3_5, active)", "INFO", None),  # elided
        ("Request 4420aa8c needs prefill headroom before throttling (current=…)", "INFO", "omlx.scheduler"),
        (
            'Error: {"detail":"Cannot load Q: projected memory 1GB would exceed process limit 2GB '
            '(current: 1GB, model: 1GB)"}',
            None,
            None,
        ),
    ],
)
def test_a_message_of_oMLX_is_known_in_the_shapes_people_paste_it(
    text: str, level: str | None, logger: str | None
) -> None:
    found = known(text)
    assert found is not None and found.entry in found.entries and found.template
    assert (found.level, found.logger if logger else None) == (level, logger)


@pytest.mark.parametrize(
    "text",
    [
        "error",  # a reason oMLX sends, and a word of every program
        "stop",
        "Request blah blah totally different",  # opens like an entry, then is none of them
        "Error: OMLX stream timed out: no text, thinking, or tool delta arrived within",  # a client's own
        "Using selector: EpollSelector",  # asyncio's
    ],
)
def test_text_that_tells_nothing_is_no_message_of_oMLX(text: str) -> None:
    assert known(text) is None


def test_another_program_s_record_needs_a_telling_message() -> None:
    seam = messages()
    assert seam.of_record("Done", "django.request", "INFO", None) is None
    assert seam.of_record("Engine loop error: boom", "omlx.engine_core", "ERROR", None) is not None


@pytest.mark.slow
def test_a_lookup_finds_what_every_entry_s_regex_finds() -> None:
    """Every 7th record of the real oMLX runs: ``match`` (one regex for the entries that begin with the
    message's first word, the word index for the rest) against each entry's regex tried alone."""
    texts = (path.read_text(encoding="utf-8") for path in sorted((FIXTURES / "real-omlx").glob("*.server.log")))
    records = (RECORD.match(line) for text in texts for line in text.splitlines())
    messages_seen = sorted({record[3] for record in records if record})[::7]
    assert len(messages_seen) > 100
    words = lexicon()
    for message in messages_seen:
        every = tuple(sorted((e for e in words.entries if e.regex.match(message)), key=lambda e: e.id))
        assert words.match(message) == every, message


@pytest.mark.parametrize(
    ("logger", "other"),
    [
        ("myapp.engine", True),  # another program's package
        ("transformers.tokenization_utils_base", True),  # a library's: its text is not oMLX's either
        ("omlx.engine_core", False),
        ("omlx_app.app", False),
        ("cache.paged_ssd_cache", False),  # omlx.cache.paged_ssd_cache, its prefix dropped by the paste
        ("uvicorn.error", False),  # written through by oMLX's process
        ("httpx", False),
        ("scheduler", False),  # no dot: a shortened oMLX logger may look so
        ("root", False),
        (None, False),
    ],
)
def test_a_dotted_logger_of_another_package_is_another_programs(logger: str | None, other: bool) -> None:
    assert foreign(logger) is other


@pytest.mark.parametrize("text", ["Engine started", "Loading model: resnet50"])
def test_a_record_of_another_programs_logger_is_none_of_oMLXs_messages(text: str) -> None:
    """Not by the catalog row its message matches, nor by the lexicon."""
    row = next(t for t in candidates(text) if t.literal in text and t.regex.search(text))
    for found in (row, None):
        assert messages().of_record(text, "myapp.engine", "INFO", found) is None
    assert messages().of_record(text, "omlx.engine_core", "INFO", row) is not None
