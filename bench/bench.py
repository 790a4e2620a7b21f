#!/usr/bin/env python3
"""Benchmark: logscan against rg, grep and lnav (those installed) on the same big logs.

Run on demand from a clone, never as a test; it needs nothing outside the repository:

    python bench/bench.py                 # the 1 GiB DEBUG log, 3 rounds
    python bench/bench.py --big           # and the 2 GiB one: how time and peak RSS grow (slow)
    python bench/bench.py --sizes 256 --rounds 5

The logs are written by bench/make_log.py (90 days of a DEBUG-level oMLX server.log, with its
truth file) and cached in ``--cache``, named after the generator's own hash, so a changed
generator writes them again. Each size is timed as a plain file against ``rg -c``, ``grep -cE``
and lnav, then gzipped once and timed as a ``.gz`` against ``rg -z -c``. Each round runs every
command once, alternating, so machine noise hits all of them alike; the tables show medians, the
ratio to rg (to ``rg -z`` for the ``.gz``) and peak RSS. A tool that is not installed is named as
missing, not left out silently. Where logscan has its native scanner, the polars plan
(``LOGSCAN_SCANNER=polars``) is timed in the same rounds, and the two timelines must be the same.
Fast is worth nothing if it is wrong:
both timelines of each size are checked against the generator's truth (lines, event counts,
faults and their outcomes, dead windows), and a mismatch fails the run. Then a ~1 MB INFO log
is timed end to end against the bare import of polars, typer and rich; last, bench/shapes.py
checks that each shape of fault log (100,000 repeats of a penalty box among them) takes linear time.

Measure an installed copy (``pip install .``), as users run it: an editable install under
PYTHONDONTWRITEBYTECODE compiles the sources again on every run (about 50 ms here).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from make_log import write_log
from shapes import SHAPES, check

# A command to time: its argv and the environment variables it adds.
Command = tuple[list[str], dict[str, str]]

POLARS_PATH = {"LOGSCAN_SCANNER": "polars"}

HERE = Path(__file__).resolve().parent
GENERATOR = HERE / "make_log.py"
SHARED_GENERATOR = HERE.parent.parent / "shared" / "bench" / "gen_omlx_log.py"  # beside the clone, when there
DAYS = 90
RG_PATTERN = (
    "kIOGPUCommandBufferCallbackError|under memory pressure|pressure cache reclaim|Engine started|CORS origins|"
    "Chat completion:"
)


def make_log(cache: Path, size_mb: int, seed: int, level: str = "debug", days: int = DAYS) -> Path:
    """A log of about ``size_mb`` MiB over ``days`` days and its truth file, written once and reused
    (the name holds the generator's hash: a changed generator writes them again)."""
    version = hashlib.sha256(GENERATOR.read_bytes()).hexdigest()[:10]
    log = cache / f"logscan-bench-{level}-{size_mb}mib-{days}d-seed{seed}-{version}.log"
    truth = truth_path(log)
    if not (log.exists() and truth.exists()):
        cache.mkdir(parents=True, exist_ok=True)
        print(f"writing {log} ...", file=sys.stderr)
        start = time.perf_counter()
        partial = log.with_suffix(".partial")
        facts = write_log(partial, size_mb, days, seed, level)
        truth.write_text(json.dumps(facts, indent=1) + "\n")
        partial.replace(log)
        print(f"  {facts['lines']} lines in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return log


def make_shared_log(cache: Path, generator: Path, size_mb: int, seed: int) -> Path:
    """A DEBUG log of about ``size_mb`` MiB written by the shared generator (another author's view of
    oMLX's lines), once; named after its hash like ``make_log``'s."""
    version = hashlib.sha256(generator.read_bytes()).hexdigest()[:10]
    log = cache / f"shared-bench-debug-{size_mb}mib-seed{seed}-{version}.log"
    if not log.exists():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"writing {log} ...", file=sys.stderr)
        partial = log.with_suffix(".partial")
        command = [sys.executable, str(generator), "--out", str(partial), "--truth", str(truth_path(log))]
        subprocess.run([*command, "--size-mb", str(size_mb), "--level", "debug", "--seed", str(seed)], check=True)
        partial.replace(log)
    return log


def truth_path(log: Path) -> Path:
    """Where the truth of ``log`` (or of ``log``.gz, the same) is kept."""
    return log.with_name(log.name.removesuffix(".gz").removesuffix(".log") + ".truth.json")


def gzipped(log: Path) -> Path:
    """``log``.gz next to it, compressed once (with the gzip tool when installed: faster)."""
    packed = log.with_name(log.name + ".gz")
    if not packed.exists():
        print(f"compressing {packed} ...", file=sys.stderr)
        partial = packed.with_suffix(".partial")
        if shutil.which("gzip"):
            with partial.open("wb") as out:
                subprocess.run(["gzip", "-c", "-6", str(log)], stdout=out, check=True)
        else:
            with log.open("rb") as src, gzip.open(partial, "wb", compresslevel=6) as out:
                shutil.copyfileobj(src, out, 2**22)
        partial.replace(packed)
    return packed


def run_timed(command: Command) -> tuple[float, int]:
    """Wall seconds and peak RSS (MiB) of one child process.

    Output goes to a real file: GNU grep notices /dev/null and stops at the first match.
    """
    argv, extra = command
    env = {**os.environ, **extra}
    start = time.perf_counter()
    with (
        tempfile.TemporaryFile() as sink,
        subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL, env=env) as proc,
    ):
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv[0]} failed with exit code {proc.returncode}: {' '.join(argv)}")
    return elapsed, usage.ru_maxrss // 1024


