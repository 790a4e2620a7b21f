"""Event rows: NDJSON, CSV and Parquet."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import IO, Any

from omlx_logscan.parsing.event import Event


def write_ndjson(rows: Iterable[dict[str, Any]], out: IO[str]) -> None:
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False, default=str))
        out.write("\n")


EVENT_COLUMNS = ("time", "source", "line", "level", "logger", "kind", "message", "fields")


def write_csv(rows: Iterable[dict[str, Any]], out: IO[str]) -> None:
    writer = csv.writer(out)
    writer.writerow(EVENT_COLUMNS)
    for row in rows:
        extra = {k: v for k, v in row.items() if k not in EVENT_COLUMNS}
        writer.writerow(
            [row.get(c) if c != "fields" else json.dumps(extra, ensure_ascii=False, default=str) for c in EVENT_COLUMNS]
        )


def events_frame(events: Iterable[Event]) -> Any:
    """Events as a polars frame (kind-specific fields as one JSON column), for Parquet."""
    import polars as pl

    rows = []
    for ev in events:
        row = ev.as_dict()
        extra = {k: v for k, v in row.items() if k not in EVENT_COLUMNS}
        rows.append({c: row.get(c) for c in EVENT_COLUMNS[:-1]} | {"fields": json.dumps(extra, default=str)})
    schema = {
        "time": pl.String,
        "source": pl.String,
        "line": pl.Int64,
        "level": pl.String,
        "logger": pl.String,
        "kind": pl.String,
        "message": pl.String,
        "fields": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)
