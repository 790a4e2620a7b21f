"""The generation probe: ask the oMLX server for one token, in a thread, so a poll never waits on it.

A penalty box keeps ``/v1/models`` answering while every completion hangs, and ``/api/status``
stays green through wedges of hours (oMLX issues 2852, 2858, 2334, 1883): only a real generation
proves the engine alive. A probe is ``GET /v1/models`` (does anything answer, and which model is
there), then a completion of ``max_tokens: 1``, not streamed. The API key goes in the request's
header and nowhere else: never in a result, a row, a message or a hook's environment.

Only oMLX's own word on the completion counts against the engine: no answer in time (hung), or an
error it gave (a 5xx with its JSON error body, or an error after the keepalive began). A 401 or 403
says the server wants a key (needs_key); a redirect, a gateway's 502 or 504, an answer that is not
JSON or not a completion says nothing of the engine (failed). An answer is read up to MAX_BODY_BYTES.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from omlx_logscan.analysis.probes import ALIVE, DOWN, ERROR, FAILED, HUNG, NEEDS_KEY
from omlx_logscan.errors import LogscanError
from omlx_logscan.parsing.probes import ProbeOutcome, ProbeTrigger
from omlx_logscan.timeutil import stamp_of

API_KEY_VARIABLE = "OMLX_API_KEY"
PROMPT = "Hi"  # fixed and short: one prompt token or two, and one token out
MODELS_TIMEOUT_S = 30.0  # /v1/models answers from memory: longer than this is nothing answering
DETAIL_CHARS = 200  # how much of an error answer a probe keeps
READ_BYTES = 65536
MAX_BODY_BYTES = 1 << 20  # a model list or a one-token completion is kilobytes: more is no answer of oMLX's
KEY_STATUSES = frozenset({401, 403})  # the server wants a key, or another one
GATEWAY_STATUSES = frozenset({502, 504})  # a proxy's word on the server behind it, never oMLX's own
COMPLETIONS = "/v1/completions"
_ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # a server bound to all: ask it here


@dataclass(frozen=True)
class ProbeTarget:
    """Where and how to probe: ``url`` is scheme://host:port[/prefix] with no credentials."""

    url: str
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None  # None: the first model /v1/models lists
    timeout: float = 120.0
    key_from: str | None = None  # where the key came from, for the note when the server refuses it


@dataclass(frozen=True)
class ProbeResult:
    """What one probe found; ``detail`` is the server's error text or the connection's failure."""

    outcome: ProbeOutcome
    latency_s: float | None = None
    status: int | None = None
    detail: str = ""
    model: str | None = None


