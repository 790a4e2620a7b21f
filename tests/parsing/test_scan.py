"""The bulk scan's shortcuts change nothing: block sizes, block edges and the catalog's literals."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLE, GENERATED, REAL, WARN, stream_of, timeline_json
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.errors import InputError
from omlx_logscan.inputs import byte_blocks, decoding, sources
from omlx_logscan.inputs.lines import KeptLine
from omlx_logscan.inputs.sources import Source
from omlx_logscan.parsing import dense, native, scan
from omlx_logscan.parsing.catalog import CATALOG
from omlx_logscan.parsing.catalog_lookup import _first_character, candidates
from omlx_logscan.parsing.dense import REQUEST_SCHEMA, Dense, from_rows, moment_of, ms_of
from omlx_logscan.parsing.shapes import BLOCK_REQUESTS
from omlx_logscan.parsing.template import Template
from omlx_logscan.parsing.unkept import Unkept, stamp_of_line
from omlx_logscan.stream.event_stream import EventStream
from omlx_logscan.stream.read import CLOCK_JUMP_S, _clock_jumps, read_events

WORKDIR = Path(tempfile.mkdtemp(prefix="logscan-scan-"))

# The ways a source's dense rows are numbered: in Python, and by the native module where it is built.
NATIVE = dense._native()
SCANNERS = [None] + ([NATIVE] if NATIVE is not None else [])


def document_of(path: Path) -> dict[str, object]:
    stream = stream_of(path)
    assert stream.accounting.lines == stream.accounting.accounted
    document = timeline_json(analyze(stream))
    document["accounting"] = vars(stream.accounting)
    return document


def with_block_bytes(monkeypatch: pytest.MonkeyPatch, size: int, path: Path) -> dict[str, object]:
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", size)
    try:
        return document_of(path)
    finally:
        monkeypatch.undo()


def info_log(name: str, *messages: str) -> Path:
    """A log of omlx.server INFO records a second apart, one per message (the text after the level)."""
    path = WORKDIR / name
    path.write_text(
        "".join(f"2026-09-15 20:00:{i:02d},000 - omlx.server - INFO - {m}\n" for i, m in enumerate(messages)),
        encoding="utf-8",
    )
    return path


def plain_copy(case: str) -> Path:
    """A generated truth case as one plain file, so the positioned-read path reads it."""
    target = WORKDIR / f"{case}.log"
    if not target.exists():
        parts = sorted((GENERATED / case).iterdir())
        target.write_bytes(b"".join(gzip.decompress(p.read_bytes()) for p in parts))
    return target


@pytest.mark.parametrize("size", [pytest.param(2_000, marks=pytest.mark.slow), 65_536])
def test_small_blocks_give_the_same_timeline_as_one_block(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """Blocks cut records, tracebacks and request runs at every place; the answer must not move."""
    path = plain_copy("s6-file-debug")
    whole = document_of(path)
    assert with_block_bytes(monkeypatch, size, path) == whole
    assert whole["faults"] and whole["dead_windows"]  # the case has faults and a dead engine to get right


def test_a_gzipped_log_in_small_blocks_reuses_its_buffers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compressed log's chunks are read into buffers the workers give back: the timeline is the
    one of a single block, and the buffers made stay near the blocks in flight, not one a block."""
    path = plain_copy("s6-file-debug")
    packed = WORKDIR / "s6-file-debug-pooled.log.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    pools: list[byte_blocks.BufferPool] = []
    taken: list[int] = []
    take = byte_blocks.BufferPool.take

    def counting(pool: byte_blocks.BufferPool, size: int) -> bytearray:
        pools.append(pool)
        taken.append(size)
        return take(pool, size)

    whole = document_of(packed)  # one block
    monkeypatch.setattr(byte_blocks.BufferPool, "take", counting)
    assert with_block_bytes(monkeypatch, 8_192, packed) == whole
    assert whole["faults"] and whole["dead_windows"]
    assert len(set(pools)) == 1 and len(taken) >= 10  # a take a block, each at least the sniffed head
    assert pools[0].made <= scan.IN_FLIGHT + 3 < len(taken)  # the rest were buffers given back


@pytest.mark.slow
def test_example_in_tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    assert with_block_bytes(monkeypatch, 61, EXAMPLE) == document_of(EXAMPLE)


