"""The Mermaid gantt charts: one per cluster of lifetimes, an axis chosen by span, labels that fit, and
a render by the real mermaid-cli in Chromium at the width of a GitHub comment."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from datetime import timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, analysis_of, sections_of
from omlx_logscan.cli.app import app
from omlx_logscan.output.chart import (
    EM_PER_CHAR,
    LABEL_MAX,
    PLOT_WIDTH_PX,
    TICK_FONT_PX,
    TICKS,
    axis,
    gantt_chart,
    label_chars,
)
from omlx_logscan.output.report import build_report
from synthetic import STILL_DEAD, busy, start, timeout, write_log

runner = CliRunner()
DAY = 24 * 60  # minutes
COMMENT_WIDTH = 760  # px: a GitHub comment


def charts(text: str) -> list[list[str]]:
    return [block.splitlines() for block in re.findall(r"^```mermaid\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)]


def markdown_of(log: Path) -> str:
    result = runner.invoke(app, ["timeline", str(log), "-f", "markdown", "-q"])
    assert result.exit_code == 0, result.output
    return result.stdout


# Faults in three clusters: two processes an hour apart, one 3 days later, one 40 days later; the last
# process lives 5 days before its fault and 2 days after it.
SPREAD = [
    start(0),
    timeout(10),
    busy(11),
    start(70),
    timeout(80),
    busy(85),
    start(3 * DAY),
    timeout(3 * DAY + 30),
    busy(3 * DAY + 31),
    start(35 * DAY),
    busy(36 * DAY),
    timeout(40 * DAY),
    busy(40 * DAY + 1),
    busy(42 * DAY),
]


def test_a_chart_per_cluster_of_lifetimes_two_at_most(tmp_path: Path) -> None:
    text = markdown_of(write_log(tmp_path / "server.log", SPREAD))
    found = charts(text)
    assert len(found) == 2  # of three clusters: the one with two faults, and the latest of those with one
    sections = [[line.strip() for line in chart if line.strip().startswith("section ")] for chart in found]
    assert sections == [["section Session 1", "section Session 2"], ["section Session 4"]]
    assert all("    todayMarker off" in chart for chart in found)
    assert [line for line in found[0] if line.startswith("    title")] == [
        "    title oMLX sessions, GPU faults and dead-engine windows (1 of 2)"
    ]
    assert "form 3 groups: the 2 with the most severe faults (the latest, where they tie) are drawn" in text
    # session 3 started on day 3, faulted 30 min later and logged its last record a minute after that
    assert "\n- 2026-09-18 20:00 → 2026-09-18 20:31, session 3: 1 GPU fault\n" in text


def test_the_groups_with_outages_then_most_faults_are_drawn(tmp_path: Path) -> None:
    three = [
        start(10 * DAY),
        *(line for n in range(3) for line in (timeout(10 * DAY + 2 * n + 1), busy(10 * DAY + 2 * n + 2))),
    ]
    dead = [line.replace("2026-09-15", "2026-10-25") for line in STILL_DEAD]  # 40 days on, dead to the end
    text = markdown_of(write_log(tmp_path / "server.log", [*SPREAD[:6], *three, *dead]))
    sections = [[line.strip() for line in chart if line.strip().startswith("section ")] for chart in charts(text)]
    assert sections == [["section Session 3"], ["section Session 4"]]
    assert "\n- 2026-09-15 20:00 → 2026-09-15 21:25, sessions 1, 2: 2 GPU faults\n" in text


def test_a_long_lifetime_is_drawn_around_its_faults(tmp_path: Path) -> None:
    last = charts(markdown_of(write_log(tmp_path / "server.log", SPREAD)))[-1]
    lifetime = next(line for line in last if line.startswith("    session"))
    # started 10-20 20:00, faulted 10-25 20:00, last record 10-27 20:00: drawn 12 h either side of the fault
    assert (
        lifetime == "    session 10-20 → 10-27 (runs to the end of the log) :2026-10-25T08:00:00, 2026-10-26T08:00:00"
    )


@pytest.mark.parametrize("minutes", [1, 20, 90, 6 * 60, 23 * 60, 3 * DAY, 20 * DAY, 200 * DAY])
def test_axis_labels_leave_room_at_every_span(minutes: int) -> None:
    span = timedelta(minutes=minutes)
    label, tick = axis(span, one_day=minutes < DAY)
    seconds = dict(TICKS)[tick]
    width = label_chars(label) * EM_PER_CHAR * TICK_FONT_PX
    assert PLOT_WIDTH_PX * seconds / span.total_seconds() >= width  # labels at their widest do not touch
    shorter = [s for _, s in TICKS if 60 <= s < seconds]  # from a minute to a day, labels keep their format
    if shorter and 60 <= seconds < 86400:  # and the next shorter interval would be too dense: no wasted axis
        assert PLOT_WIDTH_PX * shorter[-1] / span.total_seconds() < width + 12


def test_labels_are_short_enough_and_mermaid_safe(tmp_path: Path) -> None:
    chart = charts(markdown_of(write_log(tmp_path / "server.log", SPREAD)))[0]
    for line in chart:
        if " :" in line and not line.strip().startswith(("title", "section")):
            name = line.strip().rsplit(" :", 1)[0]
            assert len(name) <= LABEL_MAX and not re.search(r"[:;#]", name)


def test_timeline_markdown_has_the_chart_of_the_report() -> None:
    text = markdown_of(EXAMPLE)
    report = build_report(sections_of(analysis_of(EXAMPLE)))
    assert charts(text) == charts(report) and len(charts(text)) == 1


def test_no_fault_no_chart(tmp_path: Path) -> None:
    parts = gantt_chart(analysis_of(write_log(tmp_path / "server.log", [start(0), busy(1)])), {})
    assert parts[-2] == "No session had a GPU fault, so there is nothing to chart (1 session in the log)."


# -- rendered by mermaid-cli ----------------------------------------------------------------------------------


def _browser() -> str | None:
    return os.environ.get("PUPPETEER_EXECUTABLE_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


MMDC = shutil.which("mmdc")
BROWSER = _browser()


needs_mermaid = pytest.mark.skipif(
    MMDC is None or BROWSER is None,
    reason="needs mermaid-cli (npm i -g @mermaid-js/mermaid-cli) and Chromium (apt-get install chromium); "
    f"found mmdc={MMDC}, chromium={BROWSER}",
)


def render(chart: list[str], folder: Path, name: str) -> str:
    """The SVG mermaid-cli draws for ``chart`` at the width of a GitHub comment."""
    config = folder / "puppeteer.json"
    config.write_text(json.dumps({"executablePath": BROWSER, "args": ["--no-sandbox", "--disable-gpu"]}))
    source, target = folder / f"{name}.mmd", folder / f"{name}.svg"
    source.write_text("\n".join(chart) + "\n", encoding="utf-8")
    command = [str(MMDC), "-q", "-p", str(config), "-i", str(source), "-o", str(target), "-w", str(COMMENT_WIDTH)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return target.read_text(encoding="utf-8")


TICK = re.compile(
    r'<g class="tick"[^>]*transform="translate\((?P<x>[-\d.]+),0\)"><line[^>]*/>'
    r'<text[^>]*font-size="(?P<size>[\d.]+)"[^>]*>(?P<label>[^<]*)</text>'
)
TASK_TEXT = re.compile(
    r'<text [^>]*font-size="(?P<size>[\d.]+)"[^>]*x="(?P<x>[-\d.]+)"[^>]*class="(?P<cls>taskText[^"]*)"[^>]*>'
    r"(?P<label>[^<]*)<"
)


def overlapping_ticks(svg: str) -> list[tuple[str, str]]:
    """Neighbouring axis labels whose widths (at most 0.6 em per character, centred) meet."""
    ticks = sorted((float(m["x"]), float(m["size"]), m["label"]) for m in TICK.finditer(svg))
    assert len(ticks) >= 2, "no axis ticks found in the SVG"
    return [
        (a, b) for (xa, size, a), (xb, _, b) in pairwise(ticks) if xb - xa < EM_PER_CHAR * size * (len(a) + len(b)) / 2
    ]


def labels_outside(svg: str) -> list[str]:
    """Task labels that run past the drawing, by the width Chromium measured (Mermaid writes it in the class)."""
    view = re.search(r'viewBox="[-\d.]+ [-\d.]+ (?P<w>[\d.]+)', svg)
    assert view is not None
    width = float(view["w"])
    out = []
    for m in TASK_TEXT.finditer(svg):
        measured = re.search(r"width-([\d.]+)", m["cls"])  # absent for some milestones: then the upper bound
        x = float(m["x"])
        w = float(measured.group(1)) if measured else EM_PER_CHAR * float(m["size"]) * len(m["label"].strip())
        left, right = (
            (x - w, x)
            if "OutsideLeft" in m["cls"]
            else (x, x + w)
            if "OutsideRight" in m["cls"]
            else (
                x - w / 2,
                x + w / 2,
            )
        )
        if left < 0 or right > width:
            out.append(m["label"])
    return out


@pytest.mark.slow
@needs_mermaid
def test_rendered_charts_have_no_overlapping_axis_labels(tmp_path: Path) -> None:
    texts = {
        "example": markdown_of(EXAMPLE),
        "spread": markdown_of(write_log(tmp_path / "spread.log", SPREAD)),
        "still-dead": markdown_of(write_log(tmp_path / "dead.log", STILL_DEAD)),
        "one-minute": markdown_of(write_log(tmp_path / "short.log", [start(0), timeout(0.1)])),
    }
    rendered = 0
    for name, text in texts.items():
        for number, chart in enumerate(charts(text)):
            svg = render(chart, tmp_path, f"{name}-{number}")
            assert overlapping_ticks(svg) == [], f"{name} chart {number}"
            assert labels_outside(svg) == [], f"{name} chart {number}"
            assert "today" not in re.sub(r"todayMarker", "", svg.split("<style>")[0]).lower()
            rendered += 1
    assert rendered == 5  # example 1, spread 2 (of its 3 groups), still-dead 1, one-minute 1


@pytest.mark.slow
@needs_mermaid
def test_the_overlap_check_sees_the_old_axis(tmp_path: Path) -> None:
    """The check can fail: the chart as it was (no tick interval, month-day-hour labels) runs its labels
    together at comment width."""
    chart = [line for line in charts(markdown_of(EXAMPLE))[0] if not line.startswith("    tickInterval")]
    assert overlapping_ticks(render(chart, tmp_path, "old")) != []