def timeline_command(python: str, log: Path) -> list[str]:
    """``logscan timeline --format json`` of ``log`` as run by one interpreter (one installed build)."""
    return [python, "-m", "omlx_logscan", "timeline", "--format", "json", "--quiet", str(log)]


def native_scanner(python: str) -> bool:
    """Whether this build has a native scanner besides the polars plan: its ``--version`` then
    reads otherwise when the polars plan is forced."""
    argv = [python, "-m", "omlx_logscan", "--version"]
    default, forced = (
        subprocess.run(argv, check=True, capture_output=True, text=True, env={**os.environ, **extra}).stdout
        for extra in ({}, POLARS_PATH)
    )
    return default != forced


def logscan_commands(log: Path, baseline: str | None, both_paths: bool) -> dict[str, Command]:
    """logscan on ``log`` (on both scanner paths when there are two) and the baseline build."""
    found: dict[str, Command] = {"logscan": (timeline_command(sys.executable, log), {})}
    if both_paths:
        found["polars"] = (timeline_command(sys.executable, log), POLARS_PATH)
    if baseline:
        found["baseline"] = (timeline_command(baseline, log), {})
    return found


def installed(tool: str) -> bool:
    """Whether ``tool`` is on PATH; says so when it is not, so that a missing column is explained."""
    if shutil.which(tool):
        return True
    print(f"  ({tool} is not installed: not measured)")
    return False


def tools(log: Path, baseline: str | None, both_paths: bool) -> dict[str, Command]:
    """The commands to compare on a plain log; only those installed here. ``baseline``: another
    build's interpreter."""
    found = logscan_commands(log, baseline, both_paths)
    if installed("rg"):
        found["rg"] = (["rg", "-c", RG_PATTERN, str(log)], {})
    if installed("grep"):
        found["grep"] = (["grep", "-cE", RG_PATTERN, str(log)], {})
    if installed("lnav"):
        found["lnav"] = (["lnav", "-n", "-c", ";SELECT count(*) FROM all_logs", str(log)], {})
    return found


def gz_tools(packed: Path, baseline: str | None, both_paths: bool) -> dict[str, Command]:
    """The commands to compare on a ``.gz`` log: logscan (and the baseline) against ``rg -z``."""
    found = logscan_commands(packed, baseline, both_paths)
    if installed("rg"):
        found["rg -z"] = (["rg", "-z", "-c", RG_PATTERN, str(packed)], {})
    return found


