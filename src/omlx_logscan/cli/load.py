"""From the common options to an event stream or an investigation, with the accounting reported."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from omlx_logscan.errors import LogscanError


@contextmanager
def open_output(path: Path | None) -> Iterator[IO[str]]:
    if path is None:
        yield sys.stdout
        return
    try:
        handle = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise LogscanError(f"{path}: cannot write ({exc.strerror or exc})") from None
    with handle:
        yield handle


def load_investigation(
    paths: list[str],
    since: str | None,
    until: str | None,
    tz: str | None,
    *,
    quiet: bool,
    strict: bool,
    os_history: list[Path] | None,
    os_installs: list[str] | None,
    overlay: list[str] | None,
    overlay_gap: str | None,
) -> Any:
    """The options of timeline and report → one Investigation (bad options fail before the log is read)."""
    from omlx_logscan.analysis.investigation import investigate
    from omlx_logscan.inputs.overlays import parse_overlays
    from omlx_logscan.when import zone

    history = None
    if os_history or os_installs:  # plist and XML support load only when asked for
        from omlx_logscan.inputs.oshistory import load_history

        history = load_history(os_history or [], os_installs or [], zone(tz), use_system=False)
    overlays = parse_overlays(overlay, overlay_gap, tz)
    return investigate(load_stream(paths, since, until, tz, quiet=quiet, strict=strict), history, overlays)


def _warn_empty_window(whole: Any) -> None:
    """Say so when --since/--until leave nothing, and what the log does cover."""
    from omlx_logscan.timeutil import human_time

    firsts = [s.first for s in whole.sources if s.first]
    lasts = [s.last for s in whole.sources if s.last]
    covers = f"{human_time(min(firsts))} → {human_time(max(lasts))}" if firsts and lasts else "no timed records"
    sys.stderr.write(f"logscan: warning: no records in the --since/--until window; the log covers {covers}\n")


def load_stream(
    paths: list[str],
    since: str | None,
    until: str | None,
    tz: str | None,
    *,
    quiet: bool,
    strict: bool,
    keep_all: bool = False,
    keep_request_text: bool = False,
) -> Any:
    """Sources → event stream, with the time window applied and the accounting reported."""
    from omlx_logscan.cli.progress import progress_for
    from omlx_logscan.inputs.sources import resolve
    from omlx_logscan.output.text import print_accounting
    from omlx_logscan.stream.read import read_events
    from omlx_logscan.stream.window import within
    from omlx_logscan.timeutil import parse
    from omlx_logscan.when import parse_when, zone

    zone_info = zone(tz)
    lower = parse_when(since, zone_info, "--since") if since else None
    upper = parse_when(until, zone_info, "--until") if until else None
    if lower and upper and parse(lower) > parse(upper):
        raise LogscanError(f"--since {since!r} is after --until {until!r}")
    sources = resolve(paths)
    with progress_for(sources, quiet=quiet) as tick:
        whole = read_events(sources, keep_all=keep_all, keep_request_text=keep_request_text, progress=tick)
    stream = within(whole, lower, upper)
    print_accounting(stream, quiet=quiet)
    if (lower or upper) and not quiet and not any(s.first for s in stream.sources):
        _warn_empty_window(whole)
    if strict and stream.accounting.unparsed:
        raise LogscanError(
            f"{stream.accounting.unparsed} line(s) could not be parsed (--strict); "
            "see them with: logscan events --show-unparsed"
        )
    return stream
