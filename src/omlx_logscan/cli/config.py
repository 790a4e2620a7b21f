"""Defaults for the options from configuration files, and which file may set what.

Keys are the options' long names without the dashes: a key at the top applies to every command
that takes that option (``tz = "Europe/Berlin"``), a table named after a command to that command
(``[check]`` with ``fail-on``). A flag on the command line wins over every file. Two files give
defaults, the second over the first:

- the user's own ``config.toml`` in the user's config folder (``$XDG_CONFIG_HOME/logscan``, else
  ``~/.config/logscan``);
- the file named with ``--config FILE``, else the nearest found from the current folder upward: a
  ``.logscan.toml`` (its keys at the top, or under ``[tool.logscan]`` alone) or a ``pyproject.toml``
  with a ``[tool.logscan]`` table.

A found file came with the folder (a log bundle may ship one), so it is data, not commands: it
may set how the output looks and how the log is read, and make ``check`` stricter. A key that runs
a command, writes a file, sends data elsewhere, chooses what is read or loosens ``check`` is
ignored there with one line on stderr naming the file and the key; the run goes on. Every option
is in exactly one class of ``KEY_CLASSES`` (a test holds every option to it), so a new option is
trusted from a found file only once someone has said it may be. Which file was used is said on
stderr. What is not an option of the command, or not a value it takes, is refused, naming the file.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup, TyperOption

from omlx_logscan.errors import LogscanError

OWN_FILE = ".logscan.toml"
PYPROJECT = "pyproject.toml"
USER_FILE = "config.toml"
# The --config FILE of the running command, if any: the command's work runs after its click context has
# ended, so the -o check (cli/load.py) finds it here; set again by every command line (the option is eager).
NAMED_CONFIG: list[Path] = []


class KeyClass(StrEnum):
    """What a key can make happen; its value is said in the note when a found file's key is ignored."""

    display = "sets how the output looks"
    parsing = "sets how the log is read"
    stricter = "sets a check limit"
    runs = "runs a command or ends a watch"
    writes = "writes a file"
    sends = "sends data elsewhere"
    reads = "chooses what is read"
    loosens = "lets a check see less or accept more"


# Of a found file, these classes are taken (``stricter`` only where the value tightens, see ``_TIGHTER``).
FOUND_FILE_MAY_SET = frozenset({KeyClass.display, KeyClass.parsing, KeyClass.stricter})


def _superset(found: Any, current: Any) -> bool:
    """More ``fail-on`` rules: every rule in force stays. With none given, the defaults are in force:
    the default rules and those of every incident kind of the default ``fail-level`` (a ``fail-on``
    alone runs only its rules, so it must name them all)."""
    from omlx_logscan.analysis.rules import DEFAULT_FAIL_LEVEL, DEFAULT_RULES, level_rules
    from omlx_logscan.cli.values import comma_list

    in_force = set(comma_list([current])) if current else {*DEFAULT_RULES, *level_rules(DEFAULT_FAIL_LEVEL)}
    return in_force <= set(comma_list([found]))


def _true_or_same(found: Any, current: Any) -> bool:
    """A flag that tightens when on (``--strict``, ``--redact``, ``--fail-on-empty``)."""
    return found is True or found == current


def _at_most(unset: float, *, duration: bool = False) -> Callable[[Any, Any], bool]:
    """A limit that tightens when lower; ``unset`` is what no value means (no limit: inf; every one: 0)."""

    def amount(value: Any) -> float:
        if value is None:
            return unset
        if duration:
            from omlx_logscan.cli.values import duration_seconds

            return duration_seconds(str(value), "a limit")
        return float(value)

    return lambda found, current: amount(found) <= amount(current)


def _lower_level(found: Any, current: Any) -> bool:
    """A ``fail-level`` no higher than the one in force (no value in force: the default, error)."""
    from omlx_logscan.analysis.rules import DEFAULT_FAIL_LEVEL
    from omlx_logscan.analysis.severity import SEVERITIES

    if found not in SEVERITIES:
        return False
    return SEVERITIES.index(found) >= SEVERITIES.index(current if current in SEVERITIES else DEFAULT_FAIL_LEVEL)


# Every ``stricter`` key and when a found file's value is no looser than the one in force.
_TIGHTER: dict[str, Callable[[Any, Any], bool]] = {
    "fail-on": _superset,
    "fail-level": _lower_level,
    "max-faults": _at_most(math.inf),
    "max-outage": _at_most(math.inf, duration=True),
    "max-dead": _at_most(0.0, duration=True),  # without it every dead-engine window fails
    "wedge-after": _at_most(600.0, duration=True),  # its default: 10 minutes
    "interval": _at_most(math.inf),  # watch polls at least this often
    "fail-on-empty": _true_or_same,
    "strict": _true_or_same,
    "redact": _true_or_same,
}


