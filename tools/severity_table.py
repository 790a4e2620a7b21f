"""Writes the table of docs/severity.md: every lexicon entry of severity error or worse, by the rule of
``omlx_logscan.analysis.severity``. The page's text above the table is written by hand; the tool
replaces what follows its marker. ``--check [FILE]`` exits 1 when the committed page (or FILE) is
stale, so the table can never drift from the lexicon and the rule (the test suite runs it)."""

from __future__ import annotations

import sys
from pathlib import Path

from omlx_logscan.analysis.severity import SEVERITIES, at_least, entry_severity
from omlx_logscan.parsing.lexicon import Entry, lexicon

PAGE = Path(__file__).resolve().parents[1] / "docs" / "severity.md"
MARKER = "<!-- The table below is written by tools/severity_table.py: do not edit it by hand. -->"
_ACTIONS = {"reraise": "raises again", "answer": "answers", "exit": "ends the process", "carry_on": "carries on"}


def render() -> str:
    """The table, worst first, then by where the message is written."""
    rows = []
    for entry in lexicon().entries:
        severity = entry_severity(entry)
        if severity is not None and at_least(severity, "error"):
            rows.append((SEVERITIES.index(severity), entry.module, entry.function, entry.template, severity, entry))
    lines = [
        MARKER,
        "",
        f"{len(rows)} entries of oMLX's messages are of severity error or worse.",
        "",
        "| Severity | Message | Level | Logger | Written in | Handler | Versions |",
        "|---|---|---|---|---|---|---|",
    ]
    for *_, severity, entry in sorted(rows, key=lambda row: row[:4]):
        where = f"{entry.module}.{entry.function}" if entry.module else "(release notes)"
        cells = (severity, _code(entry.template), entry.level or entry.kind, _code(entry.logger), _code(where))
        lines.append(f"| {' | '.join(cells)} | {_handler(entry)} | {_versions(entry)} |")
    return "\n".join(lines) + "\n"


def _handler(entry: Entry) -> str:
    if entry.handler_action is None:
        return ""
    catches = ", ".join(_code(name) for name in entry.catches)
    status = f" {entry.answer_status}" if entry.answer_status is not None else ""
    return f"{catches} → {_ACTIONS[entry.handler_action]}{status}".strip()


def _versions(entry: Entry) -> str:
    return f"{entry.first} – {entry.last}" if entry.last else f"{entry.first} –"


def _code(text: str | None) -> str:
    """Text as a code span in a table cell: on one line, its pipes escaped."""
    if not text:
        return ""
    flat = text.replace("\n", "⏎").replace("|", "\\|")
    fence = "``" if "`" in flat else "`"
    return f"{fence} {flat} {fence}" if fence == "``" else f"`{flat}`"


def page(current: str) -> str:
    """The page with its table rewritten: its text up to the marker is kept."""
    head = current.split(MARKER, 1)[0]
    return head + render()


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--check"]:
        committed = Path(argv[2]) if len(argv) > 2 else PAGE
        text = committed.read_text(encoding="utf-8") if committed.is_file() else ""
        if MARKER not in text or page(text) != text:
            print(f"{committed} is stale: run python tools/severity_table.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page(PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
