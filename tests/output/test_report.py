"""logscan report: sections, the Mermaid chart, GitHub's size limit and redaction."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE, analysis_of, sections_of, unwrapped
from omlx_logscan.analysis.investigation import investigation_of
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.cli.app import app
from omlx_logscan.inputs.oshistory import load_history
from omlx_logscan.output.markdown import bounds_markdown
from omlx_logscan.output.phrases import crash_rows
from omlx_logscan.output.report import LINE_MAX, build_report
from omlx_logscan.output.sections import timeline_sections
from omlx_logscan.parsing.catalog import FATAL_EXIT_SUFFIX
from synthetic import STILL_DEAD, absorbed_faults, busy, record, start, timeout, write_log

runner = CliRunner()
GITHUB_LIMIT = 65_536  # characters in an issue body or comment
SECTIONS = [
    "## oMLX log report",
    "### What the log is",
    "### Summary",
    "### Incidents",
    "### Stack signatures",
    "### Escalation",
    "### Dead-engine windows",
    "### Outages",
    "### Why it faulted",
    "### Timeline chart",
    "### First fault as logged",
    "### What this log cannot show",
]
# The example log has no Errors part: the warnings oMLX writes when its SSD write queue is full are flow
# control, no failure (docs/severity.md).
EXAMPLE_SECTIONS = SECTIONS
TASK = re.compile(
    r"^    (?P<name>[^:;#]+) :(?P<tags>(?:crit, )?(?:milestone, )?)"
    r"(?P<start>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d), (?P<end>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|0d)$"
)


def report_of(*args: str) -> str:
    result = runner.invoke(app, ["report", "-q", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def headings(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("#")]


def mermaid_lines(text: str) -> list[str]:
    block = re.search(r"^```mermaid\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert block is not None
    return block.group(1).splitlines()


def fences_balanced(text: str) -> bool:
    return sum(1 for line in text.splitlines() if line.startswith("```")) % 2 == 0


def test_sections_of_the_example_report() -> None:
    text = report_of(str(EXAMPLE))
    assert headings(text) == EXAMPLE_SECTIONS
    assert len(text) < GITHUB_LIMIT and "\x1b" not in text and fences_balanced(text)
    assert "- **Written at level:** WARNING" in text
    assert "- **oMLX version:** 0.5.7 (160 of 160 sessions)" in text
    assert "2026-09-15 22:20:21              Timeout → SubmissionsIgnored in the same second" in text
    # the date once per row: later times of the same day are times of day, so a narrow column holds them
    assert (
        "| 157 | 2026-09-15 22:20:21 | 23:07:36 | ended by a restart between 23:07:36 and 23:14:14 | "
        "47 min to 53 min | 8 | not logged |" in text
    )
    assert "**identical for all 6 faults**" in text
    assert "omlx/utils/metal_sync.py:62 in _sync_and_clear_cache" in text
    assert "`omlx-3706.log`, line 1814 (18 lines):" in text
    assert "RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error" in text
    cannot = text.split("### What this log cannot show")[1]
    assert "**INFO records.**" in cannot and "`Requested pressure cache reclaim …`" in cannot
    assert "No `Shrank … hot cache under memory pressure` warning was logged" in cannot
    assert "> **Redacted:**" in text and "### Version bounds" not in text


def test_mermaid_gantt_of_the_example() -> None:
    text = report_of(str(EXAMPLE))
    lines = mermaid_lines(text)
    assert lines[0] == "gantt" and "    dateFormat YYYY-MM-DDTHH:mm:ss" in lines
    sections = [line.strip().removeprefix("section ") for line in lines if line.strip().startswith("section ")]
    assert sections == ["Session 157", "Session 158", "Session 159", "Session 160"]
    settings = ("gantt", "title ", "dateFormat ", "axisFormat ", "tickInterval ", "todayMarker ", "section ")
    tasks = [TASK.match(line) for line in lines if not line.strip().startswith(settings)]
    assert tasks and all(tasks), [line for line in lines if not TASK.match(line)]
    milestones = [t for t in tasks if t and "milestone" in t["tags"]]
    assert len(milestones) == 6 and sum(1 for t in milestones if t and "crit" in t["tags"]) == 2
    dead = [t for t in tasks if t and t["name"] == "dead engine (penalty box)"]
    assert [(t["start"], t["end"]) for t in dead if t] == [
        ("2026-09-15T22:20:21", "2026-09-15T23:14:14"),
        ("2026-09-16T02:07:02", "2026-09-16T02:50:14"),
    ]
    for task in tasks:
        assert task is not None
        if task["end"] != "0d":
            assert datetime.fromisoformat(task["end"]) >= datetime.fromisoformat(task["start"])
    assert "or an outage; the other 156 are left out so that it stays readable." in text


def test_still_dead_window_is_named_in_chart_and_table(tmp_path: Path) -> None:
    text = report_of(str(write_log(tmp_path / "server.log", STILL_DEAD)))
    assert "    STILL DEAD at the end of the log :crit, 2026-09-15T20:10:00, 2026-09-15T20:25:00" in mermaid_lines(text)
    assert "**STILL DEAD when the log ends: the engine may be dead now**" in text
    assert "**What happened after the log ends.**" in text


def test_huge_log_stays_under_githubs_limit(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", absorbed_faults(80, 10))  # 800 faults: one line each is too many
    text = report_of(str(log))
    assert len(text) < GITHUB_LIMIT
    assert headings(text) == SECTIONS and fences_balanced(text)
    shortened = re.search(
        r"^> \*\*Shortened\*\* to stay under GitHub's 65,536-character comment limit: (.+) \(", text, re.M
    )
    assert shortened is not None and "fault attributions" in shortened.group(1).split(", ")
    why = text.split("### Why it faulted")[1].split("\n###")[0]
    cut = re.search(r"^… (\d+) faults cut here$", why, re.MULTILINE)
    assert cut is not None
    kept = re.findall(r"^2026-\S+ \S+  fault (\d+) ", why, re.MULTILINE)
    assert len(kept) + int(cut.group(1)) == 800
    assert kept[0] == "1" and kept[-1] == "800"  # the first and the last fault stay
    assert f"*{cut.group(1)} of 800 fault attributions are cut at the “…” line above, to stay under GitHub's" in why
    escalation = text.split("### Escalation")[1].split("\n###")[0]
    # the first fault is at minute 1; the last (process 80 starts at minute 79 * 25) at minute 1994
    assert "2026-09-15 20:01:00   " in escalation and "2026-09-17 05:14:00   " in escalation
    chart = mermaid_lines(text)
    assert sum(1 for line in chart if line.strip().startswith("section ")) == 24
    assert "    %% … 56 sessions not drawn here" in chart
    assert sum(1 for line in chart if "milestone" in line) == 24 * 10


def test_blocks_lose_their_last_rows_before_the_text_is_cut(example_analysis: Analysis) -> None:
    text = build_report(
        sections_of(example_analysis), limit=6700
    )  # the faults' shared attribution and the notes stay whole
    assert len(text) < 6700 and fences_balanced(text) and headings(text) == EXAMPLE_SECTIONS
    assert "*6 of 6 fault attributions are cut at the “…” line above" in text
    assert "The rest of this report is cut" not in text


def test_hard_cut_keeps_what_the_log_cannot_show(example_analysis: Analysis) -> None:
    text = build_report(sections_of(example_analysis), limit=4000)
    assert len(text) < 4000 and fences_balanced(text)
    cut, cannot = text.split("\n### What this log cannot show\n")
    assert cut.endswith(
        "*The rest of this report is cut to stay under GitHub's 65,536-character comment limit; "
        "what the log cannot show follows.*\n"
    )
    assert "- **Hardware and libraries.** oMLX never logs" in cannot and text.endswith("mlx and mlx-lm.\n")


def fault_with_traceback(minute: float, site: str, last_line: str) -> list[str]:
    """A cache-clear timeout whose traceback runs through ``site`` and ends with ``last_line``."""
    return [
        timeout(minute),
        "Traceback (most recent call last):",
        f'  File "{site}/utils/metal_sync.py", line 62, in _sync_and_clear_cache',
        "    mx.synchronize()",
        last_line,
        "",
    ]


def test_one_huge_log_line_is_cut_not_the_report(tmp_path: Path) -> None:
    site = "/opt/homebrew/Cellar/omlx/0.5.7/libexec/lib/python3.11/site-packages/omlx"
    huge = "RuntimeError: " + "x" * 70_000
    shrink = record(9, "WARNING", "omlx.cache", "Shrank hot cache under memory pressure: freed=1.5 GB " + "y" * 70_000)
    log = write_log(tmp_path / "server.log", [start(0), busy(5), shrink, *fault_with_traceback(10, site, huge)])
    text = report_of(str(log))
    assert len(text) < GITHUB_LIMIT and headings(text) == SECTIONS and fences_balanced(text)
    assert "Shortened" not in text and "The rest of this report is cut" not in text
    assert f"RuntimeError: {'x' * (LINE_MAX - 14)} … 68,014 characters cut" in unwrapped(text)
    why = unwrapped(text.split("### Why it faulted")[1].split("\n###")[0])
    evidence = next(line for line in why if line.startswith("    evidence  "))
    assert evidence.endswith(" characters cut") and len(evidence) < LINE_MAX + 100


def test_versions_in_the_order_the_log_shows_them(tmp_path: Path) -> None:
    banner = ["oMLX - LLM inference, optimized for your Mac", "└─ Version: {}", ""]
    lines = []
    for minute, version in ((0, "0.5.7"), (10, "0.10.0"), (20, "0.5.7")):
        lines += [*banner[:1], banner[1].format(version), *banner[2:], start(minute), busy(minute + 1)]
    text = report_of(str(write_log(tmp_path / "server.log", lines)))
    assert "- **oMLX version:** 0.5.7 (2 of 3 sessions), 0.10.0 (1 of 3 sessions)" in text


def test_bounds_and_os_versions_are_filled_in(example_analysis: Analysis) -> None:
    history = load_history([EXAMPLE.parent / "os-history.txt"], [], None, use_system=False)
    found = investigation_of(example_analysis, history)
    assert found.bounds is not None
    text = build_report(timeline_sections(found))
    assert headings(text) == [*EXAMPLE_SECTIONS[:9], "### Version bounds", *EXAMPLE_SECTIONS[9:]]
    assert f"### Version bounds\n\n{bounds_markdown(found.bounds).strip()}\n" in text
    assert "- **macOS:** 26.5.1, 27.0 (from the OS install history)" in text
    # every fault was on 27.0: said once, not at the end of each row (which would not fit 88 characters)
    escalation = text.split("### Escalation\n\n")[1].split("\n###")[0]
    assert escalation.startswith("Every row is of macOS 27.0 (from the OS install history).\n\n```\n")
    assert "2026-09-15 20:19:38              Timeout   absorbed, engine kept serving\n" in escalation
    assert "[macOS" not in escalation
    session = "    session (macOS 27.0, ended by a restart) :2026-09-15T17:56:38, 2026-09-15T23:14:14"
    assert session in mermaid_lines(text)
    assert "oMLX never logs the chip and the mlx / mlx-lm versions." in text


def test_os_history_option_adds_the_bounds() -> None:
    text = report_of(str(EXAMPLE), "--os-history", str(EXAMPLE.parent / "os-history.txt"))
    assert headings(text) == [*EXAMPLE_SECTIONS[:9], "### Version bounds", *EXAMPLE_SECTIONS[9:]]
    assert "- **macOS:** 26.5.1, 27.0 (from the OS install history)" in text
    bounds = text.split("### Version bounds")[1].split("###")[0]
    assert "macOS 26.5.1" in bounds and "macOS 27.0" in bounds


def test_report_of_a_clean_log_and_output_file(tmp_path: Path) -> None:
    log = write_log(tmp_path / "server.log", [STILL_DEAD[0], STILL_DEAD[1]])
    target = tmp_path / "report.md"
    result = runner.invoke(app, ["report", str(log), "-q", "-o", str(target)])
    assert result.exit_code == 0 and result.stdout == ""
    text = target.read_text(encoding="utf-8")
    assert "### Escalation\n\nNo GPU faults." in text
    assert "No session had a GPU fault, so there is nothing to chart (1 session in the log)." in text
    assert "```mermaid" not in text and "### First fault as logged" not in text


# -- redaction ----------------------------------------------------------------------------------------

PLANTED = {
    "home": "/Users/jdoe",
    "user": "jdoe",
    "ip": "192.168.77.23",
    "email": "jdoe.private@example.org",
    "key": "sk-live-0123456789abcdefXYZ",
    "prompt": "my private prompt text",
    "host": "jdoe-studio.local",
}


def secret_log(path: Path) -> Path:
    """A fault whose record carries one planted secret of every kind."""
    message = (
        "2026-09-15 20:10:00,000 - omlx.server - ERROR - [-] - Error during chat streaming: [METAL] Command buffer "
        "execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout). "
        f"client={PLANTED['ip']} from {PLANTED['host']} mail {PLANTED['email']} api_key={PLANTED['key']} "
        f"messages=[{{'role': 'user', 'content': '{PLANTED['prompt']}'}}] (account jdoe)"
    )
    site = f"{PLANTED['home']}/.venv/lib/python3.11/site-packages/omlx"
    path.write_text(
        "2026-09-15 20:00:00,000 - omlx.server - INFO - [-] - Server initialized with 1 models\n"
        f"{message}\n"
        "Traceback (most recent call last):\n"
        f'  File "{site}/server.py", line 900, in stream_chat\n'
        "    async for chunk in engine.stream(request):\n"
        f'  File "{site}/utils/metal_sync.py", line 62, in _sync_and_clear_cache\n'
        "    mx.synchronize()\n"
        "RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error "
        "(00000002:kIOGPUCommandBufferCallbackErrorTimeout).\n"
        "\n"
        "2026-09-15 20:12:00,000 - omlx.server - WARNING - [-] - POST /v1/chat/completions → 400: bad\n",
        encoding="utf-8",
    )
    return path


def test_redaction_removes_every_planted_secret(tmp_path: Path) -> None:
    log = secret_log(tmp_path / "server.log")
    assert len(analysis_of(log).faults) == 1
    masked = "\n".join(unwrapped(report_of(str(log))))  # a secret split by a wrapped line would hide
    for kind, secret in PLANTED.items():
        assert secret.lower() not in masked.lower(), kind
    assert 'File "~/.venv/lib/python3.11/site-packages/omlx/server.py", line 900' in masked
    assert "client=[ip] from [host] mail [email] api_key=[key]" in masked
    assert "messages=[text] (account [user])" in masked  # the list of messages masked whole
    assert "> **Redacted:**" in masked and "(masked here: 2 home folders, 1 user name, 1 host name" in masked


@pytest.mark.parametrize(
    ("account", "in_log_text"), [("omlx", "omlx"), ("a", "a"), ("process", "[user]"), ("session", "[user]")]
)
def test_account_name_never_masks_the_reports_own_words(tmp_path: Path, account: str, in_log_text: str) -> None:
    site = f"/Users/{account}/.venv/lib/python3.11/site-packages/omlx"
    log = write_log(
        tmp_path / "server.log",
        [start(0), busy(5), *fault_with_traceback(10, site, f"RuntimeError: {account} saw a timeout"), busy(12)],
    )
    text = "\n".join(unwrapped(report_of(str(log))))
    assert "[user]" not in text.split("### What the log is")[1].split("### First fault as logged")[0]
    for words in (
        "- **oMLX version:**",
        "= a cache-clear drain",
        "The chart shows the 1 session with",
        "    title oMLX sessions, GPU faults and dead-engine windows",
        "oMLX writes nothing when it clears the Metal cache",
        "oMLX never logs the macOS version",
    ):
        assert words in text
    assert '  File "~/.venv/lib/python3.11/site-packages/omlx/utils/metal_sync.py", line 62' in text
    assert f"RuntimeError: {in_log_text} saw a timeout" in text
    assert "(masked here: 1 home folder" in text


def test_no_redact_keeps_them(tmp_path: Path) -> None:
    log = secret_log(tmp_path / "server.log")
    plain = "\n".join(unwrapped(report_of(str(log), "--no-redact")))
    for kind, secret in PLANTED.items():
        assert secret in plain, kind
    assert "> **Not redacted** (`--no-redact`)" in plain


def test_stdin_cannot_be_reread_for_the_excerpt() -> None:
    result = runner.invoke(app, ["report", "-", "-q"], input="\n".join(STILL_DEAD) + "\n")
    assert result.exit_code == 0
    assert "| `<stdin>` | 7 | 2026-09-15 20:00:00 |" in result.stdout
    first_fault = result.stdout.split("### First fault as logged\n\n")[1].split("\n\n###")[0]
    assert first_fault == (
        "`<stdin>`, line 3: stdin cannot be read a second time; the stack is under *Stack signatures* above."
    )


@pytest.mark.parametrize(
    ("reason", "detail"),
    [
        (
            "Engine teardown timed out after 60s while reclaiming MLX memory for engine abc123",
            "omlx.utils.fatal exit for a supervisor restart: Engine teardown timed out after 60s while reclaiming "
            "MLX memory for engine abc123",
        ),
        (
            "Metal GPU submissions disabled: the driver ignores this process",
            "omlx.utils.fatal exit for a supervisor restart: Metal GPU submissions disabled: the driver ignores "
            "this process",
        ),
    ],
    ids=["teardown", "submissions-disabled"],
)
def test_a_fatal_exits_crash_row_says_its_reason(tmp_path: Path, reason: str, detail: str) -> None:
    """The review of issue 14 (t10): the row said only that it was a fatal exit, not which one."""
    message = reason if reason.startswith("Metal") else f"{reason}{FATAL_EXIT_SUFFIX}"
    log = write_log(tmp_path / "server.log", [start(0), record(1, "CRITICAL", "omlx.utils.fatal", message)])
    (row,) = crash_rows(analysis_of(log))
    assert row["detail"] == detail
    assert detail in runner.invoke(app, ["timeline", str(log)]).output.replace("\n", " ")
