"""Every command and option is documented: in README.md or docs/, and in its own --help."""

from __future__ import annotations

import re

import pytest
import typer.core
import typer.main
from typer.testing import CliRunner

from conftest import ROOT
from omlx_logscan.analysis.results import Analysis
from omlx_logscan.analysis.signatures import CLEAR_CONTEXTS
from omlx_logscan.cli import COMMANDS, app
from omlx_logscan.output.phrases import escalation_rows
from omlx_logscan.parsing.catalog import GPU_CONTEXTS

runner = CliRunner()
NAMES = [command.__name__ for command in COMMANDS]
DOCS = "\n".join(path.read_text(encoding="utf-8") for path in [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md"))])


def command(name: str) -> typer.core.TyperCommand:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    found = group.commands[name]
    assert isinstance(found, typer.core.TyperCommand)
    return found


def documented(word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", DOCS) is not None


@pytest.mark.parametrize("name", NAMES)
def test_command_and_its_options_are_in_the_docs(name: str) -> None:
    cmd = command(name)
    assert documented(f"logscan {name}"), f"logscan {name} is in no doc"
    assert cmd.help, f"logscan {name} has no help"
    undocumented = []
    for param in cmd.params:
        assert getattr(param, "help", None), f"logscan {name}: {param.name} has no help"
        undocumented += [opt for opt in param.opts if opt.startswith("--") and not documented(opt)]
    assert not undocumented, f"logscan {name}: {', '.join(undocumented)} in neither README.md nor docs/"


@pytest.mark.parametrize("name", NAMES)
def test_help_exits_zero(name: str) -> None:
    result = runner.invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: ")


def test_help_lists_the_commands_in_commands_order() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    listed = result.output.split("Commands:", 1)[1].split()
    assert [word for word in listed if word in NAMES] == NAMES


def test_fail_on_help_says_what_every_choosable_rule_covers() -> None:
    """Each rule --fail-on takes is in its help with the phrase that says what it finds."""
    from omlx_logscan.analysis.rules import CHOOSABLE_RULES, DEFAULT_RULES
    from omlx_logscan.output.findings import rule_finds

    (fail_on,) = (param for param in command("check").params if param.name == "fail_on")
    text = getattr(fail_on, "help", None) or ""
    for rule in CHOOSABLE_RULES:
        assert f"{rule}: {rule_finds(rule)}" in text, rule
    assert "error" not in DEFAULT_RULES, "the error rule fails through --fail-level, not as a rule of its own"


def test_one_list_of_defaults_serves_the_cli_the_action_and_the_docs() -> None:
    import yaml

    from omlx_logscan.analysis.rules import DEFAULT_FAIL_LEVEL, DEFAULT_RULES

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
    # The Action's empty defaults leave the CLI's in force; its descriptions name them.
    assert action["fail-on"]["default"] == action["fail-level"]["default"] == ""
    assert f"{','.join(DEFAULT_RULES)} with fail-level {DEFAULT_FAIL_LEVEL}" in action["fail-on"]["description"]
    step = (ROOT / ".github" / "action" / "check.sh").read_text(encoding="utf-8")
    assert "LOGSCAN_FAIL_ON:-}" in step and "LOGSCAN_FAIL_LEVEL:-}" in step and "penalty_box" not in step
    docs = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    assert f"default `{','.join(DEFAULT_RULES)}`" in docs and f"`--fail-level {DEFAULT_FAIL_LEVEL}`" in docs


def _table_row(doc: str, field: str) -> str:
    """The row of a field table in docs/<doc> that documents ``field``."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    return next(line for line in text.splitlines() if line.startswith(f"| `{field}` |"))


def test_every_fault_context_is_in_the_timeline_docs() -> None:
    """The review of issue 14: the faults[].context row had lost five of the contexts the catalog gives."""
    contexts = {context for _, context in GPU_CONTEXTS} | {"other"}
    row = _table_row("timeline.md", "context")
    assert {context for context in contexts if f"`{context}`" not in row} == set()


def test_every_escalation_field_is_in_the_timeline_docs(example_analysis: Analysis) -> None:
    """Including the time of day of a fault row no date fits (the review of issue 14)."""
    rows = escalation_rows(example_analysis)
    fields = {key for row in rows for key in row} | {"time_of_day", "os_version"}
    section = (ROOT / "docs" / "timeline.md").read_text(encoding="utf-8").split("## `escalation[]`")[1]
    documented_fields = set(re.findall(r"^\| `(\w+)`(?:, `(\w+)`)?", section.split("## ")[0], re.M))
    assert fields <= {name for pair in documented_fields for name in pair if name}


def test_every_trigger_is_in_the_attribution_docs() -> None:
    triggers = {*CLEAR_CONTEXTS.values(), "pressure", "deferred", "periodic", "unknown", "not_applicable"}
    text = (ROOT / "docs" / "attribution.md").read_text(encoding="utf-8")
    assert {t for t in triggers if not re.search(rf"^\| [^|]*`{t}`", text, re.M)} == set()
