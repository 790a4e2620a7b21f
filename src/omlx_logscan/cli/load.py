"""From the common options to an event stream or an investigation, with the accounting reported."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Set
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from omlx_logscan.cli.options import CommonOptions
from omlx_logscan.errors import InputError, LogscanError, NotOmlxLog
from omlx_logscan.inputs.sources import HEAD_BYTES, HeadSource, Source

if TYPE_CHECKING:
    from omlx_logscan.analysis.investigation import Investigation
    from omlx_logscan.cli.values import ReadInput
    from omlx_logscan.inputs.hosts import Host
    from omlx_logscan.inputs.oshistory import OsHistory
    from omlx_logscan.output.formats import RowWriter
    from omlx_logscan.output.masking import RedactionKey
    from omlx_logscan.parsing.probes import ProbeFile
    from omlx_logscan.stream.event_stream import EventStream


def load_investigation(
    options: CommonOptions, wedge_after_s: float, host: Host | None = None, probes: Path | None = None
) -> Investigation:
    """What timeline and report show: the analysis (wedges after ``wedge_after_s``) with its OS
    history and overlays, and the generation probes of ``probes`` and of the inputs that are watch's
    NDJSON; ``host``: the inputs' host when the caller planned it already."""
    from omlx_logscan.analysis.investigation import investigate
    from omlx_logscan.inputs.overlays import parse_overlays

    host = host or one_host(options)
    history = host_history(options, host, use_system=False)
    overlays = parse_overlays(options.overlay, options.overlay_gap, host.zone)
    files = _read_probes(options, host, probes)  # before the logs: a bad file costs no read of them
    found = investigate(load_host(options, host), history, overlays, wedge_after_s=wedge_after_s)
    if files is not None:
        from omlx_logscan.analysis.probes import probe_evidence
        from omlx_logscan.output.probes import probe_files_note

        found.probes = probe_evidence(found.analysis, files, options.since, options.until)
        if not options.quiet:
            sys.stderr.write(probe_files_note(files))
    return found


def _read_probes(options: CommonOptions, host: Host, probes: Path | None) -> list[ProbeFile] | None:
    """The generation probes of ``--probes FILE`` and of the inputs that are watch's NDJSON, which are
    taken out of the host's logs (their rows are no log lines); None when there are none to read."""
    from omlx_logscan.inputs.sources import path_name
    from omlx_logscan.parsing.probes import read_probes, watch_outputs

    taken = watch_outputs(host.sources)
    host.sources = [source for source in host.sources if source not in taken]
    if taken and not host.sources:
        raise InputError(
            f"{taken[0].name}: watch's NDJSON holds the watch's probes and events, not the log: "
            "give the log it followed too (or read it with --probes)"
        )
    found = [(f"{source.name} (watch's NDJSON)", source) for source in taken]
    if probes is not None:
        from omlx_logscan.cli.values import check_output

        if options.output is not None:
            check_output(options.output, [("the --probes file", probes)])
        found.append((f"--probes {path_name(probes)}", Source(path_name(probes), probes.expanduser())))
    return [read_probes(source, host.zone, what) for what, source in found] if found else None


def host_history(options: CommonOptions, host: Host, *, use_system: bool) -> OsHistory | None:
    """The macOS history of one host: the options' and its own from a --hosts file."""
    if not (options.has_os_history or host.os_history or use_system):
        return None
    from omlx_logscan.inputs.oshistory import load_history  # plist and XML support load only when asked for

    return load_history([*options.os_history, *host.os_history], options.os_installs, host.zone, use_system=use_system)


def one_host(options: CommonOptions) -> Host:
    """The one host the inputs come from (inputs of several hosts are never read as one server),
    once an -o file is known to be none of them."""
    from omlx_logscan.cli.values import input_paths
    from omlx_logscan.inputs.hosts import plan_hosts, this_host

    paths = input_paths(options.paths, options.base_path)
    hosts = plan_hosts(paths, options.hosts, options.tz)
    if not options.paths and paths != ["-"] and hosts[0].name is None:
        hosts[0].name = this_host()  # oMLX's own folder on this machine: its logs are this machine's
    if len(hosts) > 1:
        names = ", ".join(str(host.name) for host in hosts[:3]) + (", …" if len(hosts) > 3 else "")
        raise LogscanError(
            f"the inputs are {len(hosts)} hosts ({names}): this command reads one host at a time; "
            "`logscan export` writes each host's tables and `logscan fleet` pools them"
        )
    refuse_output_over_inputs(options, hosts)
    return hosts[0]


