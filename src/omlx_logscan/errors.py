"""Errors a user can cause, each with the exit code the CLI documents."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2
EXIT_DEAD = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130  # Ctrl-C in a batch command, as a shell reports SIGINT


class LogscanError(Exception):
    """A problem with the user's input or options; printed as one line, never a traceback."""

    exit_code = EXIT_INPUT


class InputError(LogscanError):
    """A path that cannot be read as an oMLX log."""


class NotOmlxLog(InputError):
    """Input in which nothing is recognisably oMLX: refused (unless --force) rather than given a clean bill."""
