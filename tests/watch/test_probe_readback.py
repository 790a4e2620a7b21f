"""``timeline`` and ``report`` read back the probes of ``watch --probe`` (issue 31, item 4).

The probe rows are written by the watch's own NDJSON writer, so the read-back is tested against
what watch really writes; they are evidence beside the log, never lines of it.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_watch import _line, escalation, startup
from typer.testing import CliRunner

from conftest import schema_errors
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.analysis.probes import probe_findings
from omlx_logscan.cli.app import app
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.output.live import NdjsonSink
from omlx_logscan.output.probes import REPORT_PROBE_LINES, probe_message
from omlx_logscan.output.report import COMMENT_LIMIT
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.read import read_events
from omlx_logscan.timeutil import stamp_of
from omlx_logscan.watch.probe_client import ProbeResult, ProbeTarget
from omlx_logscan.watch.probe_schedule import probe_event

KEY = "sk-omlx-readback-51d2"
runner = CliRunner()
T0 = datetime(2026, 9, 15, 20, 0)


def _completion(at: datetime) -> str:
    return _line(at, "omlx.server", "INFO", "Chat completion: model=m, 12 tokens in 0.40s (30.0 tok/s), prompt: 812")


def _wedged_log(tmp_path: Path) -> Path:
    """INFO: steady traffic for ten minutes, fifty silent minutes, a restart with no stop (a possible
    wedge of session 1), then traffic again."""
    text = startup(T0) + "".join(_completion(T0 + timedelta(minutes=m)) for m in range(1, 11))
    restart = T0 + timedelta(minutes=60)
    text += startup(restart) + "".join(_completion(restart + timedelta(minutes=m)) for m in (1, 2))
    log = tmp_path / "server.log"
    log.write_text(text)
    return log


def _watch_rows(tmp_path: Path, probes: list[tuple[datetime, str]], name: str = "watch.ndjson") -> Path:
    """Watch's NDJSON as ``watch --probe -o`` writes it: a replayed log event, the probes, a notice."""
    out = io.StringIO()
    sink = NdjsonSink(out, quiet=True)
    sink.event(Event("warning", stamp_of(T0), "server.log", 3, "WARNING", "omlx.server", "a warning of the log"))
    target = ProbeTarget("http://127.0.0.1:8000", KEY, None, 5.0)
    for at, outcome in probes:
        result = ProbeResult(outcome, 0.4 if outcome == "alive" else 5.0, 200 if outcome == "alive" else None, "", "m")
        message = probe_message("possible_wedge", outcome, result.latency_s, result.status, result.detail)
        sink.event(probe_event("server.log", stamp_of(at), "possible_wedge", target, result, message))
    from omlx_logscan.output.notices import Notice

    sink.notice(Notice("dead_end", "the dead window ended", {}))
    path = tmp_path / name
    path.write_text(out.getvalue())
    return path


