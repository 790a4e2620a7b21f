"""Hook commands run by the watcher, bounded by a timeout, their output reported."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from omlx_logscan.inputs.hosts import this_host
from omlx_logscan.output.notices import Notice, hook_result_message
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.zone_clock import clock_for

OUTPUT_KEEP_CHARS = 4000  # how much of a hook command's output is reported
_TAIL_BYTES = 4 * OUTPUT_KEEP_CHARS  # enough bytes for that many characters, however they are encoded


@dataclass
class HookRun:
    """A running --on-dead / --on-fault command and where its output goes."""

    hook: str
    command: str
    session: int
    process: subprocess.Popen[bytes]
    output: IO[bytes]
    started: float

    def result(self, now: float, timeout: float) -> Notice | None:
        """The report once the command ended (or was killed for running too long); None while it runs."""
        code = self.process.poll()
        timed_out = code is None and now - self.started > timeout
        if timed_out:
            with contextlib.suppress(ProcessLookupError):  # it may have ended a moment ago
                os.killpg(self.process.pid, signal.SIGKILL)
            code = self.process.wait()
        if code is None:
            return None
        text = _tail(self.output)
        self.output.close()
        message = hook_result_message(self.hook, code, timed_out, timeout)
        data = {
            "hook": self.hook,
            "command": self.command,
            "session": self.session,
            "exit_code": code,
            "timed_out": timed_out,
            "output": text,
        }
        return Notice("command", message, data, text.splitlines())


def _tail(output: IO[bytes]) -> str:
    """The last ``OUTPUT_KEEP_CHARS`` characters of a command's output: only its tail is read, so
    a command that wrote gigabytes costs the watch no more memory than one that wrote a line."""
    size = output.seek(0, os.SEEK_END)
    output.seek(max(0, size - _TAIL_BYTES))
    return output.read(_TAIL_BYTES).decode("utf-8", errors="replace")[-OUTPUT_KEEP_CHARS:]


def hook_environment(hook: str, log: Path, session: int, dead_since: str | None, event: Event) -> dict[str, str]:
    """What a hook command learns from its environment (docs/watch.md lists these): times with the
    offset of the log's zone (this machine's, or ``--tz``, which the watch sets as ``TZ``), as in
    every other output, and the event as its NDJSON row, host included."""
    clock = clock_for(None)
    return {
        "LOGSCAN_HOOK": hook,
        "LOGSCAN_LOG": str(log),
        "LOGSCAN_SESSION": str(session),
        "LOGSCAN_DEAD_SINCE": clock.convert(dead_since) if dead_since else "",
        "LOGSCAN_EVENT": json.dumps(clock.row(event) | {"host": this_host()}, ensure_ascii=False, default=str),
    }