def test_a_line_longer_than_many_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A block with no line end grows until the line fits: nothing is split or dropped."""
    head = "2026-09-15 20:19:38,123 - omlx.server - INFO - [-] - Engine started\n"
    long = "2026-09-15 20:19:39,000 - omlx.scheduler - WARNING - [-] - " + "x" * 5000 + "\n"
    tail = "2026-09-15 20:19:40,000 - omlx.server - INFO - [-] - Chat completion: 12 tokens in 0.50s\n"
    path = WORKDIR / "long-line.log"
    path.write_text(head + long + tail)
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", 128)
    stream = stream_of(path)
    assert stream.accounting.lines == 3 == stream.accounting.accounted
    assert [ev.kind for ev in stream.events] == ["engine_start", "warning", "request_complete"]
    assert stream.events[1].message.endswith("x" * 100)


REAL_LINES = [line for path in sorted(REAL.glob("*.log")) for line in path.read_text(encoding="utf-8").splitlines()]
REQUEST = "2026-09-15 20:{:02d}:{:02d},{:03d} - omlx.server - INFO - [-] - Chat completion: {} tokens in 1.20s"
request_line = st.builds(
    REQUEST.format,
    st.integers(0, 59),
    st.integers(0, 59),
    st.integers(0, 999),
    st.integers(0, 99_999),
)


@pytest.mark.slow
@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(REAL_LINES), request_line), max_size=80), st.integers(16, 600))
def test_any_block_size_agrees(lines: list[str], size: int) -> None:
    path = WORKDIR / "mixed.log"
    path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    try:
        whole = document_of(path)
    except Exception as exc:  # an empty file is an input error either way
        whole = {"error": type(exc).__name__}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(byte_blocks, "BLOCK_BYTES", size)
        try:
            cut = document_of(path)
        except Exception as exc:
            cut = {"error": type(exc).__name__}
    assert cut == whole


@pytest.mark.slow
@pytest.mark.parametrize("template", CATALOG, ids=lambda t: t.pattern[:40])
@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_contains_the_literal(template: Template, data: st.DataObject) -> None:
    """The classifier skips a template whose literal is absent; that is only exact if this holds."""
    text = data.draw(st.from_regex(template.regex))
    assert template.regex.search(text)
    assert template.literal in text
    assert template in candidates(text)  # the first-character index never hides a template that matches


def test_a_pattern_with_alternatives_at_the_top_fixes_no_first_character() -> None:
    assert [_first_character(p) for p in ("^Engine", "^A|B", "^(?:A|B)c", r"^A\|b", "^A[|]b")] == [
        "E",
        None,
        None,
        "A",
        "A",
    ]


# (line, seconds after midnight) of timed lines: every third a record the grammar read, the rest
# finished-request rows, which arrive cut into blocks.
stamped_lines = st.lists(st.tuples(st.integers(1, 400), st.integers(0, 7_200)), max_size=120, unique_by=lambda x: x[0])
DAY = datetime(2026, 9, 15)


@settings(deadline=None, max_examples=80)
@given(stamped_lines, st.lists(st.integers(1, 50), max_size=8))
def test_clock_jumps_match_one_pass_over_all_stamps(stamps: list[tuple[int, int]], cuts: list[int]) -> None:
    """Jumps over request rows filed a block at a time equal those of one pass over all stamps."""
    stamps.sort()
    moments = [(line, DAY + timedelta(seconds=s)) for line, s in stamps]
    records = [(line, moment.isoformat()) for line, moment in moments[::3]]
    rows = [(line, ms_of(moment), 0) for i, (line, moment) in enumerate(moments) if i % 3]
    edges = list(itertools.accumulate(cuts, initial=0))
    pieces = [rows[a:b] for a, b in itertools.pairwise([*(e for e in edges if e < len(rows)), len(rows)])]
    # Each block's rows count their lines from the block's start, as the scan files them.
    blocks = [
        (
            piece[0][0] - 1,
            from_rows([(line - piece[0][0] + 1, *rest) for line, *rest in piece], BLOCK_REQUESTS),
        )
        for piece in pieces
        if piece
    ]
    assert sum(f.height for _, f in blocks) == len(rows)
    expected = [
        (line, (before - now).total_seconds())
        for (_, before), (line, now) in itertools.pairwise(moments)
        if (before - now).total_seconds() > CLOCK_JUMP_S
    ]
    for scanner in SCANNERS:
        numbering = scan._Numbering(0, REQUEST_SCHEMA)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(dense, "_native", lambda: scanner)  # noqa: B023  # used within this pass
            for base, table in blocks:
                numbering.add(base, table)
        requests = numbering.table()
        found = _clock_jumps(scan.SourceScan(Source("server.log", None), 0, requests=requests), records)
        assert [(jump["line"], jump["back_s"]) for jump in found] == expected


@settings(deadline=None, max_examples=30)
@given(st.lists(st.lists(st.tuples(st.integers(1, 50), st.integers(0, 10**6)), max_size=8), max_size=8))
def test_dense_rows_are_numbered_as_lines_of_the_source_in_python_in_numpy_and_natively(
    blocks: list[list[tuple[int, int]]],
) -> None:
    """Each block's rows, filed as it comes, are its lines after the lines of the blocks before it;
    past ``BIG`` rows a block is shifted in numpy, and by the native scanner where it is built,
    with the same numbers."""
    tables = []
    for big, scanner in [(10**9, None), (-1, None)] + [(10**9, s) for s in SCANNERS if s is not None]:
        numbering, base = scan._Numbering(3, REQUEST_SCHEMA), 0
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(scan, "BIG", big)
            patch.setattr(dense, "_native", lambda: scanner)  # noqa: B023  # used within this pass
            for block in blocks:
                rows = from_rows([(n, 1000 * n, tokens) for n, tokens in block], BLOCK_REQUESTS)
                numbered = numbering.add(base, rows)
                assert numbered.rows("line", "tokens") == [(base + n, tokens) for n, tokens in block]
                base += 60
        tables.append(numbering.table().rows())
    expected = [(3, 60 * b + n, 1000 * n, tokens) for b, block in enumerate(blocks) for n, tokens in block]
    assert all(table == expected for table in tables) and len(tables) == len(SCANNERS) + 1


def test_native_numbering_refuses_a_line_past_the_column_type() -> None:
    """A line number past 2**32 - 1 is an OverflowError, as the Python path's array gives."""
    scanner = SCANNERS[-1]
    if scanner is None:
        pytest.skip(f"the native scanner is not built here ({native.scanner_name()})")
    from array import array

    assert dense.shifted(array("I", [1, 2**32 - 2]), 1, vectorised=False).tolist() == [2, 2**32 - 1]
    with pytest.raises(OverflowError):
        dense.shifted(array("I", [1, 2**32 - 2]), 2, vectorised=False)
    with pytest.raises(OverflowError):
        array("I", [2**32 - 2 + 2])
    for by in (-1, 2**32, 2**64 - 1):  # no shift wraps around
        with pytest.raises(OverflowError):
            scanner.shifted(array("I", [5, 7]), by)
    with pytest.raises(ValueError):
        scanner.shifted(b"\x01\x00\x00\x00\x02", 1)


