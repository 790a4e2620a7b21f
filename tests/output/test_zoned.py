"""Times with their zone: offsets, `tz`, fall-back hours resolved by file order, skipped times reported."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE
from fault_logs import record
from omlx_logscan.cli.app import app
from omlx_logscan.cli.values import zone
from omlx_logscan.errors import LogscanError
from omlx_logscan.timeutil import LocalTime, local_time_kind, named_zone

runner = CliRunner()
WARNING = "POST /v1/chat/completions → 400: max_tokens must be at least 1"


def warnings_at(*wall_times: str) -> str:
    """One warning record at each local wall time, in this order (the order the file has them)."""
    lines = [record(datetime.fromisoformat(at), "WARNING", "omlx.server", WARNING) for at in wall_times]
    return "\n".join(lines) + "\n"


def events_of(tmp_path: Path, text: str, *args: str) -> list[dict[str, object]]:
    log = tmp_path / "server.log"
    log.write_text(text)
    result = runner.invoke(app, ["events", str(log), "-f", "ndjson", "-q", *args])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize(
    ("name", "offset"), [("UTC", "+00:00"), ("utc", "+00:00"), ("+02:00", "+02:00"), ("-0530", "-05:30")]
)
def test_tz_takes_utc_and_fixed_offsets(tmp_path: Path, name: str, offset: str) -> None:
    rows = events_of(tmp_path, warnings_at("2026-09-15T20:19:38.663"), "--tz", name)
    assert [row["time"] for row in rows] == [f"2026-09-15T20:19:38.663{offset}"]


def test_csv_rows_carry_zoned_times(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(warnings_at("2026-09-15T20:19:38.663"))
    result = runner.invoke(app, ["events", str(log), "-f", "csv", "-q", "--tz", "Europe/Berlin"])
    assert result.stdout.splitlines()[1].startswith("2026-09-15T20:19:38.663+02:00,")


def test_a_bad_zone_is_a_usage_error() -> None:
    with pytest.raises(LogscanError, match="not a time zone"):
        zone("+25:00")


@pytest.mark.slow
def test_every_document_records_its_zone_and_every_time_its_offset() -> None:
    for command in ("timeline", "sessions", "events", "check"):
        result = runner.invoke(app, [command, str(EXAMPLE), "-f", "json", "-q", "--tz", "Europe/Berlin"])
        assert result.exit_code in (0, 1), result.output
        doc = json.loads(result.stdout)
        assert doc["schema"].endswith(("/2", "/3")) and doc["tz"] == "Europe/Berlin", command
        stamps = re.findall(r'"(\d{4}-\d\d-\d\dT[^"]*)"', json.dumps(doc))
        assert stamps and all(stamp.endswith(("+02:00", "+01:00")) for stamp in stamps), command


def test_fall_back_hour_is_resolved_by_file_order_and_marked(tmp_path: Path) -> None:
    # Berlin's clocks go from 03:00 CEST back to 02:00 CET on 2026-10-25: 02:40 comes twice.
    text = warnings_at(
        "2026-10-25T01:50:00.000", "2026-10-25T02:40:00.000", "2026-10-25T02:10:00.000", "2026-10-25T02:40:00.500"
    )
    rows = events_of(tmp_path, text, "--tz", "Europe/Berlin")
    assert [row["time"] for row in rows] == [
        "2026-10-25T01:50:00.000+02:00",
        "2026-10-25T02:40:00.000+02:00",
        "2026-10-25T02:10:00.000+01:00",
        "2026-10-25T02:40:00.500+01:00",
    ]
    assert [row.get("time_ambiguous", False) for row in rows] == [False, True, True, True]
    instants = [datetime.fromisoformat(str(row["time"])) for row in rows]
    assert instants == sorted(instants)  # in UTC the file's order is time's order
    doc = json.loads(
        runner.invoke(app, ["events", str(tmp_path / "server.log"), "-f", "json", "-q", "--tz", "Europe/Berlin"]).stdout
    )
    assert doc["time_notes"]["ambiguous"] == [
        {"day": "2026-10-25", "times": 3, "second_pass": 2, "resolved_by": "file order"}
    ]


def test_fall_back_hour_without_a_step_back_is_the_first_pass_and_says_so(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(warnings_at("2026-10-25T02:30:00.000"))
    result = runner.invoke(app, ["events", str(log), "-f", "json", "-q", "--tz", "Europe/Berlin"])
    doc = json.loads(result.stdout)
    assert doc["events"][0]["time"] == "2026-10-25T02:30:00.000+02:00"
    assert doc["time_notes"]["ambiguous"][0]["resolved_by"] == "assumed first pass"


@pytest.mark.slow
def test_spring_forward_gap_is_reported_not_shifted(tmp_path: Path) -> None:
    # 2026-03-29 02:30 does not exist in Berlin (01:59:59 CET is followed by 03:00 CEST).
    log = tmp_path / "server.log"
    log.write_text(warnings_at("2026-03-29T01:59:00.000", "2026-03-29T02:30:00.000", "2026-03-29T03:01:00.000"))
    done = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "events", str(log), "-f", "json", "--tz", "Europe/Berlin"],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(done.stdout)
    times = [event["time"] for event in doc["events"]]
    assert times == ["2026-03-29T01:59:00.000+01:00", "2026-03-29T02:30:00.000+01:00", "2026-03-29T03:01:00.000+02:00"]
    assert doc["events"][1]["time_nonexistent"] is True and "time_nonexistent" not in doc["events"][0]
    assert doc["time_notes"]["nonexistent"] == [{"local": "2026-03-29T02:30:00.000", "source": str(log), "line": 2}]
    assert f"{log}:2: 2026-03-29T02:30:00.000 does not exist in Europe/Berlin" in done.stderr


def test_time_only_and_unknown_times_get_no_offset(tmp_path: Path) -> None:
    rows = events_of(tmp_path, f"16:04:31.040 - omlx.server - WARNING - {WARNING}\n", "--tz", "Europe/Berlin")
    assert rows[0]["time"] is None and rows[0]["time_of_day"] == "16:04:31.040"


def test_two_zones_order_by_their_instants() -> None:
    berlin, new_york = named_zone("Europe/Berlin"), named_zone("America/New_York")
    assert berlin is not None and new_york is not None
    # 20:00 in Berlin comes before 15:00 in New York on a summer day (18:00 vs 19:00 UTC).
    early = datetime(2026, 9, 15, 20, 0, tzinfo=berlin).astimezone(UTC)
    late = datetime(2026, 9, 15, 15, 0, tzinfo=new_york).astimezone(UTC)
    assert late - early == timedelta(hours=1)
    assert local_time_kind(datetime(2026, 11, 1, 1, 30), new_york) is LocalTime.ambiguous
    assert local_time_kind(datetime(2026, 3, 8, 2, 30), new_york) is LocalTime.nonexistent
    assert local_time_kind(datetime(2026, 3, 8, 3, 30), new_york) is LocalTime.single


@pytest.mark.slow
def test_a_command_builds_its_streams_clock_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The document's rows and its time notes share one clock: building it is a pass over every event."""
    from omlx_logscan.stream import zone_clock

    built: list[int] = []
    original = zone_clock.clock_for

    def counted(*args: object) -> zone_clock.ZoneClock:
        built.append(1)
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(zone_clock, "clock_for", counted)
    result = runner.invoke(app, ["events", str(EXAMPLE), "-f", "json", "-q"])
    assert result.exit_code == 0, result.output
    assert len(built) == 1


