#!/usr/bin/env python3
"""Time and memory of hostile inputs (issue 29): compression bombs, random bytes on stdin, a
truncated gzip against ``zcat``, gzip throughput, what an export's all-or-nothing commit costs,
record assembly over blank lines and chained tracebacks (an input and its double), the 64 MiB log
in other line shapes (bare CR, a timestamp prefix), and a watch hook that writes 256 MiB.

Each case runs ``logscan`` as a process (``PYTHONPATH`` decides which source); figures are wall
seconds and the peak resident memory of that process (Linux: ``ru_maxrss`` in KiB).

Usage:

    PYTHONPATH=src python bench/hostile_inputs.py [--work DIR] [--timeout 120]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAKE_BOMBS = """
import bz2, gzip, sys
from pathlib import Path
text = b"a" * (64 << 20)  # no line break: a reader without a guard holds it whole
Path(sys.argv[1], "bomb.gz").write_bytes(gzip.compress(text, 9) * 110)  # 7 MB, 7 GB inflated
Path(sys.argv[1], "bomb.bz2").write_bytes(bz2.compress(text * 16, 9))  # under 1 KB, 1 GiB inflated
"""
FAULT = (
    "2026-06-20 12:07:{:02d},865 - omlx.engine_core - ERROR - Engine loop error: [METAL] Command buffer execution "
    "failed: Ignored (00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)\n"
)
CHAINED = (
    'Traceback (most recent call last):\n  File "/omlx/engine.py", line 3, in step\n    run()\nValueError: step\n\n'
    "During handling of the above exception, another exception occurred:\n\n"
)
# Made by a child, as the bombs are: the 64 MiB log in two other line shapes.
MAKE_SHAPES = """
import sys
from pathlib import Path
data = Path(sys.argv[1], "big.log").read_bytes()
Path(sys.argv[1], "big-cr.log").write_bytes(data.replace(b"\\n", b"\\r"))
stamp = b"2026-06-22T10:00:01.123456789Z "
Path(sys.argv[1], "big-ts.log").write_bytes(stamp + data[:-1].replace(b"\\n", b"\\n" + stamp) + b"\\n")
"""
# A watch hook's report of a command that wrote 256 MiB, in a process of its own: its peak memory.
HOOK_RUN = """
import resource, subprocess, tempfile, time
from omlx_logscan.watch.hooks import HookRun
output = tempfile.TemporaryFile()
command = "head -c 268435456 /dev/zero"
process = subprocess.Popen(command, shell=True, stdout=output)
process.wait()
notice = HookRun("on-dead", command, 1, process, output, time.monotonic()).result(time.monotonic(), 60)
print(len(notice.data["output"]), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def shapes(work: Path) -> dict[str, str]:
    """The files of the assembly cases: two penalty-box records around n blank lines or n chained tracebacks."""
    made = {}
    for n in (50_000, 100_000):
        made[f"{n:,} blank lines"] = FAULT.format(1) + "\n" * n + FAULT.format(2)
    for n in (20_000, 40_000):
        made[f"{n:,} chained tracebacks"] = FAULT.format(1) + CHAINED * n + FAULT.format(2)
    for name, text in made.items():
        (work / f"{name.replace(' ', '-').replace(',', '')}.log").write_text(text)
    return {name: str(work / f"{name.replace(' ', '-').replace(',', '')}.log") for name in made}


def logscan(args: list[str], timeout: float, stdin: object = subprocess.DEVNULL) -> tuple[float, int, float, str]:
    """Wall seconds, exit code, peak resident MiB and what stderr said first and last, of one run."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "omlx_logscan", *args], stdin=stdin, stdout=subprocess.DEVNULL, stderr=errors
        )
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > timeout:
                process.kill()
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.01)
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        lines = errors.read().decode(errors="replace").strip().splitlines()
    said = " | ".join(dict.fromkeys(line for line in (lines[:1] + lines[-1:]) if line))
    return time.monotonic() - started, process.returncode, usage.ru_maxrss / 1024, said


def report(name: str, result: tuple[float, int, float, str]) -> None:
    seconds, code, peak, said = result
    print(f"{name:<30} {seconds:7.2f} s  exit {code:>3}  peak {peak:5.0f} MiB  {said[:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="logscan-hostile-"))
    work.mkdir(parents=True, exist_ok=True)
    # Made by a child: a child process's peak memory starts at its parent's (Linux copies it at fork).
    subprocess.run([sys.executable, "-c", MAKE_BOMBS, str(work)], check=True)
    sizes = [(work / name).stat().st_size for name in ("bomb.gz", "bomb.bz2")]
    print(f"gzip bomb {sizes[0] / 1e6:.1f} MB (7 GB inflated), bzip2 bomb {sizes[1]} B (1 GiB)")
    report("check bomb.gz", logscan(["check", str(work / "bomb.gz")], args.timeout))
    report("check bomb.bz2", logscan(["check", str(work / "bomb.bz2")], args.timeout))
    with open("/dev/urandom", "rb") as random_bytes:
        report("check - < /dev/urandom", logscan(["check", "-"], args.timeout, stdin=random_bytes))

    log = work / "big.log"
    subprocess.run([sys.executable, str(HERE / "make_log.py"), str(log), "--size-mib", "64"], check=True)
    with open(work / "big.log.gz", "wb") as packed:
        subprocess.run(["gzip", "-6", "-c", str(log)], stdout=packed, check=True)
    size = (work / "big.log.gz").stat().st_size
    with open(work / "big.log.gz", "rb") as whole, open(work / "cut.gz", "wb") as cut:
        cut.write(whole.read(size // 2))
    recovered = subprocess.run(["zcat", str(work / "cut.gz")], capture_output=True, check=False).stdout.count(b"\n")
    result = logscan(["sessions", str(work / "cut.gz"), "-f", "json"], args.timeout)
    print(f"truncated gzip: zcat recovers {recovered:,} lines; logscan:")
    report("  sessions cut.gz", result)
    report("sessions big.log (64 MiB)", logscan(["sessions", str(log), "-q"], args.timeout))
    report("sessions big.log.gz", logscan(["sessions", str(work / "big.log.gz"), "-q"], args.timeout))

    for name, path in shapes(work).items():
        report(f"check {name}", logscan(["check", path], args.timeout))
    subprocess.run([sys.executable, "-c", MAKE_SHAPES, str(work)], check=True)
    report("sessions big-cr.log (CR ends)", logscan(["sessions", str(work / "big-cr.log"), "-q"], args.timeout))
    report("sessions big-ts.log (prefix)", logscan(["sessions", str(work / "big-ts.log"), "-q"], args.timeout))
    kept, peak = subprocess.run(
        [sys.executable, "-c", HOOK_RUN], capture_output=True, text=True, check=True
    ).stdout.split()
    print(f"a hook that wrote 256 MiB: {kept} characters reported, peak {peak} MiB")

    out = work / "tables"
    report("export big.log (first)", logscan(["export", str(log), "--host", "m1", "-q", "-o", str(out)], args.timeout))
    report("export big.log (again)", logscan(["export", str(log), "--host", "m1", "-q", "-o", str(out)], args.timeout))
    files = sum(len(names) for _, _, names in os.walk(out / ".logscan"))
    print(f"export folder: {files} files in the current generation")


if __name__ == "__main__":
    main()
