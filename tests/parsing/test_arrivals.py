"""Request arrivals are dense rows of the stream, whichever of the scan and the grammar reads them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import bench_module, stream_of
from omlx_logscan.inputs import byte_blocks
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.parsing.catalog_arrivals import ARRIVALS
from omlx_logscan.parsing.dense import ARRIVAL_SCHEMA, Dense, forms_of, is_sorted, moment_of
from omlx_logscan.stream.read import all_events, read_events

SHARED_GENERATOR = Path("/work/shared/bench/gen_omlx_log.py")  # the workspace's own generator, where there is one

STAMP = "2026-09-15 20:19:{:02d},123"
ARRIVAL_LINES = {
    "incoming": f"{STAMP} - omlx.server - TRACE - [-] - Incoming POST /v1/chat/completions — body: []",
    "chat_received": f"{STAMP} - omlx.server - DEBUG - [-] - Chat completion request received: model=q, messages=2, "
    "stream=False, max_tokens=30, temp=0.3",
    "scheduler_added": f"{STAMP} - omlx.scheduler - DEBUG - Added request 5f3a with 4168 prompt tokens",
}


def counted_arrivals(path: Path) -> Counter[str]:
    """The arrival lines of a file-format log by form, counted by plain string tests."""
    forms: Counter[str] = Counter()
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            for arrival in ARRIVALS:
                if f" - {arrival.logger} - {arrival.level} - " in line and arrival.opening in line:
                    forms[arrival.form] += 1
    return forms


def _forms(table: Dense) -> Counter[str | None]:
    return Counter(forms_of(table.ints("form")))


def _check(path: Path) -> None:
    stream = stream_of(path)
    arrivals = stream.arrivals
    assert list(arrivals.columns) == list(ARRIVAL_SCHEMA)
    assert _forms(arrivals) == counted_arrivals(path)
    assert stream.kind_counts["request_arrival"] == arrivals.height > 0
    assert stream.accounting.lines == stream.accounting.accounted
    assert all(ev.kind != "request_arrival" for ev in stream.events)
    assert is_sorted(arrivals.ints("line"))
    text = path.read_text(encoding="utf-8").splitlines()
    for line, form in zip(arrivals["line"], forms_of(arrivals.ints("form")), strict=True):
        arrival = next(a for a in ARRIVALS if a.form == form)
        assert arrival.opening in text[line - 1]


@pytest.mark.parametrize("level", ["debug", "info"])
def test_every_arrival_of_the_benchmark_log_is_a_row(tmp_path: Path, level: str) -> None:
    path = tmp_path / "server.log"
    bench_module("make_log").write_log(path, 0.5, 2, seed=11, level=level)
    if level == "info":
        assert stream_of(path).arrivals.height == 0 == sum(counted_arrivals(path).values())
    else:
        _check(path)


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_GENERATOR.is_file(), reason="the shared generator is not on this machine")
@pytest.mark.parametrize("incidents", ["", "wedge"])
def test_every_arrival_of_the_shared_generators_debug_log_is_a_row(tmp_path: Path, incidents: str) -> None:
    path = tmp_path / "omlx.log"
    command = [sys.executable, str(SHARED_GENERATOR), "--out", str(path), "--size-mb", "2", "--level", "debug"]
    subprocess.run([*command, *(["--incidents", incidents] if incidents else [])], check=True, capture_output=True)
    _check(path)


def test_where_blocks_fall_changes_no_arrival(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "server.log"
    bench_module("make_log").write_log(path, 0.3, 1, seed=5)
    whole = stream_of(path).arrivals
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", 4096)
    assert stream_of(path).arrivals.columns == whole.columns


@pytest.mark.parametrize("form", list(ARRIVAL_LINES))
@pytest.mark.parametrize("continued", [False, True], ids=["dense", "with-continuation"])
def test_each_arrival_form_is_a_row_and_an_event(tmp_path: Path, form: str, continued: bool) -> None:
    """A one-line record is a dense row of the scan; with an untimed line under it, the grammar reads it."""
    path = tmp_path / "server.log"
    lines = [ARRIVAL_LINES[form].format(38), *(["  an untimed line under it"] if continued else [])]
    path.write_text("\n".join([*lines, STAMP.format(39) + " - omlx.server - INFO - [-] - done"]) + "\n")
    stream = read_events(resolve([str(path)]), keep_request_text=True)
    assert [(line, *forms_of(stream.arrivals.ints("form"))) for line in stream.arrivals["line"]] == [(1, form)]
    assert [moment_of(ms).strftime("%H:%M:%S.%f")[:12] for ms in stream.arrivals["time"]] == ["20:19:38.123"]
    assert stream.kind_counts["request_arrival"] == 1
    assert stream.accounting.event_lines == len(lines)
    (event,) = [ev for ev in all_events(stream) if ev.kind == "request_arrival"]
    assert (event.line, event.fields["form"], event.lines) == (1, form, len(lines))
    assert (form == "incoming") == ("TRACE" in stream.sources[0].levels)


def test_an_arrival_in_another_shape_still_reaches_the_grammar(tmp_path: Path) -> None:
    """A request id other than "[-]", a fraction other than ",mmm": no dense row, but still an arrival."""
    path = tmp_path / "server.log"
    path.write_text(
        "2026-09-15 20:19:38,123 - omlx.scheduler - DEBUG - [req-7] - Added request 5f3a with 10 prompt tokens\n"
        "2026-09-15 20:19:39.5 - omlx.scheduler - DEBUG - Added request 5f3b with 12 prompt tokens\n"
    )
    stream = stream_of(path)
    assert list(stream.arrivals["line"]) == [1, 2]
    assert stream.accounting.event_lines == 2


@pytest.mark.slow
def test_the_events_command_prints_arrivals(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    path.write_text("\n".join(line.format(i) for i, line in enumerate(ARRIVAL_LINES.values())) + "\n")
    run = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "events", str(path), "-k", "request_arrival", "-f", "ndjson"],
        capture_output=True,
        text=True,
        check=True,
    )
    printed = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(ev["kind"], ev["form"], ev["line"]) for ev in printed] == [
        ("request_arrival", form, i + 1) for i, form in enumerate(ARRIVAL_LINES)
    ]


def test_an_arrival_two_sources_share_is_one_row(tmp_path: Path) -> None:
    first, second = tmp_path / "server.log", tmp_path / "copy.log"
    bench_module("make_log").write_log(first, 0.2, 1, seed=5)
    second.write_bytes(first.read_bytes())
    alone, both = stream_of(first), stream_of(first, second)
    shared = {name: both.arrivals[name] for name in ARRIVAL_SCHEMA}
    assert shared == alone.arrivals.columns and alone.arrivals.height > 0
    assert both.kind_counts["request_arrival"] == alone.arrivals.height
    assert both.accounting.accounted == 2 * alone.accounting.lines


def test_arrivals_the_grammar_read_take_their_place_among_the_dense_rows(tmp_path: Path) -> None:
    lines = [ARRIVAL_LINES["chat_received"].format(i) for i in range(10)]
    lines[3] += "\n  an untimed line under it"
    lines[7] += "\n  another"
    path = tmp_path / "server.log"
    path.write_text("\n".join(lines) + "\n")
    stream = stream_of(path)
    assert list(stream.arrivals["line"]) == [1, 2, 3, 4, 6, 7, 8, 9, 11, 12]
    assert [moment_of(ms).second for ms in stream.arrivals["time"]] == list(range(10))
    assert 0 < len(stream.arrival_events) < stream.arrivals.height  # both kinds of row are there
