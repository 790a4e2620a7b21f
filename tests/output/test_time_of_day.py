"""A paste of time-only lines shows the times it has, and says that their date is unknown."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from omlx_logscan.cli import app

runner = CliRunner()
PASTE = (
    "16:04:31.040  Engine loop error: [METAL] Command buffer execution failed: Caused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n"
    "16:04:40.100  Memory pressure level: ok -> soft (current=10.0GB)\n"
)


def test_the_escalation_gives_the_time_of_day_of_an_undated_fault(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(PASTE)
    text = runner.invoke(app, ["timeline", str(log), "-q"])
    assert text.exit_code == 0, text.output
    assert "16:04:31 (date unknown)" in text.stdout
    document = json.loads(runner.invoke(app, ["timeline", str(log), "-q", "-f", "json"]).stdout)
    (row,) = document["escalation"]
    assert row["time"] is None and row["time_of_day"] == "16:04:31.040"


def test_the_events_table_shows_the_time_of_day(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(PASTE)
    table = runner.invoke(app, ["events", str(log), "-q", "-f", "table"])
    assert table.exit_code == 0, table.output
    rows = [line for line in table.stdout.splitlines() if "paste.log:" in line]
    assert [row.split()[0] for row in rows] == ["16:04:31", "16:04:40"]


def test_a_paste_with_no_date_is_spanned_by_its_times_of_day(tmp_path: Path) -> None:
    log = tmp_path / "paste.log"
    log.write_text(PASTE)
    document = json.loads(runner.invoke(app, ["timeline", str(log), "-q", "-f", "json"]).stdout)
    header = document["header"]
    assert (header["first"], header["first_time_of_day"], header["last_time_of_day"]) == (
        None,
        "16:04:31.040",
        "16:04:40.100",
    )
    text = runner.invoke(app, ["timeline", str(log), "-q"]).stdout
    assert "16:04:31 → 16:04:40" in text and "no date" in text
