"""The probe never calls a healthy server dead (issue 38): what is not oMLX's word on a completion.

A server started with an API key answers 401 without it; what stands in front of oMLX (a proxy, a
login page) answers a redirect, its own 502 page or text; a broken server may answer without end.
None of these says the engine cannot generate: they are ``needs_key`` or ``failed``, never alert,
never run --on-dead, never exit 3. The watch's own probes, which oMLX logs as requests, are marked
and left out of its counts.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from test_parity import EventKeeper
from test_probe import KEY, FakeOmlx, _completion, _probe_rows, _steps, omlx  # noqa: F401
from test_watch import Watch, _following, _line, append, startup, watches  # noqa: F401
from typer.testing import CliRunner

from omlx_logscan.cli.app import app
from omlx_logscan.output.jsonschemas import bundled
from omlx_logscan.watch.loop import Watcher, WatchOptions
from omlx_logscan.watch.own_requests import OWN_FIELD
from omlx_logscan.watch.probe_client import MAX_BODY_BYTES, ProbeResult, ProbeRunner, ProbeTarget, probe_once

runner = CliRunner()
T0 = datetime(2026, 9, 15, 20, 0)


class Keeper(EventKeeper):
    """An event keeper that keeps the watch's stderr messages too."""

    def __init__(self) -> None:
        super().__init__()
        self.infos: list[str] = []

    def info(self, message: str) -> None:
        self.infos.append(message)


# (mode, only the completions answer so, outcome, status)
NOT_OMLX = [
    ("401", False, "needs_key", 401),
    ("403", False, "needs_key", 403),
    ("key", False, "needs_key", 401),
    ("302", False, "failed", 302),
    ("502", False, "failed", 502),
    ("502", True, "failed", 502),
    ("504", True, "failed", 504),
    ("nonjson", False, "failed", 200),
    ("nonjson", True, "failed", 200),
    ("endless", False, "failed", 200),
]


Case = tuple[str, bool, str, int]


@pytest.mark.parametrize("case", NOT_OMLX)
def test_an_answer_that_is_not_omlx_s_word_on_a_completion_proves_nothing(omlx: FakeOmlx, case: Case) -> None:  # noqa: F811
    mode, completions, outcome, status = case
    omlx.mode, omlx.only_completions = mode, completions
    result = probe_once(ProbeTarget(omlx.url, "wrong-key", "tiny-llama", 5.0))
    assert (result.outcome, result.status) == (outcome, status), result
    assert result.detail and "wrong-key" not in result.detail
    asked = [path for path, _, _ in omlx.requests]
    assert asked == (["/v1/models", "/v1/completions"] if completions else ["/v1/models"])


def test_a_5xx_with_omlx_s_error_body_is_an_error(omlx: FakeOmlx) -> None:  # noqa: F811
    """The counterpart of the gateway's 504 above: a 500 with oMLX's JSON error is oMLX's word on the engine."""
    omlx.mode = "500"
    assert probe_once(ProbeTarget(omlx.url, None, None, 5.0)).outcome == "error"


def test_an_endless_answer_is_read_only_up_to_the_bound(omlx: FakeOmlx) -> None:  # noqa: F811
    """A /v1/models that streams without end (the issue's took 2 GB of memory) costs a bounded read."""
    omlx.mode = "endless"
    tracemalloc.start()
    try:
        began = time.monotonic()
        result = probe_once(ProbeTarget(omlx.url, None, None, 30.0))
        took = time.monotonic() - began
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.outcome == "failed" and str(MAX_BODY_BYTES) in result.detail
    assert peak < 4 * MAX_BODY_BYTES and took < 5.0, (peak, took)


@pytest.mark.parametrize("case", [*NOT_OMLX, ("alive", False, "alive", 200)])
def test_a_healthy_server_is_never_called_dead(tmp_path: Path, omlx: FakeOmlx, case: Case) -> None:  # noqa: F811
    """An idle INFO log, probed once per --wedge-after against the local server: however often the
    answer is not a completion, no alert, no --on-dead, no exit 3; a refused key is said once."""
    mode, completions, outcome, status = case
    omlx.mode, omlx.only_completions = mode, completions
    log = tmp_path / "server.log"
    log.write_text(startup(T0))
    sink = Keeper()
    target = ProbeTarget(omlx.url, None, None, 5.0)
    watcher = Watcher(WatchOptions(log, wedge_after=60.0, probe=target, exit_on_dead=True, on_dead="false"), sink)
    _steps(watcher, range(0, 400, 2))
    watcher.follower.close()
    probes = [event for event in sink.events if event.kind == "probe"]
    assert len(probes) >= 4 and {p.fields["outcome"] for p in probes} == {outcome}
    assert {p.fields["status"] for p in probes} == {status}
    assert not [notice for notice in sink.notices if notice.kind == "probe_dead"]
    assert watcher._exit is None and watcher.hook_runs == {}
    told = [info for info in sink.infos if "wants an API key" in info]
    assert len(told) == (outcome == "needs_key"), sink.infos
    assert not told or ("$OMLX_API_KEY" in told[0] and "--probe-key-file" in told[0])


