"""``timeline -f json`` documents (one attached to each bug report) as the export's tables.

Each document is one host: the ``host`` it names, else the document's file name. Its lifetimes,
faults and dead windows become rows of ``sessions``, ``faults`` and ``dead_windows`` with the
export's column names and types, written as Parquet in the export's layout, so the fleet's SQL
reads documents and exports alike.
"""

from __future__ import annotations

import bisect
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, urlparse

import polars as pl

from omlx_logscan.errors import InputError
from omlx_logscan.output.export import UTC_TIME, write_parquet


def _instant(stamp: Any) -> datetime | None:
    """A zoned time of a ``/2`` document as a UTC instant (null stays null)."""
    if not isinstance(stamp, str):
        return None
    moment = datetime.fromisoformat(stamp)
    return moment.astimezone(UTC) if moment.tzinfo is not None else None


def document_host(name: str, document: dict[str, Any]) -> str:
    """The host a document names, else its file's name without the extension."""
    host = document.get("host")
    if isinstance(host, str) and host:
        return host
    return PurePosixPath(urlparse(name).path if "://" in name else name).stem


class _OsVersions:
    """The macOS version in force at an instant, from the install history a document carries."""

    def __init__(self, document: dict[str, Any]) -> None:
        history = ((document.get("bounds") or {}).get("os_history") or {}).get("installs") or []
        installs = sorted((at, row["version"]) for row in history if (at := _instant(row.get("time"))) is not None)
        self._times = [at for at, _ in installs]
        self._versions = [version for _, version in installs]

    def at(self, moment: datetime | None) -> str | None:
        if moment is None:
            return None
        index = bisect.bisect_right(self._times, moment)
        return self._versions[index - 1] if index else None


def _frames(name: str, document: dict[str, Any]) -> tuple[dict[str, pl.DataFrame], str]:
    if not str(document.get("schema", "")).endswith(("/2", "/3")):
        raise InputError(f"{name}: a {document.get('schema')} document has times of no stated zone; rerun timeline")
    host = document_host(name, document)
    os_at = _OsVersions(document)
    sessions = document.get("sessions") or []
    starts = {row["index"]: _instant(row.get("start") or row.get("start_after")) for row in sessions}
    versions = {row["index"]: row.get("omlx_version") for row in sessions}

    def hours(row: dict[str, Any]) -> float | None:
        start, end = starts[row["index"]], _instant(row.get("end"))
        return (end - start).total_seconds() / 3600 if start and end else None

    faults = document.get("faults") or []
    windows = document.get("dead_windows") or []
    return {
        "sessions": pl.DataFrame(
            {
                "start": pl.Series([starts[row["index"]] for row in sessions], dtype=UTC_TIME),
                "start_local": [row.get("start") or row.get("start_after") for row in sessions],
                "session": pl.Series([row["index"] for row in sessions], dtype=pl.Int64),
                "start_in_log": pl.Series([bool(row.get("start_in_log")) for row in sessions], dtype=pl.Boolean),
                "end_reason": pl.Series([row.get("end_reason") for row in sessions], dtype=pl.String),
                "hours": pl.Series([hours(row) for row in sessions], dtype=pl.Float64),
                "omlx_version": pl.Series([row.get("omlx_version") for row in sessions], dtype=pl.String),
                "os_version": pl.Series([os_at.at(starts[row["index"]]) for row in sessions], dtype=pl.String),
                "chip": pl.Series([None] * len(sessions), dtype=pl.String),
                "faults": pl.Series([row.get("faults") for row in sessions], dtype=pl.Int64),
            }
        ),
        "faults": pl.DataFrame(
            {
                "time": pl.Series([_instant(row.get("time")) for row in faults], dtype=UTC_TIME),
                "time_local": pl.Series([row.get("time") for row in faults], dtype=pl.String),
                "session": pl.Series([row["session"] for row in faults], dtype=pl.Int64),
                "kind": pl.Series([row.get("kind") for row in faults], dtype=pl.String),
                "outcome": pl.Series([row.get("outcome") for row in faults], dtype=pl.String),
                "omlx_version": pl.Series([versions.get(row["session"]) for row in faults], dtype=pl.String),
                "os_version": pl.Series([os_at.at(starts.get(row["session"])) for row in faults], dtype=pl.String),
                "chip": pl.Series([None] * len(faults), dtype=pl.String),
            }
        ),
        "dead_windows": pl.DataFrame(
            {
                "session": pl.Series([row["session"] for row in windows], dtype=pl.Int64),
                "dead_at_least_s": pl.Series([row.get("dead_at_least_s") for row in windows], dtype=pl.Float64),
            }
        ),
    }, host


def write_document_tables(documents: list[tuple[str, dict[str, Any]]], root: Any) -> None:
    """Each document's rows under ``root`` in the export's layout (``TABLE/host=…/day=document/``)."""
    for number, (name, document) in enumerate(documents):
        try:
            frames, host = _frames(name, document)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError, pl.exceptions.PolarsError) as exc:
            # A document is input: a time or a number of the wrong form is the document's fault, told in one line.
            reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            raise InputError(f"{name}: not a well-formed timeline document ({reason})") from None
        for table, frame in frames.items():
            folder = root / table / f"host={quote(host, safe='-_.')}" / "day=document"
            folder.mkdir(parents=True, exist_ok=True)
            write_parquet(frame, folder / f"part-{number}.parquet", table)
