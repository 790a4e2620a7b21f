"""``logscan watch``: follow a live oMLX log and act when the engine goes generation-dead."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import tzinfo
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer

from omlx_logscan.cli.options import (
    CommonOptions,
    Priority,
    Probe,
    ProbeEvery,
    ProbeKeyFile,
    ProbeModel,
    ProbeTimeout,
    WatchFormatOption,
    WatchKinds,
    WedgeAfter,
    logs_command,
)
from omlx_logscan.errors import LogscanError
from omlx_logscan.output.formats import WatchFormat, watch_sink

if TYPE_CHECKING:
    from omlx_logscan.watch.probe_client import ProbeTarget

MAX_INTERVAL_S = 3600.0  # polling less often is no watch; far longer sleeps overflow time.sleep
PROBE_TIMEOUT_S = 120.0  # --probe-timeout: as long as a slow first token can take on a big model


def _settings_folder(base_path: str | None, followed: Path) -> Path:
    """The folder of oMLX's settings: --base-path; else that of the followed log when it is oMLX's own
    file log with its settings beside (``<base>/logs/server.log``); else $OMLX_BASE_PATH or ~/.omlx."""
    from omlx_logscan.cli.values import base_folder

    own = followed.parent.parent
    if base_path is None and followed.parent.name == "logs" and (own / "settings.json").is_file():
        return own
    return base_folder(base_path)


def _probe_target(
    spec: str | None, settings_folder: Path, model: str | None, timeout: str | None, key_file: Path | None
) -> ProbeTarget | None:
    """``--probe``: the server's URL (given, or from oMLX's settings), the API key and the probe's limits."""
    if spec is None:
        for option, value in (("--probe-model", model), ("--probe-timeout", timeout), ("--probe-key-file", key_file)):
            if value is not None:
                raise LogscanError(f"{option}: needs --probe")
        return None
    from omlx_logscan.cli.values import duration_seconds
    from omlx_logscan.watch.probe_client import (
        API_KEY_VARIABLE,
        ProbeTarget,
        probe_url,
        read_settings,
        settings_key,
        settings_url,
    )

    settings_file = settings_folder / "settings.json"
    settings = read_settings(settings_file) if spec == "auto" or settings_file.is_file() else {}
    url = settings_url(settings) if spec == "auto" else probe_url(spec)
    found = [
        (_key_of(key_file) if key_file is not None else None, f"--probe-key-file {key_file}"),
        (os.environ.get(API_KEY_VARIABLE), f"${API_KEY_VARIABLE}"),
        (settings_key(settings), f"auth.api_key of {settings_file}"),
    ]
    key, key_from = next(((key, where) for key, where in found if key), (None, None))
    wait = PROBE_TIMEOUT_S if timeout is None else duration_seconds(timeout, "--probe-timeout")
    return ProbeTarget(url, key, model or None, wait, key_from)


def _key_of(path: Path) -> str:
    """The API key in ``path``: its first line, stripped (never shown in an error)."""
    try:
        with open(path.expanduser(), encoding="utf-8") as file:
            key = file.readline(4096).strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not text"
        raise LogscanError(f"--probe-key-file {path}: cannot read ({reason})") from None
    if not key:
        raise LogscanError(f"--probe-key-file {path}: its first line holds no key")
    return key