def test_a_refused_key_is_said_with_where_it_came_from(tmp_path: Path, omlx: FakeOmlx) -> None:  # noqa: F811
    omlx.mode = "key"
    log = tmp_path / "server.log"
    log.write_text(startup(T0))
    sink = Keeper()
    target = ProbeTarget(omlx.url, "not-the-key", None, 5.0, "$OMLX_API_KEY")
    watcher = Watcher(WatchOptions(log, wedge_after=60.0, probe=target), sink)
    _steps(watcher, range(0, 70))
    watcher.follower.close()
    (told,) = [info for info in sink.infos if "cannot probe" in info]
    assert "refused the API key of $OMLX_API_KEY (HTTP 401)" in told and "not-the-key" not in told


# -- the probe's own lines in the log --------------------------------------------------------------


def _own_completion(at: datetime, model: str = "m") -> str:
    return _line(at, "omlx.server", "INFO", f"Completion: model={model}, 1 tokens in 0.05s (20.0 tok/s), prompt: 2")


def _added(at: datetime, prompt_tokens: int) -> str:
    return _line(at, "omlx.scheduler", "DEBUG", f"Added request r-{prompt_tokens} with {prompt_tokens} prompt tokens")


def _probed_once(tmp_path: Path, text: str) -> tuple[Path, EventKeeper, Watcher]:
    """A watch of a log holding ``text`` (then silent) whose one probe, sent at 60 s, came back alive at 61 s."""
    log = tmp_path / "server.log"
    log.write_text(text)
    sink = EventKeeper()
    target = ProbeTarget("http://127.0.0.1:9", None, "m", 1.0)
    watcher = Watcher(WatchOptions(log, wedge_after=60.0, probe=target), sink)
    watcher.prober = ProbeRunner(target, lambda _target: ProbeResult("alive", 0.05, 200, "", "m"))
    _steps(watcher, range(0, 62))
    return log, sink, watcher


def test_the_probe_s_own_request_is_marked_and_not_counted(tmp_path: Path) -> None:
    """A probe goes out on an idle INFO log; oMLX logs its completion (read after its answer came) next
    to a user's chat completion: the probe's row says watch_probe, and the watch counts one request."""
    log, sink, watcher = _probed_once(tmp_path, startup(T0))
    assert [event.fields["outcome"] for event in sink.events if event.kind == "probe"] == ["alive"]
    append(log, _completion(T0 + timedelta(seconds=61)) + _own_completion(T0 + timedelta(seconds=61, milliseconds=5)))
    append(log, _own_completion(T0 + timedelta(seconds=62)))  # a second like it: a user's, the probe had its one
    _steps(watcher, range(62, 70))
    watcher.follower.close()
    finished = [event for event in sink.events if event.kind == "request_complete"]
    assert [event.fields.get(OWN_FIELD, False) for event in finished] == [False, True, False]
    watcher.state.refresh(70.0)
    assert watcher.state.sessions[-1].requests_completed == 2  # the user's two, not the probe's


def test_a_line_like_the_probe_s_is_a_user_s_when_no_probe_is_out(tmp_path: Path) -> None:
    log, sink, watcher = _probed_once(tmp_path, startup(T0))
    _steps(watcher, range(62, 80))  # the answer came at 62: its lines are awaited 10 s, no longer
    append(log, _added(T0 + timedelta(seconds=80), 2) + _own_completion(T0 + timedelta(seconds=80)))
    _steps(watcher, range(80, 85))
    watcher.follower.close()
    assert not [event for event in sink.events if event.fields.get(OWN_FIELD)]


def test_a_debug_arrival_of_the_probe_is_marked_and_a_long_prompt_is_not(tmp_path: Path) -> None:
    log, sink, watcher = _probed_once(tmp_path, startup(T0) + _line(T0, "omlx.engine", "DEBUG", "step"))
    append(log, _added(T0 + timedelta(seconds=61), 812) + _added(T0 + timedelta(seconds=61), 2))
    _steps(watcher, range(62, 66))
    watcher.follower.close()
    arrivals = [event for event in sink.events if event.kind == "request_arrival"]
    assert [(event.fields["prompt_tokens"], event.fields.get(OWN_FIELD, False)) for event in arrivals] == [
        (812, False),
        (2, True),
    ]


