"""``--redact`` over every command and format: no planted secret survives (issue 29, item 6), and the
host pseudonyms are keyed by a secret of the user's."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import ROOT
from omlx_logscan.cli import app

runner = CliRunner()

HOST = "zaphod-mac"

# Each planted secret, by what it stands for; none may appear in any redacted output.
SECRETS = {
    "prompt in a list value": "PLANTLISTA",
    "second prompt in a list value": "PLANTLISTB",
    "reasoning_content": "PLANTREASON",
    "tool-call arguments": "PLANTARGS",
    "bare content, first line": "PLANTMLONE",
    "bare content, second line": "PLANTMLTWO",
    "quoted content, first line": "PLANTQUOTEONE",
    "quoted content, second line": "PLANTQUOTETWO",
    "user name from another record's home folder": "zaphodb",
    "bearer token": "PLANTBEARER",
    "JSON web token": "eyJhbGciOiJIUzI1NiJ9",
    "Google API key": "AIzaSyPLANTGOOGLE",
    "Bonjour name in capitals": "studio-PLANT",
    "internal host name from another record's URL": "gpubox-07",
    "the host's own name": HOST,
    "the host's unkeyed pseudonym": "host-" + hashlib.sha256(HOST.encode()).hexdigest()[:10],
    "prompt in a request row": "PLANTROWPROMPT",
    "prompt in the fault record, first line": "PLANTFAULTONE",
    "prompt in the fault record, second line": "PLANTFAULTTWO",
}


def planted_log(path: Path) -> Path:
    """An oMLX log with a GPU fault, request rows and records that carry each secret."""
    stamp = "2026-09-15 20:00:{:02d},000 - {} - {} - [-] - {}"
    records = [
        ("omlx.server", "INFO", "Server initialized with 1 models"),
        (
            "omlx.server",
            "TRACE",
            'Incoming POST /v1/chat/completions — body: {"model":"m","messages":[{"role":"user","content":'
            '["PLANTLISTA one","PLANTLISTB two"]}],"stream":true}',
        ),
        (
            "omlx.server",
            "DEBUG",
            'Chat completion response: {"reasoning_content": "PLANTREASON why", "tool_calls": [{"function": '
            '{"name": "lookup", "arguments": "{\\"q\\": \\"PLANTARGS\\"}"}}]}',
        ),
        ("omlx.server", "TRACE", "  Message[0]: role=user, content=first line PLANTMLONE\nPLANTMLTWO second line"),
        ("omlx.server", "DEBUG", "messages: [{'role': 'user', 'content': 'one PLANTQUOTEONE\nPLANTQUOTETWO end'}]"),
        ("omlx.model_pool", "INFO", "Model folder /Users/zaphodb/.omlx/models"),
        ("omlx.server", "INFO", "Forwarding to http://gpubox-07:8000/v1"),
        ("omlx.model_pool", "INFO", "Loaded model zaphodb/private-llama"),
        ("omlx.server", "WARNING", "Upstream auth failed: authorization: bearer PLANTBEARER0123456789"),
        ("omlx.server", "WARNING", "rejected eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"),
        ("omlx.server", "WARNING", "Google key AIzaSyPLANTGOOGLE0123456789abcdefghijkl failed"),
        ("omlx.server", "INFO", "mDNS name studio-PLANT.LOCAL announced"),
        ("omlx.server", "INFO", "peer gpubox-07 went away; cache at /Volumes/zaphod-mac/cache"),
        ("omlx.server", "INFO", "POST /v1/chat/completions → 200 (prompt='PLANTROWPROMPT hello')"),
        (
            "omlx.engine_core",
            "ERROR",
            "Engine loop error: [METAL] Command buffer execution failed: Caused GPU Timeout Error "
            "(00000002:kIOGPUCommandBufferCallbackErrorTimeout) on gpubox-07 for zaphodb serving "
            "messages=[{'role': 'user', 'content': 'PLANTFAULTONE\nPLANTFAULTTWO'}]",
        ),
    ]
    path.write_text(
        "".join(
            stamp.format(second, logger, level, text) + "\n" for second, (logger, level, text) in enumerate(records)
        )
        + "stray line about gpubox-07 with AIzaSyPLANTGOOGLE0123456789abcdefghijkl\n",
        encoding="utf-8",
    )
    return path


def leaks(text: str) -> list[str]:
    return [what for what, secret in SECRETS.items() if secret.lower() in text.lower()]


def parquet_text(path: Path) -> str:
    """Every cell and every metadata value of a Parquet file, as text."""
    return str(pl.read_parquet(path).rows()) + json.dumps(pl.read_parquet_metadata(path))


RUNS = [
    *(["events", "--all", "--show-unparsed", "-f", fmt] for fmt in ("table", "ndjson", "json", "csv")),
    *([command, "-f", fmt] for command in ("timeline", "sessions") for fmt in ("text", "json")),
    *(["bounds", "--by", "omlx", "-f", fmt] for fmt in ("text", "json")),
    *(["check", "--fail-on", "any_gpu_error,error", "-f", fmt] for fmt in ("text", "json", "github", "junit", "sarif")),
    ["report"],
]


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return home


def test_the_planted_log_holds_every_secret(tmp_path: Path, config_home: Path) -> None:
    """Unredacted, each secret shows: the test below can fail."""
    log = planted_log(tmp_path / "server.log")
    shown = runner.invoke(app, ["events", str(log), "--all", "--show-unparsed", "-f", "ndjson", "--host", HOST])
    assert shown.exit_code == 0, shown.stderr
    assert set(leaks(shown.stdout)) == set(SECRETS) - {"the host's unkeyed pseudonym"}


@pytest.mark.slow
@pytest.mark.parametrize("args", RUNS, ids=[" ".join(a[:1] + a[-1:]) for a in RUNS])
def test_no_planted_secret_survives_redaction(
    args: list[str], tmp_path: Path, config_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = planted_log(tmp_path / "server.log")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    redact = [] if args[0] == "report" else ["--redact"]  # report redacts unless told not to
    result = runner.invoke(app, [*args, str(log), "--host", HOST, *redact])
    assert result.exit_code in (0, 1), result.stderr
    assert result.stdout.strip()
    written = summary.read_text() if summary.exists() else ""
    assert leaks(result.stdout + result.stderr + written) == []


def test_no_planted_secret_survives_in_parquet(tmp_path: Path, config_home: Path) -> None:
    log = planted_log(tmp_path / "server.log")
    events = tmp_path / "events.parquet"
    result = runner.invoke(app, ["events", str(log), "--all", "-o", str(events), "--host", HOST, "--redact"])
    assert result.exit_code == 0, result.stderr
    assert leaks(parquet_text(events) + result.stderr) == []
    tables = tmp_path / "tables"
    result = runner.invoke(app, ["export", str(log), "-o", str(tables), "--host", HOST, "--redact"])
    assert result.exit_code == 0, result.stderr
    files = sorted(tables.rglob("*.parquet"))
    assert len(files) >= 3 and leaks(result.stderr) == []
    assert leaks(" ".join(str(path) for path in files)) == []
    for path in files:
        assert leaks(parquet_text(path)) == [], path


def _env(config_home: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_CONFIG_HOME": str(config_home)}


def _host_of(log: Path, config_home: Path, *args: str) -> str:
    """The pseudonym a real ``logscan`` run gives the host."""
    result = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "sessions", str(log), "--host", HOST, "--redact", "-f", "json", *args],
        capture_output=True,
        text=True,
        env=_env(config_home),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["host"])


@pytest.mark.slow
def test_pseudonyms_are_keyed_by_a_key_made_on_first_use(tmp_path: Path, config_home: Path) -> None:
    log = planted_log(tmp_path / "server.log")
    first = _host_of(log, config_home)
    key = config_home / "logscan" / "redact.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text().strip()) == 64
    assert _host_of(log, config_home) == first  # stable on this Mac
    assert first != SECRETS["the host's unkeyed pseudonym"] and first.startswith("host-")
    other_mac = tmp_path / "other-mac"
    assert _host_of(log, other_mac) != first  # another key, another pseudonym: a guess cannot be confirmed
    assert _host_of(log, other_mac, "--redact-key", str(key)) == first  # one key shared across a fleet
    bad = tmp_path / "bad.key"
    bad.write_text("not a key\n")
    result = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "sessions", str(log), "--redact", "--redact-key", str(bad)],
        capture_output=True,
        text=True,
        env=_env(config_home),
        timeout=120,
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "not a redaction key" in result.stderr


def test_an_export_names_only_the_fingerprint_of_its_key(tmp_path: Path, config_home: Path) -> None:
    log = planted_log(tmp_path / "server.log")
    tables = tmp_path / "tables"
    assert runner.invoke(app, ["export", str(log), "-o", str(tables), "--redact"]).exit_code == 0
    secret = (config_home / "logscan" / "redact.key").read_text().strip()
    for path in tables.rglob("*.parquet"):
        metadata = pl.read_parquet_metadata(path)
        assert metadata["omlx_logscan.redact_key"].startswith("sha256:")
        assert secret not in parquet_text(path) and secret[:16] not in parquet_text(path)
    plain = tmp_path / "plain"
    assert runner.invoke(app, ["export", str(log), "-o", str(plain)]).exit_code == 0
    for path in plain.rglob("*.parquet"):
        assert "omlx_logscan.redact_key" not in pl.read_parquet_metadata(path)
