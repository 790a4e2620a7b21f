"""The ``logscan`` command line: options in, typed values to the core, a renderer out.

Each command lives in a module of its own; ``COMMANDS`` is the one list of them, and registering
them from it, in its order, is what sets the order ``logscan --help`` lists them in.
"""

from omlx_logscan.cli import bounds, check, events, export, fleet, report, schema, sessions, timeline, watch
from omlx_logscan.cli.app import app, main
from omlx_logscan.cli.examples import epilog

COMMANDS = (
    events.events,
    timeline.timeline,
    sessions.sessions,
    bounds.bounds,
    report.report,
    check.check,
    watch.watch,
    export.export,
    fleet.fleet,
    schema.schema,
)

for _command in COMMANDS:
    app.command(epilog=epilog(_command.__name__))(_command)

__all__ = ["COMMANDS", "app", "main"]
