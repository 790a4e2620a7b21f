"""``logscan export``: each host's analysis as Parquet tables, for `logscan fleet`, DuckDB or Spark."""

from __future__ import annotations

import sys

from omlx_logscan.cli.options import CommonOptions, logs_command
from omlx_logscan.errors import LogscanError


@logs_command(history=True)
def export(options: CommonOptions) -> None:
    """Write the analysis as Parquet tables under -o DIR: events, sessions, faults, dead_windows and
    requests_per_minute, in TABLE/host=NAME/day=YYYY-MM-DD/ partitions.

    Each (host, day) the export covers is replaced whole, so exporting a growing, rotating log again
    never duplicates a row. Inputs with no host label are this machine's (its host name and, on macOS,
    its install history). With --redact the host name is a pseudonym keyed by --redact-key (its
    fingerprint, never the key, is in each file's metadata).
    """
    from omlx_logscan.analysis.lifetimes import analyze
    from omlx_logscan.cli.load import host_history, load_host, redaction_key_of
    from omlx_logscan.cli.values import input_paths
    from omlx_logscan.inputs.hosts import plan_hosts, this_host
    from omlx_logscan.output.export import HostExport, export_host

    if options.output is None:
        raise LogscanError("export writes a folder of tables: give -o DIR")
    if options.output.exists() and not options.output.is_dir():
        raise LogscanError(f"{options.output}: not a folder")
    fingerprint = redaction_key_of(options).fingerprint if options.redact else None
    for host in plan_hosts(input_paths(options.paths, options.base_path), options.hosts, options.tz):
        mine = host.name is None  # unlabelled inputs are this machine's: its name and its install history
        host.name = host.name or this_host()
        history = host_history(options, host, use_system=mine)
        stream = load_host(options, host, output_file=False)  # with --redact, already masked, its host a pseudonym
        tables = HostExport(stream.host or host.name, analyze(stream), host.chip, history, fingerprint)
        written = export_host(tables, options.output)
        if not options.quiet:
            rows = ", ".join(f"{count} {table}" for table, count in written.items())
            sys.stderr.write(f"exported {stream.host}: {rows} → {options.output}\n")
