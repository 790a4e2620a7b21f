"""``logscan timeline``: the incident timeline."""

from __future__ import annotations

from omlx_logscan.cli.load import load_investigation
from omlx_logscan.cli.options import (
    CommonOptions,
    Probes,
    ReportFormatOption,
    WedgeAfter,
    logs_command,
)
from omlx_logscan.output.formats import ReportFormat


@logs_command(history=True, overlays=True)
def timeline(
    options: CommonOptions,
    fmt: ReportFormatOption = None,
    wedge_after: WedgeAfter = None,
    probes: Probes = None,
) -> None:
    """The incident timeline: escalation, dead-engine windows, stack signatures, why each fault happened, summary.

    With --os-history or --os, each fault shows its macOS version and a version-bounds table follows.

    With --overlay, the faults are tested against other activity (another GPU process, say).
    """
    from omlx_logscan.cli.values import output_format, wedge_after_seconds
    from omlx_logscan.output.formats import write_timeline

    chosen = output_format(fmt, options.output, ReportFormat.text)
    write_timeline(chosen, load_investigation(options, wedge_after_seconds(wedge_after), probes=probes), options.output)
