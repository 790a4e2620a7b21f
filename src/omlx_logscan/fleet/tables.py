"""The fleet's inputs as DuckDB tables named like the export's (``sessions``, ``faults``, ``dead_windows``).

A source is an export folder (local, a glob of them, or an ``s3://``/``https://`` prefix), or a
``timeline -f json`` document (a file, a glob, a folder of them, or a URL). Documents are turned
into the export's tables in a scratch folder, so one set of SQL files reads both. Remote sources
need DuckDB's httpfs extension, which its wheel does not bundle: it comes from the PyPI package
``duckdb-extension-httpfs`` for the installed DuckDB release, never from a download at run time.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from urllib.parse import urlparse

from omlx_logscan.errors import InputError, LogscanError
from omlx_logscan.fleet.timeline_documents import write_document_tables
from omlx_logscan.inputs.hosts import is_glob

# The tables the SQL reads and, for a fleet where none of a table's files exist (no dead windows
# anywhere, say), the columns of its empty stand-in.
VIEWS: dict[str, dict[str, str]] = {
    "sessions": {
        "host": "VARCHAR",
        "session": "BIGINT",
        "start": "TIMESTAMPTZ",
        "start_local": "VARCHAR",
        "start_in_log": "BOOLEAN",
        "hours": "DOUBLE",
        "os_version": "VARCHAR",
        "omlx_version": "VARCHAR",
        "chip": "VARCHAR",
    },
    "faults": {
        "host": "VARCHAR",
        "session": "BIGINT",
        "time": "TIMESTAMPTZ",
        "time_local": "VARCHAR",
        "kind": "VARCHAR",
        "outcome": "VARCHAR",
        "os_version": "VARCHAR",
        "omlx_version": "VARCHAR",
        "chip": "VARCHAR",
    },
    "dead_windows": {"host": "VARCHAR", "session": "BIGINT", "dead_at_least_s": "DOUBLE"},
}
REMOTE = ("s3://", "https://", "http://")
# The host is the value of the path's ``host=`` folder, as the export escaped it. Not read as a Hive
# partition: that reads ``null``, ``NULL`` and ``__HIVE_DEFAULT_PARTITION__`` as no host at all.
HOST_FROM_PATH = "url_decode(regexp_extract(filename, '/host=([^/]*)/[^/]*/[^/]*$', 1)) AS host"
MEMORY_LIMIT = "256MB"  # past it DuckDB spills to the scratch folder; small-file metadata would grow it by gigabytes
HTTPFS_PACKAGE = "duckdb-extension-httpfs"


def connect() -> Any:
    """An in-memory DuckDB that never downloads an extension (autoload would try the network), with a
    memory limit: reading tens of thousands of small files otherwise grows it by gigabytes."""
    try:
        import duckdb
    except ImportError:
        raise LogscanError("logscan fleet needs DuckDB: pip install duckdb") from None
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    con.execute("SET preserve_insertion_order = false")  # the SQL orders what it returns
    return con


def load_httpfs(con: Any, source: str) -> None:
    """Load httpfs from the pip package made for this DuckDB release; a clear error when it is absent."""
    import duckdb

    try:
        import duckdb_extension_httpfs
    except ImportError:
        raise InputError(
            f"{source}: remote sources need DuckDB's httpfs extension, which this machine does not have: "
            f"pip install {HTTPFS_PACKAGE}=={duckdb.__version__} (local folders and globs need nothing)"
        ) from None
    binary = Path(duckdb_extension_httpfs.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    binary = binary / "httpfs.duckdb_extension"
    if not binary.is_file():
        raise InputError(
            f"{source}: the installed {HTTPFS_PACKAGE} is not built for DuckDB {duckdb.__version__}: "
            f"pip install {HTTPFS_PACKAGE}=={duckdb.__version__}"
        )
    con.execute(f"LOAD '{_quoted(str(binary))}'")
    _s3_secret(con)


def _s3_secret(con: Any) -> None:
    """S3 credentials and endpoint from the usual AWS variables (an endpoint such as MinIO's or moto's too)."""
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if not (key and secret) and not endpoint:
        return
    options = {"KEY_ID": key or "", "SECRET": secret or ""}
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        options["REGION"] = region
    if endpoint:
        address = urlparse(endpoint)
        options |= {"ENDPOINT": address.netloc or address.path, "URL_STYLE": "path"}
        options["USE_SSL"] = "true" if address.scheme == "https" else "false"
    settings = ", ".join(
        f"{name} {value}" if value in ("true", "false") else f"{name} '{_quoted(value)}'"
        for name, value in options.items()
    )
    con.execute(f"CREATE SECRET fleet_s3 (TYPE s3, {settings})")


def _quoted(text: str) -> str:
    return text.replace("'", "''")


@contextmanager
def fleet_views(sources: list[str]) -> Iterator[Any]:
    """A DuckDB connection whose tables ``sessions``, ``faults``, ``dead_windows`` hold every source."""
    if not sources:
        raise InputError("no source: give export folders, globs, URLs or timeline JSON documents")
    con = connect()
    with TemporaryDirectory(prefix="logscan-fleet-") as scratch:
        con.execute(f"SET temp_directory = '{_quoted(scratch)}'")
        roots: list[str] = []
        documents: list[tuple[str, dict[str, Any]]] = []
        remote = False
        for source in sources:
            if source.startswith(REMOTE):
                if not remote:
                    load_httpfs(con, source)
                    remote = True
                if source.rstrip("/").endswith(".json"):
                    documents.append((source, _remote_document(con, source)))
                else:
                    roots.append(source.rstrip("/"))
                continue
            found_roots, found_documents = _local(source)
            roots += found_roots
            documents += [(name, _read_document(Path(name))) for name in found_documents]
        if documents:
            scratch_root = Path(scratch) / "documents"
            write_document_tables(documents, scratch_root)
            roots.append(str(scratch_root))
        for view, columns in VIEWS.items():
            _create_view(con, view, columns, roots)
        yield con


def local_inputs(sources: list[str]) -> list[Path]:
    """The local files and export folders the sources name (what an -o file must not be)."""
    found = [_local(source) for source in sources if not source.startswith(REMOTE)]
    return [Path(name) for roots, documents in found for name in (*roots, *documents)]


def _local(source: str) -> tuple[list[str], list[str]]:
    """Export roots and JSON documents a local source names (a glob may name several)."""
    matches = sorted(glob.glob(str(Path(source).expanduser()))) if is_glob(source) else [source]
    if not matches:
        raise InputError(f"{source}: matches nothing")
    roots: list[str] = []
    documents: list[str] = []
    for match in matches:
        path = Path(match).expanduser()
        if path.is_dir() and any((path / view).is_dir() for view in VIEWS):
            roots.append(str(path))
        elif path.is_dir() and (inside := sorted(path.glob("*.json"))):
            documents += [str(p) for p in inside]
        elif path.is_file() and path.suffix == ".json":
            documents.append(str(path))
        elif not path.exists():
            raise InputError(f"{match}: no such file or folder")
        else:
            raise InputError(f"{match}: neither an export folder (logscan export -o) nor a timeline JSON document")
    return roots, documents


def _read_document(path: Path) -> dict[str, Any]:
    try:
        return _parsed(path.read_text(encoding="utf-8-sig"), str(path))  # a byte-order mark is no reason to refuse
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _remote_document(con: Any, url: str) -> dict[str, Any]:
    import duckdb

    try:
        (text,) = con.execute("SELECT content FROM read_text(?)", [url]).fetchone()
    except duckdb.Error as exc:
        raise InputError(f"{url}: cannot read ({str(exc).splitlines()[0]})") from None
    return _parsed(text, url)


def _parsed(text: str, name: str) -> dict[str, Any]:
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{name}: not JSON ({exc})") from None
    if not isinstance(document, dict) or not str(document.get("schema", "")).startswith("omlx-logscan/timeline/"):
        raise InputError(f"{name}: not a timeline document (logscan timeline -f json)")
    return document


def _create_view(con: Any, view: str, columns: dict[str, str], roots: list[str]) -> None:
    """The table of every root's files of this view, read once with only the columns the SQL needs;
    empty, with those columns, when no root has any."""
    import duckdb

    wanted = ", ".join(HOST_FROM_PATH if name == "host" else name for name in columns)
    parts = []
    for root in roots:
        read = (
            f"SELECT {wanted} FROM read_parquet('{_quoted(root)}/{view}/*/*/*.parquet', hive_partitioning = false, "
            "filename = true)"
        )
        try:
            con.execute(f"{read} LIMIT 0")
        except duckdb.IOException as exc:
            if "No files found" in str(exc):
                continue
            raise InputError(f"{root}: cannot read the {view} table ({str(exc).splitlines()[0]})") from None
        except duckdb.BinderException as exc:
            raise InputError(f"{root}: its {view} table is not the export's ({str(exc).splitlines()[0]})") from None
        parts.append(read)
    if not parts:
        parts = [
            "SELECT " + ", ".join(f"CAST(NULL AS {kind}) AS {name}" for name, kind in columns.items()) + " WHERE false"
        ]
    con.execute(f"CREATE TABLE {view} AS " + " UNION ALL ".join(parts))


def query_text(name: str) -> str:
    """One of the package's SQL files (``hosts``, ``versions``, …): the same text Spark runs."""
    return resources.files("omlx_logscan.fleet").joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")


def run_query(con: Any, name: str) -> list[dict[str, Any]]:
    """The rows of one SQL file, as dictionaries."""
    cursor = con.execute(query_text(name))
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
