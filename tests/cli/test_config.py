"""Configuration files: a file found in the folder is data, not commands (issue 29, item 5)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.core import TyperGroup
from typer.testing import CliRunner

from conftest import EXAMPLE, ROOT
from omlx_logscan.cli import app
from omlx_logscan.cli.config import FOUND_FILE_MAY_SET, KEY_CLASSES, KeyClass, option_keys


def group() -> TyperGroup:
    found = typer.main.get_command(app)
    assert isinstance(found, TyperGroup)
    return found


# A value for every key a configuration may hold, other than its default, that the option takes.
SAMPLES: dict[str, Any] = {
    "all": True,
    "base-path": "/elsewhere",
    "bell": True,
    "by": "omlx",
    "color": "never",
    "command-timeout": 7.0,
    "debug": True,
    "exit-at-end": True,
    "exit-on-dead": True,
    "fail-on": ["penalty_box", "dead_engine", "crash", "unparsed_gpu_error", "timeout"],
    "fail-on-empty": True,
    "force": True,
    "format": "json",
    "from-start": True,
    "host": "mac-07",
    "host-from": "folder",
    "hosts": "hosts.toml",
    "interval": 0.2,
    "kind": ["gpu_error"],
    "limit": 3,
    "lines": 3,
    "priority": "err",
    "no-pager": True,
    "max-dead": "5m",
    "max-faults": 2,
    "max-outage": "5m",
    "on-dead": "touch PWNED",
    "on-fault": "touch PWNED",
    "os": ["27.0@2026-09-15 17:41"],
    "os-history": ["history.txt"],
    "output": "../victim.txt",
    "overlay": ["gpu=other.log"],
    "overlay-gap": "90s",
    "probe": "http://attacker.example:8000",
    "probe-every": "1m",
    "probe-model": "some-model",
    "probe-timeout": "5s",
    "probes": "watch.ndjson",
    "quiet": True,
    "redact": True,
    "redact-key": "fleet.key",
    "sarif-root": "/repo",
    "show-unparsed": True,
    "since": "2099-01-01",
    "strict": True,
    "tz": "UTC",
    "until": "2000-01-01",
    "wedge-after": "5m",
}


# A check limit whose absence is the strictest setting: any value loosens it (without --max-dead every
# dead-engine window fails).
LOOSER_THAN_UNSET = {"max-dead"}


def test_every_option_a_file_can_set_is_in_exactly_one_class() -> None:
    """A new option is refused from a found file until someone classifies it (and gives it a sample here)."""
    keys = set(option_keys(group()))
    for (one, first), (other, second) in itertools.combinations(KEY_CLASSES.items(), 2):
        assert not first & second, f"{sorted(first & second)} both {one.name} and {other.name}"
    classified = set().union(*KEY_CLASSES.values())
    assert keys - classified == set(), "options in no class"
    assert classified - keys == set(), "classified keys that no command takes"
    assert set(SAMPLES) == keys
    assert KeyClass.runs not in FOUND_FILE_MAY_SET and KeyClass.writes not in FOUND_FILE_MAY_SET


def _parsed(command: str, folder: Path, args: list[str]) -> dict[str, Any]:
    """The values ``logscan COMMAND ARGS`` would run with, started in ``folder`` (the command itself not run)."""
    app_group = group()
    before = Path.cwd()
    os.chdir(folder)
    try:
        with (
            app_group.make_context("logscan", [command, *args]) as parent,
            app_group.commands[command].make_context(command, list(args), parent=parent) as ctx,
        ):
            return dict(ctx.params)
    finally:
        os.chdir(before)


def _cases() -> list[tuple[str, str]]:
    return sorted((key, commands[0]) for key, commands in option_keys(group()).items())


@pytest.mark.slow
@pytest.mark.parametrize(("key", "command"), _cases(), ids=[key for key, _ in _cases()])
def test_a_found_file_sets_only_what_shows_or_reads_or_tightens(
    key: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "bundle" / "inner"
    bundle.mkdir(parents=True)
    found = tmp_path / "bundle" / ".logscan.toml"
    setting = _toml(command, key, SAMPLES[key])
    found.write_text(setting)
    param = next(p for p in group().commands[command].params if f"--{key}" in p.opts)
    untouched = _parsed(command, tmp_path, [])[str(param.name)]
    taken = _parsed(command, bundle, [])[str(param.name)]
    said = capsys.readouterr().err
    assert f"configuration: {found} (found from the current folder upward)" in said
    kinds = [kind for kind, keys in KEY_CLASSES.items() if key in keys]
    if key in LOOSER_THAN_UNSET:
        assert taken == untouched and f"{found}: ignored {key!r}: a file found in the folder may only make" in said
    elif kinds[0] in FOUND_FILE_MAY_SET:
        assert taken != untouched, f"{key} from a found file was not taken"
        assert "ignored" not in said
    else:
        assert taken == untouched, f"{key} ({kinds[0].name}) taken from a found file"
        assert said.count("\n") == 2 and f"{found}: ignored {key!r}: it {kinds[0].value}" in said
    named = tmp_path / "mine.toml"
    named.write_text(setting)
    assert _parsed(command, bundle, ["--config", str(named)])[str(param.name)] != untouched  # trusted in full
    user = tmp_path / "xdg" / "logscan"
    user.mkdir(parents=True)
    (user / "config.toml").write_text(setting)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert _parsed(command, tmp_path, [])[str(param.name)] != untouched


def _toml(command: str, key: str, value: Any) -> str:
    import json

    return f"[{command}]\n{key} = {json.dumps(value)}\n"


def test_a_found_file_may_only_tighten_what_the_user_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "xdg" / "logscan"
    user.mkdir(parents=True)
    (user / "config.toml").write_text('[check]\nmax-faults = 3\nmax-dead = "10m"\nfail-on = ["crash", "timeout"]\n')
    (tmp_path / ".logscan.toml").write_text('[check]\nmax-faults = 5\nmax-dead = "5m"\nfail-on = ["crash"]\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    values = _parsed("check", tmp_path, [])
    assert values["max_faults"] == 3 and values["max_dead"] == "5m" and values["fail_on"] == "crash,timeout"
    said = capsys.readouterr().err
    assert "ignored 'max-faults': a file found in the folder may only make it stricter" in said
    assert "ignored 'fail-on'" in said and "ignored 'max-dead'" not in said


ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "omlx_logscan", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**ENV, **env},
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.slow
def test_a_log_bundle_cannot_overwrite_run_or_pass_a_failing_check(tmp_path: Path) -> None:
    """The attack of issue 29: a .logscan.toml shipped in a bundle, and ``logscan check`` run inside it."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / ".logscan.toml").write_text(
        'output = "../victim.txt"\nsince = "2099-01-01"\nforce = true\n'
        '[check]\nfail-on = ["timeout"]\nmax-faults = 100\n[watch]\non-fault = "touch PWNED"\n'
    )
    result = run(["check", str(EXAMPLE), "-q"], cwd=bundle)
    assert result.returncode == 1, result.stderr  # the penalty box still fails
    assert victim.read_text() == "keep me\n" and "penalty_box" in result.stdout
    notes = result.stderr.splitlines()
    assert notes[0] == f"logscan: configuration: {bundle / '.logscan.toml'} (found from the current folder upward)"
    ignored = {line.split("ignored ")[1].split(":")[0] for line in notes[1:]}
    assert ignored == {"'output'", "'since'", "'force'", "'fail-on'"}  # max-faults 100 tightens: no limit before
    named = run(["check", str(EXAMPLE), "-q", "--config", str(bundle / ".logscan.toml")], cwd=bundle)
    assert named.returncode == 0, named.stderr  # named, the same file is the user's word: its window is empty
    assert victim.read_text() != "keep me\n"  # and its -o
    assert not (bundle / "PWNED").exists() and not (tmp_path / "PWNED").exists()