def test_blocks_cut_inside_a_character_stay_on_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Valid UTF-8 whose blocks end inside a multi-byte character is never re-read as Windows-1252."""
    line = "2026-09-15 20:00:{:02d},000 - omlx.engine - DEBUG - [-] - prompt: 你好世界，这是一个测试 {}\n"
    path = WORKDIR / "cjk.log"
    path.write_text("".join(line.format(i % 60, i) for i in range(20_000)), encoding="utf-8")
    rereads: list[int] = []
    for module in (decoding, native):  # the plan's normalise and the native scanner's own mending
        monkeypatch.setattr(module, "mend_lines", lambda data: rereads.append(len(data)) or data)
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", 65_536)  # blocks this large are checked whole by polars
    stream = stream_of(path)
    assert rereads == []
    assert stream.accounting.lines == 20_000 == stream.accounting.accounted


ERROR_LINE = "2026-09-15 20:{:02d}:00,000 - omlx.scheduler - ERROR - [-] - Engine loop error: step {}\n"


def test_a_block_that_begins_like_a_zlib_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """polars takes "x^" at the start of its input for compressed data; a block may start so."""
    before = "".join(ERROR_LINE.format(i, i) for i in range(8))
    path = WORKDIR / "x-caret.log"
    path.write_text(before + "x^2 + y^2\n" + "".join(ERROR_LINE.format(i, i) for i in range(8, 14)))
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", len(before))  # the first block ends just before "x^2"
    stream = stream_of(path)
    assert stream.sources[0].problem is None
    assert stream.accounting.lines == 15 == stream.accounting.accounted
    assert stream.kind_counts["error"] == 14


def test_digits_only_other_engines_know_do_not_move_block_edges(monkeypatch: pytest.MonkeyPatch) -> None:
    """A "timestamp" in digits new to Unicode 16 is untimed for both of the scan's timestamp tests."""
    head = ERROR_LINE.format(0, 1) + "2026-09-15 23:00:00,000 - omlx.engine - INFO - [-] - routine\n"
    path = WORKDIR / "unicode-digits.log"
    path.write_text(
        head
        + "\U00010d40" * 4
        + "-09-15 20:00:00 weird\n"
        + "2026-09-15 20:01:00,000 - omlx.engine - INFO - [-] - routine\n"
        + ERROR_LINE.format(2, 2),
        encoding="utf-8",
    )
    assert with_block_bytes(monkeypatch, len(head), path) == document_of(path)  # an edge before the odd line


