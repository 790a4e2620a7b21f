"""From the common options to an event stream or an investigation, with the accounting reported."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from omlx_logscan.cli.options import CommonOptions
from omlx_logscan.errors import LogscanError

if TYPE_CHECKING:
    from omlx_logscan.analysis.investigation import Investigation
    from omlx_logscan.inputs.hosts import Host
    from omlx_logscan.inputs.oshistory import OsHistory
    from omlx_logscan.stream.model import EventStream


def load_investigation(options: CommonOptions) -> Investigation:
    """What timeline and report show: the analysis with its OS history and overlays."""
    from omlx_logscan.analysis.investigation import investigate
    from omlx_logscan.inputs.overlays import parse_overlays

    host = one_host(options)
    history = host_history(options, host, use_system=False)
    overlays = parse_overlays(options.overlay, options.overlay_gap, host.zone)
    return investigate(load_host(options, host), history, overlays)


def host_history(options: CommonOptions, host: Host, *, use_system: bool) -> OsHistory | None:
    """The macOS history of one host: the options' and its own from a --hosts file."""
    if not (options.has_os_history or host.os_history or use_system):
        return None
    from omlx_logscan.inputs.oshistory import load_history  # plist and XML support load only when asked for

    return load_history([*options.os_history, *host.os_history], options.os_installs, host.zone, use_system=use_system)


def one_host(options: CommonOptions) -> Host:
    """The one host the inputs come from; inputs of several hosts are never read as one server."""
    from omlx_logscan.inputs.hosts import plan_hosts

    hosts = plan_hosts(options.paths, options.hosts, options.tz)
    if len(hosts) > 1:
        names = ", ".join(str(host.name) for host in hosts[:3]) + (", …" if len(hosts) > 3 else "")
        raise LogscanError(
            f"the inputs are {len(hosts)} hosts ({names}): this command reads one host at a time; "
            "`logscan export` writes each host's tables and `logscan fleet` pools them"
        )
    return hosts[0]


def _warn_empty_window(whole: EventStream) -> None:
    """Say so when --since/--until leave nothing, and what the log does cover."""
    from omlx_logscan.timeutil import human_time

    firsts = [s.first for s in whole.sources if s.first]
    lasts = [s.last for s in whole.sources if s.last]
    covers = f"{human_time(min(firsts))} → {human_time(max(lasts))}" if firsts and lasts else "no timed records"
    sys.stderr.write(f"logscan: warning: no records in the --since/--until window; the log covers {covers}\n")


def _warn_skipped_times(stream: EventStream) -> None:
    """Name the local times that a spring-forward skipped: they are kept, with the offset before the gap."""
    from omlx_logscan.output.zoned import clock_for

    clock = clock_for(stream.zone, stream.events)
    for skipped in clock.nonexistent[:3]:
        sys.stderr.write(
            f"logscan: warning: {skipped['source']}:{skipped['line']}: {skipped['local']} does not exist in "
            f"{clock.name} (the clock skipped it); it keeps the offset before the change\n"
        )
    if len(clock.nonexistent) > 3:
        sys.stderr.write(f"logscan: warning: {len(clock.nonexistent) - 3} more such times (time_notes in the JSON)\n")


def load_stream(options: CommonOptions, *, keep_all: bool = False, keep_request_text: bool = False) -> EventStream:
    """Sources of one host → event stream, with the time window applied and the accounting reported."""
    return load_host(options, one_host(options), keep_all=keep_all, keep_request_text=keep_request_text)


def load_host(
    options: CommonOptions, host: Host, *, keep_all: bool = False, keep_request_text: bool = False
) -> EventStream:
    """One host's sources → its event stream, labelled with its name and zone."""
    from omlx_logscan.cli.progress import progress_for
    from omlx_logscan.output.text import print_accounting
    from omlx_logscan.stream.read import read_events
    from omlx_logscan.stream.window import within

    with progress_for(host.sources, quiet=options.quiet) as tick:
        whole = read_events(host.sources, keep_all=keep_all, keep_request_text=keep_request_text, progress=tick)
    whole.zone, whole.host = host.zone, host.name
    if options.redact:
        from omlx_logscan.output.masking import mask_stream

        mask_stream(whole)
    stream = within(whole, options.since, options.until)
    print_accounting(stream, quiet=options.quiet)
    windowed = options.since is not None or options.until is not None
    if windowed and not options.quiet and not any(s.first for s in stream.sources):
        _warn_empty_window(whole)
    if not options.quiet:
        _warn_skipped_times(stream)
    if options.strict and stream.accounting.unparsed:
        raise LogscanError(
            f"{stream.accounting.unparsed} line(s) could not be parsed (--strict); "
            "see them with: logscan events --show-unparsed"
        )
    return stream
