"""The report reads at the width of a GitHub comment (760 px): no code line wider than 88 characters,
log lines wrapped and never cut, what every fault shares said once, at most two charts, and, where
Chromium is installed, no code block or table that scrolls when the page is drawn 760 px wide."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from conftest import EXAMPLE, analysis_of, bench_module, sections_of, unwrapped
from omlx_logscan.cli.app import app
from omlx_logscan.output.markup import CODE_WIDTH
from omlx_logscan.output.report import build_report
from omlx_logscan.output.wrap import CONTINUED, cell_len, verbatim_lines
from synthetic import STILL_DEAD, absorbed_faults, busy, start, timeout, write_log

runner = CliRunner()
HOME = "/Users/someone-with-a-long-name/Library/Application Support/oMLX/models/mlx-community"


def report_of(*args: str) -> str:
    result = runner.invoke(app, ["report", "-q", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def code_lines(text: str) -> Iterator[tuple[str, str]]:
    """(section heading, line) of every line inside a fenced code block but the Mermaid charts: GitHub
    draws a chart as a picture and never shows its source."""
    heading, fence, chart = "", None, False
    for line in text.splitlines():
        if fence is None:
            heading = line if line.startswith("#") else heading
            opening = re.match(r"(`{3,})(\S*)", line)
            if opening:
                fence, chart = opening.group(1), opening.group(2) == "mermaid"
        elif line.rstrip() == fence:
            fence = None
        elif not chart:
            yield heading, line


def too_wide(text: str) -> list[tuple[str, int, str]]:
    return [(heading, len(line), line) for heading, line in code_lines(text) if len(line) > CODE_WIDTH]


def many_faults(folder: Path) -> Path:
    """Eight processes of six absorbed faults each, then a penalty box still open at the end; every
    fault's record names a long home folder, so the quoted lines run well past 88 characters."""
    lines = absorbed_faults(8, 6)
    lines = [f"{line} (model {HOME}/Qwen3-Coder)" if "Timeout" in line else line for line in lines]
    dead = [line.replace("2026-09-15", "2026-09-17") for line in STILL_DEAD]
    return write_log(folder / "many.log", [*lines, *dead])


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The benchmark's generator: 8 MiB over 90 days, faults spread over many days (many chart groups)."""
    path = tmp_path_factory.mktemp("big") / "server.log"
    bench_module("make_log").write_log(path, 8, 90, seed=1)
    return path


def test_every_code_line_of_the_example_report_fits() -> None:
    for text in (report_of(str(EXAMPLE)), report_of(str(EXAMPLE), "--no-redact")):
        assert too_wide(text) == []
        assert any(len(line) > CODE_WIDTH for line in unwrapped(text))  # the excerpt's log lines were wider


def test_every_code_line_of_a_report_of_many_faults_fits(tmp_path: Path) -> None:
    text = report_of(str(many_faults(tmp_path)))
    assert too_wide(text) == []
    assert "[user]" in text  # masked before it was wrapped


@pytest.mark.slow
def test_every_code_line_of_a_big_log_report_fits(big_log: Path) -> None:
    text = report_of(str(big_log))
    assert too_wide(text) == []
    assert text.count("```mermaid") <= 2


def test_a_mixed_os_escalation_fits(tmp_path: Path) -> None:
    analysis = analysis_of(many_faults(tmp_path))
    os_versions = {s.index: "26.5.1" if s.index % 2 else "27.0.1 (25A5316i)" for s in analysis.sessions}
    text = build_report(sections_of(analysis, os_versions))
    assert too_wide(text) == []
    escalation = text.split("### Escalation")[1].split("\n###")[0]
    assert "[macOS 26.5.1]" in escalation and "[macOS 27.0.1" in escalation


def test_log_lines_are_wrapped_whole_never_cut(tmp_path: Path) -> None:
    site = f"{HOME}/omlx-0.5.7/lib/python3.11/site-packages/omlx"
    traceback = [
        timeout(10),
        "Traceback (most recent call last):",
        f'  File "{site}/utils/metal_sync.py", line 62, in _sync_and_clear_cache',
        "    mx.synchronize()",
        "RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error "
        "(00000002:kIOGPUCommandBufferCallbackErrorTimeout) " + "0123456789abcdef" * 12,
    ]
    log = write_log(tmp_path / "server.log", [start(0), busy(5), *traceback, busy(12)])
    text = report_of(str(log), "--no-redact")
    assert too_wide(text) == []
    excerpt = unwrapped(text.split("### First fault as logged")[1].split("\n###")[0])
    for line in traceback[1:]:
        assert line in excerpt  # joined again, every character is there
    assert "> `↪` goes on with a log line wider than a code block (88 characters)." in text


def test_what_every_fault_shares_is_said_once() -> None:
    text = report_of(str(EXAMPLE))
    why = text.split("### Why it faulted")[1].split("\n###")[0]
    assert "\nall 6 faults:\n    stack     utils.metal_sync._sync_and_clear_cache" in why
    assert why.count("    trigger   ") == 1 and why.count("    load      ") == 1
    assert "load      not measurable: finished requests are INFO lines" in why  # not "load  load not…"
    assert re.findall(r"^2026-\S+ \S+  fault (\d) \(session \d+\)$", why, re.MULTILINE) == list("123456")


