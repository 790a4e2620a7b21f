"""A kernel panic report's own time: the ``.panic`` text header, the ``.ips`` JSON header, the epoch
table; turned into the log's zone, or the bounds kept where the report gives none or one that cannot be."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import REAL, analysis_of, stream_of
from omlx_logscan.cli import app
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.stream.reports import date_panic_reports
from omlx_logscan.timeutil import named_zone
from synthetic import busy, start, write_log

PANIC_LINE = 'panic(cpu 4 caller 0xfffffe0012345678): "completeMemory() prepare count underflow" @IOGPUMemory.cpp:550'
TASK_LINE = "Panicked task 0xfffffe2aa1b2c3d0: 112345 pages, 48 threads: pid 5123: python3.12"
WORDS = '"completeMemory() prepare count underflow" @IOGPUMemory.cpp:550'

# The ``.panic`` text format: its header first, the panic text after it.
TEXT_REPORT = [
    "Date/Time:        2026-09-15 22:41:07.123 +0200",
    "OS Version:       macOS 26.4 (Build 25E246)",
    "Architecture:     arm64e",
    "",
    PANIC_LINE,
    "Debugger message: panic",
    TASK_LINE,
]

# An ``.ips`` report: a one-line JSON header (bug type 210), then its body, here on one line.
IPS_HEADER = (
    '{"bug_type":"210","timestamp":"2026-09-15 22:41:07.00 +0200","os_version":"macOS 26.4 (25E246)",'
    '"incident_id":"0C3E0B3A-1111-4222-8333-444455556666"}'
)
IPS_REPORT = [
    IPS_HEADER,
    '{"build" : "macOS 26.4 (25E246)", "product" : "Mac16,10", "panicString" : "'
    + json.dumps(f"{PANIC_LINE}\nDebugger message: panic\n{TASK_LINE}\n")[1:],
]

# The same body as Console shows it: pretty-printed, one key a line.
IPS_PRETTY = [
    IPS_HEADER,
    "{",
    '  "build" : "macOS 26.4 (25E246)",',
    '  "panicString" : ' + json.dumps(f"{PANIC_LINE}\nDebugger message: panic\n") + ",",
    '  "product" : "Mac16,10"',
    "}",
]


def _around(report: list[str]) -> list[str]:
    """A log from 20:00 (UTC in these tests) that a panic at 20:41 UTC (22:41 +02:00) cuts off, then its restart."""
    return [start(0), busy(30), *report, start(45), busy(50)]


def _panic(stream: EventStream) -> Event:
    (panic,) = [ev for ev in stream.events if ev.kind == "kernel_panic"]
    return panic


@pytest.mark.parametrize("report", [TEXT_REPORT, IPS_REPORT, IPS_PRETTY], ids=["panic-text", "ips", "ips-pretty"])
def test_the_report_gives_the_panic_its_time_in_the_logs_zone(tmp_path: Path, report: list[str]) -> None:
    stream = stream_of(write_log(tmp_path / "omlx.log", _around(report)))
    panic = _panic(stream)
    assert panic.fields["panic"] == WORDS and panic.line == 3 and panic.lines == len(report)
    assert panic.fields["report_time"].endswith("+02:00") and panic.time is None  # the zone is not known yet
    stream.zone = named_zone("+00:00")
    date_panic_reports(stream)
    assert panic.time is not None and panic.time.startswith("2026-09-15T20:41:07.")
    assert stream.accounting.unparsed == 0


def test_the_panicked_task_is_named(tmp_path: Path) -> None:
    panic = _panic(stream_of(write_log(tmp_path / "omlx.log", _around(TEXT_REPORT))))
    assert (panic.fields["panicked_task"], panic.fields["panicked_pid"]) == ("python3.12", 5123)


def test_a_header_without_an_offset_is_the_macs_own_local_time(tmp_path: Path) -> None:
    report = [PANIC_LINE, "Debugger message: panic", "Date/Time:        2026-09-15 20:41:07.5"]
    stream = stream_of(write_log(tmp_path / "omlx.log", _around(report)))
    stream.zone = named_zone("Asia/Tokyo")
    date_panic_reports(stream)
    assert _panic(stream).time == "2026-09-15T20:41:07.500"


def test_the_epoch_tables_calendar_row_is_utc(tmp_path: Path) -> None:
    # 0x6aa9ad63 s after 1970 is 2026-09-15 20:41:07 UTC; 0x7a120 µs is half a second.
    report = [PANIC_LINE, "Epoch Time:        sec       usec", "  Boot    : 0x6aa94000 0x00000000"]
    report += ["  Sleep   : 0x00000000 0x00000000", "  Calendar: 0x6aa9ad63 0x0007a120"]
    stream = stream_of(write_log(tmp_path / "omlx.log", _around(report)))
    assert _panic(stream).fields["report_time"] == "2026-09-15T20:41:07.500+00:00"
    stream.zone = named_zone("UTC")
    date_panic_reports(stream)
    assert _panic(stream).time == "2026-09-15T20:41:07.500"


def test_a_report_time_outside_its_neighbours_leaves_the_bounds(tmp_path: Path) -> None:
    report = ["Date/Time:        2026-09-14 08:00:00.000 +0200", PANIC_LINE]
    analysis = analysis_of(write_log(tmp_path / "omlx.log", _around(report)))
    (reboot,) = analysis.outages.of_kind("reboot")
    assert _panic(analysis.stream).time is None and not reboot.start_exact and reboot.hidden == ["panic_time"]


def test_a_real_paste_with_the_boot_time_only_keeps_its_bounds() -> None:
    panic = _panic(stream_of(REAL / "omlx-issue-862.log"))
    assert "report_time" not in panic.fields and panic.time is None


def test_a_crash_reports_date_line_stays_in_the_crash_report() -> None:
    stream = stream_of(REAL / "omlx-issue-410.log")
    assert not [ev for ev in stream.events if ev.kind == "kernel_panic"]
    assert any(
        "Date/Time:" in (ev.fields.get("continuation") or "") for ev in stream.events if ev.kind == "crash_report"
    )


def test_a_date_header_with_no_panic_after_it_is_no_panic(tmp_path: Path) -> None:
    lines = [start(0), "Date/Time:        2026-09-15 22:41:07.123 +0200", "OS Version:       macOS 26.4", busy(5)]
    stream = stream_of(write_log(tmp_path / "omlx.log", lines))
    assert not [ev for ev in stream.events if ev.kind == "kernel_panic"] and stream.accounting.unparsed == 0


@pytest.mark.slow
def test_the_reboot_starts_at_the_reports_time_on_the_cli_and_as_a_subprocess(tmp_path: Path) -> None:
    log = write_log(tmp_path / "omlx.log", _around(IPS_REPORT))
    arguments = ["timeline", "-q", "-f", "json", "--tz", "UTC", str(log)]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 0, result.output
    process = subprocess.run([sys.executable, "-m", "omlx_logscan", *arguments], capture_output=True, text=True)
    assert process.returncode == 0, process.stderr
    for output in (result.stdout, process.stdout):
        (reboot,) = [o for o in json.loads(output)["outages"] if o["kind"] == "reboot"]
        assert reboot["start"] == "2026-09-15T20:41:07.000+00:00" and reboot["start_exact"]
        assert reboot["end"] == "2026-09-15T20:45:00.000+00:00" and reboot["cannot_show"] == []
    events = CliRunner().invoke(app, ["events", "-q", "-f", "json", "--tz", "UTC", "--kind", "kernel_panic", str(log)])
    (row,) = json.loads(events.stdout)["events"]
    assert (row["time"], row["report_time"]) == ("2026-09-15T20:41:07.000+00:00", "2026-09-15T22:41:07.000+02:00")