def probe_url(text: str) -> str:
    """``--probe URL``: an http(s) base URL with a host, without credentials, its trailing slash dropped."""
    parts = urllib.parse.urlsplit(text)
    if "@" in parts.netloc:  # checked first: no message may show them
        raise LogscanError(
            "--probe: credentials in the URL are refused (give the API key with --probe-key-file or $OMLX_API_KEY)"
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LogscanError(f"--probe {text!r}: not an http:// or https:// URL with a host")
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        raise LogscanError(f"--probe {parts.hostname}: bad port") from None
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def read_settings(path: Path) -> dict[str, Any]:
    """oMLX's ``settings.json`` (``omlx/settings.py``: ``server.host``, ``server.port``, ``auth.api_key``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LogscanError(f"--probe auto: {path}: no such file (oMLX's settings; give --probe URL)") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not JSON"
        raise LogscanError(f"--probe auto: {path}: cannot read ({reason})") from None
    if not isinstance(data, dict):
        raise LogscanError(f"--probe auto: {path}: not oMLX's settings (no JSON object)")
    return data


def settings_url(settings: dict[str, Any]) -> str:
    """The server's URL as oMLX's settings give it (defaults 127.0.0.1:8000, as oMLX's own)."""
    found = settings.get("server")
    server: dict[str, Any] = found if isinstance(found, dict) else {}
    host = server.get("host", server.get("bind_address", "127.0.0.1"))
    host = str(host[0] if isinstance(host, list) and host else host).split(",")[0].strip()
    host = _ANY_ADDRESS.get(host, host)
    port = server.get("port", 8000)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise LogscanError("--probe auto: oMLX's settings give no valid server.port")
    return probe_url(f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}")


def settings_key(settings: dict[str, Any]) -> str | None:
    auth = settings.get("auth")
    key = auth.get("api_key") if isinstance(auth, dict) else None
    return key if isinstance(key, str) and key else None


def probe_once(target: ProbeTarget) -> ProbeResult:
    """One probe, blocking: /v1/models, then a one-token completion. Never raises."""
    result = _probe(target)
    key = target.api_key
    if key and key in result.detail:  # a server that echoes the header must not put it in a row
        return ProbeResult(
            result.outcome, result.latency_s, result.status, result.detail.replace(key, "…"), result.model
        )
    return result


def _probe(target: ProbeTarget) -> ProbeResult:
    models_wait = min(target.timeout, MODELS_TIMEOUT_S)
    answer = _request(target, "/v1/models", None, models_wait)
    if isinstance(answer, ProbeResult):
        return answer if answer.outcome != HUNG else ProbeResult(DOWN, None, None, "/v1/models did not answer")
    status, body = answer
    model = target.model or _first_model(body)
    if model is None:
        return ProbeResult(FAILED, None, status, "/v1/models lists no model")
    payload = {"model": model, "prompt": PROMPT, "max_tokens": 1, "stream": False, "temperature": 0}
    began = time.monotonic()
    answer = _request(target, COMPLETIONS, payload, target.timeout)
    took = round(time.monotonic() - began, 3)
    if isinstance(answer, ProbeResult):
        return ProbeResult(answer.outcome, took, answer.status, answer.detail, model)
    status, body = answer
    if not isinstance(body, dict) or not body.get("choices"):
        return ProbeResult(FAILED, took, status, f"{COMPLETIONS}: the answer is no completion (no choices)", model)
    return ProbeResult(ALIVE, took, status, "", model)


def _request(
    target: ProbeTarget, path: str, payload: dict[str, Any] | None, wait: float
) -> tuple[int, Any] | ProbeResult:
    """The JSON answer (status, body) or what went wrong: no whole answer within ``wait`` (hung: oMLX
    answers a completion that is not streamed with 200 and a space at once, then a space every 10 s
    until the answer, so only a deadline on the whole body tells a hang), no connection (down), an
    error oMLX gave (error), a refused key (needs_key), or an answer that is none of oMLX's (failed)."""
    parts = urllib.parse.urlsplit(target.url)
    headers = {"Accept": "application/json", "User-Agent": "omlx-logscan-probe"}
    if payload is not None:
        headers["Content-Type"] = "application/json"
    if target.api_key:
        headers["Authorization"] = f"Bearer {target.api_key}"
    body = json.dumps(payload).encode() if payload is not None else None
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    deadline = time.monotonic() + wait
    connection = kind(parts.hostname or "", parts.port, timeout=wait)
    try:
        connection.request("GET" if body is None else "POST", parts.path + path, body=body, headers=headers)
        _left(connection, deadline)
        response = connection.getresponse()
        raw = _read_by(response, connection, deadline)
    except TimeoutError:
        return ProbeResult(HUNG, None, None, f"{path}: no answer in {wait:g} s")
    except _TooLong:
        return ProbeResult(FAILED, None, response.status, f"{path}: an answer longer than {MAX_BODY_BYTES} bytes")
    except OSError as exc:  # refused, reset, or closed with no answer (RemoteDisconnected)
        return ProbeResult(DOWN, None, None, f"{path}: {exc or type(exc).__name__}")
    except http.client.HTTPException as exc:  # something answered, not in HTTP
        return ProbeResult(FAILED, None, None, f"{path}: no HTTP answer ({type(exc).__name__})")
    finally:
        connection.close()
    return _answer(path, response.status, response.reason, raw)


def _answer(path: str, status: int, reason: str, raw: bytes) -> tuple[int, Any] | ProbeResult:
    """What a whole answer says: the JSON body of a success, or which kind of failure it is."""
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    text = _error_text(answer)
    said = f"{path}: {text or reason or 'error'}"
    if status in KEY_STATUSES:
        return ProbeResult(NEEDS_KEY, None, status, said)
    if 300 <= status < 400:
        return ProbeResult(FAILED, None, status, f"{path}: a redirect ({reason or status}), not followed")
    if status >= 400 or text is not None:
        engine = text is not None and path == COMPLETIONS and (status < 400 or status >= 500)
        return ProbeResult(ERROR if engine and status not in GATEWAY_STATUSES else FAILED, None, status, said)
    if answer is None:
        return ProbeResult(FAILED, None, status, f"{path}: the answer is not JSON")
    return status, answer


def _left(connection: http.client.HTTPConnection, deadline: float) -> None:
    """Let the next read wait only for what is left of the probe's time."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    if connection.sock is not None:
        connection.sock.settimeout(left)


class _TooLong(Exception):
    """The answer went on past MAX_BODY_BYTES."""


def _read_by(response: http.client.HTTPResponse, connection: http.client.HTTPConnection, deadline: float) -> bytes:
    """The whole body, by ``deadline`` (a keepalive space now and then does not extend it), up to
    MAX_BODY_BYTES: an endless answer costs no more memory than that."""
    chunks: list[bytes] = []
    size = 0
    while True:
        _left(connection, deadline)
        chunk = response.read1(READ_BYTES)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLong
        chunks.append(chunk)


def _error_text(body: Any) -> str | None:
    """An error answer's message: OpenAI's ``error.message`` (oMLX's /v1 routes, also inside a 200 whose
    keepalive had begun) or ``detail`` (its other routes); None for an answer that is no error."""
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    text = body.get("detail") or (error.get("message") if isinstance(error, dict) else error)
    return str(text)[:DETAIL_CHARS] if text else None


def _first_model(body: Any) -> str | None:
    data = body.get("data") if isinstance(body, dict) else None
    ids = [entry.get("id") for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []
    return next((str(model) for model in ids if model), None)


class ProbeRunner:
    """At most one probe out at a time, in a daemon thread; the watch takes its result when a poll finds it."""

    def __init__(self, target: ProbeTarget, probe: Callable[[ProbeTarget], ProbeResult] = probe_once) -> None:
        self.target = target
        self._probe = probe
        self._thread: threading.Thread | None = None
        self._done: tuple[ProbeTrigger, str, ProbeResult] | None = None
        self.sent = 0

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, trigger: ProbeTrigger) -> None:
        """Send a probe now (the wall clock in the log's zone: ``--tz`` sets TZ), unless one is out."""
        if self._thread is not None:
            return
        self.sent += 1
        sent = stamp_of(datetime.now())

        def run() -> None:
            self._done = (trigger, sent, self._probe(self.target))

        self._thread = threading.Thread(target=run, name="logscan-probe", daemon=True)
        self._thread.start()

    def take(self) -> tuple[ProbeTrigger, str, ProbeResult] | None:
        """The finished probe's trigger, when it was sent, and its result, once; None while it is out or none was."""
        thread = self._thread
        if thread is None or thread.is_alive():
            return None
        thread.join()
        self._thread, done, self._done = None, self._done, None
        return done
