#!/usr/bin/env python3
"""The fleet case: N synthetic Macs' logs exported in parallel, then ``logscan fleet`` over the exports.

Each host gets its own log from ``bench/make_log.py`` (a seed of its own, INFO level, 90 days by
default), a chip, and an OS history; every third host upgrades from macOS 26.5.1 to 27.0 halfway
through. The hosts are exported by one ``logscan export`` process each, as many at a time as there
are cores, then ``logscan fleet -f json`` reads the folder. Wall time and peak RSS are reported
for both steps. The fleet's answer is checked against each host's own timeline (read with the
library): faults, penalty-box entries and dead hours per host, and the pooled per-version sums.
A mismatch exits 1.

Usage:

    python bench/fleet_bench.py                       # 200 hosts × 90 days
    python bench/fleet_bench.py --hosts 20 --days 30 --size-mib 0.2 --keep /tmp/fleet
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_log import EPOCH, write_log

CHIPS = ("M2 Ultra", "M3 Max", "M4 Pro")


def measured(command: list[str]) -> tuple[float, int, str]:
    """Run a command; its wall seconds, peak RSS in KiB, and stdout. A failure stops the benchmark."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if process.returncode:
            sys.exit(f"fleet_bench: {' '.join(command)} failed: {err.read().decode(errors='replace')[-2000:]}")
        return seconds, int(usage.ru_maxrss), out.read().decode()


def make_hosts(root: Path, hosts: int, days: int, size_mib: float) -> Path:
    """The hosts' logs and histories, and the --hosts file naming them."""
    tables = []
    for number in range(hosts):
        name = f"mac-{number:03d}"
        folder = root / "logs" / name
        folder.mkdir(parents=True)
        write_log(folder / "server.log", size_mib, days, seed=1000 + number, level="info")
        history = folder / "os-history.txt"
        lines = [f"{(EPOCH - timedelta(days=30)).date()} 10:00:00 26.5.1"]
        if number % 3 == 0:  # every third Mac upgrades halfway through its log
            lines.append(f"{(EPOCH + timedelta(days=days // 2)).date()} 09:00:00 27.0")
        history.write_text("\n".join(lines) + "\n")
        tables.append(
            f'[[host]]\nname = "{name}"\npaths = ["logs/{name}/server.log"]\ntz = "Europe/Berlin"\n'
            f'chip = "{CHIPS[number % len(CHIPS)]}"\nos-history = "logs/{name}/os-history.txt"\n'
        )
    hosts_file = root / "hosts.toml"
    hosts_file.write_text("\n".join(tables))
    return hosts_file


def export_all(root: Path, hosts_file: Path, python: str, workers: int) -> tuple[float, int]:
    """One export process per host, ``workers`` at a time; wall seconds of all, and the largest peak RSS."""
    folders = sorted((root / "logs").iterdir())
    out = root / "tables"

    def one(folder: Path) -> int:
        _, rss, _ = measured(
            [python, "-m", "omlx_logscan", "export", str(folder), "--hosts", str(hosts_file), "-o", str(out), "-q"]
        )
        return rss

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        peaks = list(pool.map(one, folders))
    return time.perf_counter() - start, max(peaks)


def expected(root: Path, hosts_file: Path) -> dict[str, Any]:
    """What each host's own timeline says, and the per-version sums they pool to."""
    from omlx_logscan import analyze, read_events
    from omlx_logscan.analysis.bounds import session_os_versions
    from omlx_logscan.inputs.hosts import HostLabels, plan_hosts
    from omlx_logscan.inputs.oshistory import load_history

    hosts: dict[str, dict[str, Any]] = {}
    versions: dict[str, dict[str, int]] = {}
    folders = [str(folder) for folder in sorted((root / "logs").iterdir())]
    for host in plan_hosts(folders, HostLabels(file=hosts_file), None):
        stream = read_events(host.sources)
        stream.zone = host.zone
        analysis = analyze(stream)
        name = str(host.name)
        hosts[name] = {
            "faults": len(analysis.faults),
            "penalty_box_entries": sum(1 for f in analysis.faults if f.outcome == "penalty_box"),
            "dead_hours": round(sum(w.at_least_s for w in analysis.dead_windows) / 3600, 3),
        }
        history = load_history(host.os_history, [], host.zone, use_system=False)
        assert history is not None
        os_of = session_os_versions(analysis.sessions, history)
        for session in analysis.sessions:
            row = versions.setdefault(os_of[session.index], {"process_starts": 0, "faults": 0})
            row["process_starts"] += int(session.start_in_log)
        for fault in analysis.faults:
            versions[os_of[fault.session]]["faults"] += 1
    return {"hosts": hosts, "versions": versions}


def compare(answer: dict[str, Any], truth: dict[str, Any]) -> list[str]:
    problems = []
    got = {
        row["host"]: {key: row[key] for key in ("faults", "penalty_box_entries", "dead_hours")}
        for row in answer["hosts"]
    }
    for host, want in truth["hosts"].items():
        if got.get(host) != want:
            problems.append(f"{host}: fleet says {got.get(host)}, its timeline {want}")
    pooled: dict[str, dict[str, int]] = {}
    for row in answer["versions"]:
        into = pooled.setdefault(row["os_version"], {"process_starts": 0, "faults": 0})
        into["process_starts"] += row["process_starts"]
        into["faults"] += row["faults"]
    if pooled != truth["versions"]:
        problems.append(f"versions: fleet pools {pooled}, the timelines sum to {truth['versions']}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=200, help="how many Macs (default 200)")
    parser.add_argument("--days", type=int, default=90, help="days of log per Mac (default 90)")
    parser.add_argument("--size-mib", type=float, default=0.5, help="about how big each Mac's log is (default 0.5)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="exports at a time (default: cores)")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs logscan (default: this one)")
    parser.add_argument("--keep", type=Path, help="build in this (new) folder and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as scratch:
        root = args.keep or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        hosts_file = make_hosts(root, args.hosts, args.days, args.size_mib)
        made = time.perf_counter() - start
        export_s, export_rss = export_all(root, hosts_file, args.python, args.workers)
        fleet_s, fleet_rss, stdout = measured(
            [args.python, "-m", "omlx_logscan", "fleet", str(root / "tables"), "-f", "json"]
        )
        problems = compare(json.loads(stdout), expected(root, hosts_file))
        files = sum(1 for _ in (root / "tables").rglob("*.parquet"))
        size = sum(p.stat().st_size for p in (root / "tables").rglob("*.parquet")) / 2**20
    print(f"{args.hosts} hosts × {args.days} days ({args.size_mib} MiB each): logs written in {made:.1f} s")
    print(f"export, {args.workers} at a time: {export_s:.1f} s, peak RSS {export_rss / 1024:.0f} MiB per process")
    print(f"  {files} Parquet files, {size:.1f} MiB")
    print(f"fleet over the exports: {fleet_s:.2f} s, peak RSS {fleet_rss / 1024:.0f} MiB")
    for problem in problems:
        print(f"MISMATCH {problem}")
    print("fleet matches every host's timeline" if not problems else f"{len(problems)} mismatches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