def test_a_marked_row_is_valid_by_the_event_schema(tmp_path: Path) -> None:
    import jsonschema

    row = {
        "time": "2026-09-15T20:01:01.005+00:00",
        "source": "server.log",
        "line": 4,
        "level": "INFO",
        "logger": "omlx.server",
        "kind": "request_complete",
        "message": "Completion: model=m, 1 tokens in 0.05s (20.0 tok/s), prompt: 2",
        "type": "completion",
        "tokens": 1,
        OWN_FIELD: True,
    }
    jsonschema.validate(row, bundled("event"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(row | {OWN_FIELD: False}, bundled("event"))


# -- the command -------------------------------------------------------------------------------


def test_the_key_file_and_a_path_with_the_base_path(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "settings.json").write_text(json.dumps({"server": {"port": 18000}}))
    log = tmp_path / "server.log"
    log.write_text(startup(T0))
    empty = tmp_path / "empty-key"
    empty.write_text("\n")
    based = ("--base-path", str(base))
    for args, said in (
        (["--probe-key-file", str(empty)], "--probe-key-file: needs --probe"),
        (["--probe", "http://127.0.0.1:9", "--probe-key-file", str(tmp_path / "none")], "none: cannot read"),
        (["--probe", "http://127.0.0.1:9", "--probe-key-file", str(empty)], "its first line holds no key"),
        ([*based, "--exit-at-end"], "give a PATH or --base-path, not both"),  # without --probe it is unused
        ([*based, "--probe", "auto", "--exit-at-end"], "--exit-at-end reads a finished log"),  # settings read
    ):
        result = runner.invoke(app, ["watch", str(log), *args])
        assert result.exit_code == 2 and said in result.output, (args, result.output)


def test_probe_auto_reads_the_settings_beside_the_followed_log(tmp_path: Path) -> None:
    """oMLX's own file log (``<base>/logs/server.log``) names its server: its base's settings, not
    $OMLX_BASE_PATH's; a log elsewhere takes those of $OMLX_BASE_PATH (here: none)."""
    base, elsewhere = tmp_path / "base", tmp_path / "elsewhere"
    (base / "logs").mkdir(parents=True)
    elsewhere.mkdir()
    (base / "settings.json").write_text(json.dumps({"server": {"port": 18000}}))
    for log, said in (
        (base / "logs" / "server.log", "--exit-at-end reads a finished log"),  # its settings were read
        (tmp_path / "omlx.log", f"{tmp_path / 'empty' / 'settings.json'}: no such file"),
    ):
        log.write_text(startup(T0))
        env = {"OMLX_BASE_PATH": str(tmp_path / "empty")}
        result = runner.invoke(app, ["watch", str(log), "--probe", "auto", "--exit-at-end"], env=env)
        assert result.exit_code == 2 and said in result.output, (log, result.output)


@pytest.mark.slow
def test_done_when_watch_with_a_path_finds_the_server_and_its_key(
    tmp_path: Path,
    omlx: FakeOmlx,  # noqa: F811
    watches: list[Watch],  # noqa: F811
) -> None:
    """``watch PATH --probe auto --base-path B``: the URL from B's settings; the key from --probe-key-file
    gets completions from a server that wants it; without a key, a note and needs_key probes, no exit 3."""
    omlx.mode = "key"
    base = tmp_path / "base"
    base.mkdir()
    (base / "settings.json").write_text(
        json.dumps({"server": {"host": "127.0.0.1", "port": int(omlx.url.rsplit(":", 1)[1])}})
    )
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    log = tmp_path / "server.log"
    log.write_text(startup(datetime.now() - timedelta(minutes=5)))
    common = ("--interval", "0.05", "-f", "ndjson", "--probe", "auto", "--base-path", str(base))
    limits = ("--wedge-after", "1s", "--probe-timeout", "1s", "--exit-on-dead")
    for given, outcome in (("--probe-key-file", "alive"), (None, "needs_key")):
        watch = Watch(str(log), *common, *limits, *((given, str(key_file)) if given else ()))
        watches.append(watch)
        _following(watch)
        watch.row(lambda row, w=watch: row.get("kind") == "probe" and len(_probe_rows(w)) >= 3, within=15.0)
        watch.process.terminate()
        assert watch.finish() == 0, watch.err  # never exit 3
        assert {row["outcome"] for row in _probe_rows(watch)} == {outcome}
        assert not any(row.get("watch") == "probe_dead" for row in watch.rows())
        notes = [line for line in watch.err if "wants an API key" in line]
        assert len(notes) == (outcome == "needs_key"), watch.err
        assert KEY not in "\n".join(watch.out + watch.err)
    assert {auth for _, auth, _ in omlx.requests} == {f"Bearer {KEY}", ""}  # the key file's, then none