def test_embedding_requests_count_but_their_tokens_do_not() -> None:
    """Embedding lines are left to the grammar; the request index counts them, without tokens."""
    from omlx_logscan.analysis.requests import RequestIndex

    path = info_log(
        "embedding.log",
        "[-] - Engine started",
        "[-] - Embedding: 3 texts, 768 dims, 120 tokens in 0.10s",
        "[-] - Chat completion: model=m, 5 tokens in 0.10s",
        "[-] - Chat completion: model=m, 7 tokens in 0.10s",
    )
    stream = stream_of(path)
    assert stream.kind_counts["request_complete"] == 3
    index = RequestIndex(stream)
    assert index.totals([datetime(2026, 9, 15, 20), datetime(2026, 9, 15, 20, 1)]) == ([3], [12])


def _requests_seen(stream: EventStream) -> list[tuple[str, int]]:
    """Every finished chat completion a stream holds, dense row or event, as (time, tokens)."""
    rows = [
        (moment_of(time).isoformat(timespec="milliseconds"), tokens)
        for time, tokens in stream.requests.rows("time", "tokens")
    ]
    events = [
        (ev.time or "", ev.fields["tokens"])
        for ev in stream.events
        if ev.kind == "request_complete" and ev.fields.get("type") == "chat"
    ]
    return sorted(rows + events)


_NEAR_STAMPS = st.sampled_from(
    [
        "2026-09-15 20:00:01,250",
        "2026-09-15 20:00:60,250",  # a leap second: the grammar gives no time
        "2026-02-30 20:00:01,250",
        "1969-12-31 23:59:59,999",
        "2200-01-01 00:00:00,000",
        "2026-09-15T20:00:01,250",
        "2026-09-15 20:00:01.250",
        "2026-09-15 20:00:01,2500",
        "2026-09-15 20:00:01",
    ]
)
_NEAR_HEADS = st.sampled_from(
    [
        " - omlx.server - INFO - [-] - ",
        " - omlx.server - INFO - ",
        " - omlx.server - INFO - [7] - ",
        " - omlx.other - INFO - [-] - ",
        " - omlx.server - WARNING - [-] - ",
        " - omlx.server - INFO -  ",
    ]
)
_NEAR_MODELS = st.sampled_from(
    ["", "model=m, ", "model=Qwen3 8B-4bit, ", "model=, ", "model=a,b, ", "model=x,, ", "model=\x1b[0m, "]
)
_NEAR_TOKENS = st.sampled_from(["0", "17", "0042", "+5", "4294967296", "", "1 2", "٣"])
_NEAR_TAILS = st.sampled_from(
    [
        " tokens in 1.60s (10.0 tok/s), prompt: 5",
        " tokens in .5s",
        " tokens in s",
        " tokens in 1.6",
        " tokens",
        " tokens in 1.0s (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)",
        " tokens in 1.0s [metal::malloc] Resource limit (3) exceeded",
    ]
)
# What follows a request line: a record, or lines the grammar joins to it as a continuation.
_NEAR_NEXT = st.sampled_from(
    [
        "2026-09-15 20:00:02,000 - omlx.engine - INFO - [-] - routine",
        "2026-09-15 20:00:02(00000008:kIOGPUCommandBufferCallbackErrorTimeout)",
        "2026-09-15 20:00:02,1234567 - omlx.engine - INFO - [-] - routine",
        "2026-09-15 20:00:02",
        "    at a traceback frame",
    ]
)


