"""Parquet tables of one host's analysis, partitioned ``TABLE/host=…/day=…/``, for pooling elsewhere.

Each Mac exports its own log; an engine (DuckDB, Spark, Trino) pools the folders. Times are
timestamps in UTC (``time``, ``start``, …) with the wall time as the log wrote it, offset included,
beside them (``time_local``); counts are integers. A (host, day) partition is replaced whole on
every export, so exporting a growing, rotating log again replaces its days and never duplicates a
row; days the new export does not cover stay as they were. ``docs/export.md`` is the schema.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import polars as pl

from omlx_logscan.parsing.dense import to_polars
from omlx_logscan.stream.zone_clock import ZoneClock
from omlx_logscan.timeutil import LOCAL_STAMP, LocalTime

if TYPE_CHECKING:
    from omlx_logscan.analysis.results import Analysis
    from omlx_logscan.inputs.oshistory import OsHistory
    from omlx_logscan.parsing.event import Event

EXPORT_SCHEMA = "omlx-logscan/export"
EXPORT_VERSION = 1
UNDATED = "undated"  # the day partition of rows whose time, and every time near them, is unknown
UTC_TIME = pl.Datetime("us", "UTC")
# Fields every event of the kinds that have them carries, as columns; the rest stay in ``fields``.
EVENT_FIELD_COLUMNS = {"code": pl.String, "code_name": pl.String, "context": pl.String, "reason": pl.String}


@dataclass
class RowStyle:
    """How rows are written: the clock that zones their times."""

    clock: ZoneClock

    def times(self, stamps: Iterable[str | None]) -> tuple[list[datetime | None], list[str | None]]:
        """UTC instants and zoned wall times of naive local stamps (null stays null)."""
        instants: list[datetime | None] = []
        walls: list[str | None] = []
        for stamp in stamps:
            if stamp is None or not LOCAL_STAMP.fullmatch(stamp):
                instants.append(None)
                walls.append(None)
            else:
                instants.append(self.clock.instant(stamp))
                walls.append(self.clock.zoned(stamp))
        return instants, walls


class HostExport(RowStyle):
    """One host's analysis and what is known of the machine, as the tables are built from it."""

    def __init__(
        self,
        host: str,
        analysis: Analysis,
        chip: str | None = None,
        history: OsHistory | None = None,
        redact_key: str | None = None,  # with --redact: the fingerprint of the key of the host's pseudonym
    ) -> None:
        super().__init__(analysis.stream.clock())
        self.host, self.analysis, self.chip, self.history = host, analysis, chip, history
        self.redact_key = redact_key

    def os_version(self, stamp: str | None) -> str | None:
        install = self.history.in_force(stamp) if self.history is not None else None
        return install.version if install is not None else None


def _day(*stamps: str | None) -> str:
    """The local day a row belongs to: its first known time's date."""
    return next((stamp[:10] for stamp in stamps if stamp), UNDATED)


def _timed(
    export: RowStyle, columns: dict[str, list[str | None]], frame: dict[str, Any], days: list[str]
) -> pl.DataFrame:
    """A frame with each time column as a UTC timestamp and its ``…_local`` text, and the rows' days."""
    timed: dict[str, Any] = {}
    for name, stamps in columns.items():
        instants, walls = export.times(stamps)
        timed[name] = pl.Series(name, instants, dtype=UTC_TIME)
        timed[f"{name}_local"] = pl.Series(f"{name}_local", walls, dtype=pl.String)
    return pl.DataFrame({**timed, **frame, "day": pl.Series("day", days, dtype=pl.String)})


def event_frame(events: Iterable[Event], export: RowStyle) -> pl.DataFrame:
    """The events table: one typed row per event (``events -f parquet`` writes this too)."""
    rows = list(events)
    fields = [dict(ev.fields) for ev in rows]
    typed = {
        name: pl.Series(name, [_text(f.pop(name, None)) for f in fields], dtype=dtype)
        for name, dtype in EVENT_FIELD_COLUMNS.items()
    }
    frame = {
        "time_ambiguous": pl.Series(
            [ev.time is not None and export.clock.kind(ev.time) is LocalTime.ambiguous for ev in rows], dtype=pl.Boolean
        ),
        "time_of_day": pl.Series([ev.time_of_day for ev in rows], dtype=pl.String),
        "source": pl.Series([ev.source for ev in rows], dtype=pl.String),
        "line": pl.Series([ev.line for ev in rows], dtype=pl.Int64),
        "level": pl.Series([ev.level for ev in rows], dtype=pl.String),
        "logger": pl.Series([ev.logger for ev in rows], dtype=pl.String),
        "kind": pl.Series([ev.kind for ev in rows], dtype=pl.String),
        "message": pl.Series([ev.message for ev in rows], dtype=pl.String),
        **typed,
        "fields": pl.Series(
            [json.dumps(f, ensure_ascii=False, default=str) if f else None for f in fields],
            dtype=pl.String,
        ),
    }
    days = [_day(ev.time, ev.prev_time, ev.next_time) for ev in rows]
    return _timed(export, {"time": [ev.time for ev in rows]}, frame, days)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _events(export: HostExport) -> pl.DataFrame:
    # Finished requests are counted per minute in their own table; every other event is a row here.
    return event_frame((ev for ev in export.analysis.stream.events if ev.kind != "request_complete"), export)