def test_a_stream_that_grew_gets_a_new_clock(tmp_path: Path) -> None:
    from omlx_logscan.inputs.sources import resolve
    from omlx_logscan.stream.read import read_events

    log = tmp_path / "server.log"
    log.write_text(warnings_at("2026-11-01T01:30:00", "2026-11-01T01:40:00"))
    stream = read_events(resolve([str(log)]))
    first = stream.clock()
    assert stream.clock() is first
    stream.events.append(stream.events[0])
    assert stream.clock() is not first


@pytest.mark.parametrize(
    "name",
    ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Pacific/Apia", "Asia/Beirut"],
)
def test_the_clock_tells_each_time_as_the_zone_does(name: str) -> None:
    """The clock's day check (one offset all day: every time of it single) never hides a repeated or
    skipped time: three years of days, at the hours zones change in and the day's edges."""
    from omlx_logscan.stream.zone_clock import ZoneClock

    zone = named_zone(name)
    clock = ZoneClock(zone)
    times = [timedelta(hours=h, minutes=m) for h, m in ((0, 0), (0, 30), (1, 30), (2, 30), (3, 30), (12, 0), (23, 30))]
    day = datetime(2024, 1, 1)
    while day.year < 2027:
        for at in [day + t for t in times] + [day + timedelta(days=1, microseconds=-1000)]:
            stamp = at.isoformat(timespec="milliseconds")
            assert clock.kind(stamp) is local_time_kind(datetime.fromisoformat(stamp), zone), stamp
        day += timedelta(days=1)
