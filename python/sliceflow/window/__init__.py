"""Flink's sliced windows (TUMBLE, HOP, CUMULATE) with Spark's types, on a C++ kernel.

Window specs (:mod:`sliceflow.window.spec`) and aggregate specs (:mod:`sliceflow.aggregates`,
re-exported here) are plain values; :func:`aggregate` runs them on Arrow data in this process
(the kernel alone), and :func:`sliceflow.spark.window_agg` runs them on a Spark DataFrame (a
local phase before the shuffle, a global phase after it).

>>> import datetime
>>> import pyarrow as pa
>>> from sliceflow import window as W
>>> bids = pa.table({
...     "auction": [1, 1, 2],
...     "price": [10, 30, 20],
...     "ts": pa.array([datetime.datetime(2024, 1, 1, 0, m, 5) for m in (0, 0, 1)],
...                    pa.timestamp("us")),
... })
>>> out = W.aggregate(bids, W.tumble("ts", "1 minute"), ["auction"],
...                   [W.count().alias("bids"), W.max("price").alias("top")])
>>> out.select(["auction", "bids", "top"]).to_pylist()
[{'auction': 1, 'bids': 2, 'top': 30}, {'auction': 2, 'bids': 1, 'top': 20}]

Semantics (docs/window-kernel.md): windows are ``[start, end)`` aligned to the epoch plus
``offset``; ``window_time = end - 1 µs``; a window is emitted for a key when it holds at least
one row with a non-null time; rows with a null time are skipped. Result types are Spark's
(``sum`` of integers is BIGINT, ``avg`` of ``DECIMAL(p,s)`` is ``DECIMAL(p+4,s+4)``, ...).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import TypeAlias

import pyarrow as pa

from sliceflow._runtime.kernels import conform as conform
from sliceflow.aggregates import (
    AGG_FUNCTIONS as AGG_FUNCTIONS,
)
from sliceflow.aggregates import (
    AggSpec,
    avg,
    count,
    count_distinct,
    first_value,
    last_value,
    max,
    min,
    sum,
)
from sliceflow.window.phases import global_phase, local_phase
from sliceflow.window.plan import DEFAULT_BUNDLE_BYTES as DEFAULT_BUNDLE_BYTES
from sliceflow.window.plan import DEFAULT_BUNDLE_ROWS, build_plan
from sliceflow.window.spec import WindowKind as WindowKind
from sliceflow.window.spec import WindowSpec, cumulate, hop, tumble

__all__ = [
    "AggSpec",
    "WindowSpec",
    "aggregate",
    "avg",
    "count",
    "count_distinct",
    "cumulate",
    "first_value",
    "hop",
    "last_value",
    "max",
    "min",
    "sum",
    "tumble",
]


#: aggregate()'s bundle limits when none are given: the whole input (it is in memory already).
_UNBOUNDED_BUNDLE = 1 << 62

ArrowData: TypeAlias = pa.Table | pa.RecordBatch | pa.RecordBatchReader | Iterable[pa.RecordBatch]


def _schema_and_batches(data: ArrowData) -> tuple[pa.Schema, Iterable[pa.RecordBatch]]:
    if isinstance(data, pa.Table):
        return data.schema, data.to_batches()
    if isinstance(data, pa.RecordBatch):
        return data.schema, [data]
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, data
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise TypeError(
            "data must be a pyarrow Table, RecordBatch, RecordBatchReader or an iterable of "
            f"RecordBatches, not {type(data).__name__}"
        )
    iterator = iter(data)
    first = next(iterator, None)
    if first is None:
        raise ValueError("data has no record batches (no schema to plan with)")
    if not isinstance(first, pa.RecordBatch):
        raise TypeError(f"data must yield pyarrow RecordBatches, not {type(first).__name__}")

    def chained() -> Iterator[pa.RecordBatch]:
        yield first
        yield from iterator

    return first.schema, chained()


def aggregate(
    data: ArrowData,
    spec: WindowSpec,
    by: str | Sequence[str] | None,
    aggs: Sequence[AggSpec],
    *,
    ansi: bool = True,
    bundle_rows: int | None = None,
    bundle_bytes: int | None = None,
    stats: MutableMapping[str, int] | None = None,
) -> pa.Table:
    """Windowed aggregation of Arrow data in this process: the C++ kernel alone, no Spark.

    Runs both phases as :func:`sliceflow.spark.window_agg` does on a cluster: the local
    aggregator over every batch, the partial rows grouped by key and sorted by slice, then the
    global aggregator. With one bundle (the default) the local phase writes its partial rows
    already in that order; when the bundle flushes more than once, pyarrow sorts them.

    Args:
        data: a pyarrow ``Table``, ``RecordBatch``, ``RecordBatchReader`` or an iterable of
            ``RecordBatch`` (all of one schema). The time column is ``timestamp[us]`` (with or
            without a time zone).
        spec: the window (:func:`tumble`, :func:`hop`, :func:`cumulate`).
        by: the grouping column(s); ``None`` or ``[]`` for one group.
        aggs: the aggregates (:func:`count`, :func:`sum`, ...), in output order.
        ansi: Spark's ``spark.sql.ansi.enabled``: integer/decimal sum overflow raises
            ``OverflowError`` (``[ARITHMETIC_OVERFLOW] ...``) instead of wrapping / null.
        bundle_rows, bundle_bytes: the local bundle buffer flushes after this many input rows
            or bytes (default: one bundle for the whole input, which is in memory already: the
            bundle holds at most one partial row per input row).
        stats: a dict to which the kernel's counters are added (``rows_in``,
            ``rows_null_time``, ``partials_out``, ``windows_fired``, ``slices_retracted``, ...).

    Returns:
        A Table: ``window_start``, ``window_end``, ``window_time`` (the time column's type), the
        ``by`` columns, then one column per aggregate. Rows are grouped by key, and within a
        key ordered by window end, then start.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"k": ["a", "a", "b"], "v": [1, 2, 3],
        ...               "ts": pa.array([0, 30_000_000, 90_000_000], pa.timestamp("us"))})
        >>> out = aggregate(t, tumble("ts", "1 minute"), "k", [sum("v")])
        >>> out.select(["k", "sum(v)"]).to_pylist()
        [{'k': 'a', 'sum(v)': 3}, {'k': 'b', 'sum(v)': 3}]
    """
    schema, batches = _schema_and_batches(data)
    one_bundle = bundle_rows is None
    rows = _UNBOUNDED_BUNDLE if bundle_rows is None else bundle_rows
    size = _UNBOUNDED_BUNDLE if bundle_bytes is None else bundle_bytes
    wp = build_plan(schema, spec, by, aggs, ansi=ansi, bundle_rows=rows, bundle_bytes=size)
    wp.plan["sort_partials"] = True
    flushed = list(local_phase(wp, batches, stats))
    partials = pa.Table.from_batches(flushed, wp.partial_schema)
    if len(flushed) > 1:
        partials = partials.sort_by([("__key", "ascending"), ("__slice", "ascending")])
    chunk = DEFAULT_BUNDLE_ROWS if one_bundle else builtins.max(1, rows)
    outputs = list(global_phase(wp, partials.to_batches(max_chunksize=chunk), stats))
    return pa.Table.from_batches(outputs, wp.output_schema)
