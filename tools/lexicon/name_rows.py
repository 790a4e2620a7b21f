"""Write which lexicon entries each catalog row covers: ``src/omlx_logscan/data/catalog_entries.py``.

    PYTHONPATH=src python tools/lexicon/name_rows.py

Run after the lexicon or the catalog changes. A row covers the entries whose sample text (the
template with its placeholders filled, see :func:`covered`) its pattern matches; the ids a row
already names by hand (text that wraps an entry, like a status code before an error's detail) are
kept while the lexicon still has them. Rows for text oMLX does not write itself stay in
``FOREIGN`` with their reason. Prints the rows that name no entry: each needs ids or a reason.
"""

from __future__ import annotations

import pprint
import subprocess
import sys
from pathlib import Path

from omlx_logscan.data import catalog_entries
from omlx_logscan.parsing.catalog import CATALOG
from omlx_logscan.parsing.lexicon import Lexicon, lexicon
from omlx_logscan.parsing.template import Template

OUT = Path(catalog_entries.__file__)

# What a placeholder of any kind is filled with, each tried in turn: a word, an HTTP method, a
# number, a size, a quoted name, a request id.
FILLERS = ("x", "POST", "12", "1.5GB", "'x'", "0b50a90d-333a")


def covered(row: Template, words: Lexicon) -> tuple[str, ...]:
    """The ids of the entries whose samples ``row`` matches."""
    found = []
    for entry in words.entries:
        samples = {entry.sample(filler) for filler in FILLERS}
        if any(row.literal in sample and row.regex.search(sample) for sample in samples):
            found.append(entry.id)
    return tuple(sorted(found))


def entries() -> dict[str, tuple[str, ...]]:
    """Each catalog row's entries, by its pattern; a row that names none is printed to stderr."""
    words = lexicon()
    ids = {e.id for e in words.entries}
    named: dict[str, tuple[str, ...]] = {}
    for row in CATALOG:
        if row.pattern in catalog_entries.FOREIGN:
            continue
        kept = (i for i in catalog_entries.ENTRIES.get(row.pattern, ()) if i in ids)
        named[row.pattern] = tuple(sorted({*kept, *covered(row, words)}))
        if not named[row.pattern]:
            print(f"no entry: {row.kind} {row.pattern!r}", file=sys.stderr)
    return named


def render(current: str) -> str:
    """The module with its ``ENTRIES`` table rebuilt: its text above the table is kept."""
    head = current[: current.index("ENTRIES: dict")]
    table = pprint.pformat(entries(), width=110, sort_dicts=False)
    text = f"{head}ENTRIES: dict[str, tuple[str, ...]] = {table}\n"
    command = [sys.executable, "-m", "ruff", "format", "-q", "--stdin-filename", str(OUT), "-"]
    return subprocess.run(command, input=text, capture_output=True, text=True, check=True).stdout


def main() -> int:
    OUT.write_text(render(OUT.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
