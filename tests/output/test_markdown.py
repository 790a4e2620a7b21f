"""Markdown that survives any log text and fits a GitHub comment, checked by rendering it with
markdown-it (CommonMark with GFM tables, the grammar GitHub follows)."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt
from typer.testing import CliRunner

from conftest import EXAMPLE
from fault_logs import _PACKAGES, TIMEOUT, fault
from omlx_logscan.cli.app import app
from omlx_logscan.output.failures import EXAMPLE_LABEL
from omlx_logscan.output.markup import CODE_WIDTH, code_span, fit_code, md_cell
from omlx_logscan.output.why import EVIDENCE_LABEL
from synthetic import STILL_DEAD, write_log

runner = CliRunner()
GFM = MarkdownIt("commonmark").enable("table")
CALL_TRACEBACK = [
    "Traceback (most recent call last):",
    f'  File "{_PACKAGES}/scheduler.py", line 120, in __call__',
    "    _sync_and_clear_cache(self._stream)",
    f'  File "{_PACKAGES}/utils/metal_sync.py", line 62, in _sync_and_clear_cache',
    "    mx.synchronize()",
    f"RuntimeError: {TIMEOUT}",
    "",
]


def run(command: str, *args: str) -> str:
    result = runner.invoke(app, [command, *args, "-q"])
    assert result.exit_code == 0, result.output
    return result.stdout


def html(text: str) -> str:
    return GFM.render(text)


def code_blocks(text: str) -> list[tuple[str, list[str]]]:
    """Each fenced block's info string and lines."""
    return [
        (info, body.splitlines())
        for info, body in re.findall(r"^(?:`{3,})(\w*)\n(.*?)^`{3,}$", text, re.MULTILINE | re.DOTALL)
    ]


def test_labels_are_code_so_dunder_names_stay_as_logged(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", fault(traceback=CALL_TRACEBACK))
    text = run("timeline", str(log), "-f", "markdown")
    assert "utils.metal_sync._sync_and_clear_cache from scheduler.__call__" in text
    rendered = html(text)
    assert "<strong>call</strong>" not in rendered and "<em>" not in rendered.split("<pre>")[0]
    label = "utils.metal_sync._sync_and_clear_cache from scheduler.__call__ = a cache-clear drain"
    assert f"<code>{label}</code>" in rendered
    assert "scheduler.__call__ = a cache-clear drain" in rendered.split("<h3>Summary</h3>")[1]  # prose, escaped
    report = html(run("report", str(log)))
    assert "<strong>call</strong>" not in report and "<code>utils.metal_sync._sync_and_clear_cache from" in report


def test_a_file_name_with_backticks_and_pipes_stays_one_code_span(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a`b|c.log", STILL_DEAD)
    rendered = html(run("timeline", str(log), "-f", "markdown"))
    assert "<li><strong>Files:</strong> <code>a`b|c.log</code></li>" in rendered
    report = html(run("report", str(log), "--no-redact"))
    assert "<td><code>a`b|c.log</code></td>" in report  # the table cell (the file's base name), pipe and all
    assert "<code>a`b|c.log</code>, line 3" in report


def test_no_stray_escapes_outside_tables() -> None:
    for text in (run("timeline", str(EXAMPLE), "-f", "markdown"), run("report", str(EXAMPLE))):
        outside = [line for line in text.splitlines() if "\\|" in line and not line.startswith("|")]
        assert outside == []
        assert "\\|" not in html(text)  # inside tables the escape is consumed


def _tool_lines(text: str) -> list[str]:
    """The lines the tool wrote into code blocks: not charts, not the excerpt of the log, not quoted evidence."""
    excerpt = text.split("### First fault as logged")[-1] if "### First fault as logged" in text else ""
    quoted = set(excerpt.splitlines())
    return [
        line
        for info, lines in code_blocks(text)
        if info != "mermaid"
        for line in lines
        if line not in quoted and not line.startswith((EVIDENCE_LABEL, EXAMPLE_LABEL))
    ]


def test_the_tools_own_code_lines_fit_100_characters() -> None:
    for text in (run("timeline", str(EXAMPLE), "-f", "markdown"), run("report", str(EXAMPLE))):
        lines = _tool_lines(text)
        assert lines and max(map(len, lines)) <= CODE_WIDTH, max(lines, key=len)


def test_fit_code_wraps_under_the_lines_own_indent() -> None:
    long = "    trigger   " + " ".join(["word"] * 40)
    wrapped = fit_code([long, "short"])
    assert wrapped[-1] == "short" and all(len(line) <= CODE_WIDTH for line in wrapped)
    assert all(line.startswith("      ") for line in wrapped[1:-1])
    assert " ".join(" ".join(wrapped[:-1]).split()) == " ".join(long.split())  # no word lost
    quoted = EVIDENCE_LABEL + "x" * 300
    assert fit_code([quoted], quoting=EVIDENCE_LABEL) == [quoted]


def test_code_spans_outlast_any_backticks() -> None:
    for text in ("plain", "one ` tick", "two `` ticks", "`edge", "edge`", "```"):
        rendered = GFM.renderInline(code_span(text))
        assert rendered == f"<code>{text.replace('`', '`')}</code>", (text, code_span(text))
    assert GFM.render(f"| a |\n|---|\n| {md_cell(code_span('x|y'))} |\n").count("<code>x|y</code>") == 1
