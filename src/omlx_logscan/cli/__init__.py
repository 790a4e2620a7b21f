"""The ``logscan`` command line: options in, typed values to the core, a renderer out.

Each command lives in a module of its own and registers itself on ``app`` when imported;
``COMMANDS`` is the one list of them.
"""

from omlx_logscan.cli import bounds, check, events, report, sessions, timeline, watch
from omlx_logscan.cli.app import app, main

COMMANDS = (events, timeline, sessions, report, check, bounds, watch)

__all__ = ["COMMANDS", "app", "main"]
