"""The package's shape is the data flow: folders import only the folders before them, without cycles."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from conftest import EXAMPLE, ROOT

PACKAGE = ROOT / "src" / "omlx_logscan"
FLOW = ("data", "inputs", "parsing", "stream", "analysis", "output", "fleet", "watch", "cli")
# A module over REVIEW_LINES is named in the run's warnings for a reviewer to ask whether it holds one
# concern (a size alone is no reason to split one); over MAX_MODULE_LINES it surely holds several.
REVIEW_LINES = 500
MAX_MODULE_LINES = 1000


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _folder(module: str) -> str | None:
    """The flow folder a dotted module name lies in (None for the package's root modules)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in FLOW) else None


def _imports(path: Path, *, top_level_only: bool) -> set[str]:
    """The package's modules ``path`` imports: all of them, or only those it imports as it loads and
    for its types (``if TYPE_CHECKING:``), not inside a function."""
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:
        nodes = [*nodes, *(inner for node in tree.body if _for_types(node) for inner in node.body)]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("omlx_logscan"):
            found.add(node.module or "")
            submodules = (f"{node.module}.{alias.name}" for alias in node.names)  # ``from package import module``
            found.update(name for name in submodules if name in MODULES)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("omlx_logscan"))
    return found


def _for_types(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_lies_in_a_flow_folder_or_is_a_root_helper() -> None:
    folders = {path.parent.name for path in PACKAGE.rglob("*.py") if path.parent != PACKAGE}
    assert folders == set(FLOW)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_folder_after_its_own(module: str) -> None:
    own = _folder(module)
    if own is None:  # root helpers (errors, times) may be imported by all, and import no folder
        later = {imported for imported in _imports(MODULES[module], top_level_only=False) if _folder(imported)}
        entry_points = ("omlx_logscan", "omlx_logscan.__main__")  # the library's exports, python -m
        assert module in entry_points or not later, f"{module} imports {sorted(later)}"
        return
    for imported in _imports(MODULES[module], top_level_only=False):
        target = _folder(imported)
        if target is not None:
            assert FLOW.index(target) <= FLOW.index(own), f"{module} imports {imported}"


@pytest.mark.slow
def test_no_import_cycle() -> None:
    """No two modules need each other, to load or for their types."""
    graph = {module: _imports(path, top_level_only=True) & set(MODULES) for module, path in MODULES.items()}
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        if module in trail:
            cycle = (*trail[trail.index(module) :], module)
            # A package importing its own submodules to register them is not a cycle.
            registering = all(step.startswith(cycle[0] + ".") for step in cycle[1:-1])
            assert registering, " → ".join(cycle)
            return
        if module in done:
            return
        for imported in graph[module]:
            visit(imported, (*trail, module))
        done.add(module)

    for module in graph:
        visit(module, ())


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_the_size_limit(module: str) -> None:
    lines = len(MODULES[module].read_text().splitlines())
    if lines > REVIEW_LINES:
        warnings.warn(f"{module} has {lines} lines: does it still hold one concern?", stacklevel=1)
    assert lines <= MAX_MODULE_LINES


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _folder(m) == "analysis"))
def test_analysis_is_data_only(module: str) -> None:
    """Results are computed apart from how they are said: no terminal library in the analysis."""
    text = MODULES[module].read_text()
    assert "rich" not in {name.split(".")[0] for name in _external_imports(text)}


def _external_imports(text: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


MACHINE_RUNS = {
    "check json": ["check", str(EXAMPLE), "-f", "json", "-q"],
    "check json with the accounting": ["check", str(EXAMPLE), "-f", "json"],
    "timeline json": ["timeline", str(EXAMPLE), "-f", "json", "-q"],
    "timeline json with an OS history": [
        "timeline",
        str(EXAMPLE),
        "-f",
        "json",
        "-q",
        "--os-history",
        str(EXAMPLE.parent / "os-history.txt"),
    ],
    "events ndjson": ["events", str(EXAMPLE), "-f", "ndjson", "-q"],
}


def _imported(args: list[str]) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """A run of ``logscan args`` and the modules it imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "omlx_logscan", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time")
    }
    return result, imported


_RICH = re.compile(r"^rich(\.|$)")
_OS_HISTORY_ONLY = {"plistlib", "dateutil", "omlx_logscan.analysis.bounds", "omlx_logscan.inputs.oshistory"}


@pytest.mark.slow
@pytest.mark.parametrize("run", sorted(MACHINE_RUNS))
def test_machine_formats_do_not_import_rich(run: str) -> None:
    """rich is for terminals; a JSON or NDJSON run (a CI gate, a script) starts faster without it."""
    result, imported = _imported(MACHINE_RUNS[run])
    first = result.stdout.splitlines()[0]
    assert json.loads(first if run.startswith("events") else result.stdout)
    assert "omlx_logscan.stream.read" in imported  # the report names what was imported
    assert not {name for name in imported if _RICH.match(name)}
    if "OS history" not in run:  # OS histories, their plist reader and the bounds load only when asked for
        assert not imported & _OS_HISTORY_ONLY


@pytest.mark.slow
def test_markdown_without_an_os_history_loads_neither_rich_nor_the_bounds() -> None:
    """Markdown is text for GitHub: no terminal library, and the bounds' readers only with an OS history."""
    result, imported = _imported(["timeline", str(EXAMPLE), "-f", "markdown", "-q"])
    assert result.stdout.startswith("## oMLX log timeline")
    assert not {name for name in imported if _RICH.match(name)}
    assert not imported & _OS_HISTORY_ONLY
