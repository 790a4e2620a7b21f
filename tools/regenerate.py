"""Rebuilds every generated file of the project from this checkout's code, or with ``--check`` verifies
that each is current, exiting 1 with the stale files' names (CI runs the check).

    python tools/regenerate.py [--check] [--git-dir PATH/TO/omlx.git]

The files: the command-line reference (docs/cli.md, ``tools/cli_reference.py``), the severity table
(docs/severity.md, ``tools/severity_table.py``), the lexicon entries each catalog row covers
(``data/catalog_entries.py``, ``tools/lexicon/name_rows.py``) and, given oMLX's git history, the
lexicon itself (``data/lexicon.json.gz``, ``tools/lexicon/generate.py``; it takes minutes, so it is
rebuilt or checked only with ``--git-dir``), first, as the others are read from it. The JSON Schemas
in ``output/schemas/`` are written by hand: their enums are filled from the code's types as they load.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DATA = "src/omlx_logscan/data"


@dataclass(frozen=True)
class Generated:
    """One generated file: where it lies in the checkout, and its new bytes from its current ones."""

    path: str
    rebuild: Callable[[bytes], bytes]


def _tool(path: str) -> ModuleType:
    """A script of ``tools/`` loaded as a module (the scripts are no package)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / "tools" / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # where its dataclasses look up their annotations
    spec.loader.exec_module(module)
    return module


def generated(git_dir: str | None) -> list[Generated]:
    """The generated files, each after the ones it is read from."""
    files = []
    if git_dir:
        lexicon = _tool("lexicon/generate.py")

        def history(_: bytes) -> bytes:
            return bytes(lexicon.pack(lexicon.lexicon(lexicon.read_history(git_dir, "HEAD"), lexicon.REPOSITORY)))

        files.append(Generated(f"{DATA}/lexicon.json.gz", history))
    rows, severity, reference = _tool("lexicon/name_rows.py"), _tool("severity_table.py"), _tool("cli_reference.py")
    return [
        *files,
        Generated(f"{DATA}/catalog_entries.py", lambda current: rows.render(current.decode()).encode()),
        Generated("docs/severity.md", lambda current: severity.page(current.decode()).encode()),
        Generated("docs/cli.md", lambda _: reference.render().encode()),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file is stale")
    parser.add_argument("--git-dir", help="oMLX's git directory: rebuild (or check) the lexicon from it too")
    options = parser.parse_args(argv)
    stale = []
    for file in generated(options.git_dir):
        path = ROOT / file.path
        current = path.read_bytes() if path.is_file() else b""
        new = file.rebuild(current)
        if new == current:
            continue
        if options.check:
            stale.append(file.path)
        else:
            path.write_bytes(new)
            print(f"rewrote {file.path}", file=sys.stderr)
    for name in stale:
        print(f"{name} is stale: run python tools/regenerate.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))  # this checkout's code, whatever is installed
    raise SystemExit(main())
