"""The pager: output taller than the terminal goes through ``$LOGSCAN_PAGER``, else ``$PAGER``, else
``less -FRX``, as git and journalctl page theirs; shorter output is written as it is.

Only the environment names the pager: a configuration file found on disk never runs a command, so
no key of one names it (``no-pager`` only turns it off). Never when stdout is not a terminal, and
never for ``watch``, which prints as the log grows.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import subprocess

# shlex, shutil, signal and subprocess are imported where a pager is about to run: a run into a pipe
# never needs them.

PAGER_VARIABLE = "LOGSCAN_PAGER"
DEFAULT_PAGER = "less -FRX"
# less given as $PAGER with no options of its own: colour passed through (-R), no screen clearing (-X),
# and gone at once when the text fits after all (-F), as git sets it.
LESS_SETTINGS = ("LESS", "FRX")


def pager_command() -> list[str]:
    """The pager's words: the first of ``$LOGSCAN_PAGER`` and ``$PAGER`` that is set, else ``less -FRX``;
    one set but empty (or ``cat``) means no pager: an empty list."""
    import shlex

    for name in (PAGER_VARIABLE, "PAGER"):
        value = os.environ.get(name)
        if value is not None:
            try:
                words = shlex.split(value)
            except ValueError:  # unbalanced quotes: not a command anyone can run
                return []
            return [] if words in ([], ["cat"]) else words
    return shlex.split(DEFAULT_PAGER)


class PagedOutput(io.TextIOBase):
    """stdout on a terminal, held until it is as tall as the screen: then the pager starts with what
    was held and gets the rest as it comes. Output that ends shorter goes to the terminal as it is."""

    def __init__(self, terminal: TextIO, command: list[str], height: int) -> None:
        super().__init__()
        self._terminal = terminal
        self._command = command
        self._height = height
        self._held: list[str] = []
        self._lines = 0
        self._sink: IO[str] | None = None  # the pager's stdin, or the terminal when the pager could not start
        self._pager: subprocess.Popen[str] | None = None

    @property
    def encoding(self) -> str:  # type: ignore[override]  # the terminal's, which rich reads
        return self._terminal.encoding

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._terminal.fileno()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self._sink is not None:
            return self._sink.write(text)
        self._held.append(text)
        self._lines += text.count("\n")
        if self._lines >= self._height:
            self._start()
        return len(text)

    def flush(self) -> None:
        if self._sink is not None:
            self._sink.flush()

    def _start(self) -> None:
        import subprocess

        environment = dict(os.environ)
        environment.setdefault(*LESS_SETTINGS)
        try:
            self._pager = subprocess.Popen(
                self._command, stdin=subprocess.PIPE, env=environment, text=True, encoding=self.encoding
            )
            assert self._pager.stdin is not None
            self._sink = self._pager.stdin
        except OSError as exc:  # no such program, or not one that runs: the output is not lost
            sys.stderr.write(
                f"logscan: note: the pager {self._command[0]!r} did not start ({exc.strerror or exc}); "
                "output not paged (set $LOGSCAN_PAGER, or give --no-pager)\n"
            )
            self._sink = self._terminal
        held, self._held = "".join(self._held), []
        self._sink.write(held)

    def finish(self) -> None:
        """Write what is held, or close the pager and wait until the reader quits it."""
        if self._sink is None:
            self._terminal.write("".join(self._held))
            self._terminal.flush()
            return
        if self._pager is None:
            self._terminal.flush()
            return
        import signal

        with suppress(BrokenPipeError, OSError):  # the reader quit before the end: nothing more to show
            self._sink.close()
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the pager is the pager's
        try:
            self._pager.wait()
        finally:
            signal.signal(signal.SIGINT, interrupt)


@contextmanager
def paged(wanted: bool) -> Iterator[None]:
    """stdout through the pager for the block, when ``wanted`` (no ``--no-pager``, no ``-o``), stdout
    is a terminal and a pager is set; as it is otherwise."""
    command = pager_command() if wanted and sys.stdout.isatty() else []
    if not command:
        yield
        return
    import shutil

    terminal = sys.stdout
    output = PagedOutput(terminal, command, max(1, shutil.get_terminal_size().lines - 1))
    sys.stdout = output  # a text stream, as rich and print write to it
    try:
        yield
    finally:
        sys.stdout = terminal
        output.finish()
