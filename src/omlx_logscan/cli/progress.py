"""A progress bar on stderr for big inputs, only when someone is watching."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from omlx_logscan.inputs.sources import Source

PROGRESS_MIN_BYTES = 50 * 1024 * 1024


def _total_bytes(sources: list[Source]) -> int:
    total = 0
    for source in sources:
        if source.path is not None and not source.skipped:
            try:
                total += source.path.stat().st_size
            except OSError:
                continue
    return total


@contextmanager
def progress_for(sources: list[Source], *, quiet: bool) -> Iterator[Callable[[int], None] | None]:
    """Yield a callback taking bytes read, or None when no bar should be shown."""
    total = _total_bytes(sources)
    if quiet or total < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    from omlx_logscan.output.text import console

    with Progress(
        "scanning",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console(sys.stderr),
        transient=True,
    ) as bar:
        task = bar.add_task("scan", total=total)
        yield lambda done: bar.advance(task, done)
