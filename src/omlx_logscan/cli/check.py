"""``logscan check``: the CI gate."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from omlx_logscan.analysis.rules import CHOOSABLE_RULES
from omlx_logscan.cli.load import load_stream
from omlx_logscan.cli.options import (
    CheckFormatOption,
    CommonOptions,
    MaxOutage,
    WedgeAfter,
    completing,
    logs_command,
)
from omlx_logscan.errors import LogscanError
from omlx_logscan.output.formats import CheckFormat

if TYPE_CHECKING:
    from omlx_logscan.analysis.check import CheckResult

DEFAULT_FAIL_ON = "penalty_box,dead_engine,crash,unparsed_gpu_error"


ERROR_RULE_HELP = (
    "error (not in the default) fails on failures other than GPU faults: records at ERROR or CRITICAL, "
    "tracebacks, HTTP 5xx answers (an HTTP 4xx answer is a rejected request, no failure)."
)


@logs_command()
def check(
    options: CommonOptions,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="RULES",
            autocompletion=completing(CHOOSABLE_RULES),
            help=f"Comma list of rules: {', '.join(CHOOSABLE_RULES)}. {ERROR_RULE_HELP}",
            show_default=DEFAULT_FAIL_ON.replace(",", ", "),  # spaces, so a narrow terminal breaks it there
        ),
    ] = DEFAULT_FAIL_ON,
    max_faults: Annotated[
        int | None,
        typer.Option("--max-faults", min=0, metavar="N", help="Also fail when there are more GPU faults than this."),
    ] = None,
    max_dead: Annotated[
        str | None,
        typer.Option(
            "--max-dead",
            metavar="DURATION",
            help="Fail on dead-engine windows only when the log proves them longer than this (10m, 2h, 1h30m): a "
            "window whose end lies between two records counts its shortest possible length. A window still open at "
            "the end of the log always fails.",
        ),
    ] = None,
    fail_on_empty: Annotated[
        bool,
        typer.Option(
            help="Fail (exit 1) when the --since/--until window holds no records, instead of passing with a note."
        ),
    ] = False,
    max_outage: MaxOutage = None,
    wedge_after: WedgeAfter = None,
    fmt: CheckFormatOption = None,
    sarif_root: Annotated[
        Path,
        typer.Option(
            "--sarif-root",
            metavar="DIR",
            help="With --format sarif: logs inside this folder (the repository checkout) are named relative to it, "
            "others by absolute file:// URI.",
        ),
    ] = Path("."),
) -> None:
    """A CI gate: exit 0 when the log shows none of the --fail-on failures, 1 when it does, 2 when it cannot check."""
    from omlx_logscan.cli.values import output_format
    from omlx_logscan.output.formats import write_check, write_check_error

    chosen = output_format(fmt, options.output, CheckFormat.text)
    try:
        result = _run(options, fail_on, max_faults, max_dead, (max_outage, wedge_after), fail_on_empty)
    except LogscanError as exc:  # a CI test reporter or code scanning should show why, not nothing
        write_check_error(chosen, str(exc), options.output)
        raise
    write_check(chosen, result, options.output, os.environ.get("GITHUB_STEP_SUMMARY"), sarif_root)
    _say_verdict(chosen, options, result, result.count("empty") > 0)  # load_stream said why on stderr
    if result.exit_code:
        raise typer.Exit(result.exit_code)


def _say_verdict(chosen: CheckFormat, options: CommonOptions, result: CheckResult, failed_empty: bool) -> None:
    """The verdict on stdout, for the CI log, unless stdout carries a document (JSON, JUnit, SARIF):
    the headline when the result went to a file, and why an empty window failed."""
    from omlx_logscan.cli.load import empty_window
    from omlx_logscan.output.findings import check_headline
    from omlx_logscan.output.formats import writing_stdout

    if options.output is None and chosen not in (CheckFormat.text, CheckFormat.github):
        return
    lines = [check_headline(result)] if options.output is not None else []
    if failed_empty:
        lines.append(f"logscan check: fail: {empty_window(options)} (--fail-on-empty)")
    with writing_stdout():
        sys.stdout.write("".join(line + "\n" for line in lines))


def _run(
    options: CommonOptions,
    fail_on: str,
    max_faults: int | None,
    max_dead: str | None,
    outages: tuple[str | None, str | None],
    fail_on_empty: bool,
) -> CheckResult:
    """The check's result, or a LogscanError when it cannot check; ``outages`` is (--max-outage,
    --wedge-after)."""
    from omlx_logscan.analysis.check import Rules, run_check
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.cli.values import duration_seconds, parse_fail_on, wedge_after_seconds

    max_outage, wedge_after = outages
    rules = Rules(
        parse_fail_on(fail_on),
        max_faults,
        duration_seconds(max_dead, "--max-dead") if max_dead is not None else None,
        duration_seconds(max_outage, "--max-outage") if max_outage is not None else None,
        fail_on_empty,
    )
    if not rules.names:
        raise LogscanError("nothing to check: give --fail-on rules, --max-faults or --max-dead")
    stream = load_stream(options)
    unreadable = [source.problem for source in stream.sources if source.problem]
    if unreadable:
        raise LogscanError(f"cannot check the whole input: {unreadable[0]}")
    return run_check(analyze(stream, wedge_after_s=wedge_after_seconds(wedge_after)), rules)
