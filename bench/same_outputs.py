#!/usr/bin/env python3
"""Whether two builds of logscan print the same: every input, every command, every text format.

Run on demand, never as a test:

    python bench/same_outputs.py                        # /work/main against this checkout
    python bench/same_outputs.py --base /work/main --head .

Each build runs a process per command (``PYTHONPATH=<build>/src``) that calls it in process on
each input, one after the other, and writes what each printed (stdout, stderr, exit code) as JSON;
then the two are compared. ``watch`` reads plain files, so a compressed input is written out
plain first (to the same path for both builds: the path is in its rows). The time ``watch`` says
it ran is the one part masked.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path("/work/shared")
PLAIN = Path(tempfile.gettempdir()) / "logscan-same-outputs"

# (command, options): each run on each input.
COMMANDS: list[tuple[str, list[str]]] = [
    ("timeline", ["-f", "text"]),
    ("timeline", ["-f", "json"]),
    ("timeline", ["-f", "markdown"]),
    ("sessions", ["-f", "text"]),
    ("sessions", ["-f", "json"]),
    ("events", ["-f", "table"]),
    ("events", ["-f", "ndjson"]),
    ("events", ["-f", "csv"]),
    ("check", ["-f", "text"]),
    ("check", ["-f", "json"]),
    ("watch", ["--exit-at-end", "-f", "ndjson"]),
    ("watch", ["--exit-at-end", "-f", "table"]),
]

_ELAPSED = re.compile(r"stopped after [0-9.]+ ?[a-z]+")
_REPLAYED = re.compile(r"replayed [0-9]+ lines?: ([0-9]+) sessions?, ([0-9]+) GPU faults?, ([0-9]+) dead windows?")


def inputs(root: Path) -> list[Path]:
    """The shared pastes and real oMLX runs, the fixtures and the example, in a set order."""
    found = sorted((SHARED / "real-logs").glob("*"))
    found += sorted(p for p in (SHARED / "real-omlx" / "logs").glob("*.log"))
    fixtures = root / "tests" / "fixtures"
    found += sorted(p for p in fixtures.rglob("*") if p.is_file() and p.suffix not in (".json", ".xsd", ".md", ".py"))
    found.append(root / "examples" / "omlx-3706.log")
    return [p for p in found if p.is_file()]


def plain_copy(path: Path) -> Path:
    """``path`` as a plain file at a path both builds share (watch follows plain files)."""
    if path.suffix != ".gz":
        return path
    place = PLAIN / hashlib.sha1(str(path).encode()).hexdigest()[:12] / path.name.removesuffix(".gz")
    if not place.exists():
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_bytes(gzip.decompress(path.read_bytes()))
    return place


def collect(root: Path, out: Path, only: str | None) -> None:
    """Run every command (or ``only`` this one) on every input with the build on ``sys.path``; write
    what each printed."""
    from typer.testing import CliRunner

    from omlx_logscan.cli.app import app

    runner = CliRunner()
    results: dict[str, Any] = {}
    for path in inputs(root):
        for command, options in COMMANDS:
            if only is not None and command != only:
                continue
            target = plain_copy(path) if command == "watch" else path
            args = [command, str(target), *options]
            result = runner.invoke(app, args, env={"TZ": "UTC", "COLUMNS": "120", "NO_COLOR": "1"})
            results[" ".join([command, str(path.relative_to(path.anchor)), *options])] = {
                "stdout": result.stdout,
                "stderr": _ELAPSED.sub("stopped after -", result.stderr),
                "exit": result.exit_code,
            }
    out.write_text(json.dumps(results))


def run_build(build: Path, root: Path, only: str | None) -> dict[str, Any]:
    """What ``build`` prints: one process per command, so that no run of one command can leave state
    (a cache, a handler) that changes what another prints."""
    results: dict[str, Any] = {}
    for command in sorted({command for command, _ in COMMANDS if only in (None, command)}):
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
            out = Path(handle.name)
        env = os.environ | {"PYTHONPATH": str(build / "src"), "TZ": "UTC"}
        argv = [sys.executable, __file__, "--collect", str(out), "--root", str(root), "--only", command]
        subprocess.run(argv, env=env, check=True, cwd=build)
        results |= json.loads(out.read_text())
        out.unlink()
    return results


def _timeline_counts(results: dict[str, Any], path: str) -> tuple[int, ...] | None:
    """Lifetimes, faults and dead windows that ``timeline -f json`` of ``path`` gives in ``results``."""
    run = results.get(f"timeline {path} -f json")
    if run is None or run["exit"] != 0:
        return None
    document = json.loads(run["stdout"])
    return len(document["sessions"]), len(document["faults"]), len(document["dead_windows"])


def _watch_counts(run: dict[str, Any]) -> tuple[int, ...] | None:
    found = _REPLAYED.search(run["stderr"])
    return tuple(int(n) for n in found.groups()) if found else None


def agrees_now(base: dict[str, Any], head: dict[str, Any], key: str) -> bool:
    """Whether ``key`` is a watch run whose tallies the old build gave otherwise than its own timeline
    and the new build gives as timeline does: watch and timeline now share one analyzer."""
    command, path = key.split(" ")[:2]
    truth = _timeline_counts(base, path)
    return (
        command == "watch"
        and truth is not None
        and _watch_counts(head[key]) == truth
        and _watch_counts(base[key]) != truth
        and _timeline_counts(head, path) == truth
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base", type=Path, default=Path("/work/main"))
    parser.add_argument("--head", type=Path, default=ROOT)
    parser.add_argument("--only", help="compare this command's runs only (e.g. watch)")
    parser.add_argument("--collect", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose fixtures are read")
    args = parser.parse_args()
    if args.collect is not None:
        collect(args.root, args.collect, args.only)
        return 0
    base = run_build(args.base.resolve(), args.root, args.only)
    head = run_build(args.head.resolve(), args.root, args.only)
    differ = sorted(key for key in base if base[key] != head.get(key))
    files = {key.split(" ")[1] for key in base}
    runs = len(base) // max(1, len(files))
    print(f"{len(files)} inputs x {runs} command runs = {len(base)} compared; differences: {len(differ)}")
    fixed = [key for key in differ if agrees_now(base, head, key)]
    print(f"of which watch runs whose tallies now agree with timeline's (the old watch's did not): {len(fixed)}")
    for number, key in enumerate(differ):
        print("differs:", key)
        if number >= 20:  # the first ones in full
            continue
        for part in ("exit", "stdout", "stderr"):
            if base[key][part] != head[key][part]:
                print(f"  {part}: {str(base[key][part])[:300]!r}\n   vs: {str(head[key][part])[:300]!r}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
