"""Issue 29 item 2: the example log in every line shape another tool gives it (bare CR or CRLF line
ends, a prefix on every line) reads as the log itself: the same records and the same failing
``check``, never a pass on a log with a penalty box. Through real processes."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT

ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
LINES = EXAMPLE.read_bytes().splitlines()


def _prefixed(prefix: Callable[[int], bytes]) -> bytes:
    return b"".join(prefix(number) + line + b"\n" for number, line in enumerate(LINES, 1))


SHAPES: dict[str, Callable[[], bytes]] = {
    "CR": lambda: b"\r".join(LINES) + b"\r",
    "CRLF": lambda: b"\r\n".join(LINES) + b"\r\n",
    "kubectl --timestamps": lambda: _prefixed(lambda n: b"2026-06-22T10:%02d:%02d.123456789Z " % divmod(n % 3600, 60)),
    "ts": lambda: _prefixed(lambda n: b"2026-06-22T10:00:01+02:00 "),
    "docker compose": lambda: _prefixed(lambda n: b"omlx-1  | "),
    "kubectl --prefix": lambda: _prefixed(lambda n: b"[pod/omlx-7d9f/omlx] "),
    "syslog": lambda: _prefixed(lambda n: b"Jun 22 10:00:01 studio omlx[4242]: "),
    "indent": lambda: _prefixed(lambda n: b"    "),
    "list": lambda: _prefixed(lambda n: b"- "),
    "numbered list": lambda: _prefixed(lambda n: b"%d. " % n),
}


def _check(path: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "omlx_logscan", "check", path]
    return subprocess.run(command, input=stdin, capture_output=True, env=ENV, timeout=120, check=False)


def _unnamed(output: bytes) -> bytes:
    """Findings without the name of the input they are in (``server.log:12:`` is ``12:``)."""
    return re.sub(rb"(?m)^\S*?:(\d+):", rb"\1:", output)


@pytest.fixture(scope="module")
def plain() -> subprocess.CompletedProcess[bytes]:
    return _check(str(EXAMPLE))


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
def test_every_line_shape_reads_as_the_log(
    shape: str, tmp_path: Path, plain: subprocess.CompletedProcess[bytes]
) -> None:
    data = SHAPES[shape]()
    path = tmp_path / "server.log"
    path.write_bytes(data)
    (tmp_path / "server.log.gz").write_bytes(gzip.compress(data))
    for result in (_check(str(path)), _check("-", data), _check(str(tmp_path / "server.log.gz"))):
        assert result.returncode == plain.returncode == 1
        assert _unnamed(result.stdout) == _unnamed(plain.stdout)
        assert result.stderr.splitlines()[:2] == plain.stderr.splitlines()[:2]  # the same lines, records, events


@pytest.mark.slow
def test_a_metal_error_in_a_line_no_reader_knows_fails_check(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    metal = b"<pod omlx> terminate called in mlx::core::metal::CommandEncoder::dispatch"
    path.write_bytes(b"notes from the pod\n" + metal + b"\n\n" + LINES[6] + b"\n")
    result = _check(str(path))
    assert result.returncode == 1
    assert b"2: unparsed_gpu_error: a Metal or ANE error in a line that could not be parsed: " + metal in result.stdout
    allowed = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "check", str(path), "--fail-on", "crash"],
        capture_output=True,
        env=ENV,
        timeout=120,
        check=False,
    )
    assert allowed.returncode == 0  # the rule, not the line, fails the check