@contextmanager
def _appended(output: Path | None) -> Iterator[IO[str]]:
    """``-o FILE`` of a watch: appended to, line by line, as ``tee -a`` would; stdout without one."""
    if output is None:
        yield sys.stdout
        return
    try:
        handle = open(output, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise LogscanError(f"-o {output}: cannot write ({exc.strerror or exc})") from None
    with handle:
        yield handle


@contextmanager
def _log_zone(tz: tzinfo | None) -> Iterator[None]:
    """``--tz``: the watch reads the wall clock ("now", how long ago) in the log's zone, not the machine's."""
    if tz is None or not hasattr(time, "tzset"):
        yield
        return
    saved = os.environ.get("TZ")
    os.environ["TZ"] = str(tz)
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


@contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """Ctrl-C and SIGTERM ask the watch loop to stop cleanly instead of killing it mid-step."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda _signum, _frame: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@logs_command(follow=True)
def watch(
    options: CommonOptions,
    from_start: Annotated[bool, typer.Option(help="Replay what the file already holds, then follow.")] = False,
    exit_at_end: Annotated[
        bool,
        typer.Option(
            help="Replay the file from its start as a finished log, print the summary and exit 0 (3 with "
            "--exit-on-dead if the engine is dead at its end) instead of following. The state then is the "
            "one timeline reads."
        ),
    ] = False,
    interval: Annotated[
        float, typer.Option(metavar="SECONDS", help="Seconds between polls of the file (0.01 to 3600).")
    ] = 0.5,
    on_dead: Annotated[
        str | None,
        typer.Option(
            metavar="CMD",
            help="Shell command to run once per outage in which the process stays alive: a dead-engine window or "
            "a wedge (e.g. a restart); never after a fatal exit or a crash.",
        ),
    ] = None,
    on_fault: Annotated[
        str | None, typer.Option(metavar="CMD", help="Shell command to run on every new GPU fault incident.")
    ] = None,
    exit_on_dead: Annotated[
        bool, typer.Option(help="Exit with code 3 when the engine is dead (after --on-dead finished).")
    ] = False,
    command_timeout: Annotated[
        float,
        typer.Option(metavar="SECONDS", help="Seconds a hook command may run before it is killed (at least 0.1)."),
    ] = 300.0,
    bell: Annotated[bool, typer.Option(help="Ring the terminal's bell with the dead-engine alert (table).")] = False,
    wedge_after: WedgeAfter = None,
    probe: Probe = None,
    probe_model: ProbeModel = None,
    probe_timeout: ProbeTimeout = None,
    probe_key_file: ProbeKeyFile = None,
    probe_every: ProbeEvery = None,
    kind: WatchKinds = None,
    priority: Priority = None,
    fmt: WatchFormatOption = None,
) -> None:
    """Follow a live log like tail -F; alert (and run --on-dead) when the engine enters the penalty box or
    wedges (requests keep arriving and none finishes: needs oMLX at DEBUG level), or, with --probe, when a
    one-token probe sent where the log cannot tell finds it generation-dead."""
    from omlx_logscan.cli.load import refuse_unrecognised_file
    from omlx_logscan.cli.values import (
        check_output,
        checked_kinds,
        checked_seconds,
        duration_seconds,
        log_path,
        priority_rank,
        wedge_after_seconds,
    )
    from omlx_logscan.watch.loop import Watcher, WatchOptions

    gc.enable()  # a watch runs for days: it needs the cycle collector the one-shot commands go without
    kinds = checked_kinds(kind)
    least = priority_rank(priority)
    interval = checked_seconds("--interval", interval, 0.01, MAX_INTERVAL_S)
    command_timeout = checked_seconds("--command-timeout", command_timeout, 0.1)
    path = options.paths[0] if options.paths else None
    # With --probe, --base-path names the server's settings as well: a PATH may go with it.
    followed = log_path(path, None if path is not None and probe is not None else options.base_path)
    if not options.force:
        refuse_unrecognised_file(followed)
    if options.output is not None:
        check_output(options.output, [("the followed log", followed)])
    settings_folder = _settings_folder(options.base_path, followed)
    target = _probe_target(probe, settings_folder, probe_model, probe_timeout, probe_key_file)
    if target is not None and exit_at_end:
        raise LogscanError("--probe: --exit-at-end reads a finished log, with no server to ask")
    every = duration_seconds(probe_every, "--probe-every") if probe_every is not None else None
    if every is not None and target is None:
        raise LogscanError("--probe-every: needs --probe")
    fmt = fmt or (WatchFormat.table if sys.stdout.isatty() and options.output is None else WatchFormat.ndjson)
    settings = WatchOptions(
        followed,
        from_start=from_start,
        interval=interval,
        on_dead=on_dead,
        on_fault=on_fault,
        exit_on_dead=exit_on_dead,
        command_timeout=command_timeout,
        kinds=kinds,
        least=least,
        exit_at_end=exit_at_end,
        wedge_after=wedge_after_seconds(wedge_after),
        probe=target,
        probe_every=every,
    )
    with _log_zone(options.tz), _appended(options.output) as out, _stop_on_signals() as stop:
        watcher = Watcher(settings, watch_sink(fmt, out, quiet=options.quiet, bell=bell))
        code = watcher.run(stop.is_set)
    sys.stderr.write(watcher.summary() + "\n")
    if code:
        raise typer.Exit(code)