KEY_CLASSES: dict[KeyClass, frozenset[str]] = {
    KeyClass.display: frozenset(
        {
            "color",
            "quiet",
            "format",
            "kind",
            "priority",
            "lines",
            "limit",
            "no-pager",
            "all",
            "show-unparsed",
            "by",
            "bell",
            "debug",
            "sarif-root",
        }
    ),
    KeyClass.parsing: frozenset({"tz", "host", "host-from", "os", "overlay-gap"}),
    KeyClass.stricter: frozenset(_TIGHTER),
    KeyClass.runs: frozenset({"on-fault", "on-dead", "command-timeout", "exit-on-dead"}),
    KeyClass.writes: frozenset({"output"}),
    # watch's probe: a URL it asks, and the key it sends there
    KeyClass.sends: frozenset({"probe", "probe-model", "probe-timeout", "probe-every", "probe-key-file"}),
    KeyClass.reads: frozenset({"base-path", "hosts", "os-history", "overlay", "from-start", "redact-key", "probes"}),
    KeyClass.loosens: frozenset({"since", "until", "force", "exit-at-end"}),
}


# Options that choose the configuration itself: no file sets them.
NOT_CONFIGURABLE = frozenset({"config"})


def key_class(key: str) -> KeyClass | None:
    """The class of an option's key; None for one nobody has classified (a found file may not set it)."""
    return next((kind for kind, keys in KEY_CLASSES.items() if key in keys), None)


def user_config_dir() -> Path:
    """The user's own config folder: ``$XDG_CONFIG_HOME/logscan`` (an absolute path), else ``~/.config/logscan``."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".config") / "logscan"


@dataclass(frozen=True)
class ConfigFile:
    """One file's logscan table, and whether it may set every key (the user's own or named) or not (found)."""

    path: Path
    table: dict[str, Any]
    trusted: bool

    def describe(self) -> str:
        return f"{self.path}" if self.trusted else f"{self.path} (found from the current folder upward)"


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest configuration from ``start`` upward, and its logscan table; None when there is none."""
    for folder in (start, *start.parents):
        own = folder / OWN_FILE
        if own.is_file():
            return own, _logscan_table(own) or {}
        project = folder / PYPROJECT
        if project.is_file():
            table = _logscan_table(project)
            if table is not None:
                return project, table
    return None


def _logscan_table(path: Path) -> dict[str, Any] | None:
    """A file's logscan settings: a ``pyproject.toml``'s ``[tool.logscan]`` (None without one), else its
    top, or its ``[tool.logscan]`` when that is all it holds (the pyproject form copied into a file of its own)."""
    content = _read(path)
    tool = content.get("tool", {})
    copied = set(content) == {"tool"} and isinstance(tool, dict) and set(tool) == {"logscan"}
    if path.name != PYPROJECT and not copied:
        return content
    table = tool.get("logscan") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise LogscanError(f"{path}: [tool.logscan] must be a table")
    return table


def _read(path: Path) -> dict[str, Any]:
    import tomllib  # here, not at import: a run with no configuration file never needs it

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LogscanError(f"{path}: cannot read the configuration ({exc})") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise LogscanError(f"{path}: cannot read the configuration (nested too deeply)") from None


def config_files(named: Path | None, start: Path) -> list[ConfigFile]:
    """The files that give defaults, lowest first: the user's own, then the named or the found one."""
    files = []
    own = user_config_dir() / USER_FILE
    if own.is_file():
        files.append(ConfigFile(own, _logscan_table(own) or {}, trusted=True))
    if named is not None:
        table = _logscan_table(named)
        if table is None:
            raise LogscanError(f"{named}: no [tool.logscan] table")
        files.append(ConfigFile(named, table, trusted=True))
    else:
        found = find_config(start)
        if found is not None:
            files.append(ConfigFile(*found, trusted=False))
    return files


def _option_names(command: Any) -> dict[str, TyperOption]:
    """The options a configuration may set for ``command``, by their long names without dashes."""
    names: dict[str, TyperOption] = {}
    for param in command.params:
        if isinstance(param, TyperOption) and not param.hidden:
            for flag in param.opts:
                if flag.startswith("--") and flag[2:] not in NOT_CONFIGURABLE:
                    names[flag[2:]] = param
    return names


def option_keys(group: TyperGroup) -> dict[str, list[str]]:
    """Every key a configuration file may hold, and the commands that take it."""
    keys: dict[str, list[str]] = {}
    for name, command in group.commands.items():
        for key in _option_names(command):
            keys.setdefault(key, []).append(name)
    return keys


def _entries(config: ConfigFile, commands: Mapping[str, Any], command: str) -> Iterator[tuple[str, Any]]:
    """The file's (key, value) pairs for ``command``, the shared ones first; a key no command takes is refused."""
    taken = {name: _option_names(each) for name, each in commands.items()}
    for key, value in config.table.items():
        if isinstance(value, dict):
            if key not in commands:
                raise LogscanError(f"{config.path}: [{key}] is no logscan command (commands: {', '.join(commands)})")
            for inner in value:
                if inner not in taken[key]:
                    raise LogscanError(f"{config.path}: {inner!r} is no option of logscan {key}")
            continue
        if not any(key in options for options in taken.values()):
            raise LogscanError(f"{config.path}: {key!r} is no option of any logscan command")
        if key in taken[command]:
            yield key, value
    yield from config.table.get(command, {}).items()


