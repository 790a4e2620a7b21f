"""Property tests: any bytes in, no exception out, the same answer twice, every line accounted for."""

from __future__ import annotations

import codecs
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import REAL, stream_of, timeline_json
from omlx_logscan.analysis.lifetimes import analyze
from omlx_logscan.inputs.decoding import SNIFF_BYTES

REAL_LINES = [line for path in sorted(REAL.glob("*.log")) for line in path.read_text(encoding="utf-8").splitlines()]
WORKDIR = Path(tempfile.mkdtemp(prefix="logscan-properties-"))
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def lines_in(data: bytes) -> int:
    if b"\r" in data[:SNIFF_BYTES] and b"\n" not in data[:SNIFF_BYTES]:  # bare CR line ends (inputs.prefixes)
        data = data.replace(b"\r", b"\n")
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def analyse_bytes(data: bytes, name: str = "server.log") -> tuple[dict[str, object], int]:
    """Full pipeline on ``data``: the timeline document and the accounted line count."""
    path = WORKDIR / name  # one fixed path, so the documents of two runs can be compared whole
    path.write_bytes(data)
    try:
        stream = stream_of(path)
    except Exception as exc:  # only the documented input error may escape
        from omlx_logscan.errors import InputError

        assert isinstance(exc, InputError)
        return {"error": str(exc).split(":", 1)[1]}, -1
    acc = stream.accounting
    assert acc.lines == acc.accounted
    document = timeline_json(analyze(stream))
    document["header"] = {k: v for k, v in document["header"].items() if k != "files"}  # type: ignore[attr-defined]
    return document, acc.lines


@pytest.mark.slow
@FUZZ
@given(st.binary(max_size=4000))
def test_arbitrary_bytes(data: bytes) -> None:
    first, lines = analyse_bytes(data)
    second, _ = analyse_bytes(data)
    assert first == second
    if lines >= 0 and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        assert lines == lines_in(data.removeprefix(codecs.BOM_UTF8))


real_line = st.sampled_from(REAL_LINES)
pasted = st.lists(real_line, max_size=60)


@pytest.mark.slow
@FUZZ
@given(pasted, st.randoms(use_true_random=False), st.integers(min_value=0, max_value=10_000))
def test_real_lines_shuffled_duplicated_truncated(lines: list[str], rnd: object, cut: int) -> None:
    import random

    assert isinstance(rnd, random.Random)
    lines = lines + rnd.sample(lines, k=min(len(lines), 5))
    rnd.shuffle(lines)
    data = "\n".join(lines).encode()
    data = data[: cut % (len(data) + 1)]
    document, counted = analyse_bytes(data)
    if counted >= 0:
        assert counted == lines_in(data)
    assert analyse_bytes(data)[0] == document


@pytest.mark.slow
@FUZZ  # the example: indented lines in UTF-16, once read without their indent's removal
@given(pasted, st.sampled_from(["crlf", "latin-1", "utf-16"]))
@example(['  File "/Users/mac/omlx/omlx/engine_core.py", line 175, in _engine_loop'] * 3, "utf-16")
def test_encodings_and_line_endings_give_the_same_events(lines: list[str], variant: str) -> None:
    text = "\n".join(lines) + "\n"
    plain, plain_lines = analyse_bytes(text.encode())
    if variant == "crlf":
        other = text.replace("\n", "\r\n").encode()
    elif variant == "latin-1":
        other = text.encode("latin-1", errors="replace")
    else:
        other = text.encode("utf-16")
    changed, changed_lines = analyse_bytes(other)
    assert changed_lines == plain_lines
    if variant != "latin-1":  # latin-1 cannot hold every character, so messages may differ there
        assert changed["faults"] == plain["faults"]
        assert changed["header"]["events"] == plain["header"]["events"]  # type: ignore[index]
