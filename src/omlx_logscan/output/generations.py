"""A folder of tables replaced all at once: what a run writes is seen whole or not at all.

An export writes several tables, each many files; no single rename replaces them all. So the
tables live in a generation, ``DIR/.logscan/gen-N/TABLE/…``, and ``DIR/TABLE`` is a fixed link to
``.logscan/current/TABLE``. A run copies the current generation by hard links, changes the copy,
and makes ``current`` point at it with one rename: a run stopped at any moment (Ctrl-C, SIGKILL)
leaves the old generation or the new, never a mix, and readers of ``DIR/TABLE/*/*/*.parquet``
never see the copy being written (it is under the hidden ``.logscan``). The next run removes
what a stopped run left.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from omlx_logscan.errors import LogscanError
from omlx_logscan.output.files import removed_on_signals

STATE = ".logscan"  # hidden: no reader's glob of DIR/TABLE/… reaches into it
CURRENT = "current"
_GENERATION = re.compile(r"gen-(\d+)")


@contextmanager
def next_generation(root: Path, tables: list[str]) -> Iterator[Path]:
    """A copy of ``root``'s tables to change (each ``TABLE`` a folder in it); made current when the
    block ends normally, removed otherwise. One run at a time holds ``root``."""
    try:
        state = root / STATE
        state.mkdir(parents=True, exist_ok=True)
        with open(state / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            current = _settled(root, state, tables)
            number = int(_GENERATION.fullmatch(current.name)[1]) + 1 if current else 1  # type: ignore[index]
            staged = state / f"gen-{number}"
            with removed_on_signals([staged]):
                try:
                    if current is not None:
                        shutil.copytree(current, staged, copy_function=os.link)
                    for table in tables:
                        (staged / table).mkdir(parents=True, exist_ok=True)
                    yield staged
                except BaseException:
                    shutil.rmtree(staged, ignore_errors=True)
                    raise
            _point(state / CURRENT, staged.name)  # the one step that makes the new tables seen
            if current is not None:
                shutil.rmtree(current, ignore_errors=True)
    except OSError as exc:
        raise LogscanError(f"{root}: cannot write ({exc.strerror or exc})") from None


def _point(link: Path, target: str) -> None:
    """``link`` names ``target`` afterwards, replaced in one rename (never missing in between)."""
    fresh = link.with_name(f"{link.name}.new")
    fresh.unlink(missing_ok=True)
    fresh.symlink_to(target)
    os.replace(fresh, link)


def _settled(root: Path, state: Path, tables: list[str]) -> Path | None:
    """The current generation, once what a stopped run left is gone and every ``root/TABLE`` is the
    link to it; tables of an export made before generations are moved into the first one."""
    link = state / CURRENT
    current = state / os.readlink(link) if link.is_symlink() else None
    for stale in state.glob("gen-*"):
        if current is None or stale.name != current.name:
            shutil.rmtree(stale, ignore_errors=True)
    legacy = [table for table in tables if (root / table).is_dir() and not (root / table).is_symlink()]
    if legacy and current is None:  # first the old tables as a generation, unchanged
        current = state / "gen-0"
        for table in legacy:
            shutil.copytree(root / table, current / table, copy_function=os.link, ignore=_staging)
        _point(link, current.name)
    for table in tables:
        place = root / table
        if place.is_symlink():
            continue
        if place.is_dir():  # now also in the current generation: the folder gives way to the link
            moved = state / f"old-{table}"
            shutil.rmtree(moved, ignore_errors=True)
            os.replace(place, moved)
            shutil.rmtree(moved)
        elif place.exists():
            raise LogscanError(f"{place}: is in the way of the {table} table (not a folder)")
        place.symlink_to(Path(STATE, CURRENT, table))
    return current


def _staging(_folder: str, names: list[str]) -> list[str]:
    """What older exports left of a stopped run (``day=….writing``): not data, never carried over."""
    return [name for name in names if name.endswith(".writing")]
