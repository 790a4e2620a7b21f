"""Records that two sources share (a file log and a capture of one process) are counted once.

Only a run of several sources de-duplicates, and it scans with the polars plan (which gives the
keys), so polars is loaded already: the dense rows are matched in polars and taken by position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omlx_logscan.parsing.dense import Dense, concat, to_polars
from omlx_logscan.parsing.event import Event
from omlx_logscan.stream.event_stream import Accounting
from omlx_logscan.timeutil import parse

if TYPE_CHECKING:
    import polars as pl


def dedup_key(event: Event) -> tuple[Any, ...] | None:
    """What makes two sources' records the same record: their time, or for untimed lines (a
    banner, an abort) the timestamps around them. None when nothing could tell two apart."""
    if event.time is not None:
        return (event.time, event.logger, event.level, event.message, event.kind)
    if event.prev_time is None and event.next_time is None:
        return None
    return ("untimed", event.prev_time, event.next_time, event.message, event.kind)


def count_once(
    tables: list[Dense],
    schema: dict[str, str],
    sparse: list[list[Event]],
    kind: str,
    accounting: Accounting,
) -> tuple[Dense, list[list[Event]]]:
    """The sources' dense rows of one kind (``tables``, of ``schema``) in one table, and each
    source's events of that kind (``sparse``), with each record that two sources share once: the
    copies dropped move from the event lines to the duplicates in ``accounting``."""
    table = _dense_rows(tables, schema)
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


def _keys(table: Dense) -> pl.DataFrame:
    """What tells a dense row from another: source, time and key, as a polars frame."""
    return to_polars(Dense({name: table[name] for name in ("source", "time", "key")}))


def _dense_rows(tables: list[Dense], schema: dict[str, str]) -> Dense:
    """The sources' dense rows in one table, each record that two sources share once."""
    parts = [table for table in tables if table.height]
    table = concat(parts, schema)
    if len(parts) <= 1:
        return table
    import polars as pl

    # One record in two sources: keep the copy of the first source that has it.
    first = _keys(table).select(pl.arg_where(pl.col("source") == pl.col("source").min().over("time", "key")))
    return table.take(first.to_series().to_numpy())


def _log_line(event: Event) -> str:
    """A request event written back as the console-format line its key is computed from."""
    stamp = (event.time or "").replace("T", " ").replace(".", ",")
    return f"{stamp} - {event.logger} - {event.level} - {event.message}"


def drop_shared_rows(per_source: list[list[Event]], rows: Dense, kind: str) -> tuple[Dense, list[Event]]:
    """A dense row of ``kind`` (a finished request, an arrival) can be a dense row in one source and an event
    in another (there an untimed line touched it): keep the copy of the first source, as for any
    other record.

    Returns the dense rows to keep and the events to drop.
    """
    import polars as pl

    sparse = [ev for events in per_source for ev in events if ev.kind == kind and ev.time]
    if not sparse or not rows.height:
        return rows, []
    keys = pl.DataFrame({"line": [_log_line(ev) for ev in sparse]}).select(pl.col("line").hash())["line"]
    dense = _keys(rows)
    both = pl.concat(
        [
            dense.select("source", "time", "key", row=pl.lit(-1, dtype=pl.Int64)),
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
    if shared.height:
        kept = dense.with_row_index("position").join(shared, on=["source", "time", "key"], how="anti")
        rows = rows.take(kept["position"].sort().to_numpy())
    return rows, [sparse[i] for i in sorted(dropped_rows)]