def measure(commands: dict[str, Command], rounds: int) -> dict[str, tuple[float, int]]:
    """Median wall time and peak RSS of each command, the commands alternating round by round."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    rss: dict[str, int] = dict.fromkeys(commands, 0)
    for _ in range(rounds):
        for name, command in commands.items():
            elapsed, peak = run_timed(command)
            times[name].append(elapsed)
            rss[name] = max(rss[name], peak)
    return {name: (statistics.median(values), rss[name]) for name, values in times.items()}


def timeline_json(log: Path, extra: dict[str, str]) -> str:
    argv = timeline_command(sys.executable, log)
    return subprocess.run(argv, check=True, capture_output=True, text=True, env={**os.environ, **extra}).stdout


def truth_mismatches(log: Path, got_text: str) -> list[str]:
    """Where logscan's timeline of ``log`` (``got_text``) differs from the generator's truth (empty: none)."""
    got = json.loads(got_text)
    want = json.loads(truth_path(log).read_text())
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
        ratio = f"{median / base:6.2f}x {baseline}" if base else ""
        print(f"  {name:8} {median:8.3f} s  {ratio}  peak RSS {peak} MiB")
    for other in ("polars", "baseline"):
        if other in results:
            print(f"  logscan / {other}: {results['logscan'][0] / results[other][0]:.3f}x")


def check_truth(log: Path, both_paths: bool) -> bool:
    """Print whether the timeline of ``log`` matches the generator's truth, and whether both
    scanner paths give the same timeline; True when all do."""
    got = timeline_json(log, {})
    mismatches = truth_mismatches(log, got)
    if both_paths and timeline_json(log, POLARS_PATH) != got:
        mismatches.append("the native scanner's timeline and the polars plan's differ")
    verdict = "lines, event counts, faults, outcomes and dead windows match"
    print("  truth: " + (verdict + (", on both scanner paths" if both_paths else "") if not mismatches else ""))
    for mismatch in mismatches:
        print(f"    {mismatch}"[:300])
    return not mismatches


def profile(log: Path, top: int) -> None:
    """Where logscan's time on ``log`` goes: py-spy's samples of every thread (the native frames
    too), the functions that were running most often and those most often on the stack; cProfile's
    view of the main thread when py-spy is not installed."""
    argv = timeline_command(sys.executable, log)
    with tempfile.TemporaryDirectory(prefix="logscan-profile-") as folder:
        if shutil.which("py-spy"):
            raw = Path(folder) / "samples.txt"
            spy = ["py-spy", "record", "--native", "-r", "250", "-f", "raw", "-o", str(raw), "--"]
            subprocess.run([*spy, *argv], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            stacks = []
            for line in raw.read_text().splitlines():
                stack, _, count = line.rpartition(" ")
                stacks.append((stack.split(";"), int(count)))
            total = sum(count for _, count in stacks)
            running: dict[str, int] = {}
            within: dict[str, int] = {}
            for frames, count in stacks:
                running[frames[-1]] = running.get(frames[-1], 0) + count
                for frame in {frame for frame in frames if "omlx_logscan" in frame}:  # the project's own
                    within[frame] = within.get(frame, 0) + count
            print(f"\nprofile of logscan on {log.name} (py-spy, every thread, {total} samples)")
            for title, counts in (("running (unnamed libc frames: mostly waits)", running), ("on the stack", within)):
                print(f"  {title}:")
                for frame, count in sorted(counts.items(), key=lambda item: -item[1])[:top]:
                    print(f"    {100 * count / total:5.1f} %  {frame}"[:160])
            return
        stats = Path(folder) / "stats"
        subprocess.run(
            [sys.executable, "-m", "cProfile", "-o", str(stats), *argv[1:]], check=True, stdout=subprocess.DEVNULL
        )
        import pstats

        print(f"\nprofile of logscan on {log.name} (cProfile, the main thread only: py-spy is not installed)")
        pstats.Stats(str(stats), stream=sys.stdout).sort_stats("tottime").print_stats(top)


def startup(cache: Path, seed: int, rounds: int, baseline: str | None) -> None:
    """End-to-end on a ~1 MB INFO log of 20 days against the bare import of the three libraries."""
    small = make_log(cache, 1, seed, "info", days=20)
    commands: dict[str, Command] = {
        "imports": ([sys.executable, "-c", "import polars, typer, rich"], {}),
        **logscan_commands(small, baseline, both_paths=False),
    }
    report(
        f"{small.stat().st_size / 1e6:.1f} MB INFO log, logscan timeline -f json -q end to end, median of {rounds}",
        measure(commands, rounds),
        "imports",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1024", help="DEBUG log sizes in MiB, comma-separated (default 1024)")
    parser.add_argument(
        "--big", action="store_true", help="add a log of twice the largest size: how time and peak RSS grow (slow)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds per case; the start-up case runs at least 5")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("TMPDIR", "/tmp")) / "omlx-logscan-bench",
        help="where the generated logs are kept between runs (default $TMPDIR/omlx-logscan-bench)",
    )
    parser.add_argument("--seed", type=int, default=1, help="the generator's seed (default 1)")
    parser.add_argument("--no-gz", action="store_true", help="skip the .gz case")
    parser.add_argument(
        "--shared-generator",
        type=Path,
        default=SHARED_GENERATOR,
        help="the shared generator (gen_omlx_log.py), whose DEBUG log of each size is timed too (default: "
        "../shared/bench/ beside the clone, when there)",
    )
    parser.add_argument(
        "--profile", type=int, nargs="?", const=25, default=0, metavar="TOP", help="print a profile's TOP entries"
    )
    parser.add_argument(
        "--shapes-n",
        type=int,
        default=25_000,
        help="bench/shapes.py's n: every shape at n and 4n must take linear time (default 25,000; 0 skips it)",
    )
    parser.add_argument(
        "--baseline",
        metavar="PYTHON",
        help="the interpreter of another installed build (a venv's bin/python), timed alternately with this one",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.big:
        sizes.append(2 * max(sizes))
    both_paths = native_scanner(sys.executable)
    print("scanner: " + ("native, and the polars plan timed beside it" if both_paths else "the polars plan only"))
    grown: dict[int, tuple[float, int]] = {}
    ratios: list[tuple[str, dict[str, tuple[float, int]]]] = []
    wrong = False
    for size in sizes:
        logs = [("make_log.py", make_log(args.cache, size, args.seed))]
        if args.shared_generator.exists():
            logs.append(("gen_omlx_log.py", make_shared_log(args.cache, args.shared_generator, size, args.seed)))
        else:
            print(f"({args.shared_generator} not found: its log is not measured)")
        for name, log in logs:
            lines = json.loads(truth_path(log).read_text())["lines"]
            print(f"\n{size} MiB DEBUG log of {name} ({log.stat().st_size / 2**20:.0f} MiB, {lines / 1e6:.1f} M lines)")
            results = measure(tools(log, args.baseline, both_paths), args.rounds)
            report(f"plain, median of {args.rounds}", results, "rg" if "rg" in results else "grep")
            ratios.append((f"{size} MiB, {name}", results))
            if name == "make_log.py":
                grown[size] = results["logscan"]
                wrong |= not check_truth(log, both_paths)
            if args.no_gz:
                continue
            packed = gzipped(log)
            gz_results = measure(gz_tools(packed, args.baseline, both_paths), args.rounds)
            report(
                f"the same, gzipped ({packed.stat().st_size / 2**20:.0f} MiB .gz), median of {args.rounds}",
                gz_results,
                "rg -z" if "rg -z" in gz_results else "logscan",
            )
            print(f"  logscan .gz / plain: {gz_results['logscan'][0] / results['logscan'][0]:.2f}x")
            if name == "make_log.py":
                wrong |= not check_truth(packed, both_paths)
    print("\nthis run's ratios (logscan's median time over each tool's; logscan's peak RSS)")
    for title, results in ratios:
        logscan = results["logscan"][0]
        tools_here = [tool for tool in ("rg", "grep", "lnav") if tool in results]
        against = "  ".join(f"{tool} {logscan / results[tool][0]:.2f}x" for tool in tools_here)
        print(f"  {title:<28} logscan {logscan:.3f} s  {against}  RSS {results['logscan'][1]} MiB")
    if args.profile:
        profile(logs[-1][1] if len(logs) > 1 else logs[0][1], args.profile)
    if len(grown) > 1:
        low, high = min(grown), max(grown)
        (low_time, low_rss), (high_time, high_rss) = grown[low], grown[high]
        print(
            f"\n{low} → {high} MiB ({high / low:.1f}x the bytes): time {high_time / low_time:.2f}x, "
            f"peak RSS {low_rss} → {high_rss} MiB ({high_rss / max(low_rss, 1):.2f}x)"
        )
    startup(args.cache, args.seed, max(args.rounds, 5), args.baseline)
    if args.shapes_n:
        wrong |= not check(args.shapes_n, list(SHAPES), 1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
