"""``logscan timeline``: the incident timeline."""

from __future__ import annotations

from typing import Annotated

import typer

from omlx_logscan.cli.app import app, guarded
from omlx_logscan.cli.load import load_investigation, open_output
from omlx_logscan.cli.options import (
    Debug,
    OsHistoryFiles,
    OsInstalls,
    Output,
    OverlayGap,
    Overlays,
    Paths,
    Quiet,
    ReportFormat,
    Since,
    Strict,
    Tz,
    Until,
)


@app.command()
@guarded
def timeline(
    paths: Paths,
    os_history: OsHistoryFiles = None,
    os_installs: OsInstalls = None,
    overlay: Overlays = None,
    overlay_gap: OverlayGap = None,
    since: Since = None,
    until: Until = None,
    tz: Tz = None,
    fmt: Annotated[ReportFormat, typer.Option("--format", "-f", help="text, json or markdown.")] = ReportFormat.text,
    output: Output = None,
    quiet: Quiet = False,
    strict: Strict = False,
    debug: Debug = False,
) -> None:
    """The incident timeline: escalation, dead-engine windows, stack signatures, why each fault happened, summary.

    With --os-history or --os, each fault shows its macOS version and a version-bounds table follows.

    With --overlay, the faults are tested against other activity (another GPU process, say).
    """
    from omlx_logscan.output.documents import timeline_document, write_json
    from omlx_logscan.output.markdown import timeline_markdown
    from omlx_logscan.output.text import console, timeline_text

    found = load_investigation(
        paths,
        since,
        until,
        tz,
        quiet=quiet,
        strict=strict,
        os_history=os_history,
        os_installs=os_installs,
        overlay=overlay,
        overlay_gap=overlay_gap,
    )
    analysis, why, versions, bounds = found.analysis, found.why, found.os_versions, found.bounds
    if bounds is not None:  # loaded only with --os-history or --os
        from omlx_logscan.output.documents import bounds_document
        from omlx_logscan.output.markdown import bounds_markdown
        from omlx_logscan.output.text import bounds_table
    with open_output(output) as out:
        if fmt is ReportFormat.json:
            document = timeline_document(analysis, versions, why)
            if bounds is not None:
                document["bounds"] = bounds_document(bounds, analysis)
            write_json(document, out)
        elif fmt is ReportFormat.markdown:
            out.write(timeline_markdown(analysis, versions, why))
            if bounds is not None:
                out.write(f"\n### Version bounds\n\n{bounds_markdown(bounds)}")
        else:
            con = console(out)
            timeline_text(analysis, con, versions, why)
            if bounds is not None:
                con.print()
                bounds_table(bounds, con)
