#!/usr/bin/env python3
"""How soon the ``events`` table shows its first row, on a pseudo-terminal, next to NDJSON in a pipe.

Run on demand, never as a test:

    python bench/first_row.py               # a 5 MiB INFO log, 3 rounds
    python bench/first_row.py --size-mib 50 --rounds 5

A table that is laid out from all its rows prints nothing until the last one; the rows of
``events`` are printed as they are made, so the first should show about as soon as NDJSON's.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from make_log import write_log

ROOT = Path(__file__).resolve().parents[1]


def on_terminal(argv: list[str], marker: bytes, columns: int) -> tuple[float, float]:
    """Seconds until ``marker`` first shows on a terminal ``columns`` wide, and until the run ends."""
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(COLUMNS=str(columns), PYTHONPATH=str(ROOT / "src"))
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    first, shown = float("nan"), b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
        if first != first and marker in shown:  # NaN until seen
            first = time.perf_counter() - started
    os.waitpid(pid, 0)
    return first, time.perf_counter() - started


def in_a_pipe(argv: list[str]) -> float:
    """Seconds until the first NDJSON line comes out of a pipe."""
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    started = time.perf_counter()
    with subprocess.Popen(argv, stdout=subprocess.PIPE, env=env) as process:
        assert process.stdout is not None
        process.stdout.readline()
        first = time.perf_counter() - started
        process.kill()
    return first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--columns", type=int, default=160)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "server.log"
        write_log(log, args.size_mib, days=7, level="info")
        events = [sys.executable, "-m", "omlx_logscan", "events", str(log), "-q"]
        table = [on_terminal([*events, "-f", "table"], b"server.log:", args.columns) for _ in range(args.rounds)]
        ndjson = [in_a_pipe([*events, "-f", "ndjson"]) for _ in range(args.rounds)]
    print(f"{args.size_mib:g} MiB INFO log, median of {args.rounds} rounds")
    print(f"  events table, first row   {statistics.median(first for first, _ in table):6.2f} s")
    print(f"  events table, all rows    {statistics.median(end for _, end in table):6.2f} s")
    print(f"  events NDJSON, first row  {statistics.median(ndjson):6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
