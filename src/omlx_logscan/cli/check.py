"""``logscan check``: the CI gate."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from omlx_logscan.analysis.rules import CHOOSABLE_RULES, DEFAULT_FAIL_LEVEL, DEFAULT_RULES
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

DEFAULT_FAIL_ON = ",".join(DEFAULT_RULES)


def _rules_help() -> str:
    """Each rule and what it covers, for ``--fail-on``'s help."""
    from omlx_logscan.output.findings import rule_finds

    return "; ".join(f"{name}: {rule_finds(name)}" for name in CHOOSABLE_RULES)


FAIL_LEVELS = ("critical", "error", "warning", "notice")


@logs_command()
def check(
    options: CommonOptions,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            metavar="RULES",
            autocompletion=completing(CHOOSABLE_RULES),
            help="Comma list of rules. Without --fail-on and --fail-level, the default rules run and every incident "
            f"of severity error or worse fails; with --fail-on alone, only the rules named. {_rules_help()}.",
            show_default=DEFAULT_FAIL_ON.replace(",", ", "),  # spaces, so a narrow terminal breaks it there
        ),
    ] = None,
    fail_level: Annotated[
        str | None,
        typer.Option(
            "--fail-level",
            metavar="SEVERITY",
            autocompletion=completing(FAIL_LEVELS),
            help="Every incident of this severity or worse fails, by the rule of its kind (critical: crashes, fatal "
            "exits, reboots, dead engines, wedges; error: and GPU faults, errors, failed loads; warning: and rejected "
            "requests, memory pressure, possible wedges; notice: and aborts, fallbacks; docs/severity.md). Incidents "
            "under it are listed as warnings and fail nothing.",
            show_default=f"{DEFAULT_FAIL_LEVEL}, without --fail-on",
        ),
    ] = None,
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
        result = _run(options, (fail_on, fail_level), max_faults, max_dead, (max_outage, wedge_after), fail_on_empty)
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
    fail: tuple[str | None, str | None],
    max_faults: int | None,
    max_dead: str | None,
    outages: tuple[str | None, str | None],
    fail_on_empty: bool,
) -> CheckResult:
    """The check's result, or a LogscanError when it cannot check; ``fail`` is (--fail-on, --fail-level),
    ``outages`` (--max-outage, --wedge-after)."""
    from omlx_logscan.analysis.check import Rules, run_check
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.cli.values import duration_seconds, parse_fail_level, parse_fail_on, wedge_after_seconds

    max_outage, wedge_after = outages
    fail_on, fail_level = fail
    if fail_on is None and fail_level is None:  # the defaults: today's rules and every incident of error or worse
        fail_level = DEFAULT_FAIL_LEVEL
    rules = Rules(
        parse_fail_on(fail_on if fail_on is not None else DEFAULT_FAIL_ON),
        max_faults,
        duration_seconds(max_dead, "--max-dead") if max_dead is not None else None,
        duration_seconds(max_outage, "--max-outage") if max_outage is not None else None,
        fail_on_empty,
        parse_fail_level(fail_level) if fail_level is not None else None,
    )
    if not rules.names:
        raise LogscanError("nothing to check: give --fail-on rules, --max-faults or --max-dead")
    stream = load_stream(options)
    unreadable = [source.problem for source in stream.sources if source.problem]
    if unreadable:
        raise LogscanError(f"cannot check the whole input: {unreadable[0]}")
    return run_check(analyze(stream, wedge_after_s=wedge_after_seconds(wedge_after)), rules)