def _sessions(export: HostExport) -> pl.DataFrame:
    sessions = export.analysis.sessions
    starts = [s.start or s.start_after for s in sessions]
    frame = {
        "session": pl.Series([s.index for s in sessions], dtype=pl.Int64),
        "start_exact": pl.Series([s.start_exact for s in sessions], dtype=pl.Boolean),
        "start_in_log": pl.Series([s.start_in_log for s in sessions], dtype=pl.Boolean),
        "end_reason": pl.Series([s.end_reason for s in sessions], dtype=pl.String),
        "hours": pl.Series([_hours(export, s.start or s.start_after, s.end) for s in sessions], dtype=pl.Float64),
        "omlx_version": pl.Series([s.omlx_version for s in sessions], dtype=pl.String),
        "os_version": pl.Series([export.os_version(start) for start in starts], dtype=pl.String),
        "chip": pl.Series([export.chip] * len(sessions), dtype=pl.String),
        "pid": pl.Series([s.pid for s in sessions], dtype=pl.Int64),
        "engine_starts": pl.Series([s.engine_starts for s in sessions], dtype=pl.Int64),
        "requests_completed": pl.Series([s.requests_completed for s in sessions], dtype=pl.Int64),
        "faults": pl.Series([s.faults for s in sessions], dtype=pl.Int64),
        "source": pl.Series([s.source for s in sessions], dtype=pl.String),
        "line": pl.Series([s.line for s in sessions], dtype=pl.Int64),
    }
    days = [_day(start, s.end) for start, s in zip(starts, sessions, strict=True)]
    return _timed(export, {"start": starts, "end": [s.end for s in sessions]}, frame, days)


def _hours(export: RowStyle, start: str | None, end: str | None) -> float | None:
    """Hours from start to end as instants: a lifetime across a DST change is not an hour off."""
    if not start or not end or not (LOCAL_STAMP.fullmatch(start) and LOCAL_STAMP.fullmatch(end)):
        return None
    return (export.clock.instant(end) - export.clock.instant(start)).total_seconds() / 3600


def _faults(export: HostExport) -> pl.DataFrame:
    faults = export.analysis.faults
    by_index = {s.index: s for s in export.analysis.sessions}
    starts = [by_index[f.session].start or by_index[f.session].start_after for f in faults]
    frame = {
        "time_exact": pl.Series([f.first.time is not None for f in faults], dtype=pl.Boolean),
        "session": pl.Series([f.session for f in faults], dtype=pl.Int64),
        "kind": pl.Series([f.kind for f in faults], dtype=pl.String),
        "outcome": pl.Series([f.outcome for f in faults], dtype=pl.String),
        "context": pl.Series([f.context for f in faults], dtype=pl.String),
        "signature": pl.Series([f.signature for f in faults], dtype=pl.String),
        "codes": pl.Series([f.code_names for f in faults], dtype=pl.List(pl.String)),
        "records": pl.Series([len(f.records) for f in faults], dtype=pl.Int64),
        "later_requests": pl.Series([f.later_requests for f in faults], dtype=pl.Int64),
        "penalty_box": pl.Series([f.outcome == "penalty_box" for f in faults], dtype=pl.Boolean),
        "omlx_version": pl.Series([by_index[f.session].omlx_version for f in faults], dtype=pl.String),
        "os_version": pl.Series([export.os_version(start) for start in starts], dtype=pl.String),
        "chip": pl.Series([export.chip] * len(faults), dtype=pl.String),
        "source": pl.Series([f.first.source for f in faults], dtype=pl.String),
        "line": pl.Series([f.first.line for f in faults], dtype=pl.Int64),
        "message": pl.Series([f.first.message for f in faults], dtype=pl.String),
    }
    days = [_day(f.time) for f in faults]
    return _timed(export, {"time": [f.time for f in faults], "session_start": starts}, frame, days)


