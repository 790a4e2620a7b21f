#!/usr/bin/env python3
"""Benchmark: logscan against rg/grep (and lnav when installed) on the same big logs.

Run on demand, never as a test:

    python bench/bench.py                 # 1 GiB and 2 GiB DEBUG logs, 3 rounds each
    python bench/bench.py --sizes 256 --rounds 5

Logs come from the project's shared generator (``--generator``, default
``../shared/bench/gen_omlx_log.py``) and are cached in ``--cache`` between runs. Each round
runs every tool once, alternating, so machine noise hits all of them alike; the table shows
medians, the ratio to rg, and logscan's peak RSS. Fast is worth nothing if it is wrong: each
big log's timeline is also checked against the generator's truth file (lines, event counts,
faults and their outcomes, dead windows), and a mismatch fails the run.

Measure an installed copy (``pip install .``), as users run it: an editable install under
PYTHONDONTWRITEBYTECODE compiles the sources again on every run (about 50 ms here).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_GENERATOR = HERE.parent.parent / "shared" / "bench" / "gen_omlx_log.py"
RG_PATTERN = (
    "kIOGPUCommandBufferCallbackError|under memory pressure|pressure cache reclaim|Engine started|CORS origins|"
    "Chat completion:"
)


def make_log(generator: Path, cache: Path, size_mb: int) -> Path:
    """A DEBUG-level log of about ``size_mb`` over 90 days, generated once and reused."""
    log = cache / f"omlx-debug-{size_mb}mb.log"
    if not log.exists():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"generating {log} ...", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                str(generator),
                "--out",
                str(log),
                "--truth",
                str(log.with_suffix(".truth.json")),
                "--size-mb",
                str(size_mb),
                "--level",
                "debug",
                "--days",
                "90",
            ],
            check=True,
        )
    return log


def run_timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of one child process.

    Output goes to a real file: GNU grep notices /dev/null and stops at the first match.
    """
    start = time.perf_counter()
    with tempfile.TemporaryFile() as sink, subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL) as proc:
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv[0]} failed with exit code {proc.returncode}: {' '.join(argv)}")
    return elapsed, usage.ru_maxrss // 1024


def timeline_command(python: str, log: Path) -> list[str]:
    """``logscan timeline --format json`` of ``log`` as run by one interpreter (one installed build)."""
    return [python, "-m", "omlx_logscan", "timeline", "--format", "json", "--quiet", str(log)]


def tools(log: Path, baseline: str | None) -> dict[str, list[str]]:
    """The commands to compare; only those installed here. ``baseline``: another build's interpreter."""
    found = {"logscan": timeline_command(sys.executable, log)}
    if baseline:
        found["baseline"] = timeline_command(baseline, log)
    if shutil.which("rg"):
        found["rg"] = ["rg", "-c", RG_PATTERN, str(log)]
    if shutil.which("grep"):
        found["grep"] = ["grep", "-cE", RG_PATTERN, str(log)]
    if shutil.which("lnav"):
        found["lnav"] = ["lnav", "-n", "-c", ";SELECT count(*) FROM all_logs", str(log)]
    return found


def compare(log: Path, rounds: int, baseline: str | None) -> dict[str, tuple[float, int]]:
    return measure(tools(log, baseline), rounds)


def measure(commands: dict[str, list[str]], rounds: int) -> dict[str, tuple[float, int]]:
    """Median wall time and peak RSS of each command, the commands alternating round by round."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    rss: dict[str, int] = dict.fromkeys(commands, 0)
    for _ in range(rounds):
        for name, argv in commands.items():
            elapsed, peak = run_timed(argv)
            times[name].append(elapsed)
            rss[name] = max(rss[name], peak)
    return {name: (statistics.median(values), rss[name]) for name, values in times.items()}


def truth_mismatches(log: Path) -> list[str]:
    """Where logscan's timeline of ``log`` differs from the generator's truth (empty: none)."""
    argv = timeline_command(sys.executable, log)
    got = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
    want = json.loads(log.with_suffix(".truth.json").read_text())
    pairs = {
        "lines": (got["header"]["lines"], want["lines"]),
        "event counts": ({k: got["header"]["events"].get(k, 0) for k in want["counts"]}, want["counts"]),
        "faults": (
            [(f["time"][:19], f["kind"], f["outcome"]) for f in got["faults"]],
            [(f["time"], f["kind"], f["outcome"]) for f in want["faults"]],
        ),
        "dead windows": (
            [(w["start"][:19], w["last_failure"][:19], w["repeats"], w["end_reason"]) for w in got["dead_windows"]],
            [(w["start"], w["last_failure"], w["repeats"], w["end_reason"]) for w in want["dead_windows"]],
        ),
    }
    return [f"{name}: got {mine!r}, truth {theirs!r}" for name, (mine, theirs) in pairs.items() if mine != theirs]


def report(title: str, results: dict[str, tuple[float, int]], baseline: str) -> None:
    print(f"\n{title}")
    base = results.get(baseline, (0.0, 0))[0]
    for name, (median, peak) in results.items():
        ratio = f"{median / base:6.1f}x {baseline}" if base else ""
        print(f"  {name:8} {median:8.3f} s  {ratio}  peak RSS {peak} MiB")
    if "baseline" in results:
        print(f"  logscan / baseline: {results['logscan'][0] / results['baseline'][0]:.3f}x")


def startup(cache: Path, generator: Path, rounds: int, baseline: str | None) -> None:
    """End-to-end on a ~1 MB log against the bare import of the three libraries."""
    small = cache / "omlx-info-1mb.log"
    if not small.exists():
        subprocess.run(
            [sys.executable, str(generator), "--out", str(small), "--days", "20", "--size-mb", "1"],
            check=True,
            capture_output=True,
        )
    commands = {
        "imports": [sys.executable, "-c", "import polars, typer, rich"],
        "logscan": timeline_command(sys.executable, small),
    }
    if baseline:
        commands["baseline"] = timeline_command(baseline, small)
    report("1 MB log, start-up cost", measure(commands, rounds), "imports")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1024,2048", help="log sizes in MiB, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "omlx-logscan-bench")
    parser.add_argument("--generator", type=Path, default=DEFAULT_GENERATOR)
    parser.add_argument(
        "--baseline",
        metavar="PYTHON",
        help="the interpreter of another installed build (a venv's bin/python), timed alternately with this one",
    )
    args = parser.parse_args()
    if not args.generator.exists():
        parser.error(f"generator not found: {args.generator} (pass --generator)")
    peaks: dict[int, int] = {}
    wrong = False
    for size in (int(s) for s in args.sizes.split(",") if s):
        log = make_log(args.generator, args.cache, size)
        results = compare(log, args.rounds, args.baseline)
        report(
            f"{size} MiB DEBUG log ({log.stat().st_size / 2**20:.0f} MiB on disk), median of {args.rounds}",
            results,
            "rg" if "rg" in results else "grep",
        )
        peaks[size] = results["logscan"][1]
        if "lnav" in results:
            print(f"  lnav / logscan: {results['lnav'][0] / results['logscan'][0]:.1f}x")
        mismatches = truth_mismatches(log)
        print("  truth: " + ("lines, event counts, faults, outcomes and dead windows match" if not mismatches else ""))
        for mismatch in mismatches:
            print(f"    {mismatch}"[:300])
        wrong |= bool(mismatches)
    if len(peaks) > 1:
        low, high = min(peaks), max(peaks)
        print(f"\npeak RSS growth {low} → {high} MiB: {peaks[high] / max(peaks[low], 1):.2f}x")
    startup(args.cache, args.generator, max(args.rounds, 5), args.baseline)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
