"""``logscan export``: typed Parquet tables in host=/day= partitions that DuckDB and pyarrow read, replaced per day."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE
from omlx_logscan.cli.app import app
from omlx_logscan.output.export import EXPORT_VERSION, TABLES

duckdb = pytest.importorskip("duckdb", reason="DuckDB is a dependency of logscan fleet; install the package")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the test extra) reads the files as another consumer")

runner = CliRunner()


def two_macs(root: Path, second: bytes | None = None) -> list[Path]:
    folders = [root / "mac-01", root / "mac-02"]
    for folder, text in zip(folders, (EXAMPLE.read_bytes(), second or EXAMPLE.read_bytes()), strict=True):
        folder.mkdir(exist_ok=True)
        (folder / "server.log").write_bytes(text)
    return folders


def export(*args: str) -> None:
    result = runner.invoke(app, ["export", *args, "-q"])
    assert result.exit_code == 0, result.output


def table(out: Path, name: str) -> str:
    return (
        f"read_parquet('{out}/{name}/*/*/*.parquet', hive_partitioning = true, "
        "hive_types = {'host': 'VARCHAR', 'day': 'VARCHAR'})"
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fleet")
    out = root / "tables"
    export(*map(str, two_macs(root)), "--host-from", "folder", "-o", str(out), "--tz", "Europe/Berlin")
    return out


@pytest.mark.slow
def test_every_table_is_written_with_its_schema_in_the_metadata(exported: Path) -> None:
    for name in TABLES:
        files = sorted((exported / name).glob("host=*/day=*/*.parquet"))
        if name == "requests_per_minute":  # a WARNING-level log hides finished requests: no rows, no files
            assert files == []
            continue
        metadata = pq.read_metadata(files[0]).metadata
        assert metadata[b"omlx_logscan.schema"] == f"omlx-logscan/export/{name}".encode()
        assert metadata[b"omlx_logscan.version"] == str(EXPORT_VERSION).encode()


def test_pyarrow_reads_timestamps_in_utc_and_integers(exported: Path) -> None:
    import pyarrow as pa

    schema = pq.read_schema(next((exported / "faults").glob("host=mac-01/day=*/*.parquet")))
    assert schema.field("time").type == pa.timestamp("us", tz="UTC")
    assert pa.types.is_large_string(schema.field("time_local").type)
    assert schema.field("line").type == pa.int64() and schema.field("records").type == pa.int64()
    assert schema.field("codes").type == pa.large_list(pa.large_string())
    sessions = pq.read_schema(next((exported / "sessions").glob("host=mac-01/day=*/*.parquet")))
    assert sessions.field("start").type == pa.timestamp("us", tz="UTC") and sessions.field("faults").type == pa.int64()


def test_duckdb_unions_the_hosts_and_keeps_each_hosts_own_faults(exported: Path) -> None:
    rows = duckdb.sql(
        f"select host, count(*), epoch(min(time)), min(time_local), typeof(min(time)) from {table(exported, 'faults')} "
        "group by host order by host"
    ).fetchall()
    assert [(host, count, local) for host, count, _, local, _ in rows] == [
        ("mac-01", 6, "2026-09-15T20:19:38.663+02:00"),
        ("mac-02", 6, "2026-09-15T20:19:38.663+02:00"),
    ]
    assert rows[0][4] == "TIMESTAMP WITH TIME ZONE"
    day = duckdb.sql(f"select count(*) from {table(exported, 'faults')} where date_trunc('day', time) is null")
    assert day.fetchone() == (0,)
    # Never one server: each host has the example's 160 lifetimes and 2 dead windows of its own.
    assert duckdb.sql(f"select count(*) from {table(exported, 'sessions')}").fetchone() == (320,)
    assert duckdb.sql(f"select count(distinct host) from {table(exported, 'dead_windows')}").fetchone() == (2,)


@pytest.mark.slow
def test_re_export_replaces_days_and_never_duplicates(tmp_path: Path) -> None:
    folders = two_macs(tmp_path)
    out = tmp_path / "tables"
    export(str(folders[0]), "--host", "mac-01", "-o", str(out))
    before = duckdb.sql(f"select count(*) from {table(out, 'events')}").fetchone()
    export(str(folders[0]), "--host", "mac-01", "-o", str(out))
    assert duckdb.sql(f"select count(*) from {table(out, 'events')}").fetchone() == before
    # The log rotates: only its last days remain. Those days are replaced, the older ones kept.
    lines = EXAMPLE.read_text().splitlines(keepends=True)
    cut = next(number for number, line in enumerate(lines) if line.startswith("2026-09-1"))
    (folders[0] / "server.log").write_text("".join(lines[cut:]))
    export(str(folders[0]), "--host", "mac-01", "-o", str(out))
    assert duckdb.sql(f"select count(*) from {table(out, 'events')}").fetchone() == before
    assert duckdb.sql(f"select count(*) from {table(out, 'faults')}").fetchone() == (6,)


@pytest.mark.slow
def test_two_zones_order_their_faults_in_utc(tmp_path: Path) -> None:
    folders = two_macs(tmp_path)
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(
        '[[host]]\nname = "berlin"\npaths = ["mac-01"]\ntz = "Europe/Berlin"\n\n'
        '[[host]]\nname = "boston"\npaths = ["mac-02"]\ntz = "America/New_York"\n'
    )
    out = tmp_path / "tables"
    export(*map(str, folders), "--hosts", str(hosts), "-o", str(out))
    ordered = duckdb.sql(f"select host, time_local, epoch(time) from {table(out, 'faults')} order by time").fetchall()
    at = {host: [instant for name, _, instant in ordered if name == host] for host in ("berlin", "boston")}
    # The same wall times: each of Boston's faults comes six hours after Berlin's ...
    assert [late - early for early, late in zip(at["berlin"], at["boston"], strict=True)] == [6 * 3600.0] * 6
    # ... so in UTC they interleave, where their local times would have put them side by side.
    assert [host for host, _, _ in ordered] != sorted(host for host, _, _ in ordered)
    assert ordered[0][1] == "2026-09-15T20:19:38.663+02:00" and ordered[0][0] == "berlin"
    assert "2026-09-15T20:19:38.663-04:00" in [local for _, local, _ in ordered]


def test_events_parquet_has_the_export_events_schema(exported: Path, tmp_path: Path) -> None:
    target = tmp_path / "events.parquet"
    result = runner.invoke(
        app, ["events", str(EXAMPLE), "-f", "parquet", "-o", str(target), "-q", "--host", "mac-01", "-k", "gpu_error"]
    )
    assert result.exit_code == 0, result.output
    own = duckdb.sql(f"describe select * from read_parquet('{target}')").fetchall()
    partitioned = duckdb.sql(f"describe select * from {table(exported, 'events')}").fetchall()
    assert sorted((name, kind) for name, kind, *_ in own if name != "day") == sorted(
        (name, kind) for name, kind, *_ in partitioned if name != "day"
    )


@pytest.mark.slow
def test_redact_masks_host_names_and_home_folders(tmp_path: Path) -> None:
    folder = tmp_path / "alice-macbook"
    folder.mkdir()
    (folder / "server.log").write_bytes(EXAMPLE.read_bytes())
    out = tmp_path / "tables"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "omlx_logscan",
            "export",
            str(folder),
            "--host-from",
            "folder",
            "--redact",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "alice-macbook" not in done.stderr
    hosts = duckdb.sql(f"select distinct host from {table(out, 'events')}").fetchall()
    assert len(hosts) == 1 and hosts[0][0].startswith("host-") and "alice" not in hosts[0][0]
    texts = duckdb.sql(
        f"select string_agg(coalesce(message, '') || coalesce(fields, ''), ' ') from {table(out, 'events')}"
    )
    text = texts.fetchone()[0]
    assert "/Users/alice" not in text and "alice-macbook" not in text


def test_export_needs_a_folder() -> None:
    result = runner.invoke(app, ["export", str(EXAMPLE)])
    assert result.exit_code == 2 and "give -o DIR" in result.output


def test_a_lifetime_across_the_fall_back_lasts_its_real_hours(tmp_path: Path) -> None:
    # 01:00 CEST to 04:00 CET on 2026-10-25 in Berlin: the wall clock says 3 hours, the instants 4.
    log = tmp_path / "server.log"
    log.write_text(
        "2026-10-25 01:00:00,000 - omlx.server - INFO - [-] - Server initialized with 1 models\n"
        "2026-10-25 04:00:00,000 - omlx.server - WARNING - [-] - POST /v1/chat/completions → 400: bad\n"
    )
    out = tmp_path / "tables"
    export(str(log), "--host", "berlin", "--tz", "Europe/Berlin", "-o", str(out))
    hours, start = duckdb.sql(f"select hours, start_local from {table(out, 'sessions')}").fetchone()
    assert (hours, start) == (4.0, "2026-10-25T01:00:00.000+02:00")
