"""Every version of the native scanner's literal search (``src/omlx_logscan/_search.h``: AVX2,
SSSE3 and NEON where the CPU has them, and the plain one) finds the same literals in the same
order, checked by a C program of its own, and again through the scanner against the polars plan.

The arm64 version is built with a cross compiler and run under qemu where both are installed
(``.ci/run`` installs them): the machines CI runs on are x86_64, the Macs most users have are not.
"""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_native import _LINE, MUTATIONS, SCANNER, WORKDIR, _mutated, assert_same, needs_native

from conftest import EXAMPLE, REAL, bench_module
from omlx_logscan.parsing.shapes import INTERESTING_LITERALS, NOT_DENSE, NOT_ROUTINE

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "tests" / "native" / "search_check.c"

# The scanner's flagged sets, and the grammar's many literals: more than the search's eight
# buckets, so buckets are shared and the near misses many.
LITERAL_SETS = {
    "flagged": (" - DEBUG - ", *NOT_ROUTINE, *NOT_DENSE),
    "interesting": INTERESTING_LITERALS,
}


def _compiler() -> str | None:
    configured = (sysconfig.get_config_var("CC") or "").split()
    for name in (configured[0] if configured else "", "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Real pastes, the example, and a stretch of the benchmark's DEBUG log."""
    bench = tmp_path_factory.mktemp("search") / "bench.log"
    bench_module("make_log").write_log(bench, 1, 1, seed=5)
    return [*sorted(REAL.glob("*.log"))[:12], EXAMPLE, bench]


def _run_checks(command: list[str], texts: list[Path]) -> Iterator[str]:
    for path in texts:
        for name, literals in LITERAL_SETS.items():
            done = subprocess.run([*command, str(path), *literals], capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"{path.name}, {name}: {done.stderr[:2000]}"
            yield done.stdout


@pytest.mark.slow
def test_every_version_finds_what_the_plain_one_finds(texts: list[Path], tmp_path: Path) -> None:
    compiler = _compiler()
    if compiler is None:
        pytest.skip("no C compiler here to build tests/native/search_check.c")
    program = tmp_path / "search_check"
    subprocess.run([compiler, "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(program), str(CHECK)], check=True)
    reports = list(_run_checks([str(program)], texts))
    versions = {line.split()[0] for report in reports for line in report.splitlines()}
    assert "plain" in versions and len(reports) == 2 * len(texts)
    # each version reports the same count of finds as the plain one, on every text
    for report in reports:
        assert len({line.split()[1] for line in report.splitlines()}) == 1, report


@pytest.mark.slow
def test_the_arm64_version_under_qemu(texts: list[Path], tmp_path: Path) -> None:
    cross, emulator = shutil.which("aarch64-linux-gnu-gcc"), shutil.which("qemu-aarch64")
    if cross is None or emulator is None:
        pytest.skip("needs aarch64-linux-gnu-gcc and qemu-aarch64 (Debian: gcc-aarch64-linux-gnu, qemu-user)")
    program = tmp_path / "search_check_arm64"
    subprocess.run([cross, "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(program), str(CHECK)], check=True)
    reports = list(_run_checks([emulator, "-L", "/usr/aarch64-linux-gnu", str(program)], texts[-2:]))
    assert all({line.split()[0] for line in report.splitlines()} == {"neon", "plain"} for report in reports)


@pytest.mark.slow
@needs_native
def test_the_scanner_gives_the_same_blocks_with_every_version(tmp_path: Path) -> None:
    """The scanner against the polars plan, block by block, with each version in turn."""
    assert SCANNER is not None
    versions = SCANNER.searches()
    bench = tmp_path / "bench.log"
    bench_module("make_log").write_log(bench, 0.25, 1, seed=3)
    lines = bench.read_bytes().splitlines()[:1500] + EXAMPLE.read_bytes().splitlines()
    mutated = tmp_path / "mutated.log"
    try:
        for version in versions:
            SCANNER.use_search(version)
            assert SCANNER.searches()[0] == version
            for path in sorted(REAL.glob("*.log")):
                assert_same(path, 4096)
            for mutation in ("crlf", "escape-codes", "gpu-marker", "quoted-level", "unicode", "long-line"):
                mutated.write_bytes(_mutated(lines, MUTATIONS[mutation]))
                assert_same(mutated, 4099)
    finally:
        SCANNER.use_search(versions[0])
    with pytest.raises(ValueError, match="no search version"):
        SCANNER.use_search("sse9")


@pytest.mark.slow
@needs_native
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60)
@given(st.lists(_LINE, max_size=40), st.integers(min_value=40, max_value=2000), st.data())
def test_generated_text_with_every_version(lines: list[str], block_bytes: int, data: st.DataObject) -> None:
    assert SCANNER is not None
    versions = SCANNER.searches()
    path = WORKDIR / "generated-search.log"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8", errors="surrogatepass"))
    try:
        SCANNER.use_search(data.draw(st.sampled_from(versions)))
        assert_same(path, block_bytes)
    finally:
        SCANNER.use_search(versions[0])