@pytest.mark.slow
def test_what_differs_stays_with_each_fault(big_log: Path) -> None:
    why = report_of(str(big_log)).split("### Why it faulted")[1].split("\n###")[0]
    shared = why.split("\n2026-")[0]
    assert "    stack     " in shared and "    trigger   periodic" in shared and "    load" not in shared
    # each fault's load is its own: one load line per fault, under each fault's line
    assert why.count("    load      ") == len(re.findall(r"^2026-\S+ \S+  fault \d+ ", why, re.MULTILINE)) > 2


# -- drawn by a browser ------------------------------------------------------------------------

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="needs Chromium to draw the report 760 px wide (apt-get install chromium; .ci/run installs it)",
)

# A GitHub comment 760 px wide: 16 px of padding each side; code at 85 % of 14 px in a monospace font
# with 16 px of padding; tables as blocks that scroll when wider than the comment.
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; width: 760px; }}
article {{ box-sizing: border-box; width: 760px; padding: 16px; font: 14px/1.5 "Helvetica", "Arial", sans-serif; }}
pre {{ font: 11.9px/1.45 ui-monospace, "SFMono-Regular", "Menlo", "Consolas", "Liberation Mono", monospace;
      padding: 16px; overflow: auto; }}
table {{ display: block; width: max-content; max-width: 100%; overflow: auto; border-collapse: collapse; }}
td, th {{ padding: 6px 13px; border: 1px solid #d0d7de; }}
</style></head><body><article>{body}</article><script>
const squeezed = (cell) => {{  // narrower than the date's day: the day itself is broken
  const style = getComputedStyle(cell);
  const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const day = document.createElement("span");  // measured outside the table, which it would widen
  day.style.font = style.font;
  day.style.whiteSpace = "nowrap";
  day.textContent = cell.textContent.trim().slice(0, 10);
  document.body.appendChild(day);
  const width = day.getBoundingClientRect().width;
  day.remove();
  return room < width;
}};
const found = {{
  pre: [...document.querySelectorAll("pre:not(:has(code.language-mermaid))")]
    .filter((pre) => pre.scrollWidth > pre.clientWidth).map((pre) => pre.textContent.slice(0, 80)),
  table: [...document.querySelectorAll("table")]
    .filter((table) => table.scrollWidth > table.clientWidth).map((table) => table.rows[0].textContent),
  date: [...document.querySelectorAll("td")]
    .filter((cell) => /^\\d{{4}}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$/.test(cell.textContent.trim()))
    .filter(squeezed).map((cell) => cell.textContent),
  blocks: document.querySelectorAll("pre").length,
}};
document.body.setAttribute("data-found", JSON.stringify(found));
</script></body></html>"""


def drawn(markdown: str, folder: Path) -> dict[str, list[str] | int]:
    """What Chromium finds when it draws ``markdown`` as a 760 px GitHub comment: code blocks and tables
    that scroll, dates in table cells too narrow for their day (2026-09-15), how many code blocks there are."""
    assert BROWSER is not None
    page = folder / "report.html"
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    page.write_text(PAGE.format(body=html), encoding="utf-8")
    dom = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=760,1000", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    attribute = re.search(r'data-found="([^"]*)"', dom)
    assert attribute is not None, dom[:500]
    found: dict[str, list[str] | int] = json.loads(attribute.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return found


@pytest.mark.slow
@needs_browser
def test_the_reports_draw_at_760_px_with_nothing_scrolling(tmp_path: Path, big_log: Path) -> None:
    for log in (EXAMPLE, many_faults(tmp_path), big_log):
        found = drawn(report_of(str(log)), tmp_path)
        assert found["pre"] == [] and found["table"] == [] and found["date"] == [], log.name
        assert isinstance(found["blocks"], int) and found["blocks"] >= 4


@pytest.mark.slow
@needs_browser
def test_the_browser_check_sees_a_line_of_100_characters_and_a_squeezed_date(tmp_path: Path) -> None:
    wide = "x" * 100
    found = drawn(f"```\n{'x' * CODE_WIDTH}\n```\n\n```\n{wide}\n```\n", tmp_path)
    assert found["pre"] == [wide[:80]] and found["date"] == []
    long_cells = f" {'words of a long cell ' * 10}|" * 7  # seven columns that want the whole width
    squeezed = "|" + " h |" * 8 + "\n|" + "---|" * 8 + "\n| 2026-09-15 22:20:21 |" + long_cells + "\n"
    assert drawn(squeezed, tmp_path)["date"] == ["2026-09-15 22:20:21"]


def test_a_wide_character_takes_two_cells_of_the_88() -> None:
    line = "ERROR - 模型加载失败：" + "显存不足" * 20
    pieces = verbatim_lines(line, CODE_WIDTH)
    assert all(cell_len(piece) <= CODE_WIDTH for piece in pieces) and cell_len(pieces[0]) > CODE_WIDTH - 2
    assert pieces[0] + "".join(piece.removeprefix(CONTINUED) for piece in pieces[1:]) == line
