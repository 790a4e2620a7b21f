"""Which oMLX wrote the input (issue 27, item 5): the versions whose source writes every message the
grammar read, beside the version a banner or a Homebrew path states, in every format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import FIXTURES
from omlx_logscan.cli.app import app
from omlx_logscan.parsing.lexicon import lexicon

runner = CliRunner()

REAL_RUNS = sorted((FIXTURES / "real-omlx").glob("*.server.log"))
STAMP = "2026-09-15 10:00:{:02d},000 - {} - {} - [-] - {}"


def _version(path: Path) -> str:
    return path.name.split("@")[1].removesuffix(".server.log")


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _json(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*args, "-q", "-f", "json"])
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)  # the autouse hook validated it against its schema
    return document


def _within(version: str, found: dict[str, Any]) -> bool:
    words = lexicon()
    place = words.order(version)
    return words.order(found["min"]) <= place and (found["max"] is None or place <= words.order(found["max"]))


@pytest.mark.slow
@pytest.mark.parametrize("path", REAL_RUNS, ids=lambda p: p.name)
def test_a_real_run_gets_a_range_that_holds_its_version_and_excludes_another_minor(path: Path) -> None:
    found = _json("timeline", str(path))["header"]["omlx_version_range"]
    assert found is not None and not found["spans"] and found["entries"] >= 5
    version = _version(path)
    assert _within(version, found), (version, found)
    others = {_minor(v) for v in lexicon().versions if not _within(v, found)} - {_minor(version)}
    assert others, f"{found} excludes no other minor version"


def test_a_log_across_an_upgrade_spans_versions_and_each_session_has_its_own(tmp_path: Path) -> None:
    """Two real runs, 0.4.4 then 0.6.3rc2, in one file: no single version writes every message."""
    old, new = (next(p for p in REAL_RUNS if p.name == f"a-info-clean@{v}.server.log") for v in ("0.4.4", "0.6.3rc2"))
    log = tmp_path / "server.log"
    log.write_bytes(old.read_bytes() + new.read_bytes())
    document = _json("timeline", str(log))
    found = document["header"]["omlx_version_range"]
    assert found["spans"] and found["min"] is None and found["max"] is None
    ranges = [s["omlx_version_range"] for s in document["sessions"] if s["omlx_version_range"]]
    assert any(_within("0.4.4", r) and not _within("0.6.3rc2", r) for r in ranges)
    assert any(_within("0.6.3rc2", r) and not _within("0.4.4", r) for r in ranges)
    text = runner.invoke(app, ["timeline", str(log), "-q"]).stdout
    assert "its messages are of no single version" in text


def _stated_log(tmp_path: Path, version: str) -> Path:
    """A start banner stating ``version``, then messages only oMLX 0.4.2 and 0.4.3 write (the first a
    routine record, no event: the range rests on every record read)."""
    log = tmp_path / "server.log"
    log.write_text(
        "oMLX - LLM inference, optimized for your Mac\n"
        "├─ https://github.com/jundot/omlx\n"
        f"└─ Version: {version}\n"
        + "\n".join(
            STAMP.format(second, "omlx.cache.paged_ssd_cache", level, message)
            for second, level, message in [
                (1, "INFO", "Flushed 3 hot cache blocks to SSD write queue"),
                (
                    2,
                    "WARNING",
                    "SSD write queue saturated (cap=64); dropping evicted block 5fe4 — writer is falling behind",
                ),
            ]
        )
        + "\n"
    )
    return log


def test_a_stated_version_outside_the_range_is_said_to_disagree(tmp_path: Path) -> None:
    log = _stated_log(tmp_path, "0.6.3")
    found = _json("timeline", str(log))["header"]["omlx_version_range"]
    assert (found["min"], found["max"], found["stated"], found["disagrees"]) == ("0.4.2", "0.4.3", ["0.6.3"], ["0.6.3"])
    text = runner.invoke(app, ["timeline", str(log), "-q"]).stdout
    assert "oMLX      0.6.3 stated; its messages are of 0.4.2 – 0.4.3 (3 messages of oMLX's source)" in text
    assert "they disagree with the stated 0.6.3" in text
    report = runner.invoke(app, ["report", str(log), "-q"]).stdout
    assert "- **oMLX by its messages:** 0.6.3 stated; its messages are of 0.4.2 – 0.4.3" in report


def test_a_stated_version_inside_the_range_agrees(tmp_path: Path) -> None:
    found = _json("timeline", str(_stated_log(tmp_path, "0.4.3")))["header"]["omlx_version_range"]
    assert found["stated"] == ["0.4.3"] and found["disagrees"] == []
    text = runner.invoke(app, ["timeline", str(_stated_log(tmp_path, "0.4.3")), "-q", "-f", "markdown"]).stdout
    assert "- **oMLX:** 0.4.3 stated; its messages are of 0.4.2 – 0.4.3" in text and "disagree" not in text


def test_sessions_show_each_session_s_range(tmp_path: Path) -> None:
    log = _stated_log(tmp_path, "0.4.3")
    (session,) = _json("sessions", str(log))["sessions"]
    assert session["omlx_version_range"]["min"] == "0.4.2"
    result = runner.invoke(app, ["sessions", str(log), "-q"], env={"COLUMNS": "200"})
    assert "messages of" in result.stdout and "0.4.2–0.4.3" in result.stdout


def test_a_versioned_homebrew_keg_states_its_version(tmp_path: Path) -> None:
    """``Cellar/omlx@0.3.6/0.3.6/…``: the keg of a formula pinned to a version."""
    log = tmp_path / "server.log"
    log.write_text(
        STAMP.format(1, "omlx.engine_core", "ERROR", "Engine loop error: boom")
        + "\nTraceback (most recent call last):\n"
        '  File "/opt/homebrew/Cellar/omlx@0.3.6/0.3.6/libexec/lib/python3.11/site-packages/omlx/engine_core.py",'
        " line 402, in _engine_loop\n"
        "    outputs = self._step()\n"
        "RuntimeError: boom\n"
    )
    document = _json("timeline", str(log))
    assert document["sessions"][0]["omlx_version"] == "0.3.6"
    assert document["header"]["omlx_version_range"]["stated"] == ["0.3.6"]


def test_input_with_no_message_of_the_lexicon_has_no_range(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(STAMP.format(1, "omlx.scheduler", "DEBUG", "A step no oMLX version logs") + "\n")
    document = _json("timeline", str(log))
    assert document["header"]["omlx_version_range"] is None
    assert document["sessions"][0]["omlx_version_range"] is None
