"""Defaults for the options from a project's own file, as ruff and pip-audit read theirs.

The nearest of ``.logscan.toml`` (its keys at the top) or a ``pyproject.toml`` with a
``[tool.logscan]`` table, from the current folder upward, gives the options' defaults: a key at
the top applies to every command that takes that option (``tz = "Europe/Berlin"``), a table named
after a command to that command (``[tool.logscan.check]`` with ``fail-on``, ``max-faults``,
``max-dead``, ``fail-on-empty``). Keys are the options' long names without the dashes; a flag
given on the command line wins. What is not an option of the command is refused, naming the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from typer.core import TyperOption

from omlx_logscan.errors import LogscanError


class _Command(Protocol):
    """What is read of a command here: its parameters."""

    params: list[Any]


OWN_FILE = ".logscan.toml"
PYPROJECT = "pyproject.toml"


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest configuration from ``start`` upward, and its logscan table; None when there is none."""
    for folder in (start, *start.parents):
        own = folder / OWN_FILE
        if own.is_file():
            return own, _read(own)
        project = folder / PYPROJECT
        if project.is_file():
            table = _read(project).get("tool", {}).get("logscan")
            if table is not None:
                if not isinstance(table, dict):
                    raise LogscanError(f"{project}: [tool.logscan] must be a table")
                return project, table
    return None


def _read(path: Path) -> dict[str, Any]:
    import tomllib  # here, not at import: a run with no configuration file never needs it

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LogscanError(f"{path}: cannot read the configuration ({exc})") from None


def _option_names(command: _Command) -> dict[str, TyperOption]:
    """The options a configuration may set for ``command``, by their long names without dashes."""
    names: dict[str, TyperOption] = {}
    for param in command.params:
        if isinstance(param, TyperOption) and not param.hidden:
            for flag in param.opts:
                if flag.startswith("--"):
                    names[flag[2:]] = param
    return names


def _value(param: TyperOption, value: Any) -> Any:
    """A TOML value as the option takes it: a list is one comma list unless the option repeats."""
    if isinstance(value, list) and not param.multiple:
        return ",".join(str(item) for item in value)
    if param.multiple and not isinstance(value, list):
        return [value]
    return value


def default_map(commands: Mapping[str, _Command], start: Path) -> dict[str, dict[str, Any]]:
    """click's ``default_map`` for the app: per command, its options' defaults from the configuration."""
    found = find_config(start)
    if found is None:
        return {}
    where, table = found
    defaults: dict[str, dict[str, Any]] = {name: {} for name in commands}
    names = {name: _option_names(command) for name, command in commands.items()}
    shared = {key: value for key, value in table.items() if not isinstance(value, dict)}
    for key, value in shared.items():
        takers = [name for name, options in names.items() if key in options]
        if not takers:
            raise LogscanError(f"{where}: {key!r} is no option of any logscan command")
        for name in takers:
            param = names[name][key]
            defaults[name][str(param.name)] = _value(param, value)
    for section, values in table.items():
        if not isinstance(values, dict):
            continue
        if section not in commands:
            raise LogscanError(f"{where}: [{section}] is no logscan command (commands: {', '.join(commands)})")
        options = names[section]
        for key, value in values.items():
            if key not in options:
                raise LogscanError(f"{where}: {key!r} is no option of logscan {section}")
            defaults[section][str(options[key].name)] = _value(options[key], value)
    return {name: values for name, values in defaults.items() if values}