def empty_window(options: CommonOptions) -> str:
    """``no records between 2030-01-01 00:00:00 and the end``: the --since/--until window, empty."""
    from omlx_logscan.timeutil import human_time

    lower = human_time(options.since.isoformat()) if options.since else "the start"
    upper = human_time(options.until.isoformat()) if options.until else "the end"
    return f"no records between {lower} and {upper}"


def empty_window_note(whole: EventStream, options: CommonOptions) -> str:
    """What a --since/--until window that holds no record says instead of a clean bill."""
    from omlx_logscan.output.phrases import log_spans

    return f"{empty_window(options)}; {log_spans(whole) or 'the log has no dated records'}"


def refuse_unrecognised_file(path: Path) -> None:
    """For watch: a file that already holds lines, none of them in its first megabyte oMLX's, is refused
    as the batch commands refuse such input (an empty or missing file is waited for)."""
    from omlx_logscan.stream.read import read_events

    if path.is_file() and path.stat().st_size:
        scope = " of its first MiB" if path.stat().st_size > HEAD_BYTES else ""
        _refuse_unrecognised(read_events([HeadSource(str(path), None, file=path)]), scope)


def _refuse_unrecognised(whole: EventStream, scope: str = "") -> None:
    """Input in which nothing is oMLX's (no record, banner, catalog message or crash evidence) is no
    oMLX log: a clean bill for it would be false, so it is refused unless --force."""
    if whole.has_omlx_records:
        return
    name = whole.sources[0].name if len(whole.sources) == 1 else "the input"
    lines = whole.accounting.lines
    raise NotOmlxLog(
        f"{name}: does not look like an oMLX log ({lines} line{'s' if lines != 1 else ''}{scope}, none recognised); "
        "--force reads it anyway"
    )


def read_inputs(options: CommonOptions, hosts: list[Host]) -> Iterator[ReadInput]:
    """Everything a command reads, each with the words that name it: the logs (stdin by the status of
    the open file), the --overlay, --os-history and --hosts files, and the configuration files that
    may be read from the current folder upward. The -o check knows every input through this alone."""
    from omlx_logscan.cli.config import NAMED_CONFIG, OWN_FILE, PYPROJECT, USER_FILE, user_config_dir
    from omlx_logscan.cli.values import stdin_status

    for host in hosts:
        for source in host.sources:
            status = stdin_status() if source.path is None else source.path
            if status is not None:
                yield "an input", status
        for path in host.os_history:
            yield "an --os-history file of the --hosts file", path
    for path in options.os_history:
        yield "an --os-history file", path
    for spec in options.overlay:
        overlay = Path(spec.path).expanduser()
        for path in sorted(overlay.iterdir()) if overlay.is_dir() else [overlay]:
            yield f"the {spec.label} file", path
    if options.hosts.file is not None:
        yield "the --hosts file", options.hosts.file
    for folder in (Path.cwd(), *Path.cwd().parents):
        for name in (OWN_FILE, PYPROJECT):
            yield "a configuration file logscan reads", folder / name
    for path in NAMED_CONFIG:
        yield "the --config file", path
    yield "your own configuration file", user_config_dir() / USER_FILE
    yield "the key of the host pseudonyms", redaction_key_path(options)


def _status(found: ReadInput) -> tuple[str, os.stat_result | None]:
    what, where = found
    if isinstance(where, os.stat_result):
        return what, where
    try:
        return what, where.stat()
    except OSError:
        return what, None


def refuse_output_over_inputs(options: CommonOptions, hosts: list[Host]) -> None:
    """Refuse, before reading, an -o file that is anything the command reads, or that cannot be written."""
    from omlx_logscan.cli.values import check_output
    from omlx_logscan.output.files import protect

    if options.output is not None:
        inputs = list(read_inputs(options, hosts))
        protect(status for _, status in map(_status, inputs) if status is not None)
        check_output(options.output, inputs)