def _dead_windows(export: HostExport) -> pl.DataFrame:
    windows = export.analysis.dead_windows
    frame = {
        "session": pl.Series([w.session for w in windows], dtype=pl.Int64),
        "end_exact": pl.Series([w.end_exact for w in windows], dtype=pl.Boolean),
        "end_reason": pl.Series([w.end_reason for w in windows], dtype=pl.String),
        "still_dead_at_end_of_log": pl.Series([w.end_reason == "eof" for w in windows], dtype=pl.Boolean),
        "duration_s": pl.Series([w.duration_s for w in windows], dtype=pl.Float64),
        "dead_at_least_s": pl.Series([w.at_least_s for w in windows], dtype=pl.Float64),
        "repeats": pl.Series([w.repeats for w in windows], dtype=pl.Int64),
        "requests_completed": pl.Series([w.requests_completed for w in windows], dtype=pl.Int64),
    }
    days = [_day(w.start) for w in windows]
    return _timed(export, {"start": [w.start for w in windows], "end": [w.end for w in windows]}, frame, days)


def _requests_per_minute(export: HostExport) -> pl.DataFrame:
    per_minute = (
        to_polars(export.analysis.requests.rows())
        .group_by(pl.col("time").dt.truncate("1m").alias("minute"))
        .agg(pl.len().cast(pl.Int64).alias("requests"), pl.col("tokens").cast(pl.Int64).sum().alias("tokens"))
        .sort("minute")
    )
    minutes = [moment.isoformat(timespec="milliseconds") for moment in per_minute["minute"].to_list()]
    frame = {"requests": per_minute["requests"], "tokens": per_minute["tokens"]}
    return _timed(export, {"minute": minutes}, frame, [m[:10] for m in minutes])


# The tables an export writes, in order. A new table (the outages of the outages analysis, say) is
# one builder here and one section in docs/export.md; `fleet` reads whichever tables are present.
TABLES: dict[str, Callable[[HostExport], pl.DataFrame]] = {
    "events": _events,
    "sessions": _sessions,
    "faults": _faults,
    "dead_windows": _dead_windows,
    "requests_per_minute": _requests_per_minute,
}


def table_metadata(table: str, redact_key: str | None = None) -> dict[str, str]:
    """What each Parquet file says it is: the schema's name and version, and for a redacted export
    the fingerprint of the key its host pseudonyms were made with (never the key)."""
    metadata = {"omlx_logscan.schema": f"{EXPORT_SCHEMA}/{table}", "omlx_logscan.version": str(EXPORT_VERSION)}
    return metadata | ({"omlx_logscan.redact_key": redact_key} if redact_key else {})


def write_parquet(frame: pl.DataFrame, path: Path, table: str, redact_key: str | None = None) -> None:
    """One table's file, replacing ``path`` only once it is complete (an interrupted run leaves the old one)."""
    from omlx_logscan.output.files import replaced_whole

    encoded = io.BytesIO()  # polars reports a failed write as its own error: the file is written here
    frame.write_parquet(encoded, metadata=table_metadata(table, redact_key))
    with replaced_whole(path) as temporary:  # a write that fails is its one-line error
        temporary.write_bytes(encoded.getbuffer())


def export_host(export: HostExport, out_dir: Path) -> dict[str, int]:
    """Write one host's tables under ``out_dir`` (a generation of ``output.generations``, seen by no
    reader until the run is complete); rows per table.

    Every day the export covers (any table's rows fall on it) is replaced in every table, empty
    where that table has no rows on it now, so nothing of an earlier export of those days stays."""
    frames = {table: build(export) for table, build in TABLES.items()}
    days = sorted({day for frame in frames.values() for day in frame["day"].unique().to_list()})
    host_part = out_dir / "{table}" / ("host=" + quote(export.host, safe="-_."))
    for table, frame in frames.items():
        parts = {day: part.drop("day") for (day,), part in frame.group_by("day", maintain_order=True)}
        for day in days:
            folder = Path(str(host_part).format(table=table)) / f"day={day}"
            shutil.rmtree(folder, ignore_errors=True)
            if day in parts:
                folder.mkdir(parents=True)
                write_parquet(parts[day], folder / "part-0.parquet", table, export.redact_key)
    return {table: frame.height for table, frame in frames.items()}
