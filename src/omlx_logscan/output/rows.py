"""Event rows: NDJSON, CSV and Parquet."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import IO, Any


def write_ndjson(rows: Iterable[dict[str, Any]], out: IO[str]) -> None:
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False, default=str))
        out.write("\n")


# Every row has these columns; ``host`` is empty when no host is named, ``fields`` holds the rest as JSON.
EVENT_COLUMNS = ("time", "source", "line", "level", "logger", "kind", "message", "host", "fields")


def write_csv(rows: Iterable[dict[str, Any]], out: IO[str], *, header: bool = True) -> None:
    """The rows under the header line (``header``: with it; rows written in runs leave it out after the first)."""
    writer = csv.writer(out)
    if header:
        writer.writerow(EVENT_COLUMNS)
    for row in rows:
        extra = {k: v for k, v in row.items() if k not in EVENT_COLUMNS}
        writer.writerow(
            [row.get(c) if c != "fields" else json.dumps(extra, ensure_ascii=False, default=str) for c in EVENT_COLUMNS]
        )
