"""Errors a user can cause, each with the exit code the CLI documents."""

from __future__ import annotations

from collections.abc import Iterable

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_INPUT = 2
EXIT_DEAD = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130  # Ctrl-C in a batch command, as a shell reports SIGINT


def did_you_mean(given: Iterable[str], choices: Iterable[str]) -> str:
    """``; did you mean gpu_error?`` naming the choice closest to each given value that looks like a
    typo of one, to end an error message with; empty when none is close."""
    from difflib import get_close_matches  # only on the way to an error

    known = {choice.lower(): choice for choice in choices}  # GPU_ERROR is gpu_error in the wrong case
    near = [known[match[0]] for name in given if (match := get_close_matches(name.lower(), list(known), n=1))]
    return f"; did you mean {', '.join(dict.fromkeys(near))}?" if near else ""


class LogscanError(Exception):
    """A problem with the user's input or options; printed as one line, never a traceback."""

    exit_code = EXIT_INPUT


class InputError(LogscanError):
    """A path that cannot be read as an oMLX log."""


class NotOmlxLog(InputError):
    """Input in which nothing is recognisably oMLX: refused (unless --force) rather than given a clean bill."""
