"""``logscan export``: each host's analysis as Parquet tables, for `logscan fleet`, DuckDB or Spark."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from omlx_logscan.cli.options import CommonOptions, logs_command
from omlx_logscan.errors import LogscanError

if TYPE_CHECKING:
    from omlx_logscan.inputs.hosts import Host


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
    from omlx_logscan.output.export import TABLES, HostExport, export_host
    from omlx_logscan.output.generations import next_generation
    from omlx_logscan.output.phrases import plural

    if options.output is None:
        raise LogscanError("export writes a folder of tables: give -o DIR")
    if options.output.exists() and not options.output.is_dir():
        raise LogscanError(f"{options.output}: not a folder")
    hosts = plan_hosts(input_paths(options.paths, options.base_path), options.hosts, options.tz)
    refuse_inside_tables(options, hosts)
    fingerprint = redaction_key_of(options).fingerprint if options.redact else None
    done: list[str] = []
    with next_generation(options.output, list(TABLES)) as staged:  # every host's tables are seen at once
        for host in hosts:
            mine = host.name is None  # unlabelled inputs are this machine's: its name and its install history
            host.name = host.name or this_host()
            history = host_history(options, host, use_system=mine)
            stream = load_host(options, host)  # with --redact, already masked, its host a pseudonym
            tables = HostExport(stream.host or host.name, analyze(stream), host.chip, history, fingerprint)
            written = export_host(tables, staged)
            rows = ", ".join(plural(count, f"{ROW_NOUNS[table]} row") for table, count in written.items())
            named = " (this machine's name: --host names the machine the logs came from)" if mine else ""
            done.append(f"exported {stream.host}{named}: {rows} → {options.output}\n")
    if not options.quiet:
        sys.stderr.write("".join(done))


# What one row of each table is, so the summary counts rows as rows ("812 request-minute rows").
ROW_NOUNS = {
    "events": "event",
    "sessions": "session",
    "faults": "fault",
    "dead_windows": "dead-window",
    "requests_per_minute": "request-minute",
}


def refuse_inside_tables(options: CommonOptions, hosts: list[Host]) -> None:
    """Refuse an export whose tables would replace what it reads (an input kept inside -o's tables)."""
    from omlx_logscan.cli.load import read_inputs
    from omlx_logscan.output.export import TABLES
    from omlx_logscan.output.generations import STATE

    assert options.output is not None
    root = options.output.resolve()
    kept = [root / name for name in (STATE, *TABLES)]
    for what, where in read_inputs(options, hosts):
        if isinstance(where, Path) and where.exists() and any(where.resolve().is_relative_to(k) for k in kept):
            raise LogscanError(f"-o {options.output}: holds {what} ({where}) in its tables (choose another folder)")