def _value(param: TyperOption, value: Any) -> Any:
    """A TOML value as the option takes it: a list is one comma list unless the option repeats."""
    if isinstance(value, list) and not param.multiple:
        return ",".join(str(item) for item in value)
    if param.multiple and not isinstance(value, list):
        return [value]
    return value


def _checked(ctx: typer.Context, where: Path, key: str, param: TyperOption, value: Any) -> Any:
    """``value`` as the option takes it, or a one-line error naming the file and the key."""
    problem = _problem(ctx, key, param, value)
    if problem is not None:
        raise LogscanError(f"{where}: {key} = {repr(value)[:60]}: {problem}")
    return _value(param, value)


def _problem(ctx: typer.Context, key: str, param: TyperOption, value: Any) -> str | None:
    """What is wrong with a TOML value for an option; None: nothing (TOML's own types are checked
    first, so that click's conversion never meets a number where it wants text, or infinity)."""
    if param.is_flag:
        return None if isinstance(value, bool) else "must be true or false"
    items = value if isinstance(value, list) else [value]
    number = param.type.name.removesuffix(" range")  # click's public names of its types: int, float, int range …
    if number in ("int", "float"):
        if not all(isinstance(item, int | float) and not isinstance(item, bool) for item in items):
            return "must be a number"
        if not all(math.isfinite(item) for item in items):
            return "must be a finite number"
        if number == "int" and any(isinstance(item, float) for item in items):
            return "must be a whole number"
    elif not all(isinstance(item, str) for item in items):
        return "must be a string (in quotes) or a list of strings"
    try:
        param.type_cast_value(ctx, _value(param, value))
    except typer.TyperException as exc:  # typer's public base of click's exceptions
        return exc.format_message()
    except (TypeError, ValueError, OverflowError) as exc:
        return f"not a value of --{key} ({exc})"
    return None


def command_defaults(ctx: typer.Context, named: Path | None) -> dict[str, Any]:
    """click's ``default_map`` for the command of ``ctx``: its options' defaults from the configuration
    files, with a line on stderr for each file used and each key a found file may not set."""
    group = ctx.parent.command if ctx.parent is not None else None
    if not isinstance(group, TyperGroup) or ctx.info_name is None:
        return {}
    options = _option_names(ctx.command)
    defaults: dict[str, Any] = {}
    notes = []  # said once every file is read: a bad file is its one-line error alone
    for config in config_files(named, Path.cwd()):
        notes.append(f"configuration: {config.describe()}")
        for key, raw in _entries(config, group.commands, ctx.info_name):
            param = options[key]
            value = _checked(ctx, config.path, key, param, raw)
            if not config.trusted:
                refusal = _refusal(key, value, defaults.get(str(param.name), param.default))
                if refusal is not None:
                    notes.append(f"{config.path}: ignored {key!r}: {refusal}")
                    continue
            defaults[str(param.name)] = value
    sys.stderr.writelines(f"logscan: {note}\n" for note in notes)
    return defaults


def _refusal(key: str, value: Any, current: Any) -> str | None:
    """Why a found file may not set ``key`` to ``value``, ``current`` the value in force without it; None: it may."""
    kind = key_class(key)
    trusted_places = f"give it on the command line, with --config FILE or in {user_config_dir() / USER_FILE}"
    if kind is None or kind not in FOUND_FILE_MAY_SET:
        what = kind.value if kind is not None else "is not classified"
        return f"it {what}, and a file found in the folder may not ({trusted_places})"
    if kind is KeyClass.stricter and not _TIGHTER[key](value, current):
        return f"a file found in the folder may only make it stricter ({trusted_places})"
    return None


def _apply(ctx: typer.Context, _param: Any, value: str | None) -> None:
    """``--config``, processed before the command's other options: the files give their defaults."""
    if not ctx.resilient_parsing:  # not while the shell completes a word
        NAMED_CONFIG[:] = [Path(value).expanduser()] if value else []  # an input like any other: no -o may replace it
        ctx.default_map = command_defaults(ctx, Path(value).expanduser() if value else None)


def config_option() -> TyperOption:
    """``--config FILE``, which every command takes (``LogscanGroup`` adds it)."""
    return TyperOption(
        param_decls=["--config"],
        metavar="FILE",
        is_eager=True,
        expose_value=False,
        callback=_apply,
        help="Take the options' defaults from FILE (a .logscan.toml, or a pyproject.toml's [tool.logscan]), trusted "
        "like the command line, instead of the nearest such file found from the current folder upward (that one may "
        "not run or write anything, choose inputs or loosen check). ~/.config/logscan/config.toml applies beneath.",
    )
