"""Writes docs/cli.md, the command-line reference, from the app itself: every command, argument
and option with its default and help text. ``--check [FILE]`` exits 1 when the committed file (or FILE) is stale,
so the reference can never drift from ``--help`` (the test suite runs it)."""

from __future__ import annotations

import enum
import sys
from pathlib import Path

import typer
import typer.core
import typer.main

from omlx_logscan.cli import COMMANDS, app
from omlx_logscan.cli.examples import epilog

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
_TYPE_NAMES = {"str": "text", "int range": "whole number", "float": "number"}
_HEAD = """\
# Command-line reference

Every command, argument and option of `logscan`, as `--help` shows them. This file is generated
from the app by `python tools/cli_reference.py`; a test fails when it is stale. The README and the
other pages in `docs/` explain what the commands are for.
"""


def render() -> str:
    """The whole reference, in the order ``logscan --help`` lists the commands."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    parts = [_HEAD, "## `logscan`", "", _flat(group.help or ""), ""]
    parts += [_param(param) for param in group.params if param.name != "help"]
    parts.append("")
    for function in COMMANDS:
        name = function.__name__
        command = group.commands[name]
        assert isinstance(command, typer.core.TyperCommand)
        parts.append(_command(name, command, typer.Context(command, info_name=f"logscan {name}")))
    return "\n".join(parts)


def _command(name: str, command: typer.core.TyperCommand, context: typer.Context) -> str:
    usage = " ".join(command.collect_usage_pieces(context))
    lines = [f"## `logscan {name}`", "", _flat(command.help or ""), "", f"Usage: `logscan {name} {usage}`", ""]
    for param in command.params:
        lines.append(_param(param))
    lines += ["", "Examples:", "", "```sh", *_examples(name), "```"]
    return "\n".join(lines) + "\n"


def _examples(name: str) -> list[str]:
    """The examples ``--help`` ends with, as a shell block (the same lines, ``# what`` comments kept)."""
    return [line.removeprefix("  ") for line in epilog(name).split("\n")[2:]]


def _param(param: object) -> str:
    if isinstance(param, typer.core.TyperArgument):
        return f"- `{param.metavar or (param.name or '').upper()}` (argument): {_flat(param.help or '')}"
    assert isinstance(param, typer.core.TyperOption)
    names = " / ".join([", ".join(param.opts), *param.secondary_opts])
    value = _value(param)
    default = _default(param)
    facts = ", ".join(fact for fact in (value, default) if fact)
    return f"- `{names}`{f' ({facts})' if facts else ''}: {_flat(param.help or '')}"


def _value(param: typer.core.TyperOption) -> str:
    if param.is_flag:
        return ""
    choices = getattr(param.type, "choices", None)
    if choices:
        return "one of " + ", ".join(f"`{_word(choice)}`" for choice in choices)
    name = str(param.type.name)
    return _TYPE_NAMES.get(name, name)


def _default(param: typer.core.TyperOption) -> str:
    default = param.default
    if default is None or default == () or callable(default):
        return ""
    if isinstance(default, bool):
        return "default: on" if default else ""
    return f"default: `{_word(default)}`"


def _word(value: object) -> str:
    return str(value.value if isinstance(value, enum.Enum) else value)


def _flat(text: str) -> str:
    """Help text on one line (Markdown joins a paragraph's lines anyway)."""
    return " ".join(text.split())


def main(argv: list[str]) -> int:
    text = render()
    if argv[1:2] == ["--check"]:
        committed = Path(argv[2]) if len(argv) > 2 else REFERENCE
        if not committed.is_file() or committed.read_text(encoding="utf-8") != text:
            print(f"{committed} is stale: run python tools/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    REFERENCE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
