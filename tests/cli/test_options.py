"""The shared options become typed values once, before any log is read."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from omlx_logscan.cli.options import CommonOptions
from omlx_logscan.errors import LogscanError
from omlx_logscan.inputs.overlays import DEFAULT_GAP_S, OverlaySpec


def test_a_command_with_only_the_basic_options_gets_empty_investigation_extras() -> None:
    options = CommonOptions.from_params({"paths": ["server.log"], "since": "2026-09-15 20:00", "tz": "Europe/Berlin"})
    assert options.since == datetime(2026, 9, 15, 20) and options.until is None
    assert options.tz == ZoneInfo("Europe/Berlin")
    assert (options.os_history, options.os_installs, options.overlay) == ([], [], [])
    assert options.overlay_gap == DEFAULT_GAP_S and not options.has_os_history


def test_investigation_extras_are_parsed() -> None:
    options = CommonOptions.from_params(
        {
            "paths": ["-"],
            "os_history": [Path("history.txt")],
            "os_installs": ["27.0@2026-09-15 17:41"],
            "overlay": ["gpu=runs.csv"],
            "overlay_gap": "90s",
        }
    )
    assert [(i.time, i.version, i.source) for i in options.os_installs] == [("2026-09-15T17:41:00", "27.0", "--os")]
    assert options.overlay == [OverlaySpec("gpu", "runs.csv", "--overlay gpu=runs.csv")] and options.overlay_gap == 90.0
    assert options.has_os_history


def test_an_empty_window_is_refused() -> None:
    with pytest.raises(LogscanError, match="--since '2026-09-16' is after --until '2026-09-15'"):
        CommonOptions.from_params({"paths": ["-"], "since": "2026-09-16", "until": "2026-09-15"})


def test_parquet_without_a_file_is_a_user_error_for_library_users_too() -> None:
    from omlx_logscan.output.formats import EventFormat, check_destination

    with pytest.raises(LogscanError, match=r"^--format parquet writes a binary file: give --output FILE$"):
        check_destination(EventFormat.parquet, None)
    check_destination(EventFormat.parquet, Path("events.parquet"))
    check_destination(EventFormat.ndjson, None)