@pytest.mark.slow
@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(_NEAR_STAMPS, _NEAR_HEADS, _NEAR_MODELS, _NEAR_TOKENS, _NEAR_TAILS, _NEAR_NEXT),
        min_size=1,
        max_size=6,
    )
)
def test_the_dense_request_test_agrees_with_the_grammar(parts: list[tuple[str, str, str, str, str, str]]) -> None:
    """Lines near oMLX's request shape: where the scan files a dense row, the grammar reads the
    same request, and a line it refuses reaches the grammar, so the two paths give the same."""
    around = "2026-09-15 19:59:59,000 - omlx.engine - INFO - [-] - routine\n"
    body = "".join(
        f"{around}{stamp}{head}Chat completion: {model}{tokens}{tail}\n{following}\n"
        for stamp, head, model, tokens, tail, following in parts
    )
    path = WORKDIR / "near-requests.log"
    path.write_text(body + around, encoding="utf-8")
    read_as_by_the_grammar(path)


def read_as_by_the_grammar(path: Path) -> EventStream:
    """The log's stream from the bulk scan, checked to hold the same requests and events as the
    grammar reading every line finds."""
    dense = stream_of(path)
    grammar = read_events(sources.resolve([str(path)]), keep_all=True)
    assert grammar.requests.height == 0  # with every line kept, the grammar reads them all
    assert _requests_seen(dense) == _requests_seen(grammar)
    assert {k: n for k, n in dense.kind_counts.items() if k != "record"} == {
        k: n for k, n in grammar.kind_counts.items() if k != "record"
    }
    return dense


_REQUEST_LINE = "2026-09-15 20:00:01,250 - omlx.server - INFO - [-] - Chat completion: {}5 tokens in 1.0s{}"
_ROUTINE_LINE = "2026-09-15 20:00:02,000 - omlx.engine - INFO - [-] - routine"


@pytest.mark.parametrize(
    ("request_line", "following"),
    [
        (_REQUEST_LINE.format("", " (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"), _ROUTINE_LINE),
        (_REQUEST_LINE.format("", " [metal::malloc] Resource limit (3) exceeded"), _ROUTINE_LINE),
        (_REQUEST_LINE.format("model=\x1b[0m, ", ""), _ROUTINE_LINE),
        (_REQUEST_LINE.format("model=" + "m" * 70_000 + ", ", ""), _ROUTINE_LINE),
        (_REQUEST_LINE.format("", ""), "2026-09-15 20:00:02(00000008:kIOGPUCommandBufferCallbackErrorTimeout)"),
        (_REQUEST_LINE.format("", ""), "2026-09-15 20:00:02,1234567 - omlx.engine - INFO - [-] - routine"),
        (_REQUEST_LINE.format("", ""), "2026-09-15 20:00:02"),
    ],
    ids=[
        "gpu-code",
        "metal-malloc",
        "colour-code",
        "runaway-line",
        "gpu-next",
        "long-fraction-next",
        "bare-stamp-next",
    ],
)
def test_request_lines_the_grammar_reads_otherwise_are_left_to_it(request_line: str, following: str) -> None:
    """A GPU error in the line or joined to it, colour codes, a cut line: the grammar decides."""
    path = WORKDIR / "odd-request.log"
    path.write_text(f"{_ROUTINE_LINE}\n{request_line}\n{following}\n{_ROUTINE_LINE}\n", encoding="utf-8")
    assert read_as_by_the_grammar(path).requests.height == 0  # none of these is filed as a dense row


def test_requests_in_oMLX_shape_take_the_dense_path() -> None:
    """The shapes real logs show, with and without the request id field and ``model=``."""
    path = info_log(
        "shapes.log",
        "[-] - Engine started",
        "[-] - Chat completion: model=m, 5 tokens in 0.10s (50.0 tok/s), prompt: 3",
        "Chat completion: 7 tokens in 0.10s",
        "[-] - Chat completion: 11 tokens in 1.00s",
        "[-] - Engine stopped",
    )
    stream = stream_of(path)
    assert list(stream.requests["tokens"]) == [5, 7, 11]
    assert stream.kind_counts["request_complete"] == 3


def _fake_blocks(count: int, fail_read_at: int | None = None, bug: bool = False) -> Iterator[byte_blocks.ByteBlock]:
    for seq in range(count):
        if seq == fail_read_at:
            if bug:
                raise ZeroDivisionError("a bug in the reader")
            raise InputError("server.log.gz: compressed data is truncated or corrupt")
        yield byte_blocks.ByteBlock(str(seq).encode(), size=seq)


