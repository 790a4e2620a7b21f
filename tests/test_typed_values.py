"""Domain values are typed end to end: a misspelt outcome, event kind or rule id, at every place the
code outside ``parsing/`` writes it, is a mypy error.

A copy of the package has every ``"value"`` written as ``"valuex"`` (its ``Literal`` left as it
is); mypy --strict must then name each line changed (a branch that an earlier misspelling makes
unreachable is named as unreachable). A lookup table keyed by ``str``, a test of membership in an
untyped tuple, or a value read from an untyped dictionary would let one through.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest

from conftest import ROOT

PACKAGE = ROOT / "src" / "omlx_logscan"
# One value of each kind: an outcome (also an outage kind and a rule id), an event kind, a rule id.
VALUES = ("penalty_box", "gpu_error", "dead_engine")
# parsing/ is being reworked apart (issue 35 leaves its typed event fields for after that work).
SKIPPED = ("parsing/",)


def _declarations(source: str) -> set[int]:
    """The lines of every ``Literal[...]``: where values are declared, not used."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def _misspell(copy: Path, value: str) -> list[tuple[str, int]]:
    """Write ``value`` misspelt at every place it is written as a string of its own; the changed lines."""
    changed: list[tuple[str, int]] = []
    quoted = re.compile(rf"""(["']){re.escape(value)}\1""")
    for path in sorted(copy.rglob("*.py")):
        name = path.relative_to(copy).as_posix()
        if name.startswith(SKIPPED):
            continue
        source = path.read_text()
        declared = _declarations(source)
        lines = source.splitlines(keepends=True)
        for number, line in enumerate(lines, 1):
            if quoted.search(line) and number not in declared and not line.lstrip().startswith("#"):
                lines[number - 1] = quoted.sub(rf"\g<1>{value}x\g<1>", line)
                changed.append((name, number))
        path.write_text("".join(lines))
    return changed


@pytest.mark.slow
@pytest.mark.parametrize("value", VALUES)
def test_a_misspelt_value_is_a_mypy_error_everywhere(value: str, tmp_path: Path) -> None:
    copy = tmp_path / "omlx_logscan"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c", "*.h", "*.gz"))
    changed = _misspell(copy, value)
    assert changed, f"{value} is written nowhere outside its declaration"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--warn-unreachable",
            "--cache-dir",
            str(tmp_path / "cache"),
            "omlx_logscan",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    flagged = {
        ((tmp_path / match[1]).resolve().relative_to(copy.resolve()).as_posix(), int(match[2]))
        for match in re.finditer(r"^(.+?\.py):(\d+): error", result.stdout, re.MULTILINE)
    }
    silent = [f"{name}:{line}" for name, line in changed if (name, line) not in flagged]
    assert not silent, f"mypy says nothing of {value}x at:\n" + "\n".join(silent) + "\n" + result.stdout[-3000:]


def test_lookup_tables_read_by_index_hold_every_value() -> None:
    """A table read with ``[]`` has a row for every value of its key's type: none is missed at run time."""
    from omlx_logscan.analysis.outage_model import OutageKind
    from omlx_logscan.analysis.probes import ProbeVerdict
    from omlx_logscan.analysis.results import Outcome, SessionEnd
    from omlx_logscan.analysis.rules import RuleId
    from omlx_logscan.output import chart, findings, live, notices, outages, probes

    tables: list[tuple[object, Any]] = [
        (chart._END_REASONS, SessionEnd),
        (chart.BAR_KINDS, chart.BarKind),
        (notices._CONSEQUENCES, Outcome),
        (live._NOTICE_STYLE, notices.NoticeKind),
        (outages.KIND_TITLES, OutageKind),
        (findings.RULE_WORDS, RuleId),
        (probes.VERDICT_WORDS, ProbeVerdict),
    ]
    for table, key in tables:
        assert isinstance(table, dict)
        assert sorted(table) == sorted(get_args(key)), key
