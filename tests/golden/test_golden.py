"""Golden outputs: every format of every command on a handful of logs, compared byte for byte.

Substring asserts see only what they name; a golden file sees a changed word, order or alignment
anywhere. ``pytest tests/golden --update-golden`` writes them again from today's outputs; a difference
fails with its unified diff. Nothing in them depends on the machine: times are read in UTC, host names
are given, paths are relative to a fixed folder, the system's OS history is out of reach, and the
tool's own version is replaced by ``<version>``.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, ROOT
from omlx_logscan import __version__
from omlx_logscan.cli.app import app
from omlx_logscan.inputs import hosts, oshistory

GOLDEN = Path(__file__).parent
EXIT_CODES = GOLDEN / "exit_codes.json"
runner = CliRunner()

# The logs, as paths relative to the folder each command runs in (so that no machine's path shows).
LOGS = {
    "example": "examples/omlx-3706.log",
    "paste-fault": "tests/fixtures/real/omlx-issue-1387.log",
    "paste-errors": "tests/fixtures/real/omlx-issue-133.log",
    "real-wedge": "tests/fixtures/real-omlx/g-debug-wedge@0.6.3rc2.server.log",
}
HISTORY = ("--os-history", "examples/os-history.txt")
# What each log's timeline is read with beyond its path: the example with an OS history and an overlay,
# the wedge run with a short --wedge-after (its wedge lasts 4 min) and the probes a watch sent during it.
WEDGE = ("--wedge-after", "30s")
TIMELINE_OPTIONS = {
    "example": (*HISTORY, "--overlay", "gpu=examples/gpu-overlay.csv"),
    "real-wedge": (*WEDGE, "--probes", "tests/golden/inputs/probes.ndjson"),
}


@dataclass(frozen=True)
class Case:
    """One command line and the file its stdout is kept in (``<log>/<name>``)."""

    log: str
    name: str
    args: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.log}/{self.name}"


def _cases() -> Iterator[Case]:
    for log, path in LOGS.items():
        extra = TIMELINE_OPTIONS.get(log, ())
        wedge = WEDGE if log == "real-wedge" else ()
        for fmt, ext in (("text", "txt"), ("markdown", "md"), ("json", "json")):
            yield Case(log, f"timeline.{ext}", ("timeline", path, "-f", fmt, *extra))
        yield Case(log, "report.md", ("report", path, *extra))
        for fmt, ext in (("text", "txt"), ("json", "json")):
            yield Case(log, f"sessions.{ext}", ("sessions", path, "-f", fmt))
        # The example's stream is 1,084 events over three months: its escalation night stands for it.
        window = ("--since", "2026-09-15 20:00", "--until", "2026-09-16 04:00") if log == "example" else ()
        for fmt, ext in (("table", "txt"), ("ndjson", "ndjson"), ("json", "json"), ("csv", "csv")):
            yield Case(log, f"events.{ext}", ("events", path, "-f", fmt, *window))
        for fmt, ext in (
            ("text", "txt"),
            ("json", "json"),
            ("github", "github.txt"),
            ("junit", "xml"),
            ("sarif", "sarif"),
        ):
            yield Case(log, f"check.{ext}", ("check", path, "-f", fmt, *wedge))
        for fmt, ext in (("text", "txt"), ("json", "json"), ("markdown", "md")):
            yield Case(log, f"bounds.{ext}", ("bounds", path, "--by", "both", "-f", fmt, *HISTORY))
        if log != "example":  # watch replays a whole file, and the example's would be half a megabyte
            yield Case(log, "watch.ndjson", ("watch", path, "--exit-at-end", "-f", "ndjson", *wedge))
    yield Case("example", "timeline-plain.txt", ("timeline", LOGS["example"]))
    yield Case("example", "watch.txt", ("watch", LOGS["example"], "--exit-at-end", "-f", "table", "-k", "gpu_error"))
    yield Case(
        "real-wedge", "events-all.ndjson", ("events", LOGS["real-wedge"], "--all", "--show-unparsed", "-f", "ndjson")
    )


# Over 0.4 s each (a big JSON document or stream, each validated by its schema as it is written).
SLOW = {"example/timeline.json", "real-wedge/events-all.ndjson", "real-wedge/watch.ndjson"}
CASES = [pytest.param(case, id=case.id, marks=[pytest.mark.slow] if case.id in SLOW else []) for case in _cases()]


def _versionless(text: str) -> str:
    """The output with the tool's own version left out (it changes with every release, not with the
    code), and the folder the commands ran in (SARIF names it) as ``<root>``."""
    text = text.replace(ROOT.as_uri(), "file://<root>").replace(str(ROOT), "<root>")
    text = text.replace(f"omlx-logscan {__version__}", "omlx-logscan <version>")
    return re.sub(rf'("(?:version|semanticVersion)": )"{re.escape(__version__)}"', r'\1"<version>"', text)


@pytest.fixture
def machine_free(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the machine would lend an output fixed: its zone, host name, OS history, terminal and folder."""
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(hosts, "this_host", lambda: "golden-host")
    monkeypatch.setattr(oshistory, "SYSTEM_HISTORY", ROOT / "no-such-history")
    monkeypatch.chdir(ROOT)


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--tz", "UTC", "-q"])
    return result.exit_code, result.stdout


