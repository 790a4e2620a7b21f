"""The native block scanner gives, block by block, exactly what the polars plan gives: the plan is its reference.

Both run on the same blocks (as the scan reads them, with their neighbours' timestamps known) of
every fixture, every real log, mutated logs and generated text, and each block's outputs must be
equal: line count, kept lines, levels, unkept records, request and arrival rows.
"""

from __future__ import annotations

import copy
import gzip
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import EXAMPLE, GENERATED, REAL, bench_module, timeline_json
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.cli import app
from omlx_logscan.errors import InputError
from omlx_logscan.inputs import byte_blocks
from omlx_logscan.inputs.decoding import mend_lines, normalise
from omlx_logscan.inputs.sources import resolve
from omlx_logscan.parsing import native, scan
from omlx_logscan.parsing.catalog import CHAT_COUNTS
from omlx_logscan.parsing.dense import FEW, Dense
from omlx_logscan.parsing.plan import BlockOutput, plan_block
from omlx_logscan.stream.read import read_events

REQUIRED = os.environ.get(native.REQUIRE_VARIABLE) == "1"
WORKDIR = Path(tempfile.mkdtemp(prefix="logscan-native-"))


def _scanner() -> ModuleType | None:
    try:
        return native.native_scanner()
    except native.NativeScannerMissing:
        return None


SCANNER = _scanner()
needs_native = pytest.mark.skipif(
    SCANNER is None and not REQUIRED, reason=f"the native scanner is not in use here ({native.scanner_name()})"
)
pytestmark = needs_native


def _outputs(output: BlockOutput) -> tuple[object, ...]:
    return (output.size, output.lines, output.kept, output.levels, output.records)


def _typecodes(table: Dense) -> dict[str, str | None]:
    return {name: getattr(column, "typecode", None) for name, column in table.columns.items()}


def block_differences(path: Path, block_bytes: int | None = None) -> Iterator[str]:
    """Where the two scanners disagree on a block of ``path`` (read in blocks of ``block_bytes``)."""
    assert SCANNER is not None, "LOGSCAN_REQUIRE_NATIVE=1 but the native scanner is missing"
    saved = byte_blocks.BLOCK_BYTES
    byte_blocks.BLOCK_BYTES = block_bytes or saved
    try:
        for number, block in enumerate(
            byte_blocks.linked(byte_blocks.read_blocks(resolve([str(path)])[0], True), scan._timed)
        ):
            block.load()
            found = native.native_block(SCANNER, copy.copy(block), "x")  # it mends the bytes itself
            block.data = normalise(block.data)
            reference = plan_block(block, "x", False, False, False)
            if _outputs(reference) != _outputs(found):
                yield f"block {number}: {_outputs(reference)!r:.600} != {_outputs(found)!r:.600}"
            for name in ("requests", "arrivals"):
                want, got = getattr(reference, name), getattr(found, name)
                if want.columns != got.columns or _typecodes(want) != _typecodes(got):
                    yield f"block {number} {name}:\n{want}\n!=\n{got}"
    finally:
        byte_blocks.BLOCK_BYTES = saved


def assert_same(path: Path, block_bytes: int | None = None) -> None:
    differences = list(block_differences(path, block_bytes))
    assert not differences, "\n".join(differences[:3])


def test_the_scanners_chat_counts_are_the_catalogs() -> None:
    assert native.counts_pattern(native.COUNTS_PARTS) == CHAT_COUNTS


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("*.log")))
def test_every_real_log(name: str) -> None:
    assert_same(REAL / name)
    assert_same(REAL / name, 512)


def _plain_fixtures() -> list[Path]:
    return sorted(GENERATED.glob("*/*.log*"))


