"""``logscan schema NAME``: the JSON Schema of one of the documents the tool writes."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from omlx_logscan.cli.app import guarded
from omlx_logscan.cli.options import Output, Quiet
from omlx_logscan.errors import LogscanError, did_you_mean
from omlx_logscan.output.jsonschemas import NAMES


@guarded
def schema(
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="NAME",
            help=f"One of: {', '.join(NAMES)} (event: one line of events -f ndjson).",
            show_default=False,
        ),
    ] = None,
    output: Output = None,
    quiet: Quiet = False,  # schema writes nothing on stderr but errors: taken so that -q works with every command
) -> None:
    """Print the JSON Schema (draft 2020-12) of a JSON document: timeline, events, sessions, bounds, check
    or fleet (their -f json output; the schema field of each names it), or event (one NDJSON row).

    The schema is one self-contained file (the shared parts embedded), for any validator:
    logscan schema timeline -o timeline.schema.json. Without NAME (or with a wrong one) it lists
    the names and exits 2.
    """
    from omlx_logscan.cli.values import output_path
    from omlx_logscan.output.formats import open_output
    from omlx_logscan.output.jsonschemas import bundled

    if name not in NAMES:
        asked = "which schema?" if name is None else f"no schema {name!r}:"
        raise LogscanError(f"{asked} choose one of {', '.join(NAMES)}{did_you_mean([name] if name else [], NAMES)}")
    with open_output(output_path(output)) as out:
        json.dump(bundled(name), out, indent=2, ensure_ascii=False)
        out.write("\n")
