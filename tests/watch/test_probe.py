"""The generation probe of ``watch --probe``: its HTTP answers, when it fires, what it proves.

CI has no oMLX: a local server on 127.0.0.1 answers as the real one does (``omlx/server.py``: the
``/v1/models`` list, a text completion, an OpenAI-style error body), or hangs, or is not there.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from test_parity import EventKeeper
from test_watch import Watch, _following, _line, append, escalation, fatal_exit, startup, watches  # noqa: F401
from typer.testing import CliRunner

from conftest import REAL, pasted
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.analysis.probes import generation_dead
from omlx_logscan.cli.app import app
from omlx_logscan.errors import EXIT_DEAD
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.read import read_events
from omlx_logscan.watch.head import read_head
from omlx_logscan.watch.loop import Watcher, WatchOptions
from omlx_logscan.watch.probe_client import ProbeResult, ProbeRunner, ProbeTarget, probe_once, settings_url
from omlx_logscan.watch.probe_schedule import FAULT_WAIT_S, ProbeSchedule

REAL_OMLX = REAL.parent / "real-omlx"  # logs the real oMLX server wrote (tools/real-omlx)
KEY = "sk-omlx-test-7f3a9c"  # the API key: never in an output, a row, a hook's environment or a message
HANG_LIMIT_S = 15.0  # a hanging answer is released by then at the latest (bounded waits)
KEEPALIVE_S = 0.1  # oMLX sends a space every 10 s while a completion that is not streamed runs; here, faster
runner = CliRunner()

MODELS = {
    "object": "list",
    "data": [{"id": "tiny-llama", "object": "model", "created": 1780000000, "owned_by": "omlx", "max_model_len": 2048}],
}
COMPLETION = {
    "id": "cmpl-1",
    "object": "text_completion",
    "created": 1780000000,
    "model": "tiny-llama",
    "choices": [{"index": 0, "text": " the", "logprobs": None, "finish_reason": "length"}],
    "usage": {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3},
}


HTML_502 = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
ENDLESS_CHUNK = b" " * 65536
ENDLESS_LIMIT = 256 << 20  # an endless answer stops here at the latest, should nothing stop reading it


class FakeOmlx:
    """A test server answering like oMLX: ``mode`` is alive, hang (completions only, as a penalty box: 200 and
    keepalive spaces, never the answer), late_error (200, a space, then an error body), stuck (every request
    hangs), 500, or echo (a 500 whose message repeats the request's Authorization header). And as what may
    stand in front of it, or an oMLX started with an API key: key (401 without ``Bearer KEY``, as oMLX's
    ``verify_api_key``), 401 and 403 (every request), 302 (a redirect), 502 (a proxy's HTML page), 504 (a
    gateway's JSON), nonjson
    (200 and text), endless (/v1/models answers bytes without end)."""

    def __init__(self) -> None:
        self.mode = "alive"
        self.only_completions = False  # a mode in front of oMLX answers the completions only
        self.requests: list[tuple[str, str, dict[str, Any] | None]] = []  # path, Authorization, body
        self.completions: list[float] = []  # when (monotonic) each completion was asked
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _in_front(self) -> bool:
                """Answer as a proxy, a refused key or an endless server would; False: answer as oMLX."""
                mode = fake.mode
                if fake.only_completions and self.command == "GET":
                    return False
                if mode == "key" and self.headers.get("Authorization") == f"Bearer {KEY}":
                    return False
                if mode in ("key", "401", "403"):
                    self._answer(403 if mode == "403" else 401, {"detail": "API key required"})
                elif mode == "504":  # a gateway's timeout, in the JSON of an API gateway
                    self._answer(504, {"error": {"message": "upstream request timeout"}})
                elif mode == "302":
                    self.send_response(302)
                    self.send_header("Location", "https://login.example/sso")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif mode in ("502", "nonjson"):
                    page = HTML_502 if mode == "502" else b"OK"
                    self.send_response(502 if mode == "502" else 200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                elif mode == "endless":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    with contextlib.suppress(OSError):
                        for _ in range(ENDLESS_LIMIT // len(ENDLESS_CHUNK)):
                            self.wfile.write(ENDLESS_CHUNK)
                else:
                    return False
                return True

            def do_GET(self) -> None:
                fake.requests.append((self.path, self.headers.get("Authorization", ""), None))
                if fake.mode == "stuck":  # nothing answers, not even the model list
                    fake.release.wait(HANG_LIMIT_S)
                    return
                if self._in_front():
                    return
                self._answer(200, MODELS) if self.path == "/v1/models" else self._answer(404, {"detail": "Not Found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                auth = self.headers.get("Authorization", "")
                fake.requests.append((self.path, auth, body))
                fake.completions.append(time.monotonic())
                if self._in_front():
                    return
                if fake.mode in ("hang", "late_error"):  # as oMLX: 200 and a space at once, then keepalive spaces
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    if fake.mode == "late_error":  # an error once the answer had begun: status 200, an error body
                        self.wfile.write(json.dumps({"error": {"message": "Prefill exceeds memory"}}).encode())
                        return
                    until = time.monotonic() + HANG_LIMIT_S
                    while not fake.release.wait(KEEPALIVE_S) and time.monotonic() < until:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    return
                if fake.mode in ("500", "echo"):
                    message = f"engine failed for {auth}" if fake.mode == "echo" else "Metal GPU submissions disabled"
                    error = {"message": message, "type": "server_error", "param": None, "code": None}
                    self._answer(500, {"error": error})
                    return
                self._answer(200, COMPLETION)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def omlx() -> Iterator[FakeOmlx]:
    fake = FakeOmlx()
    yield fake
    fake.close()


def _refused_url() -> str:
    """A port on 127.0.0.1 nothing listens on."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# -- one probe ----------------------------------------------------------------------------------


def test_a_probe_asks_one_token_of_the_first_model_with_the_key(omlx: FakeOmlx) -> None:
    result = probe_once(ProbeTarget(omlx.url, KEY, None, 5.0))
    assert result.outcome == "alive" and result.status == 200 and result.model == "tiny-llama"
    assert result.latency_s is not None and 0 <= result.latency_s < 5.0
    (models, _, _), (completion, auth, body) = omlx.requests
    assert (models, completion, auth) == ("/v1/models", "/v1/completions", f"Bearer {KEY}")
    assert body is not None and body["max_tokens"] == 1 and body["stream"] is False and body["model"] == "tiny-llama"


@pytest.mark.slow
def test_a_probe_tells_error_hung_and_down(omlx: FakeOmlx) -> None:
    omlx.mode = "500"
    error = probe_once(ProbeTarget(omlx.url, None, "other", 5.0))
    assert (error.outcome, error.status, error.model) == ("error", 500, "other")
    assert "Metal GPU submissions disabled" in error.detail
    omlx.mode = "hang"
    began = time.monotonic()
    hung = probe_once(ProbeTarget(omlx.url, None, None, 0.5))  # keepalive spaces do not extend it
    assert hung.outcome == "hung" and time.monotonic() - began < 3.0  # bounded by --probe-timeout
    down = probe_once(ProbeTarget(_refused_url(), None, None, 0.5))
    assert down.outcome == "down" and down.status is None
    omlx.mode = "late_error"
    late = probe_once(ProbeTarget(omlx.url, None, None, 5.0))
    assert (late.outcome, late.status) == ("error", 200) and "Prefill exceeds memory" in late.detail
    omlx.mode = "stuck"
    stuck = probe_once(ProbeTarget(omlx.url, None, None, 0.5))
    assert stuck.outcome == "down" and "/v1/models did not answer" in stuck.detail


@pytest.mark.slow
def test_the_key_never_appears_in_what_a_probe_keeps(omlx: FakeOmlx) -> None:
    omlx.mode = "echo"
    result = probe_once(ProbeTarget(omlx.url, KEY, None, 5.0))
    assert result.outcome == "error" and "engine failed for Bearer" in result.detail
    assert KEY not in repr(result) and KEY not in repr(ProbeTarget(omlx.url, KEY))


def test_settings_give_the_url_as_omlx_binds_it() -> None:
    assert settings_url({"server": {"host": "0.0.0.0", "port": 8123}}) == "http://127.0.0.1:8123"
    assert settings_url({"server": {"host": "192.168.1.4, 127.0.0.1"}}) == "http://192.168.1.4:8000"
    assert settings_url({}) == "http://127.0.0.1:8000"


# -- when it probes ------------------------------------------------------------------------------


def _event(kind: str) -> Event:
    return Event(kind, None, "server.log", 1, "INFO", "omlx.server", "")


def test_a_busy_server_is_never_probed_and_an_idle_one_once_per_wedge_after() -> None:
    schedule = ProbeSchedule(60.0, None, 0.0)
    for second in range(0, 600, 10):  # a request finishes every 10 s: the log proves the engine alive
        schedule.note(_event("request_complete"), float(second))
        schedule.lines(float(second))
        assert schedule.due(float(second) + 5, arrivals_hidden=True) is None
    sent = []
    for second in range(600, 1200):  # idle: nothing finishes, nothing is written
        trigger = schedule.due(float(second), arrivals_hidden=True)
        if trigger is not None:
            sent.append((second, trigger))
            schedule.restart(float(second))
    assert [second for second, _ in sent] == [650, 710, 770, 830, 890, 950, 1010, 1070, 1130, 1190]
    assert {trigger for _, trigger in sent} == {"possible_wedge"}


def test_debug_arrivals_leave_only_the_silence_and_a_stop_ends_all() -> None:
    schedule = ProbeSchedule(60.0, None, 0.0)
    schedule.lines(50.0)
    assert schedule.due(100.0, arrivals_hidden=False) is None  # DEBUG: the log shows arrivals, no wedge to guess
    assert schedule.due(111.0, arrivals_hidden=False) == "silence"
    schedule.note(_event("shutdown"), 112.0)
    assert schedule.due(500.0, arrivals_hidden=True) is None  # a stop the log shows: nothing to probe
    schedule.note(_event("process_start"), 501.0)
    schedule.restart(501.0)
    assert schedule.due(562.0, arrivals_hidden=True) == "possible_wedge"
    schedule.note(_event("process_exit"), 563.0)  # a fatal exit or a crash: the supervisor restarts it
    assert schedule.due(900.0, arrivals_hidden=True) is None


def test_an_unsettled_fault_and_the_heartbeat_probe() -> None:
    schedule = ProbeSchedule(600.0, 30.0, 0.0)
    schedule.unsettled_fault(10.0)
    assert schedule.due(10.0 + FAULT_WAIT_S - 0.1, arrivals_hidden=False) is None
    assert schedule.due(10.0 + FAULT_WAIT_S, arrivals_hidden=False) == "fault"
    schedule.restart(20.0)
    schedule.note(_event("request_complete"), 45.0)
    assert schedule.due(60.0, arrivals_hidden=False) is None  # a request finished in the last 30 s
    assert schedule.due(75.0, arrivals_hidden=False) == "heartbeat"


# -- what probes prove ---------------------------------------------------------------------------


def _probe(at: str, outcome: str) -> Event:
    return Event("probe", at, "server.log", 0, None, None, "", {"outcome": outcome})


def _completion(at: datetime) -> str:
    return _line(at, "omlx.server", "INFO", "Chat completion: model=m, 12 tokens in 0.40s (30.0 tok/s), prompt: 812")


def test_a_hung_probe_or_two_errors_prove_the_lifetime_dead(tmp_path: Path) -> None:
    t0 = datetime(2026, 9, 15, 20, 0)
    log = pasted(tmp_path, startup(t0) + _completion(t0 + timedelta(minutes=1)))
    analysis = analyze(read_events(resolve([str(log)])))
    hung = _probe("2026-09-15T20:30:00.000", "hung")
    proof = generation_dead(analysis, [_probe("2026-09-15T20:10:00.000", "alive"), hung])
    assert proof is not None and (proof.outcome, proof.since, proof.session) == ("hung", hung.time, 1)
    assert generation_dead(analysis, [hung, _probe("2026-09-15T20:40:00.000", "alive")]) is None  # cleared
    errors = [_probe(f"2026-09-15T20:{m}:00.000", "error") for m in (20, 30)]
    assert generation_dead(analysis, errors[:1]) is None  # one error may be the probe's own
    assert generation_dead(analysis, errors) is not None
    assert generation_dead(analysis, [_probe("2026-09-15T20:20:00.000", "down")]) is None  # the log tells a death
    before = _probe("2026-09-15T19:00:00.000", "hung")  # before the lifetime began: another process
    assert generation_dead(analysis, [before]) is None


# -- the watch ------------------------------------------------------------------------------------


def _watcher(log: Path, sink: EventKeeper, outcomes: list[str], **options: Any) -> Watcher:
    """A watcher whose probes answer ``outcomes`` in turn, without a network (then errors: no more expected)."""
    target = ProbeTarget("http://127.0.0.1:9", KEY, None, 1.0)
    watcher = Watcher(WatchOptions(log, wedge_after=60.0, probe=target, **options), sink)
    answers = iter(outcomes)
    watcher.prober = ProbeRunner(target, lambda _target: ProbeResult(next(answers, "unexpected"), 0.5, 200, "", "m"))
    return watcher


def _steps(watcher: Watcher, times: range) -> None:
    for now in times:
        watcher.step(float(now))
        if watcher.prober is not None and watcher.prober.busy:
            thread = watcher.prober._thread
            assert thread is not None
            thread.join(5.0)


@pytest.mark.slow
def test_an_info_watch_probes_once_per_wedge_after_and_alerts_once_on_hung(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    t0 = datetime(2026, 9, 15, 20, 0)
    log.write_text(startup(t0))
    sink = EventKeeper()
    watcher = _watcher(log, sink, ["alive", "hung", "hung"], on_dead="true")
    watcher.step(0.0)
    append(log, _completion(t0 + timedelta(seconds=5)))  # the last record: held 2 s for its continuation
    _steps(watcher, range(1, 200))  # the silence since its line is no longer than the wait since it finished
    probes = [event for event in sink.events if event.kind == "probe"]
    assert [p.fields["outcome"] for p in probes] == ["alive", "hung", "hung"]
    assert {p.fields["trigger"] for p in probes} == {"possible_wedge"}
    alerts = [notice for notice in sink.notices if notice.kind == "probe_dead"]
    assert len(alerts) == 1 and "ALERT engine generation-dead" in alerts[0].message
    watcher._wait_for_hooks()
    watcher.follower.close()
    assert watcher.hook_runs == {"on-dead": 1}  # once for the outage, though two probes hung
    assert watcher.summary().endswith("; 3 probes (1 alive, 2 hung)")


def test_no_probe_after_a_fatal_exit_nor_while_a_penalty_box_is_proven(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    sink = EventKeeper()
    watcher = _watcher(log, sink, [])
    watcher.step(0.0)
    t0 = datetime(2026, 9, 15, 20, 0)
    append(log, startup(t0) + escalation(t0 + timedelta(seconds=10)))
    _steps(watcher, range(1, 150))
    assert any(notice.kind == "dead" for notice in sink.notices)
    append(log, startup(t0 + timedelta(hours=1)) + fatal_exit(t0 + timedelta(hours=1, seconds=5)))
    _steps(watcher, range(150, 400))
    watcher.follower.close()
    assert not [event for event in sink.events if event.kind == "probe"]


# -- the command -------------------------------------------------------------------------------


def test_probe_options_are_checked_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "server.log"
    log.parent.mkdir()
    log.write_text(startup(datetime(2026, 9, 15, 20, 0)))
    for args, said in (
        (["--probe-model", "m"], "--probe-model: needs --probe"),
        (["--probe-every", "1m"], "--probe-every: needs --probe"),
        (["--probe", "ftp://host"], "not an http:// or https:// URL"),
        (["--probe", f"http://user:{KEY}@127.0.0.1:8000"], "credentials in the URL are refused"),
        (["--probe", f"ftp://{KEY}@"], "credentials in the URL are refused"),
        (["--probe", "auto", "--base-path", str(tmp_path)], "settings.json: no such file"),
        (["--probe", "http://127.0.0.1:8000", "--exit-at-end"], "--exit-at-end reads a finished log"),
    ):
        result = runner.invoke(app, ["watch", *([] if "--base-path" in args else [str(log)]), *args])
        assert result.exit_code == 2, (args, result.output)
        assert said in result.output and KEY not in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_exit_on_dead_with_a_hanging_server_at_info(tmp_path: Path, omlx: FakeOmlx, watches: list[Watch]) -> None:  # noqa: F811
    """The issue's run: an INFO log whose engine the log alone can only call possibly wedged, a server whose
    completions hang; ``--exit-on-dead`` exits 3 within --wedge-after + --probe-timeout."""
    omlx.mode = "hang"
    log = tmp_path / "server.log"
    now = datetime.now()
    log.write_text(startup(now - timedelta(minutes=5)) + _completion(now - timedelta(minutes=1)))
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"auth": {"api_key": "from-settings"}}))
    env_file = tmp_path / "hook-env.txt"
    wedge_after, probe_timeout = 2.0, 2.0
    watch = Watch(
        str(log),
        *("--interval", "0.05", "-f", "ndjson", "--exit-on-dead", "--probe", omlx.url),
        *(
            "--wedge-after",
            f"{wedge_after:g}s",
            "--probe-timeout",
            f"{probe_timeout:g}s",
            "--on-dead",
            f"env > {env_file}",
        ),
        env={"OMLX_API_KEY": KEY, "OTHER_NAME_SAME_KEY": KEY, "OMLX_BASE_PATH": str(tmp_path)},
    )
    watches.append(watch)
    _following(watch)
    began = time.monotonic()
    code = watch.finish(within=wedge_after + probe_timeout + 8.0)
    took = time.monotonic() - began
    assert code == EXIT_DEAD and took <= wedge_after + probe_timeout + 3.0, (took, watch.err)
    rows = watch.rows()
    probe = next(row for row in rows if row.get("kind") == "probe")
    assert (probe["outcome"], probe["trigger"], probe["status"]) == ("hung", "possible_wedge", None)
    alert = next(row for row in rows if row.get("watch") == "probe_dead")
    assert alert["outcome"] == "hung" and alert["since"] == probe["time"]
    assert [auth for path, auth, _ in omlx.requests] == [f"Bearer {KEY}"] * 2  # $OMLX_API_KEY before the settings'
    assert watch.err[-1].endswith("; 1 probe (1 hung)")  # the summary line
    hook_env = env_file.read_text()
    assert "LOGSCAN_HOOK=on-dead" in hook_env
    for text in (hook_env, "\n".join(watch.out), "\n".join(watch.err)):
        assert KEY not in text


@pytest.mark.slow
def test_a_configuration_file_cannot_point_the_probe_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, omlx: FakeOmlx
) -> None:
    """A project's .logscan.toml found above the current folder must not send the API key to its URL:
    its probe key is ignored, with a note naming the file and the key, and the watch goes on."""
    log = tmp_path / "server.log"
    log.write_text(startup(datetime(2026, 9, 15, 20, 0)))
    (tmp_path / ".logscan.toml").write_text(f'[watch]\nprobe = "{omlx.url}"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OMLX_API_KEY", KEY)
    result = runner.invoke(app, ["watch", str(log), "--exit-at-end"])
    assert result.exit_code == 0, result.output
    assert ".logscan.toml: ignored 'probe'" in result.stderr
    assert not omlx.requests


# -- a watch from the end of a file: what its first read says --------------------------------------


def _recording(watcher: Watcher, models: list[str | None]) -> None:
    """Let the watcher's probes answer alive and record the model each asked."""

    def answer(target: ProbeTarget) -> ProbeResult:
        models.append(target.model)
        return ProbeResult("alive", 0.1, 200, "", target.model)

    assert watcher.prober is not None
    watcher.prober = ProbeRunner(watcher.prober.target, answer)


def _default_model(at: datetime, model: str) -> str:
    return startup(at) + _line(at + timedelta(milliseconds=300), "omlx.server", "INFO", f"Default model: {model}")


def _chatter(log: Path, at: datetime, level: str) -> None:
    """A line that is no finished request: the log is not silent, and nothing proves the engine alive."""
    append(log, _line(at, "omlx.scheduler", level, "Cache phase timings: cleanup_finished_sync=1.1ms/10"))


@pytest.mark.parametrize(("ending", "probed"), [("", True), ("fatal_exit", False), ("shutdown", False)])
def test_a_watch_from_the_end_takes_the_process_state_from_its_first_read(
    tmp_path: Path, ending: str, probed: bool
) -> None:
    """The skipped part's last word on the process decides: running (probed after --wedge-after of
    nothing finishing), or a fatal exit or an orderly stop (never probed: the supervisor restarts it)."""
    t0 = datetime(2026, 9, 15, 20, 0)
    log = tmp_path / "server.log"
    text = _default_model(t0, "m") + _completion(t0 + timedelta(minutes=1))
    if ending == "fatal_exit":
        text += fatal_exit(t0 + timedelta(minutes=2))
    elif ending == "shutdown":
        text += _line(t0 + timedelta(minutes=2), "omlx.engine_pool", "INFO", "Engine pool shutdown complete")
    log.write_text(text)
    sink = EventKeeper()
    watcher = _watcher(log, sink, ["alive"] * 5)
    _steps(watcher, range(0, 100))
    watcher.follower.close()
    sent = [event for event in sink.events if event.kind == "probe"]
    assert bool(sent) is probed, [e.fields for e in sent]


def test_a_debug_log_skipped_at_the_start_shows_arrivals_so_no_possible_wedge_is_probed(tmp_path: Path) -> None:
    t0 = datetime(2026, 9, 15, 20, 0)
    for level, probed in (("DEBUG", False), ("INFO", True)):
        log = tmp_path / f"{level}.log"
        log.write_text(_default_model(t0, "m") + _line(t0 + timedelta(seconds=1), "omlx.engine", level, "step"))
        sink = EventKeeper()
        watcher = _watcher(log, sink, ["alive"] * 5)
        for now in range(0, 100):  # the log keeps writing INFO lines, none a finished request
            if now % 10 == 5:
                _chatter(log, t0 + timedelta(seconds=now), "INFO")
            _steps(watcher, range(now, now + 1))
        watcher.follower.close()
        triggers = [event.fields["trigger"] for event in sink.events if event.kind == "probe"]
        assert triggers == (["possible_wedge"] if probed else []), (level, triggers)


def test_the_probe_asks_the_default_model_the_log_named(tmp_path: Path) -> None:
    """--probe-model, else the default model of the last start (the skipped part's, then the live
    log's), else the first /v1/models lists (the target's model None)."""
    t0 = datetime(2026, 9, 15, 20, 0)
    log = tmp_path / "server.log"
    log.write_text(_default_model(t0, "qwen-from-the-head"))
    models: list[str | None] = []
    watcher = _watcher(log, EventKeeper(), [])
    _recording(watcher, models)
    _steps(watcher, range(0, 70))
    append(log, _default_model(t0 + timedelta(hours=1), "llama-after-a-restart"))
    _steps(watcher, range(70, 140))
    append(log, startup(t0 + timedelta(hours=2)))  # a start that names no default model
    _steps(watcher, range(140, 210))
    watcher.follower.close()
    assert models == ["qwen-from-the-head", "llama-after-a-restart", None]
    log.write_text(_default_model(t0, "qwen-from-the-head"))
    chosen = Watcher(
        WatchOptions(log, wedge_after=60.0, probe=ProbeTarget("http://127.0.0.1:9", None, "given")), EventKeeper()
    )
    models.clear()
    _recording(chosen, models)
    _steps(chosen, range(0, 70))
    chosen.follower.close()
    assert models == ["given"]


# -- the "Done when", against the local server ---------------------------------------------


def _probe_watch(log: Path, url: str, *args: str, env: dict[str, str] | None = None) -> Watch:
    return Watch(
        str(log),
        *("--interval", "0.05", "-f", "ndjson", "--probe", url, "--wedge-after", "1s", "--probe-timeout", "1s"),
        *args,
        env={"OMLX_API_KEY": KEY, **(env or {})},
    )


def _probe_rows(watch: Watch) -> list[dict[str, Any]]:
    return [row for row in watch.rows() if row.get("kind") == "probe"]


@pytest.mark.slow
def test_done_when_a_dead_engine_at_info_is_proven_by_a_probe_and_alerted_once(
    tmp_path: Path,
    omlx: FakeOmlx,
    watches: list[Watch],  # noqa: F811
) -> None:
    """The log alone could only call it possible; the first hung probe proves it, and the probes that
    hang after it raise no second alert and run no second --on-dead."""
    omlx.mode = "hang"
    log = tmp_path / "server.log"
    now = datetime.now()
    log.write_text(startup(now - timedelta(minutes=5)) + _completion(now - timedelta(minutes=1)))
    runs = tmp_path / "runs.txt"
    watch = _probe_watch(log, omlx.url, "--on-dead", f"echo run >> {runs}")
    watches.append(watch)
    _following(watch)
    for count in (1, 2, 3):
        watch.row(lambda row, n=count: row.get("kind") == "probe" and len(_probe_rows(watch)) >= n, within=10.0)
    watch.process.terminate()
    assert watch.finish() == 0
    probes = _probe_rows(watch)
    assert len(probes) >= 3 and {row["outcome"] for row in probes} == {"hung"}
    assert probes[0]["trigger"] == "possible_wedge"
    alerts = [row for row in watch.rows() if row.get("watch") == "probe_dead"]
    assert len(alerts) == 1 and alerts[0]["since"] == probes[0]["time"]
    assert runs.read_text().splitlines() == ["run"]
    assert not any(row.get("watch") in ("dead", "wedge") for row in watch.rows())  # the log alone proved nothing


@pytest.mark.slow
def test_done_when_a_busy_server_is_never_probed_and_an_idle_one_once_per_wedge_after(
    tmp_path: Path,
    omlx: FakeOmlx,
    watches: list[Watch],  # noqa: F811
) -> None:
    log = tmp_path / "server.log"
    log.write_text(startup(datetime.now() - timedelta(minutes=5)))
    watch = _probe_watch(log, omlx.url)
    watches.append(watch)
    _following(watch)
    busy_until = time.monotonic() + 4.0  # four --wedge-after of requests finishing every 0.2 s
    while time.monotonic() < busy_until:
        append(log, _completion(datetime.now()))
        idle_from = time.monotonic()
        time.sleep(0.2)
    assert omlx.completions == [], "a busy server was probed"
    time.sleep(4.5)  # idle: nothing finishes, nothing is written
    watch.process.terminate()
    assert watch.finish() == 0
    sent = omlx.completions
    assert 2 <= len(sent) <= 4, sent  # one per --wedge-after (1 s) plus the probe's own time, at most
    assert sent[0] - idle_from >= 0.9
    assert all(later - earlier >= 0.9 for earlier, later in itertools.pairwise(sent))
    assert {row["outcome"] for row in _probe_rows(watch)} == {"alive"}
    assert not any(row.get("watch") == "probe_dead" for row in watch.rows())


@pytest.mark.slow
def test_done_when_the_key_is_in_no_row_message_or_hook_even_when_the_server_echoes_it(
    tmp_path: Path,
    omlx: FakeOmlx,
    watches: list[Watch],  # noqa: F811
) -> None:
    """Two 500s whose message repeats the request's Authorization header prove the engine dead: the
    rows, the alert, the summary, the hook's environment and the timeline that reads the rows back
    never show the key."""
    omlx.mode = "echo"
    log = tmp_path / "server.log"
    now = datetime.now()
    log.write_text(startup(now - timedelta(minutes=5)) + _completion(now - timedelta(minutes=1)))
    env_file, out = tmp_path / "hook-env.txt", tmp_path / "watch.ndjson"
    watch = _probe_watch(log, omlx.url, "--on-dead", f"env > {env_file}", "-o", str(out))
    watches.append(watch)
    _following(watch)
    deadline = time.monotonic() + 10.0
    while "probe_dead" not in (out.read_text() if out.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.1)
    watch.process.terminate()
    assert watch.finish() == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    errors = [row for row in rows if row.get("kind") == "probe"]
    assert len(errors) >= 2 and all(row["status"] == 500 and "Bearer …" in row["detail"] for row in errors)
    assert any(row.get("watch") == "probe_dead" for row in rows)
    assert [auth for _, auth, body in omlx.requests if body] == [f"Bearer {KEY}"] * len(errors)  # it was sent
    timeline = runner.invoke(app, ["timeline", str(log), "--probes", str(out), "-f", "json"])
    assert timeline.exit_code == 0, timeline.output
    for text in (out.read_text(), "\n".join(watch.err), env_file.read_text(), timeline.output):
        assert KEY not in text


def _sent_at(tmp_path: Path, write: Callable[[Path, datetime, int], None]) -> list[float]:
    """When a watch of a started INFO log (--wedge-after 60 s) sent probes over 64 s stepped by tenths
    of a second, ``write`` adding to the log before each step (given its time and the tenth)."""
    t0 = datetime(2026, 9, 15, 20, 0)
    log = tmp_path / "server.log"
    log.write_text(startup(t0))
    watcher = _watcher(log, EventKeeper(), ["alive"] * 2)
    assert watcher.prober is not None
    watcher.step(0.0)
    sent = []
    for tenth in range(1, 640):
        now, before = tenth / 10, watcher.prober.sent
        write(log, t0 + timedelta(seconds=now), tenth)
        watcher.step(now)
        if watcher.prober.sent > before:
            sent.append(now)
    watcher.follower.close()
    return sent


def test_a_finished_request_held_for_its_continuation_still_stops_the_probe(tmp_path: Path) -> None:
    """The last record waits up to RECORD_HOLD_S for its continuation before it is read; a probe that
    falls due meanwhile waits for it, at most that long (found against the real server: a probe went
    out 1.9 s after a completion whose line was still held)."""

    def finish_one(log: Path, at: datetime, tenth: int) -> None:  # due at 60 s; finished at 59.5 s, read at 61.5 s
        if tenth == 595:
            append(log, _completion(at))

    assert _sent_at(tmp_path, finish_one) == []


def test_a_log_that_never_stops_writing_delays_a_due_probe_at_most_the_hold(tmp_path: Path) -> None:
    def chatter(log: Path, at: datetime, tenth: int) -> None:  # a line every half second: the hold never ends
        if tenth % 5 == 0:
            _chatter(log, at, "INFO")

    (sent,) = _sent_at(tmp_path, chatter)
    assert 60.0 <= sent <= 60.0 + 2.0  # due at 60 s (--wedge-after), sent once the hold at its due time is over


@pytest.mark.parametrize("version", ["0.4.4", "0.5.3", "0.5.7", "0.6.3rc2"])
def test_the_first_read_of_real_omlx_logs_names_the_default_model_and_the_stop(version: str) -> None:
    """Every oMLX version's init_server logs ``Default model: …`` at INFO; the clean run ends with an
    orderly stop, so a watch from its end would not probe."""
    log = REAL_OMLX / f"a-info-clean@{version}.server.log"
    head = read_head(log, log.stat().st_size)
    assert head.default_model == "tiny-llama"
    assert head.ended is not None and head.ended.kind == "shutdown"
    assert "INFO" in head.levels and head.sessions == 3


def test_the_first_read_of_a_pasted_log_names_its_default_model() -> None:
    log = REAL / "omlx-issue-899.log"
    head = read_head(log, log.stat().st_size)
    assert (head.default_model, head.ended) == ("Qwen3.5-27B-Claude-4.6-Opus-Distilled-MLX-4bit", None)