def _warn_skipped_times(stream: EventStream) -> None:
    """Name the local times that a spring-forward skipped: they are kept, with the offset before the gap."""
    clock = stream.clock()
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
    options: CommonOptions,
    host: Host,
    *,
    keep_all: bool = False,
    keep_request_text: bool = False,
) -> EventStream:
    """One host's sources → its event stream, labelled with its name and zone."""
    from omlx_logscan.cli.progress import progress_for
    from omlx_logscan.stream.read import read_events
    from omlx_logscan.stream.reports import date_panic_reports

    with progress_for(host.sources, quiet=options.quiet) as tick:
        whole = read_events(host.sources, keep_all=keep_all, keep_request_text=keep_request_text, progress=tick)
    if not options.force:
        _refuse_unrecognised(whole)
    whole.zone, whole.host = host.zone, host.name
    date_panic_reports(whole)
    if options.redact:
        from omlx_logscan.output.masking import mask_stream

        mask_stream(whole, redaction_key_of(options), host.sources)
    stream = _windowed(options, whole)
    if options.strict and stream.accounting.unparsed:
        raise LogscanError(
            f"{stream.accounting.unparsed} line(s) could not be parsed (--strict); "
            "see them with: logscan events --show-unparsed"
        )
    return stream


def _windowed(options: CommonOptions, whole: EventStream) -> EventStream:
    """The --since/--until window of a stream read whole, with its accounting, and a note when it is empty."""
    from omlx_logscan.output.text import print_accounting
    from omlx_logscan.stream.window import is_empty, within

    stream = within(whole, options.since, options.until)
    print_accounting(stream, quiet=options.quiet)
    windowed = options.since is not None or options.until is not None
    if windowed and is_empty(stream):
        sys.stderr.write(f"logscan: note: {empty_window_note(whole, options)}\n")
    if not options.quiet:
        _warn_skipped_times(stream)
    return stream


def redaction_key_of(options: CommonOptions) -> RedactionKey:
    """The key of the host pseudonyms: ``--redact-key FILE``, else the user's own, made on first use."""
    from omlx_logscan.output.masking import redaction_key

    return redaction_key(redaction_key_path(options))


def redaction_key_path(options: CommonOptions) -> Path:
    """Where the key of the host pseudonyms is: ``--redact-key FILE``, else the user's own."""
    from omlx_logscan.cli.config import user_config_dir
    from omlx_logscan.output.masking import KEY_FILE

    return options.redact_key or user_config_dir() / KEY_FILE


def streamed_host(options: CommonOptions) -> Host | None:
    """The host whose input ``events`` writes while reading it: one input that comes as it is written
    (stdin, a named pipe), to stdout, with no option that needs the whole input first (--strict,
    --redact); None: the batch read."""
    if options.output is not None or options.strict or options.redact:
        return None
    host = one_host(options)
    if len(host.sources) != 1:
        return None
    path = host.sources[0].path
    return host if path is None or path.is_fifo() else None


def stream_host(
    options: CommonOptions, host: Host, writer: RowWriter, kinds: Set[str], *, keep_request_text: bool
) -> None:
    """``events`` while the input is read: the rows the batch read gives, in its order, each written
    as soon as its place is certain (only rows of ``kinds``, all when empty, and in the --since/--until
    window are waited for); what needs the whole input (the refusal of input that is no oMLX log, the
    accounting) comes at the end, and no row comes before something oMLX's was read."""
    from omlx_logscan.stream.read import stream_events
    from omlx_logscan.stream.reports import date_panic_reports
    from omlx_logscan.stream.streaming import EnoughRows, StreamedOrder
    from omlx_logscan.stream.window import in_window

    inside = in_window(options.since, options.until)
    order = StreamedOrder(
        writer,
        host.zone,
        recognised=options.force,
        shown=lambda event: (not kinds or event.kind in kinds) and inside(event),
    )
    whole = stream_events(host.sources[0], order, keep_request_text=keep_request_text)
    if whole is None:  # -n rows were written: reading stopped there
        return
    if not options.force:
        _refuse_unrecognised(whole)
    whole.zone, whole.host = host.zone, host.name
    date_panic_reports(whole)
    _windowed(options, whole)
    writer.settle(whole)
    with suppress(EnoughRows):  # -n rows were written
        order.finish()
    writer.start()  # the header of a table with no rows
    writer.flush()
    if order.went_back is not None:
        sys.stderr.write(
            f"logscan: warning: {order.went_back.source}:{order.went_back.line}: the log's time goes back here, after "
            "rows that sort later were written; they stay where they are (read from a file, the rows are sorted)\n"
        )