@pytest.mark.slow
@pytest.mark.parametrize("fixture", _plain_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_generated_fixture(fixture: Path, tmp_path: Path) -> None:
    data = gzip.decompress(fixture.read_bytes()) if fixture.suffix == ".gz" else fixture.read_bytes()
    plain = tmp_path / "plain.log"
    plain.write_bytes(data)
    assert_same(plain)
    assert_same(plain, 65_536)


@pytest.fixture(scope="module")
def bench_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """Lines of the benchmark's DEBUG log and of the example, for the mutations."""
    path = tmp_path_factory.mktemp("native") / "bench.log"
    bench_module("make_log").write_log(path, 0.25, 1, seed=3)
    return path.read_bytes().splitlines()[:1500] + EXAMPLE.read_bytes().splitlines()


def _mutated(lines: list[bytes], mutate: Callable[[bytes, random.Random], bytes]) -> bytes:
    rnd = random.Random(len(lines))
    return b"\n".join(mutate(line, rnd) if rnd.random() < 0.3 else line for line in lines) + b"\n"


MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "crlf": lambda line, _: line + b"\r",
    "lone-cr": lambda line, rnd: line[:20] + b"\r" + line[20:],
    "not-utf8": lambda line, rnd: line[: rnd.randrange(len(line) + 1)] + bytes([rnd.randrange(128, 256)]) + line[30:],
    "bad-date": lambda line, rnd: line.replace(b"-0", rnd.choice([b"-1", b"-3", b"-00", b"-"]), 1),
    "month-13": lambda line, _: line[:5] + b"13" + line[7:],
    "feb-30": lambda line, _: line[:5] + b"02-30" + line[10:],
    "second-60": lambda line, _: line[:17] + b"60" + line[19:],
    "hour-24": lambda line, _: line[:11] + b"24" + line[13:],
    "year-1969": lambda line, _: b"1969" + line[4:],
    "year-2200": lambda line, _: b"2200" + line[4:],
    "dot-fraction": lambda line, _: line[:19] + b"." + line[20:],
    "long-fraction": lambda line, _: line[:23] + b"4567" + line[23:],
    "huge-tokens": lambda line, rnd: line.replace(
        b" tokens in", rnd.choice([b"9999999999", b"2147483648", b"0"]) + b" tokens in"
    ),
    "int32-edge": lambda line, _: line.replace(
        b"Chat completion: model=", b"Chat completion: 2147483647 tokens in 1.0s model="
    ),
    "escape-codes": lambda line, rnd: line[: rnd.randrange(len(line) + 1)] + b"\x1b[31m" + line[40:],
    "gpu-marker": lambda line, _: line + b" kIOGPUCommandBufferCallbackErrorTimeout",
    "fatal-suffix": lambda line, _: line + b"; exiting process so the supervisor can restart with a clean state",
    "request-id": lambda line, _: line.replace(b"[-] - ", b"[req-9] - ", 1),
    "no-request-id": lambda line, _: line.replace(b"[-] - ", b"", 1),
    "trace-level": lambda line, _: line.replace(b" - DEBUG - ", b" - TRACE - ", 1),
    "info-level": lambda line, _: line.replace(b" - DEBUG - ", b" - INFO - ", 1),
    "quoted-level": lambda line, _: line + b" (was - WARNING - here)",
    "untimed": lambda line, _: b"  " + line,
    "blank": lambda line, _: b"",
    "unicode": lambda line, rnd: line[: rnd.randrange(len(line) + 1)] + "é٥—你".encode() + line[25:],
    "unicode-digit": lambda line, _: line[:20] + "١".encode() + line[21:],
    "unicode-logger": lambda line, _: line.replace(b"omlx.", "omlx.é".encode(), 1),
    "em-dash": lambda line, _: line[:23] + " — ".encode() + line[26:],
    "tab": lambda line, _: line[:23] + b"\t" + line[24:],
    "long-line": lambda line, _: line + b"x" * 70_000,
    "nul-byte": lambda line, rnd: line[:30] + b"\x00" + line[30:],
    "no-model-comma": lambda line, _: line.replace(b", ", b" ", 1),
    "seconds-without-s": lambda line, _: line.replace(b"s (", b" (", 1),
}


@pytest.mark.slow
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_mutated_logs(mutation: str, bench_lines: list[bytes], tmp_path: Path) -> None:
    path = tmp_path / "mutated.log"
    path.write_bytes(_mutated(bench_lines, MUTATIONS[mutation]))
    assert_same(path)
    assert_same(path, 4099)


@pytest.mark.slow
def test_lines_cut_at_every_block_edge(bench_lines: list[bytes], tmp_path: Path) -> None:
    """Small blocks of every size in a range: each line boundary falls at some block's edge."""
    path = tmp_path / "edges.log"
    path.write_bytes(b"\n".join(bench_lines[:40]) + b"\n")
    for size in range(64, 400, 3):
        assert_same(path, size)


