#!/usr/bin/env python3
"""Whether two builds of logscan print the same: every input, every command, every text format.

Run on demand, never as a test:

    python bench/same_outputs.py                        # /work/main against this checkout
    python bench/same_outputs.py --base /work/main --head .

Each build runs in a process of its own (``PYTHONPATH=<build>/src``) that calls the commands in
process, one after the other, and writes what each printed (stdout, stderr, exit code) as JSON;
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
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    env = os.environ | {"PYTHONPATH": str(build / "src"), "TZ": "UTC"}
    subprocess.run(
        [sys.executable, __file__, "--collect", str(out), "--root", str(root), *(["--only", only] if only else [])],
        env=env,
        check=True,
        cwd=build,
    )
    results: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return results


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
    for key in differ[:20]:
        print("differs:", key)
        for part in ("exit", "stdout", "stderr"):
            if base[key][part] != head[key][part]:
                print(f"  {part}: {str(base[key][part])[:300]!r}\n   vs: {str(head[key][part])[:300]!r}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
