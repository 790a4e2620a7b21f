"""The fleet's SQL files, unchanged, on a local Spark session over the same exports: the same numbers."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from fleet_data import Fleet
from fleet_data import fleet as fleet  # the fixture
from omlx_logscan.fleet.summary import summarize
from omlx_logscan.fleet.tables import VIEWS, fleet_views, query_text

pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark (the test extra) runs the SQL on Spark")
if shutil.which("java") is None:
    pytest.skip("Spark needs a Java runtime (Debian: apt-get install openjdk-17-jre-headless)", allow_module_level=True)


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    session = (
        pyspark_sql.SparkSession.builder.master("local[2]")
        .appName("logscan-fleet-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


class SparkConnection:
    """What ``summarize`` needs of a connection (``execute`` → ``description``, ``fetchall``), on Spark."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def execute(self, sql: str) -> SparkConnection:
        frame = self.spark.sql(sql)
        self.description = [(name,) for name in frame.columns]
        self.rows = [tuple(row) for row in frame.collect()]
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


@pytest.mark.slow
def test_the_same_sql_on_spark_gives_the_same_hosts_and_versions(fleet: Fleet, spark: Any) -> None:
    for view in VIEWS:
        spark.read.option("basePath", str(fleet.tables / view)).parquet(
            str(fleet.tables / view)
        ).createOrReplaceTempView(view)
    on_spark = summarize(SparkConnection(spark))
    with fleet_views([str(fleet.tables)]) as con:
        on_duckdb = summarize(con)
    assert on_spark.hosts == on_duckdb.hosts
    assert on_spark.versions == on_duckdb.versions
    assert on_spark.upgrades == on_duckdb.upgrades
    assert [row["faults"] for row in on_spark.hosts] == [len(t["faults"]) for t in fleet.timelines.values()]


def test_the_sql_files_are_what_the_package_ships() -> None:
    for name in ("hosts", "fault_kinds", "versions", "upgrades"):
        text = query_text(name)
        assert "SELECT" in text and "read_parquet" not in text  # engine-neutral: views, not file readers
