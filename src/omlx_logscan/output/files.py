"""Output files written whole or not at all: a temporary file in the same folder, renamed over the
target once complete, so an interrupted run never leaves half a report where the old one was."""

from __future__ import annotations

import os
import tempfile
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
    try:
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise LogscanError(f"{path}: cannot write ({exc.strerror or exc})") from None
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 would hide a report from its readers
        os.replace(temporary, path)
    except OSError as exc:
        raise LogscanError(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        temporary.unlink(missing_ok=True)


@contextmanager
def text_replaced_whole(path: Path) -> Iterator[IO[str]]:
    """A text file to write that replaces ``path`` only once it is complete."""
    with replaced_whole(path) as temporary, open(temporary, "w", encoding="utf-8", newline="") as handle:
        yield handle
