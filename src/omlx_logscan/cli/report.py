"""``logscan report``: a bug-report summary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from omlx_logscan.cli.load import load_investigation, one_host
from omlx_logscan.cli.options import (
    CommonOptions,
    Probes,
    WedgeAfter,
    logs_command,
)

if TYPE_CHECKING:
    from omlx_logscan.inputs.hosts import Host
    from omlx_logscan.output.redact import Names


@logs_command(history=True, overlays=True, redact=False)
def report(
    options: CommonOptions,
    redact: Annotated[
        bool,
        typer.Option(
            "--redact/--no-redact",
            help="Mask home folders, user and host names, IP and e-mail addresses, API keys and tokens, and prompt, "
            "reasoning and tool-call text.",
        ),
    ] = True,
    wedge_after: WedgeAfter = None,
    probes: Probes = None,
) -> None:
    """A Markdown summary to paste into a GitHub issue (under GitHub's 65,536-character limit).

    Personal data is masked unless --no-redact. With an OS history (--os-history or --os), the
    report names the macOS version of each fault and adds the version-bounds table. With --overlay,
    the faults are tested against other activity.
    """
    from omlx_logscan.cli.values import wedge_after_seconds
    from omlx_logscan.output.formats import write_markdown
    from omlx_logscan.output.report import build_report
    from omlx_logscan.output.sections import timeline_sections

    host = one_host(options)
    found = load_investigation(options, wedge_after_seconds(wedge_after), host, probes)
    text = build_report(timeline_sections(found), redact_personal=redact, names=_names(host) if redact else None)
    if redact:  # the host's own label is personal too; the log's text alone would not show it is one
        from omlx_logscan.output.masking import mask_host_name

        text = mask_host_name(text, found.analysis.stream.host)
    write_markdown(text, options.output)


def _names(host: Host) -> Names:
    """The user and host names every line of the host's input files reveals, for the report to mask
    wherever its quoted lines show them."""
    from omlx_logscan.output.masking import file_texts
    from omlx_logscan.output.redact import learn

    return learn(file_texts(host.sources))