def test_the_last_line_without_a_newline(bench_lines: list[bytes], tmp_path: Path) -> None:
    path = tmp_path / "open.log"
    for tail in (b"", b"\r", b"\r\r", b"x"):
        path.write_bytes(b"\n".join(bench_lines[:30]) + tail)
        assert_same(path)
        assert_same(path, 700)


_STAMPS = st.sampled_from(
    [
        "2026-09-15 20:19:38,123",
        "2026-09-15 20:19:38.123",
        "2026-09-15 20:19:38",
        "2026-09-15T20:19:38,123",
        "2026-02-29 20:19:38,123",
        "2024-02-29 23:59:59,999",
        "2026-09-15 20:19:60,123",
        "2026-09-15 20:19: 8,123",
        "1970-01-01 00:00:00,000",
        "2199-12-31 23:59:59,999",
        "2026-09-15 20:19:38,1",
        "2026-09-15 20:19:38,1234567",
        "",
    ]
)
_HEADS = st.sampled_from(
    [
        " - omlx.server - INFO - ",
        " - omlx.server - DEBUG - ",
        " - omlx.server - TRACE - ",
        " - omlx.scheduler - DEBUG - ",
        " - omlx.scheduler - WARNING - ",
        " - omlx.engine_core - ERROR - ",
        " - uvicorn - INFO - ",
        " ",
        " — ",
        "\t",
        "",
    ]
)
_IDS = st.sampled_from(["[-] - ", "", "[r1] - ", "[-]"])
_OPENINGS = st.sampled_from(
    [
        "Chat completion: ",
        "Chat completion request received: ",
        "Added request ",
        "Incoming ",
        "Completion: ",
        "Engine loop error: ",
        "Memory pressure level: ",
        "",
    ]
)
_TAILS = st.one_of(
    st.sampled_from(
        [
            "model=q, 12 tokens in 1.00s (12.0 tok/s), prompt: 40",
            "12 tokens in 1.0s",
            "model=, 12 tokens in 1.0s",
            "model=a,b, 12 tokens in 1.0s",
            "99999999999 tokens in 1s",
            "12 tokens in .s",
            "12 tokens in s",
            "POST /v1/chat/completions — body: {}",
            "5f3a with 10 prompt tokens",
            "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
        ]
    ),
    st.text(max_size=40),
)
_LINE = st.one_of(
    st.builds(lambda *parts: "".join(parts), _STAMPS, _HEADS, _IDS, _OPENINGS, _TAILS),
    st.text(max_size=60),
)


@pytest.mark.slow
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_LINE, max_size=40),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
    st.integers(min_value=40, max_value=2000),
)
def test_generated_text(lines: list[str], newline: str, closed: bool, block_bytes: int) -> None:
    path = WORKDIR / "generated.log"
    path.write_bytes((newline.join(lines) + (newline if closed else "")).encode("utf-8", errors="surrogatepass"))
    if not path.stat().st_size:
        with pytest.raises(InputError, match="empty file"):  # refused before either scanner reads a block
            resolve([str(path)])
        return
    assert_same(path, block_bytes)


@pytest.mark.slow
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000), st.integers(min_value=40, max_value=1000))
def test_arbitrary_bytes(data: bytes, block_bytes: int) -> None:
    path = WORKDIR / "bytes.log"
    path.write_bytes(data)
    if data and not data.strip(b"\x00"):
        return  # refused as binary before any block is read
    try:
        assert_same(path, block_bytes)
    except Exception as exc:
        assert isinstance(exc, InputError)


def _document(path: Path) -> dict[str, object]:
    stream = read_events(resolve([str(path)]))
    document = timeline_json(analyze(stream))
    document["accounting"] = vars(stream.accounting)
    document["arrivals"] = stream.arrivals.rows()
    document["requests"] = stream.requests.rows()
    return document


@pytest.mark.parametrize("name", ["omlx-issue-1645.log", "omlx-issue-3683.log"])
def test_both_scanners_give_the_same_timeline(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    native_document = _document(REAL / name)
    monkeypatch.setattr(scan, "native_scanner", lambda: None)
    assert _document(REAL / name) == native_document


@pytest.mark.slow
def test_the_version_names_the_scanner() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert SCANNER is not None
    assert result.output.splitlines()[1] == f"scanner: native ({SCANNER.searches()[0]} search)"
    env = {**os.environ, native.SCANNER_VARIABLE: "polars"}
    run = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "--version"], capture_output=True, text=True, env=env, check=True
    )
    assert run.stdout.splitlines()[1] == "scanner: polars (LOGSCAN_SCANNER=polars)"


