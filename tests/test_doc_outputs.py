"""The output blocks of docs/*.md are what the command shows: each block marked
``<!-- output of: logscan … -->`` is compared with a run of that command on the repository's example,
in UTC. An excerpt may leave things out: in JSON a key, a list's other elements, or a value written
``…``; in text, lines (``…`` marks where) or a line's end (``…`` ends it), every line shown being
the output's, in order. The README's
examples are run by tests/test_readme.py."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from omlx_logscan.cli.app import app

MARKED = re.compile(r"<!-- output of: (logscan [^>]*?) -->\n```(\w*)\n(.*?)```", re.S)
BLOCKS = [
    (path.name, command, language, body)
    for path in sorted((ROOT / "docs").glob("*.md"))
    for command, language, body in MARKED.findall(path.read_text(encoding="utf-8"))
]
ELIDED = "…"
runner = CliRunner()


def differences(shown: Any, real: Any, where: str = "$") -> list[str]:
    """How an excerpt of a JSON document differs from the document: empty when every key, element and
    value it shows is in ``real`` (a list's element matching any of its elements)."""
    if shown == ELIDED:
        return []
    if isinstance(shown, dict):
        if not isinstance(real, dict):
            return [f"{where}: not an object in the output"]
        missing = [f"{where}.{key}: not in the output" for key in shown if key not in real]
        return missing + [
            d for key in shown if key in real for d in differences(shown[key], real[key], f"{where}.{key}")
        ]
    if isinstance(shown, list):
        if not isinstance(real, list):
            return [f"{where}: not a list in the output"]
        found: list[str] = []
        for index, item in enumerate(shown):
            tries = [differences(item, element, f"{where}[{index}]") for element in real]
            found += min(tries, key=len) if tries else [f"{where}[{index}]: the output's list is empty"]
        return found
    return [] if shown == real else [f"{where}: the docs say {shown!r}, the output {real!r}"]


def _shows(shown: str, line: str) -> bool:
    """A text line of the docs is the output's line, or its beginning when it ends with ``…``."""
    shown = shown.rstrip()
    return line.startswith(shown.removesuffix(ELIDED)) if shown.endswith(ELIDED) else line == shown


def _run(command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TZ", "UTC")
    result = runner.invoke(app, shlex.split(command)[1:])
    assert result.exit_code in (0, 1), result.output
    return result.output  # what the terminal shows: stdout and stderr (-q leaves only what the docs show)


def test_the_marked_blocks_are_found() -> None:
    assert {name for name, *_ in BLOCKS} >= {"timeline.md", "check.md", "bounds.md", "events.md"}
    assert len(BLOCKS) >= 7


@pytest.mark.slow
@pytest.mark.parametrize(("name", "command", "language", "body"), BLOCKS, ids=[f"{b[0]}:{b[1]}" for b in BLOCKS])
def test_a_doc_output_block_is_what_its_command_shows(
    name: str, command: str, language: str, body: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = _run(command, monkeypatch)
    if language == "json" and "-f ndjson" in command:
        rows = [json.loads(line) for line in output.splitlines()]
        wrong = [d for line in body.splitlines() if line.strip() for d in differences([json.loads(line)], rows)]
    elif language == "json":
        wrong = differences(json.loads(body), json.loads(output))
    else:
        lines = iter(line.rstrip() for line in output.splitlines())
        wrong = [f"not in the output, in order: {shown!r}" for shown in body.splitlines()
                 if shown != ELIDED and not any(_shows(shown, line) for line in lines)]  # fmt: skip
    assert not wrong, f"{name}: {command}\n" + "\n".join(wrong)


def test_an_excerpt_that_is_not_the_output_is_found() -> None:
    """The comparison can fail: a changed value, a key the output lacks, an element no element matches."""
    real = {"a": 1, "b": [{"x": 1}, {"x": 2}], "c": "text"}
    assert differences({"a": 1, "b": [{"x": 2}], "c": ELIDED}, real) == []
    assert differences({"a": 2}, real) == ["$.a: the docs say 2, the output 1"]
    assert differences({"d": 1}, real) == ["$.d: not in the output"]
    assert differences({"b": [{"x": 3}]}, real) == ["$.b[0].x: the docs say 3, the output 1"]
