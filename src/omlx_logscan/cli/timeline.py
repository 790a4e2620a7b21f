"""``logscan timeline``: the incident timeline."""

from __future__ import annotations

from omlx_logscan.cli.app import app, guarded
from omlx_logscan.cli.load import load_investigation
from omlx_logscan.cli.options import (
    CommonOptions,
    Debug,
    OsHistoryFiles,
    OsInstalls,
    Output,
    OverlayGap,
    Overlays,
    Paths,
    Quiet,
    ReportFormatOption,
    Since,
    Strict,
    Tz,
    Until,
)
from omlx_logscan.output.formats import ReportFormat


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
    fmt: ReportFormatOption = ReportFormat.text,
    output: Output = None,
    quiet: Quiet = False,
    strict: Strict = False,
    debug: Debug = False,
) -> None:
    """The incident timeline: escalation, dead-engine windows, stack signatures, why each fault happened, summary.

    With --os-history or --os, each fault shows its macOS version and a version-bounds table follows.

    With --overlay, the faults are tested against other activity (another GPU process, say).
    """
    from omlx_logscan.output.formats import write_timeline

    options = CommonOptions.from_params(locals())
    write_timeline(fmt, load_investigation(options), options.output)
