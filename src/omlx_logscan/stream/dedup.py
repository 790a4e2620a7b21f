"""Records that two sources share (a file log and a capture of one process) are counted once."""

from __future__ import annotations

from typing import Any

import polars as pl

from omlx_logscan.parsing.event import Event
from omlx_logscan.parsing.scan import REQUEST_SCHEMA, SourceScan
from omlx_logscan.timeutil import parse


def dedup_key(event: Event) -> tuple[Any, ...] | None:
    """What makes two sources' records the same record: their time, or for untimed lines (a
    banner, an abort) the timestamps around them. None when nothing could tell two apart."""
    if event.time is not None:
        return (event.time, event.logger, event.level, event.message, event.kind)
    if event.prev_time is None and event.next_time is None:
        return None
    return ("untimed", event.prev_time, event.next_time, event.message, event.kind)


def requests_frame(scans: list[SourceScan]) -> pl.DataFrame:
    """The sources' dense request rows in one table, each record that two sources share once."""
    frames = [scan.requests for scan in scans if scan.requests.height]
    if not frames:
        return pl.DataFrame(schema=REQUEST_SCHEMA)
    if len(frames) == 1:
        return frames[0]
    table = pl.concat(frames)  # one record in two sources: keep the copy of the first source that has it
    return table.filter(pl.col("source") == pl.col("source").min().over("time", "key"))


def _log_line(event: Event) -> str:
    """A request event written back as the console-format line its key is computed from."""
    stamp = (event.time or "").replace("T", " ").replace(".", ",")
    return f"{stamp} - {event.logger} - {event.level} - {event.message}"


def drop_shared_requests(per_source: list[list[Event]], requests: pl.DataFrame) -> tuple[pl.DataFrame, list[Event]]:
    """A finished request can be a dense row in one source and an event in another (there an
    untimed line touched it): keep the copy of the first source, as for any other record.

    Returns the dense rows to keep and the request events to drop.
    """
    sparse = [ev for events in per_source for ev in events if ev.kind == "request_complete" and ev.time]
    if not sparse or not requests.height:
        return requests, []
    keys = pl.DataFrame({"line": [_log_line(ev) for ev in sparse]}).select(pl.col("line").hash())["line"]
    both = pl.concat(
        [
            requests.select("source", "time", "key", row=pl.lit(-1, dtype=pl.Int64)),
            pl.DataFrame(
                {
                    "source": [ev.source_index for ev in sparse],
                    "time": [parse(ev.time or "") for ev in sparse],
                    "key": keys,
                    "row": list(range(len(sparse))),
                },
                schema={"source": pl.UInt32, "time": pl.Datetime("ms"), "key": pl.UInt64, "row": pl.Int64},
            ),
        ]
    ).with_columns(owner=pl.col("source").min().over("time", "key"))
    losers = both.filter(pl.col("source") != pl.col("owner"))
    dropped_rows = set(losers.filter(pl.col("row") >= 0)["row"].to_list())
    shared = losers.filter(pl.col("row") < 0).select("source", "time", "key").unique()
    kept = requests.join(shared, on=["source", "time", "key"], how="anti") if shared.height else requests
    return kept, [sparse[i] for i in sorted(dropped_rows)]