def _timeline(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["timeline", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_hung_probe_confirms_a_possible_wedge_in_every_format(tmp_path: Path) -> None:
    log = _wedged_log(tmp_path)
    rows = _watch_rows(tmp_path, [(T0 + timedelta(minutes=40), "hung"), (T0 + timedelta(minutes=70), "alive")])
    code, plain, _ = _timeline(str(log), "-f", "json")
    code, out, err = _timeline(str(log), "--probes", str(rows), "-f", "json")
    assert code == 0, err
    document, without = json.loads(out), json.loads(plain)
    assert not schema_errors(document)
    assert "probes" not in without  # nothing asked, nothing shown
    assert document["header"] == without["header"]  # probe rows are no lines of the log
    (wedge,) = [o for o in document["outages"] if not o["certain"]]
    items = document["probes"]["items"]
    assert [(p["outcome"], p["session"], p["verdict"]) for p in items] == [
        ("hung", 1, "confirms"),
        ("alive", 2, "alive"),
    ]
    assert items[0]["outage_kind"] == "possible_wedge" and document["outages"][items[0]["outage"]] == wedge
    assert items[0]["time"].startswith("2026-09-15T20:40:00.000")  # zoned as the document's times
    assert document["probes"]["files"] == [{"name": str(rows), "probes": 2, "other_rows": 2}]
    code, text, _ = _timeline(str(log), "--probes", str(rows))
    assert code == 0 and "Generation probes" in text
    assert "confirms the possible wedge since 2026-09-15 20:10:00" in " ".join(text.split())
    assert "1 probe outside any outage got a token" in text
    code, markdown, _ = _timeline(str(log), "--probes", str(rows), "-f", "markdown")
    assert (
        code == 0
        and "### Generation probes" in markdown
        and "confirms the possible wedge" in " ".join(markdown.split())
    )


def test_an_alive_probe_clears_a_possible_wedge(tmp_path: Path) -> None:
    log = _wedged_log(tmp_path)
    rows = _watch_rows(tmp_path, [(T0 + timedelta(minutes=40), "alive")])
    code, out, err = _timeline(str(log), "--probes", str(rows), "-f", "json")
    assert code == 0, err
    assert [p["verdict"] for p in json.loads(out)["probes"]["items"]] == ["clears"]


def test_a_hung_probe_proves_a_dead_window(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(startup(T0) + escalation(T0 + timedelta(minutes=5)))
    rows = _watch_rows(tmp_path, [(T0 + timedelta(minutes=20), "hung")])
    code, out, err = _timeline(str(log), "--probes", str(rows), "-f", "json")
    assert code == 0, err
    document = json.loads(out)
    assert not schema_errors(document)
    (probe,) = document["probes"]["items"]
    assert (probe["verdict"], probe["outage_kind"]) == ("proves", "penalty_box")
    code, text, _ = _timeline(str(log), "--probes", str(rows))
    assert "proves the penalty box since" in " ".join(text.split())


def test_watch_ndjson_given_as_an_input_is_read_for_its_probes(tmp_path: Path) -> None:
    log = _wedged_log(tmp_path)
    rows = _watch_rows(tmp_path, [(T0 + timedelta(minutes=40), "hung")])
    code, out, err = _timeline(str(log), str(rows), "-f", "json")
    assert code == 0, err
    document = json.loads(out)
    assert [f["name"] for f in document["header"]["files"]] == [str(log)]  # no log lines of it
    assert [p["verdict"] for p in document["probes"]["items"]] == ["confirms"]
    assert "1 probe (1 hung) read; its 2 other rows" in err  # counted, not silently dropped
    code, _, err = _timeline(str(rows))
    assert code == 2 and "give the log it followed too" in err and "Traceback" not in err


def test_report_shows_probes_without_the_key(tmp_path: Path) -> None:
    log = _wedged_log(tmp_path)
    rows = _watch_rows(tmp_path, [(T0 + timedelta(minutes=40), "hung")])
    assert KEY not in rows.read_text()  # the watch never wrote it
    result = runner.invoke(app, ["report", str(log), "--probes", str(rows)])
    assert result.exit_code == 0, result.output
    assert "### Generation probes" in result.stdout and "confirms the possible wedge" in " ".join(result.stdout.split())
    section = result.stdout.split("### Generation probes")[1]
    assert str(rows.parent) not in section and rows.name in section  # a folder may name the user: the base name


@pytest.mark.slow
def test_a_log_from_a_named_pipe_is_read_once_by_the_log_reader(tmp_path: Path) -> None:
    """Telling watch's NDJSON from a log looks at regular files only: a pipe's lines are read once."""
    text = _wedged_log(tmp_path).read_text()
    pipe = tmp_path / "pipe.log"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_text, args=(text,), daemon=True)
    writer.start()
    process = subprocess.run(  # bounded: a pipe read twice would wait for a second writer forever
        [sys.executable, "-m", "omlx_logscan", "timeline", str(pipe), "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    writer.join(5.0)
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["header"]["lines"] == len(text.splitlines())


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("not json at all\n", "line 1: not watch's NDJSON (not JSON)"),
        ('{"a": 1}\n', "line 1: not watch's NDJSON (no event or notice row)"),
        ('{"kind": "probe", "source": "s", "line": 0, "time": "x", "outcome": "hung"}\n', "without a valid time"),
        (
            '{"kind": "probe", "source": "s", "line": 0, "time": "2026-09-15T20:40:00", "outcome": "fine"}\n',
            "outcome is not one of alive, down, error, failed, hung, needs_key",
        ),
        (
            '{"kind": "probe", "source": "s", "line": 0, "time": "2026-09-15T20:40:00", "outcome": "hung", '
            '"trigger": "silence", "latency_s": "slow"}\n',
            "latency_s is no number of seconds",
        ),
        (b"\xff\xfe\x00bad", "not UTF-8 text"),
    ],
)
def test_a_malformed_probes_file_is_one_line_exit_2(tmp_path: Path, content: str | bytes, said: str) -> None:
    log = _wedged_log(tmp_path)
    rows = tmp_path / "probes.ndjson"
    rows.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, _, err = _timeline(str(log), "--probes", str(rows))
    assert code == 2 and said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_a_missing_or_log_probes_file_is_refused(tmp_path: Path) -> None:
    log = _wedged_log(tmp_path)
    code, _, err = _timeline(str(log), "--probes", str(tmp_path / "none.ndjson"))
    assert code == 2 and "cannot read" in err and len(err.strip().splitlines()) == 1
    code, _, err = _timeline(str(log), "--probes", str(log))  # a log given by mistake
    assert code == 2 and "not watch's NDJSON" in err


@pytest.mark.slow
def test_probes_as_a_real_subprocess(tmp_path: Path) -> None:
    log = _wedged_log(tmp_path)
    rows = _watch_rows(tmp_path, [(T0 + timedelta(minutes=40), "hung")])
    process = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "timeline", str(log), "--probes", str(rows), "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["probes"]["items"][0]["verdict"] == "confirms"


# -- what a probe says, set against the log ----------------------------------------------------------


def _probe(at: datetime, outcome: str) -> Event:
    return Event("probe", stamp_of(at), "server.log", 0, None, None, "", {"outcome": outcome})


def _verdicts(log: Path, probes: list[Event]) -> list[Any]:
    analysis = analyze(read_events(resolve([str(log)])))
    return [(f.session, f.verdict) for f in probe_findings(analysis, probes)]


def test_errors_prove_only_in_a_row_and_a_finished_request_between_resets_them(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(startup(T0) + _completion(T0 + timedelta(minutes=30)))
    errors = [_probe(T0 + timedelta(minutes=m), "error") for m in (10, 20)]
    assert _verdicts(log, errors) == [(1, "error"), (1, "unseen")]
    apart = [_probe(T0 + timedelta(minutes=m), "error") for m in (20, 40)]  # a request finished at 30
    assert _verdicts(log, apart) == [(1, "error"), (1, "error")]
    before = [_probe(T0 - timedelta(minutes=5), "hung"), _probe(T0 + timedelta(minutes=50), "down")]
    assert _verdicts(log, before) == [(None, "unseen"), (1, "down")]


def test_an_alive_probe_in_a_dead_window_contradicts_it(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(startup(T0) + escalation(T0 + timedelta(minutes=5)))
    assert _verdicts(log, [_probe(T0 + timedelta(minutes=9), "alive")]) == [(1, "contradicts")]


@pytest.mark.slow
def test_a_report_with_many_probes_stays_under_githubs_limit(tmp_path: Path) -> None:
    log = _wedged_log(tmp_path)
    many = [(T0 + timedelta(minutes=11, seconds=5 * n), "hung") for n in range(500)]  # all in the possible wedge
    rows = _watch_rows(tmp_path, many)
    result = runner.invoke(app, ["report", str(log), "--probes", str(rows)])
    assert result.exit_code == 0, result.output
    assert len(result.stdout) <= COMMENT_LIMIT
    assert "more lines: timeline --probes shows them all" in result.stdout
    assert result.stdout.count("confirms the") == REPORT_PROBE_LINES - 1  # a line may wrap after "the"