def _fake_run(
    fail_at: int | None = None, bug_at: int | None = None
) -> Callable[[byte_blocks.ByteBlock], scan._BlockOutput]:
    """A block's "plan": sleeps a random while, so that later blocks often finish first."""
    rng = random.Random(7)
    delays = [rng.random() / 500 for _ in range(200)]

    def run(block: byte_blocks.ByteBlock) -> scan._BlockOutput:
        seq = block.size
        time.sleep(delays[seq % len(delays)])
        if seq == fail_at:
            raise InputError("server.log: unreadable text")
        if seq == bug_at:
            raise ZeroDivisionError("a bug")
        return scan._BlockOutput(seq, 1, Dense.empty(BLOCK_REQUESTS), [], set(), Unkept([], None, None))

    return run


@settings(deadline=None, max_examples=25)
@given(
    st.integers(0, 60), st.one_of(st.none(), st.integers(0, 60)), st.sampled_from(["run", "read", "bug", "read-bug"])
)
def test_blocks_come_back_in_order_up_to_the_first_failure(count: int, failing: int | None, how: str) -> None:
    """Workers finish blocks in any order; the caller gets them in file order, and a block that
    fails (unreadable text, a failed read, a bug) ends the output after all blocks before it."""
    run = _fake_run(fail_at=failing if how == "run" else None, bug_at=failing if how == "bug" else None)
    blocks = _fake_blocks(count, fail_read_at=failing if how.startswith("read") else None, bug=how == "read-bug")
    got: list[int] = []
    expected_error = {"run": InputError, "read": InputError, "bug": ZeroDivisionError, "read-bug": ZeroDivisionError}[
        how
    ]
    try:
        for output in scan._in_order(run, blocks):
            got.append(output.size)
        raised: type[BaseException] | None = None
    except (InputError, ZeroDivisionError) as exc:
        raised = type(exc)
    stop = count if failing is None or failing >= count else failing
    assert got == list(range(stop))
    assert raised is (expected_error if stop < count else None)


@pytest.mark.parametrize("stop_early", [False, True])
def test_the_short_switch_interval_lasts_as_long_as_the_workers(stop_early: bool) -> None:
    before = sys.getswitchinterval()
    outputs = scan._in_order(_fake_run(), _fake_blocks(20), switch_s=scan.SWITCH_S)
    seen = []
    for output in outputs:
        seen.append(sys.getswitchinterval())
        if stop_early and output.size == 2:
            outputs.close()
            break
    assert seen and all(abs(interval - scan.SWITCH_S) < 1e-9 for interval in seen)
    assert sys.getswitchinterval() == before != scan.SWITCH_S
    list(scan._in_order(_fake_run(), _fake_blocks(3)))  # no interval asked for: it stays as it is
    assert sys.getswitchinterval() == before


def test_a_consumer_that_stops_early_leaves_no_worker_running() -> None:
    outputs = scan._in_order(_fake_run(), _fake_blocks(500))
    assert [next(outputs).size for _ in range(3)] == [0, 1, 2]
    outputs.close()
    assert not [t for t in threading.enumerate() if t.name == "logscan-scan"]


# -- the records the scan only counts, at the edges of what it keeps --------------------------------


def _debug(second: int, message: str = "step") -> str:
    return f"2026-09-15 20:00:{second:02d},000 - omlx.scheduler - DEBUG - [-] - {message}"