def compare(request: pytest.FixtureRequest, name: str, actual: str, code: int) -> None:
    """Byte for byte against ``tests/golden/<name>``, and the exit code against ``exit_codes.json``;
    with ``--update-golden``, write both instead."""
    path = GOLDEN / name
    actual = _versionless(actual)
    codes = json.loads(EXIT_CODES.read_text()) if EXIT_CODES.exists() else {}
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual.encode())
        codes[name] = code
        EXIT_CODES.write_text(json.dumps(dict(sorted(codes.items())), indent=1) + "\n")
        return
    assert path.exists(), f"{name}: no golden file (write it with pytest tests/golden --update-golden)"
    expected = path.read_bytes().decode()
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True), f"golden/{name}", "today"
        )
        pytest.fail("".join(diff)[:20000], pytrace=False)
    assert code == codes.get(name), f"{name}: exit code {code}, the golden one {codes.get(name)}"


@pytest.mark.parametrize("case", CASES)
def test_golden(case: Case, machine_free: None, request: pytest.FixtureRequest) -> None:
    code, out = run(*case.args)
    compare(request, case.id, out, code)


# -- export and fleet: a fleet of two hosts, as tests/fleet builds one ---------------------------------

FORMAT_EXTENSIONS = {"text": "txt", "json": "json", "markdown": "md"}
FLEET_HOSTS = {"mac-01": "Europe/Berlin", "mac-02": "America/New_York"}


def _table_csv(folder: Path) -> str:
    """One exported table as CSV: the rows of each Parquet file in path order, each after its file's
    path; a nested value (a list, a struct) as JSON."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for part in sorted(folder.rglob("*.parquet")):
        frame = pl.read_parquet(part, hive_partitioning=False)
        writer.writerow(["part", *frame.columns])
        for row in frame.iter_rows():
            cells = [json.dumps(v, default=str) if isinstance(v, list | dict) else v for v in row]
            writer.writerow([part.relative_to(folder).as_posix(), *cells])
    return out.getvalue()


@pytest.fixture(scope="module")
def fleet_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mac-01 runs the example's last three days; mac-02 the same cut before its last faults, in another zone."""
    root = tmp_path_factory.mktemp("golden-fleet")
    lines = EXAMPLE.read_text().splitlines(keepends=True)
    lines = lines[next(number for number, line in enumerate(lines) if line.startswith("2026-09-14")) :]
    cut = next(number for number, line in enumerate(lines) if line.startswith("2026-09-16 03"))
    for host, text in {"mac-01": "".join(lines), "mac-02": "".join(lines[:cut])}.items():
        (root / "logs" / host).mkdir(parents=True)
        (root / "logs" / host / "server.log").write_text(text)
    shutil.copy(ROOT / "examples" / "os-history.txt", root / "os-history.txt")
    return root


@pytest.fixture(scope="module")
def fleet_exports(fleet_root: Path) -> dict[str, tuple[int, str]]:
    """Each host's export into one folder of tables: its exit code, and its stdout then its stderr (the
    line accounting and what it wrote: its stdout alone is empty)."""
    done = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(fleet_root)
        for host, zone in FLEET_HOSTS.items():
            common = ("--host", host, "--tz", zone, "--os-history", "os-history.txt")
            result = runner.invoke(app, ["export", f"logs/{host}", *common, "-o", "tables"])
            done[host] = result.exit_code, f"{result.stdout}--- stderr\n{result.stderr}"
    return done


def test_golden_export(
    fleet_root: Path, fleet_exports: dict[str, tuple[int, str]], request: pytest.FixtureRequest
) -> None:
    for host, (code, out) in fleet_exports.items():
        compare(request, f"fleet/export-{host}.txt", out, code)
    for table in sorted(p for p in (fleet_root / "tables").iterdir() if not p.name.startswith(".")):
        compare(request, f"fleet/tables/{table.name}.csv", _table_csv(table), 0)


@pytest.mark.parametrize("fmt", list(FORMAT_EXTENSIONS))
def test_golden_fleet(
    fmt: str,
    fleet_root: Path,
    fleet_exports: dict[str, tuple[int, str]],
    machine_free: None,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    assert fleet_exports
    monkeypatch.chdir(fleet_root)
    result = runner.invoke(app, ["fleet", "tables", "-f", fmt, "-q"])
    compare(request, f"fleet/fleet.{FORMAT_EXTENSIONS[fmt]}", result.stdout, result.exit_code)
