"""A prefix every line carries goes, and every line stays a line: even a last, unended line that
is nothing but the prefix (a paste cut after an indent)."""

from __future__ import annotations

import pytest

from omlx_logscan.inputs.prefixes import line_shape

INDENTED = b"    a(\n    b(\n    c(\n"


@pytest.mark.parametrize("tail", [b" ", b"    ", b"  x", b"    d("])
def test_the_last_unended_line_is_kept_when_the_prefix_is_all_of_it(tail: bytes) -> None:
    shape = line_shape(INDENTED)
    assert shape is not None and shape.name == "indent"
    out = b"".join(shape.lines([INDENTED + tail]))
    assert out.count(b"\n") == 4
    assert out.splitlines()[:3] == [b"a(", b"b(", b"c("]


def test_a_list_marker_alone_on_the_last_line_is_a_line() -> None:
    data = b"- one\n- two\n- three\n-"
    shape = line_shape(data)
    assert shape is not None and shape.name == "list marker"
    assert b"".join(shape.lines([data[:5], data[5:]])) == b"one\ntwo\nthree\n\n"


def test_a_bare_cr_last_line_ends_once() -> None:
    data = b"a x\rb x\rc x\rd"
    shape = line_shape(data)
    assert shape is not None and shape.cr
    assert b"".join(shape.lines([data])) == b"a x\nb x\nc x\nd\n"