@pytest.mark.parametrize("size", [64, 300, 1 << 20])
def test_unkept_records_are_reported_where_they_touch_kept_lines(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last unkept record before each kept line and the source's first and last records are
    reported, whatever the block size (block edges may add a few more, never fewer)."""
    warning = "2026-09-15 20:00:05,000 - omlx.server - WARNING - [-] - something"
    lines = [_debug(0), _debug(1), _debug(2), _debug(3), _debug(4), warning, _debug(6), _debug(7), _debug(8)]
    path = WORKDIR / "unkept.log"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", size)
    found = scan.scan_source(Source(path.name, path), 0, on_kept=lambda _: None).records.rows("line", "time")
    assert 5 in {line for line, _ in found}  # the last DEBUG line before the warning (line 6)
    assert all(time == f"2026-09-15T20:00:{line - 1:02d}.000" for line, time in found)


def test_unkept_lines_of_other_programs_are_no_records() -> None:
    assert stamp_of_line(_debug(3)) == "2026-09-15T20:00:03.000"
    assert stamp_of_line("2026-09-15 20:00:03,000 - uvicorn - DEBUG - x") is None
    assert stamp_of_line("2026-13-45 20:00:03,000 - omlx.server - DEBUG - x") is None
    assert stamp_of_line("2026-09-15 23:59:60,000 - omlx.server - DEBUG - x") is None


# -- reading: each worker reads its own block; a file cut short is a read error ---------------------


def _shared_files(monkeypatch: pytest.MonkeyPatch) -> list[byte_blocks.SharedFile]:
    """Every file the blocks of a plain file open from now on, to see that each closes."""
    opened: list[byte_blocks.SharedFile] = []
    real = byte_blocks.SharedFile

    def shared(path: Path) -> byte_blocks.SharedFile:
        opened.append(real(path))
        return opened[-1]

    monkeypatch.setattr(byte_blocks, "SharedFile", shared)
    return opened


@pytest.mark.parametrize("reuse", [False, True])
@pytest.mark.parametrize("probe", [64 * 1024, 40])
def test_a_block_is_read_only_when_it_is_loaded(monkeypatch: pytest.MonkeyPatch, reuse: bool, probe: int) -> None:
    """The reader finds each block's end and its edge lines; the bytes are read by ``load`` (into
    the worker's reused buffer with ``reuse``), and the file stays open until the reader is done
    and every block is loaded. A probe shorter than a line makes the edge search look further back."""
    path = info_log("spans.log", *(f"[-] - message {i}" for i in range(40)))
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", 300)
    monkeypatch.setattr(byte_blocks, "PROBE_BYTES", probe)
    opened = _shared_files(monkeypatch)
    read = list(byte_blocks.file_blocks(path))
    assert len(read) > 5 and all(b.data == b"" for b in read)
    data = path.read_bytes()
    lines = data.split(b"\n")[:-1]
    offset = 0
    for block in read:
        assert not opened[0].closed  # a block not yet loaded holds the file
        block.load(reuse=reuse)
        loaded = bytes(block.data)
        assert isinstance(block.data, memoryview) == (reuse and byte_blocks.REUSES_BUFFERS)
        assert loaded == data[offset : offset + block.size] and loaded.endswith(b"\n")
        block_lines = loaded.split(b"\n")[:-1]
        assert (block.first, block.last) == (block_lines[0], block_lines[-1]) and set(block_lines) <= set(lines)
        offset += block.size
    assert offset == len(data)
    assert opened[0].closed


def test_a_line_longer_than_a_block_makes_a_larger_block(monkeypatch: pytest.MonkeyPatch) -> None:
    path = info_log("long.log", "[-] - short", "[-] - " + "x" * 5000, "[-] - short again")
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", 256)
    monkeypatch.setattr(byte_blocks, "PROBE_BYTES", 64)  # the end is looked for over many probes
    monkeypatch.setattr(byte_blocks, "EDGE_BYTES", 100)
    read = list(byte_blocks.file_blocks(path))
    heads = [(b.first, b.last) for b in read]
    for block in read:
        block.load()
    assert b"".join(b.data for b in read) == path.read_bytes()
    long_block = next(b for b in read if len(b.data) > 5000)
    assert long_block.data.count(b"\n") in (1, 2)
    assert all(len(first) <= 100 and len(last) <= 100 for first, last in heads)  # edge lines: their heads


@pytest.mark.parametrize("size", [64, 300, 1 << 20])
def test_the_file_is_closed_after_a_scan(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    path = info_log("scanned.log", *(f"[-] - Chat completion: {i} tokens in 0.10s" for i in range(60)))
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", size)
    opened = _shared_files(monkeypatch)
    found = scan.scan_source(Source(path.name, path), 0, on_kept=lambda _: None)
    assert found.lines == 60 and found.problem is None
    assert len(opened) == 1 and opened[0].closed


def test_the_file_is_closed_when_the_scan_stops_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """A consumer that fails after the first block: the blocks read ahead are run or released."""
    path = info_log("stopped.log", *(f"[-] - WARNING line {i}" for i in range(200)))
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", 128)
    opened = _shared_files(monkeypatch)

    def stop(_: object) -> None:
        raise ZeroDivisionError("the consumer stops")

    with pytest.raises(ZeroDivisionError):
        scan.scan_source(Source(path.name, path), 0, on_kept=stop)
    assert not [t for t in threading.enumerate() if t.name == "logscan-scan"]
    assert len(opened) == 1 and opened[0].closed


def test_a_block_of_a_file_cut_short_before_it_is_read_is_a_read_error(monkeypatch: pytest.MonkeyPatch) -> None:
    path = info_log("truncated.log", *(f"[-] - message {i}" for i in range(40)))
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", 1000)
    opened = _shared_files(monkeypatch)
    read = byte_blocks.file_blocks(path)
    block = next(read)
    with path.open("r+b") as handle:
        handle.truncate(100)
    with pytest.raises(OSError, match="cut short"):
        block.load()
    read.close()
    assert opened[0].closed


def test_a_file_truncated_during_a_scan_ends_with_the_lines_read_and_one_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As ``copytruncate`` rotation does, the file is emptied in place after the first block is
    handed on: what was read before comes out, in order, then a one-line read error."""
    count = 3000
    path = WORKDIR / "rotated.log"
    path.write_text("".join(WARN.format(i % 60, i) for i in range(count)), encoding="utf-8")
    monkeypatch.setattr(byte_blocks, "BLOCK_BYTES", 4096)  # about 50 blocks: more than are ever in flight
    kept: list[str] = []

    def truncate_after_the_first(lines: list[KeptLine]) -> None:
        if not kept:
            os.truncate(path, 0)
        kept.extend(line.text for line in lines)

    found = scan.scan_source(Source(path.name, path), 0, on_kept=truncate_after_the_first)
    assert found.problem is not None and "cut short" in found.problem and "\n" not in found.problem
    assert 0 < found.lines < count
    assert kept == [WARN.format(i % 60, i).rstrip("\n") for i in range(found.lines)]


_TRUNCATING_RUN = """
import os, sys
from omlx_logscan.inputs import byte_blocks
path = sys.argv[1]
byte_blocks.BLOCK_BYTES = 4096
real_load = byte_blocks.ByteBlock.load
def load(block, **options):  # emptied in place, as copytruncate does, once the first block is read
    real_load(block, **options)
    os.truncate(path, 0)
byte_blocks.ByteBlock.load = load
from omlx_logscan.cli import main
sys.argv = ["logscan", "timeline", "-f", "json", path]
main()
"""


@pytest.mark.slow
def test_a_file_truncated_while_logscan_reads_it_is_a_warning_not_a_crash() -> None:
    path = WORKDIR / "copytruncated.log"
    path.write_text("".join(WARN.format(i % 60, i) for i in range(3000)), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _TRUNCATING_RUN, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(scan.__file__).parents[2])},
    )
    assert done.returncode == 0, done.stderr
    problems = [line for line in done.stderr.splitlines() if "cut short" in line]
    assert len(problems) == 1 and "Traceback" not in done.stderr
    files = json.loads(done.stdout)["header"]["files"]
    assert "cut short" in files[0]["problem"] and 0 < files[0]["lines"] < 3000


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.binary(max_size=120).map(lambda b: b.replace(b"\n", b"")), min_size=1, max_size=40),
    st.booleans(),
    st.integers(1, 400),
    st.integers(1, 80),
    st.integers(1, 60),
)
def test_blocks_are_the_file_cut_at_line_ends_whatever_the_sizes(
    lines: list[bytes], last_newline: bool, block: int, probe: int, edge: int
) -> None:
    """Blocks, probes and edge heads of any sizes: the loads add up to the file, every block but
    the last ends a line, and the edge lines are the heads of each block's first and last lines."""
    data = b"\n".join(lines) + (b"\n" if last_newline else b"")
    if not data:
        return
    path = WORKDIR / "cut.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (("BLOCK_BYTES", block), ("PROBE_BYTES", probe), ("EDGE_BYTES", edge)):
            patch.setattr(byte_blocks, name, value)
        read = list(byte_blocks.file_blocks(path))
        heads = [(b.first, b.last) for b in read]
        for b in read:
            b.load()
    assert b"".join(b.data for b in read) == data
    assert all(b.data.endswith(b"\n") for b in read[:-1])
    for b, (first, last) in zip(read, heads, strict=True):
        body = b.data[:-1] if b.data.endswith(b"\n") else b.data
        assert first == body.split(b"\n")[0][:edge] and last == body.split(b"\n")[-1][:edge]
