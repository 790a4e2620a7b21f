"""Records that two sources share (a file log and a capture of one process) are counted once."""

from __future__ import annotations

from typing import Any

import polars as pl

from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.model import Accounting
from omlx_logscan.timeutil import parse


def dedup_key(event: Event) -> tuple[Any, ...] | None:
    """What makes two sources' records the same record: their time, or for untimed lines (a
    banner, an abort) the timestamps around them. None when nothing could tell two apart."""
    if event.time is not None:
        return (event.time, event.logger, event.level, event.message, event.kind)
    if event.prev_time is None and event.next_time is None:
        return None
    return ("untimed", event.prev_time, event.next_time, event.message, event.kind)


def count_once(
    tables: list[pl.DataFrame],
    schema: dict[str, Any],
    sparse: list[list[Event]],
    kind: str,
    accounting: Accounting,
) -> tuple[pl.DataFrame, list[list[Event]]]:
    """The sources' dense rows of one kind (``tables``, of ``schema``) in one table, and each
    source's events of that kind (``sparse``), with each record that two sources share once: the
    copies dropped move from the event lines to the duplicates in ``accounting``."""
    table = _dense_frame(tables, schema)
    if len(tables) > 1:
        table, shared = drop_shared_rows(sparse, table, kind)
        dropped_ids = {id(ev) for ev in shared}
        sparse = [[ev for ev in events if id(ev) not in dropped_ids] for events in sparse]
        moved = sum(ev.lines for ev in shared)
        accounting.duplicates += len(shared)
        accounting.event_lines -= moved
        accounting.record_lines += moved
    dropped = sum(t.height for t in tables) - table.height
    accounting.duplicates += dropped
    accounting.event_lines -= dropped
    accounting.record_lines += dropped
    return table, sparse


def _dense_frame(tables: list[pl.DataFrame], schema: dict[str, Any]) -> pl.DataFrame:
    """The sources' dense rows in one table, each record that two sources share once."""
    frames = [table for table in tables if table.height]
    if not frames:
        return pl.DataFrame(schema=schema)
    if len(frames) == 1:
        return frames[0]
    table = pl.concat(frames)  # one record in two sources: keep the copy of the first source that has it
    return table.filter(pl.col("source") == pl.col("source").min().over("time", "key"))


def _log_line(event: Event) -> str:
    """A request event written back as the console-format line its key is computed from."""
    stamp = (event.time or "").replace("T", " ").replace(".", ",")
    return f"{stamp} - {event.logger} - {event.level} - {event.message}"


def drop_shared_rows(per_source: list[list[Event]], rows: pl.DataFrame, kind: str) -> tuple[pl.DataFrame, list[Event]]:
    """A dense row of ``kind`` (a finished request, an arrival) can be a dense row in one source and an event
    in another (there an untimed line touched it): keep the copy of the first source, as for any
    other record.

    Returns the dense rows to keep and the events to drop.
    """
    sparse = [ev for events in per_source for ev in events if ev.kind == kind and ev.time]
    if not sparse or not rows.height:
        return rows, []
    keys = pl.DataFrame({"line": [_log_line(ev) for ev in sparse]}).select(pl.col("line").hash())["line"]
    both = pl.concat(
        [
            rows.select("source", "time", "key", row=pl.lit(-1, dtype=pl.Int64)),
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
    kept = rows.join(shared, on=["source", "time", "key"], how="anti") if shared.height else rows
    return kept, [sparse[i] for i in sorted(dropped_rows)]
