"""Issue 27, item 2: lines pasted in other shapes than oMLX writes them are read as its records, with
the level and logger the paste gave (or that oMLX's source gives the message, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omlx_logscan import read_events, resolve
from omlx_logscan.parsing.event import Event


def events_of(tmp_path: Path, text: str) -> list[Event]:
    log = tmp_path / "paste.log"
    log.write_text(text)
    return read_events(resolve([str(log)]), keep_all=True).events


@pytest.mark.parametrize(
    ("line", "level", "logger", "message"),
    [
        # level first, a full and a short logger
        (
            "ERROR  omlx.engine.dflash - DFlash start failed for qwen3-8b: bad draft",
            "ERROR",
            "omlx.engine.dflash",
            "DFlash start failed for qwen3-8b: bad draft",
        ),
        ("INFO  omlx.server - Default max tokens: 4096", "INFO", "omlx.server", "Default max tokens: 4096"),
        # the padded short logger: its level and full name from the message oMLX writes
        (
            "engine_core - No idle model evicted for request 1a2b; scheduler will fall back to throttling",
            "INFO",
            "omlx.engine_core",
            "No idle model evicted for request 1a2b; scheduler will fall back to throttling",
        ),
        (
            "scheduler   - Request 1a2b needs prefill headroom before throttling (current=…)",
            "INFO",
            "omlx.scheduler",
            "Request 1a2b needs prefill headroom before throttling (current=…)",
        ),
        # the head elided up to the level
        (
            "… - DEBUG - [-] - Background snapshot write failed: [Errno 2] No such file",
            "DEBUG",
            "omlx.cache.boundary_snapshot_store",
            "Background snapshot write failed: [Errno 2] No such file",
        ),
        # no level, no logger: both from the message
        ("Engine loop error: boom", "ERROR", "omlx.engine_core", "Engine loop error: boom"),
        ("... Memory pressure level: ok -> soft", "INFO", "omlx.process_memory_enforcer", None),
        # wrapped in backticks, quotes or a bullet
        (
            "`omlx.process_memory_enforcer - INFO - Metal wired limit raised: 0.0GB -> 56.0GB`",
            "INFO",
            "omlx.process_memory_enforcer",
            "Metal wired limit raised: 0.0GB -> 56.0GB",
        ),
        ('"Engine loop error: boom"', "ERROR", "omlx.engine_core", "Engine loop error: boom"),
        ("- Unloaded model: qwen-8b, freed=4.1GB", "INFO", "omlx.engine_pool", "Unloaded model: qwen-8b, freed=4.1GB"),
    ],
)
def test_a_pasted_shape_is_a_record_with_its_level_and_logger(
    tmp_path: Path, line: str, level: str, logger: str, message: str | None
) -> None:
    (event,) = events_of(tmp_path, line + "\n")
    assert (event.level, event.logger) == (level, logger)
    assert event.message == (message or line.removeprefix("... "))


def test_a_levelless_engine_loop_error_is_an_error(tmp_path: Path) -> None:
    (event,) = events_of(tmp_path, "Engine loop error: There is no Stream(gpu, 0) in current thread.\n")
    assert event.kind == "error"


def test_a_recognised_record_without_a_catalog_row_has_entry_and_template(tmp_path: Path) -> None:
    (event,) = events_of(tmp_path, "2026-09-02 08:14:51,204 - omlx.cache - INFO - [-] - Block 12 stored\n")
    row = event.as_dict()
    assert row["kind"] == "record"
    assert "entry" in row and "template" in row  # null until the lexicon answers


def test_prose_with_a_dash_stays_text(tmp_path: Path) -> None:
    events = events_of(tmp_path, "note - this is what I saw\n")
    assert events == []
