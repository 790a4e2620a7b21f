"""The catalog's process starts come from oMLX's start-up code, by the rule in catalog_starts.py."""

from __future__ import annotations

import dataclasses

from omlx_logscan.parsing.catalog import CATALOG
from omlx_logscan.parsing.catalog_starts import START_ROWS, writes_at_start
from omlx_logscan.parsing.lexicon import LOG, Entry, lexicon

BANNER_BRANCHES = ("├─", "└─")  # the banner's further lines, read as its continuation


def test_every_message_oMLX_writes_at_start_opens_or_joins_a_start() -> None:
    covered = {entry for row in START_ROWS for entry in row.entries}
    starting = [e for e in lexicon().entries if writes_at_start(e) and not e.literals[0].startswith(BANNER_BRANCHES)]
    assert len(starting) > 40  # import time, the CLI's serve command, init_server: every version's
    missed = [f"{e.id} {e.module}.{e.function}: {e.template!r}" for e in starting if e.id not in covered]
    assert not missed, "\n".join(missed)


def test_the_rule_keeps_start_up_code_only() -> None:
    def entry(module: str, function: str) -> Entry:
        sample = lexicon().entries[0]
        return dataclasses.replace(sample, kind=LOG, module=module, function=function)

    assert writes_at_start(entry("omlx.scheduler", "<module>"))
    assert writes_at_start(entry("omlx.server", "init_server"))
    assert not writes_at_start(entry("omlx.server", "init_server._refresh_models_after_download"))
    assert not writes_at_start(entry("omlx.admin.build_css", "main"))
    assert not writes_at_start(entry("omlx.settings", "GlobalSettings.save"))


def test_start_rows_are_the_catalogs_first() -> None:
    """A start line is read as a start before any other row could take it."""
    assert CATALOG[: len(START_ROWS)] == START_ROWS