BAD_VALUES = {
    "quiet = 7\n": "quiet = 7: must be true or false",
    "[check]\nmax-faults = inf\n": "max-faults = inf: must be a finite number",
    "[check]\nmax-faults = nan\n": "max-faults = nan: must be a finite number",
    "[check]\nmax-faults = 1e300\n": "max-faults = 1e+300: must be a whole number",
    "[check]\nmax-faults = true\n": "max-faults = True: must be a number",
    "tz = 5\n": "tz = 5: must be a string",
    "[check]\nfail-on = [1, 2]\n": "fail-on = [1, 2]: must be a string",
    "[watch]\ninterval = []\n": "interval = []: ",
    '[watch]\ninterval = "soon"\n': "interval = 'soon': must be a number",
    "x = " + "[" * 3000 + "]" * 3000 + "\n": "nested too deeply",
    "x = " + "{a=" * 3000 + "1" + "}" * 3000 + "\n": "nested too deeply",
    "[check]\nsince = {a = 1}\n": "since",
    "[check]\nquiet = 7\n": "must be true or false",
    "[tool]\n": "[tool] is no logscan command",
}


@pytest.mark.slow
@pytest.mark.parametrize("content", list(BAD_VALUES), ids=[c[:20] for c in BAD_VALUES])
def test_a_bad_configuration_is_one_line_and_exit_2(content: str, tmp_path: Path) -> None:
    (tmp_path / ".logscan.toml").write_text(content)
    command = "watch" if "[watch]" in content else "check"
    args = [command, str(EXAMPLE), "-q", *(["--exit-at-end"] if command == "watch" else [])]
    result = run(args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("logscan: error: "), result.stderr
    assert str(tmp_path / ".logscan.toml") in result.stderr and BAD_VALUES[content] in result.stderr
    named = run([*args, "--config", str(tmp_path / ".logscan.toml")], cwd=ROOT)
    assert named.returncode == 2 and named.stderr.count("\n") == 1, named.stderr


def test_a_logscan_toml_in_the_pyproject_form_is_read_as_its_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's example copied into .logscan.toml as it stands, ``[tool.logscan]`` and all (issue 30)."""
    (tmp_path / ".logscan.toml").write_text('[tool.logscan]\ntz = "UTC"\n\n[tool.logscan.check]\nmax-faults = 0\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", str(EXAMPLE), "-f", "json"])
    assert result.exit_code == 1 and '"max_faults"' in result.stdout, result.output
    assert "is no logscan command" not in result.stderr
