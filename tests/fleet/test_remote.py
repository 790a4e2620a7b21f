"""Remote sources: an export in S3 (moto's server on 127.0.0.1) and a timeline document over HTTP."""

from __future__ import annotations

import functools
import http.server
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fleet_data import Fleet
from fleet_data import fleet as fleet  # the fixture
from omlx_logscan.cli.app import app

pytest.importorskip("duckdb_extension_httpfs", reason="remote sources need duckdb-extension-httpfs (the test extra)")
runner = CliRunner()


@pytest.fixture
def s3_endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    server_module = pytest.importorskip("moto.server", reason="moto[server] (the test extra) serves S3 locally")
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(name, value)
    try:
        yield endpoint
    finally:
        server.stop()


@pytest.mark.slow
def test_an_export_in_s3_gives_the_local_answer(fleet: Fleet, s3_endpoint: str) -> None:
    boto3 = pytest.importorskip("boto3", reason="boto3 (the test extra) uploads the export")
    client = boto3.client("s3", endpoint_url=s3_endpoint)
    client.create_bucket(Bucket="fleet")
    for folder, _, names in os.walk(fleet.tables, followlinks=True):  # as `aws s3 sync` does: the tables are links
        for path in (Path(folder) / name for name in names if name.endswith(".parquet")):
            client.upload_file(str(path), "fleet", f"tables/{path.relative_to(fleet.tables).as_posix()}")
    remote = runner.invoke(app, ["fleet", "s3://fleet/tables", "-f", "json"])
    assert remote.exit_code == 0, remote.output
    local = runner.invoke(app, ["fleet", str(fleet.tables), "-f", "json"])
    assert json.loads(remote.stdout)["hosts"] == json.loads(local.stdout)["hosts"]
    assert json.loads(remote.stdout)["versions"] == json.loads(local.stdout)["versions"]


@pytest.mark.slow
def test_a_timeline_document_over_http(fleet: Fleet) -> None:
    handler = functools.partial(_Quiet, directory=str(fleet.documents[0].parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{fleet.documents[0].name}"
        result = runner.invoke(app, ["fleet", url, "-f", "json"])
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.output
    hosts = json.loads(result.stdout)["hosts"]
    assert [row["host"] for row in hosts] == ["mac-01"] and hosts[0]["faults"] == 6


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No request lines on stderr."""
