"""``logscan check``: the CI gate."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from omlx_logscan.analysis.rules import CHOOSABLE_RULES
from omlx_logscan.cli.load import load_stream
from omlx_logscan.cli.options import (
    CheckFormatOption,
    CommonOptions,
    logs_command,
)
from omlx_logscan.errors import EXIT_FINDINGS, LogscanError
from omlx_logscan.output.formats import CheckFormat

DEFAULT_FAIL_ON = "penalty_box,dead_engine,crash"


@logs_command()
def check(
    options: CommonOptions,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="RULES",
            help=f"Comma list of rules: {', '.join(CHOOSABLE_RULES)}.",
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
    fmt: CheckFormatOption = None,
) -> None:
    """A CI gate: exit 0 when the log shows none of the --fail-on failures, 1 when it does, 2 when it cannot check."""
    from omlx_logscan.analysis.check import Rules, run_check
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.cli.values import duration_seconds, output_format, parse_fail_on
    from omlx_logscan.output.formats import write_check
    from omlx_logscan.stream.window import is_empty

    rules = Rules(
        parse_fail_on(fail_on), max_faults, duration_seconds(max_dead, "--max-dead") if max_dead is not None else None
    )
    if not rules.names:
        raise LogscanError("nothing to check: give --fail-on rules, --max-faults or --max-dead")
    chosen = output_format(fmt, options.output, CheckFormat.text)
    stream = load_stream(options)
    unreadable = [source.problem for source in stream.sources if source.problem]
    if unreadable:
        raise LogscanError(f"cannot check the whole input: {unreadable[0]}")
    result = run_check(analyze(stream), rules)
    write_check(chosen, result, options.output, os.environ.get("GITHUB_STEP_SUMMARY"))
    if fail_on_empty and is_empty(stream):  # load_stream has said so on stderr
        raise typer.Exit(EXIT_FINDINGS)
    if result.exit_code:
        raise typer.Exit(result.exit_code)
