"""What a terminal sees: ``logscan`` run as a process on a pseudo-terminal, as a user runs it. With
NO_COLOR or ``--color never`` not one escape byte; the pager only on a terminal and only for output
taller than the screen, a missing pager falling back to plain output; ``watch`` never paged."""

from __future__ import annotations

import os
import pty
import select
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT

pytestmark = pytest.mark.slow

ROWS = 40  # the pseudo-terminal's height


def _on_terminal(args: list[str], env: dict[str, str], *, stdin: int | None = None) -> tuple[int, bytes]:
    """Run logscan with stdout and stderr on a pseudo-terminal of ``ROWS`` rows; its exit code and all it wrote."""
    leader, follower = pty.openpty()
    environment = {
        **{k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "PAGER", "LOGSCAN_PAGER")},
        "PYTHONPATH": str(ROOT / "src"),
        "LINES": str(ROWS),
        "COLUMNS": "160",
        "TERM": "xterm-256color",
        **env,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "omlx_logscan", *args],
        stdin=stdin if stdin is not None else follower,
        stdout=follower,
        stderr=follower,
        env=environment,
        close_fds=True,
    )
    os.close(follower)
    written = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            process.kill()
            raise AssertionError(f"no output for 60 s: {written[-400:]!r}")
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the process closed the terminal
            break
        if not chunk:
            break
        written += chunk
    os.close(leader)
    return process.wait(timeout=60), bytes(written)


@pytest.fixture
def fake_pager(tmp_path: Path) -> tuple[str, Path]:
    """A pager that records what it was given (and the LESS it saw) in a file, and shows nothing."""
    got = tmp_path / "paged.txt"
    script = tmp_path / "pager.sh"
    script.write_text(f'#!/bin/sh\necho "LESS=$LESS" > {shlex.quote(str(got))}\ncat >> {shlex.quote(str(got))}\n')
    script.chmod(0o755)
    return str(script), got


@pytest.mark.parametrize("colour", [{"NO_COLOR": "1"}, {}])
def test_no_escape_byte_at_all_with_no_color_or_color_never(colour: dict[str, str]) -> None:
    args = ["timeline", str(EXAMPLE), "--no-pager"] + ([] if colour else ["--color", "never"])
    code, written = _on_terminal(args, colour)
    assert code == 0, written[-500:]
    assert b"oMLX log timeline" in written and b"Escalation" in written
    assert b"\x1b" not in written


def test_colour_on_a_terminal_by_default() -> None:
    """The same run without NO_COLOR: bold and colour escapes, so the test above can fail."""
    code, written = _on_terminal(["timeline", str(EXAMPLE), "--no-pager"], {})
    assert code == 0 and b"\x1b[1m" in written and b"\x1b[" in written.replace(b"\x1b[1m", b"")


def test_output_taller_than_the_screen_goes_through_the_pager(fake_pager: tuple[str, Path]) -> None:
    script, got = fake_pager
    code, written = _on_terminal(["sessions", str(EXAMPLE), "-q"], {"LOGSCAN_PAGER": script, "PAGER": "false"})
    assert code == 0, written[-500:]
    paged = got.read_text(encoding="utf-8")
    assert paged.startswith("LESS=FRX\n")  # less given as a pager with no options still shows colour
    assert paged.count("\n") > ROWS and "2026-06-20 12:07:22" in paged
    assert b"2026-06-20 12:07:22" not in written  # all of it went to the pager, none past it


def test_pager_falls_back_to_PAGER_then_is_not_used_for_short_output(fake_pager: tuple[str, Path]) -> None:
    script, got = fake_pager
    code, _ = _on_terminal(["sessions", str(EXAMPLE), "-q"], {"PAGER": script})
    assert code == 0 and got.exists()
    got.unlink()
    code, written = _on_terminal(["check", str(EXAMPLE), "-q"], {"LOGSCAN_PAGER": script})
    assert code == 1 and b"penalty_box" in written  # check's verdict, shorter than the screen: as it is
    assert not got.exists()


def test_no_pager_when_told_or_when_stdout_is_no_terminal(fake_pager: tuple[str, Path], tmp_path: Path) -> None:
    script, got = fake_pager
    code, written = _on_terminal(["sessions", str(EXAMPLE), "-q", "--no-pager"], {"LOGSCAN_PAGER": script})
    assert code == 0 and b"2026-06-20 12:07:22" in written and not got.exists()
    piped = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "sessions", str(EXAMPLE), "-q"],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "LOGSCAN_PAGER": script},
        check=True,
    )
    assert b"2026-06-20 12:07:22" in piped.stdout and not got.exists()


def test_a_missing_pager_program_falls_back_to_plain_output() -> None:
    code, written = _on_terminal(["sessions", str(EXAMPLE), "-q"], {"LOGSCAN_PAGER": "/nonexistent/pager -x"})
    assert code == 0, written[-500:]
    assert b"Traceback" not in written and b"did not start" in written
    assert b"2026-06-20 12:07:22" in written and b"2026-09-16" in written  # the whole output, not lost


def test_watch_never_pages(fake_pager: tuple[str, Path]) -> None:
    script, got = fake_pager
    code, written = _on_terminal(
        ["watch", str(EXAMPLE), "--exit-at-end", "-q"], {"LOGSCAN_PAGER": script}, stdin=subprocess.DEVNULL
    )
    assert code in (0, 3), written[-500:]
    assert written.count(b"\n") > ROWS and not got.exists()
