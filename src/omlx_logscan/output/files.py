"""Output files written whole or not at all: a temporary file in the same folder, renamed over the
target once complete, so an interrupted run never leaves half a report where the old one was."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from omlx_logscan.errors import LogscanError

# The files this run reads, by (device, inode): whatever path reaches them, none is replaced.
_read: set[tuple[int, int]] = set()


def protect(statuses: Iterable[os.stat_result]) -> None:
    """Mark files as read by this run: an output that is one of them is refused, on every path that
    writes one (an error document too), even where the -o check before reading was not made."""
    _read.update((status.st_dev, status.st_ino) for status in statuses)


def refuse_read_file(path: Path) -> None:
    """Refuse to write ``path`` when it is a file this run reads."""
    try:
        status = path.stat()
    except OSError:
        return
    if (status.st_dev, status.st_ino) in _read:
        raise LogscanError(f"{path}: is read by this run; writing it would destroy it (choose another file)")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Signalled(BaseException):
    """SIGTERM or SIGHUP while a temporary file is written (a BaseException: no handler keeps it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, _frame: object) -> None:
    raise _Signalled(signum)


@contextmanager
def removed_on_signals(made: list[Path]) -> Iterator[None]:
    """While the block runs: SIGTERM and SIGHUP remove the temporary files or folders in ``made``
    (the block adds each as it makes it, so none is made before the handlers are in place), then end
    the process as they would have: a stopped run leaves nothing beside its target."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread handles signals
        yield
        return
    saved = {signum: signal.signal(signum, _stop) for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    except _Signalled as stopped:
        for temporary in made:
            if temporary.is_dir():
                shutil.rmtree(temporary, ignore_errors=True)
            else:
                temporary.unlink(missing_ok=True)
        signal.signal(stopped.signum, signal.SIG_DFL)
        os.kill(os.getpid(), stopped.signum)
        raise
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


@contextmanager
def replaced_whole(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``; renamed over it when the block ends normally, removed otherwise.
    What is there and is no regular file (``/dev/stdout``, ``/dev/null``, a named pipe) is written
    to itself: renaming over it would replace the device or the pipe, not fill it."""
    refuse_read_file(path)
    if path.exists() and not path.is_file():
        try:
            yield path
        except OSError as exc:  # a device that cannot take it (a full disk's /dev/full, a closed pipe)
            raise LogscanError(f"{path}: cannot write ({exc.strerror or exc})") from None
        return
    made: list[Path] = []
    try:
        with removed_on_signals(made):
            made.append(path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp"))  # named before it is made
            os.close(os.open(made[0], os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            yield made[0]
            os.chmod(made[0], 0o666 & ~_umask())  # 0600 while written; it would hide a report from its readers
            os.replace(made[0], path)
    except OSError as exc:
        raise LogscanError(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        for temporary in made:
            temporary.unlink(missing_ok=True)


@contextmanager
def text_replaced_whole(path: Path) -> Iterator[IO[str]]:
    """A text file to write that replaces ``path`` only once it is complete."""
    with replaced_whole(path) as temporary, open(temporary, "w", encoding="utf-8", newline="") as handle:
        yield handle