@pytest.mark.slow
def test_a_required_native_scanner_that_is_off_is_one_line_and_exit_2() -> None:
    env = {**os.environ, native.SCANNER_VARIABLE: "polars", native.REQUIRE_VARIABLE: "1"}
    run = subprocess.run(
        [sys.executable, "-m", "omlx_logscan", "timeline", str(EXAMPLE), "-q"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "logscan: error: LOGSCAN_REQUIRE_NATIVE=1 but the scanner is polars (LOGSCAN_SCANNER=polars)"
    ]


UTF8_EDGES = [
    b"",
    b"plain",
    "é—你😀".encode(),
    b"\xc0\x80",  # overlong
    b"\xc1\xbf",
    b"\xe0\x80\x80",
    b"\xe0\xa0\x80",
    b"\xed\x9f\xbf",
    b"\xed\xa0\x80",  # a surrogate
    b"\xef\xbf\xbf",
    b"\xf0\x8f\xbf\xbf",
    b"\xf0\x90\x80\x80",
    b"\xf4\x8f\xbf\xbf",
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    b"\xf5\x80\x80\x80",
    b"\xe2\x80",  # cut short
    b"abcdefgh\xe2\x80\x94",
    b"\x80",
    b"\xff",
]


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("data", [b"\xff", b"2026-06-20 08:03:00,000 - x - ERROR - \xff\n", b"ok\n\xff"])
def test_bytes_that_are_not_utf8_are_refused_for_mending(data: bytes) -> None:
    """The scanner makes no text of bytes that are not UTF-8: it says so (None), and the caller mends them."""
    assert SCANNER is not None
    assert SCANNER.scan_block(data, False, False) is None
    assert SCANNER.scan_block(mend_lines(data), False, False) is not None


def _scans(data: bytes) -> bool:
    """Whether the scanner takes the bytes as UTF-8 (it checks them only where a byte is not ASCII)."""
    assert SCANNER is not None
    return SCANNER.scan_block(data, False, False) is not None


@pytest.mark.parametrize("data", UTF8_EDGES)
def test_the_utf8_check_is_pythons(data: bytes) -> None:
    assert SCANNER is not None
    # ASCII around it, so that it stands at every kind of place: in the 64-byte steps and the 8-byte ones
    for padded in (data, b"x" * 7 + data, data + b"y" * 9, b"x" * 63 + data, b"x" * 64 + data + b"y" * 70):
        assert _scans(padded) == _decodes(padded), padded


@pytest.mark.slow
@given(st.binary(max_size=200) | st.text(max_size=80).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_the_utf8_check_is_pythons_on_any_bytes(data: bytes) -> None:
    assert _scans(data) == _decodes(data)


@pytest.mark.slow
def test_blocks_with_thousands_of_dense_rows(tmp_path: Path) -> None:
    """The plan's columns of more than ``FEW`` rows become arrays through numpy, fewer through lists: both exact."""
    path = tmp_path / "busy.log"
    bench_module("make_log").write_log(path, 3, 1, seed=8)
    assert read_events(resolve([str(path)])).arrivals.height > 2 * FEW
    assert_same(path)
    assert_same(path, 100_000)


@pytest.mark.slow
def test_a_configure_that_failed_leaves_nothing_behind() -> None:
    """A configure call that fails part way (a bad argument after the literals) flags nothing: the
    next, good one alone decides what a line holds. Run in a process of its own (configure is once
    per process)."""
    program = """
from omlx_logscan import _scanner
try:
    _scanner.configure(debug=(b" - DEBUG - ",), not_routine=(b"STALE",), not_dense=(b"x",), interesting=(b"y",),
        levels=(b"a", b"b", 3), request_head=b"h", request_id=b"i", request_opening=b"o",
        counts=(b"1", b"2", b"3", b"4"), arrivals=(), max_line=100, years=(1970, 2200))
except TypeError:
    pass
from omlx_logscan.parsing import native
scanner = native.native_scanner()
line = b"2026-06-20 15:23:16,975 - omlx.scheduler - DEBUG - [-] - STALE released\\n"
print(scanner.scan_block(line * 3, True, True)[-1])  # the levels of the lines neither routine nor dense
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "0", done.stdout + done.stderr  # routine: only counted
