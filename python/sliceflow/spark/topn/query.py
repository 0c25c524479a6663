"""``topn``: Flink SQL's Top-N (``ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) <= n``) on a
Spark DataFrame, batch and streaming.

::

    batch / window Top-N:  df ─ repartition(by) ─ mapInArrow(encode keys and sort keys, rank
                              with the C++ kernel, take) ─ each key's top n once (+ rank)

    changelog (stream):    df ─ mapInArrow(bucket of each row, pack per bucket; inside a
                              sliceflow.json stream's read without a watermark, with
                              spark.sliceflow.fusion.streams.enabled) ─ groupBy(__bucket)
                              ─ transformWithStateInPandas(per bucket: retained rows + the
                                micro-batch's rows through the kernel, changes out, retained
                                rows back; topn_streaming) ─ +I/-U/+U/-D rows (append)

A streaming input whose ``by`` holds ``window_start`` and ``window_end`` is taken as the output
of a streaming ``window_agg``, which emits each window once, complete, in one micro-batch: its
Top-N is computed per micro-batch with no state (Flink's Window Top-N), append mode. On the
``window_agg`` DataFrame as returned, the local phase runs inside window_agg's stateful step
(``window_outputs``): only each bucket call's top n per window leaves it, then one small shuffle
and the final phase (one task when ``by`` is the window bounds alone).
Every per-row step is in the C++ kernel (``sliceflow._core.topn``); the payload stays Arrow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sliceflow._runtime.kernels import conform
from sliceflow._runtime.spark_types import spark_struct
from sliceflow.aggregates import ColumnArg
from sliceflow.spark._runtime.bucket_labels import bucket_labels
from sliceflow.spark._runtime.bucket_rows import PACKED_SCHEMA, pack_by_bucket
from sliceflow.spark._runtime.columns import name_parts, quote, shown
from sliceflow.spark._runtime.emit_steps import with_emit_step
from sliceflow.spark._runtime.metrics import TopNMetrics
from sliceflow.spark._runtime.recipe import OperatorCall
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.spark.json.fused_scan import local_phase_frame
from sliceflow.spark.topn.streaming import streaming
from sliceflow.topn import Ranking, bucket_ids, encode_rows
from sliceflow.topn.plan import (
    DEFAULT_BUNDLE_ROWS,
    OrderKey,
    TopNPlan,
    build_plan,
)

__all__ = ["TopNMetrics", "topn"]


#: How a sort expression prints (``str(F.desc("x"))``: ``Column<'x DESC NULLS LAST'>``).
_SORT_EXPR = re.compile(r"^Column<'(.*?)(?: (ASC|DESC) NULLS (FIRST|LAST))?'>$", re.S)

#: The window bounds of a window_agg output: with both in ``by``, a stream is a window Top-N.
WINDOW_COLUMNS = ("window_start", "window_end")


def _order_entry(entry: Any, columns: Sequence[str]) -> tuple[Any, bool | None, bool | None]:
    """An ``order_by`` entry as (column argument, descending, nulls first): a name, a nested
    field, an OrderKey, a Column (ascending) or a Column sort expression over a column
    (``F.desc("x")``, ``F.col("repo.stars").asc_nulls_last()``); None: the default order."""
    if isinstance(entry, OrderKey):
        return entry.column, entry.descending, entry.nulls_first
    if isinstance(entry, str):
        return entry, None, None
    if not isinstance(entry, Column):
        raise TypeError(
            "order_by takes column names or Column sort expressions (F.desc('x'), "
            f"F.col('x').asc_nulls_last(), ...) or Columns, not {type(entry).__name__}"
        )
    m = _SORT_EXPR.match(str(entry))
    if m is None or m.group(2) is None:
        return entry, None, None  # a column or an expression, ascending
    name, direction, nulls = m.group(1), m.group(2), m.group(3)
    parts = name_parts(name)
    if parts is None or (
        len(parts) == 1 and parts[0] not in columns and parts[0].lower() not in _lowered(columns)
    ):
        raise ValueError(
            f"order_by entry {shown(entry)!r} must sort a column or a nested field ({name!r} "
            "is neither); add the expression as a column with withColumn first, or pass it "
            f"unsorted for ascending order (columns: {', '.join(columns)})"
        )
    return name, direction == "DESC", nulls == "FIRST"


def _lowered(columns: Sequence[str]) -> set[str]:
    """The column names in lower case (Spark's case-insensitive lookup)."""
    return {c.lower() for c in columns}


def topn(
    df: DataFrame,
    n: int,
    *,
    by: ColumnArg | Sequence[ColumnArg] | None,
    order_by: Any,
    with_rank: bool = True,
    op_col: ColumnArg | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    buckets: int | None = None,
    metrics: TopNMetrics | None = None,
) -> DataFrame:
    """The top ``n`` rows per ``by`` key in ``order_by`` order (Flink SQL's Top-N).

    Args:
        df: a batch or streaming DataFrame.
        n: rows per key (at least 1, at most 2^30 = 1,073,741,824).
        by: partition column(s), as ``Window.partitionBy`` / ``groupBy`` take them: names,
            nested fields (``"repo.name"``) or pyspark Columns (``F.col("repo")``, ``df.repo``,
            ``F.col("a") + 1``); ``None`` or ``[]`` for one partition. A column that is not the
            input's own is computed for the ranking and left out of the output.
        order_by: as ``orderBy`` takes them: column names or nested fields (ascending),
            Columns (``F.col("repo.stars")``, ``F.col("a") + 1``: ascending) or Column sort
            expressions over a column or a nested field (``F.desc("repo.stars")``,
            ``F.col("x").asc_nulls_last()``, ...), with Spark's ordering:
            nulls first ascending and last descending unless said otherwise, NaN above every
            number, -0.0 equal to 0.0, strings and binary by their bytes. Ties keep arrival
            order (the row that came first ranks first; Spark's ``row_number`` breaks ties in
            no defined order, so give unique order keys where it matters).
        with_rank: add ``rank`` (INT, 1..n, as ``row_number``); a row whose rank changes emits
            ``-U``/``+U`` in a changelog.
        op_col: a STRING column of ``+I``/``-U``/``+U``/``-D`` (null: ``+I``): the input is a
            changelog (e.g. a ``changelog_agg`` output); a ``-U``/``-D`` removes an equal row
            (all non-nested columns equal) and brings the next one up; one that matches no
            row is ignored and counted (``retractions_ignored``).
        mini_batch: streaming changelog: one net change per key and rank per bundle, nothing
            when the top n ends where it began; ``False``: the changes of every row.
        bundle_rows: rows per bundle (Flink's ``table.exec.mini-batch.size``).
        buckets: streaming changelog only: state-store entries the keys are hashed into
            (default: the conf ``spark.sliceflow.topn.buckets``, else 8); part of the
            checkpoint.
        metrics: a :class:`TopNMetrics` to which the kernel's counters are added.

    Returns:
        Batch: the input columns (an op column aside) and ``rank``: exactly
        ``row_number() OVER (PARTITION BY by ORDER BY order_by) <= n`` (the materialized
        changelog when ``op_col`` is given). A stream whose ``by`` holds ``window_start`` and
        ``window_end`` (a ``window_agg`` output): the same, per window, append mode, each
        window's top n once, in the micro-batch that emits the window, no state. Any other
        stream: a changelog, ``op`` first (``+I`` for a row that enters the top n, ``-D`` for
        the row it pushes out, ``-U``/``+U`` for rows whose rank changed), output mode append.
        State: without ``op_col`` the top n rows of each key; with it every live row of a key
        (a retraction in the top n needs the next row), so it grows with the live rows.

    Example:
        >>> from pyspark.sql import functions as F
        >>> top3 = topn(hot, 3, by=["window_start", "window_end"],
        ...             order_by=[F.desc("bids"), "auction"])  # doctest: +SKIP
        >>> leaders = topn(bids, 10, by=["category"],
        ...                order_by=[F.desc("price"), "bid_id"])  # doctest: +SKIP
    """
    call = OperatorCall.begin("topn", df, metrics)
    entries = [order_by] if isinstance(order_by, (str, Column, OrderKey)) else list(order_by)
    sorts = [_order_entry(entry, df.columns) for entry in entries]
    order_names = call.columns([column for column, _, _ in sorts])
    order: list[OrderKey | str] = [
        name if descending is None else OrderKey(name, descending, bool(nulls_first))
        for name, (_, descending, nulls_first) in zip(order_names, sorts, strict=True)
    ]
    by_list = call.names(by)
    op_name = call.column(op_col) if op_col is not None else None
    window = df.isStreaming and all(c in by_list for c in WINDOW_COLUMNS)
    changelog = df.isStreaming and not window
    buckets = call.buckets(buckets, "topn")
    schema = call.input_schema(call.frame.columns)
    tp = build_plan(
        schema,
        n,
        by_list,
        order,
        with_rank=with_rank,
        op_col=op_name,
        mini_batch=mini_batch,
        bundle_rows=bundle_rows,
        buckets=buckets,
        emit="changelog" if changelog else "final",
    )
    task = call.task
    selected = call.select(tp.input_schema)
    output = spark_struct(tp.output_schema)
    if changelog:
        call.require_state_store()
        labels = bucket_labels(buckets)

        def pack_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            task.start()
            for batch in batches:
                if batch.num_rows:
                    # Only the bucket is computed here; the rows cross the shuffle as they are
                    # (a third of the bytes with their encoded columns), which the bucket call
                    # encodes.
                    rows = conform(batch, tp.input_schema)
                    yield pack_by_bucket(bucket_ids(tp, rows, buckets), rows, labels)

        pack_fn.__name__ = "topn_encode"
        # over a sliceflow.json stream without a watermark (the packed rows carry no event
        # time), the packing runs inside its read (the fused scan)
        fusion = call.settings.fusion and call.settings.stream_fusion
        packed = local_phase_frame(
            selected, pack_fn, spark_struct(PACKED_SCHEMA), "topn", fusion, streams=True
        )
        return call.without_added(streaming(tp, packed, output, task))
    one_task = False
    if not tp.retract:
        # Local phase: each input partition's own top n per key first (the top n of a union is
        # the top n of its parts' top n), so only those rows are shuffled.
        local = _final_fn(tp, TaskContext(call.settings.memory_limits, None), with_rank=False)
        fused = with_emit_step(df, local) if window else None
        if fused is not None:
            # A window_agg output as returned: the local phase runs inside window_agg's
            # stateful step on each call's fired windows, so only each call's top n per window
            # leaves it. By the window bounds alone that is at most n rows per window per
            # bucket call: one task does the final phase.
            selected = call.select(tp.input_schema, call.with_added(fused))
            if set(tp.by) <= set(WINDOW_COLUMNS):
                one_task = True
        else:
            selected = local_phase_frame(
                selected, local, selected.schema, "topn", call.settings.fusion
            )
    by_cols = [F.col(quote(c)) for c in tp.by]
    partitioned = (
        selected.repartition(1, *by_cols)
        if one_task or not by_cols
        else selected.repartition(*by_cols)
    )
    return call.without_added(partitioned.mapInArrow(_final_fn(tp, task), output))


def _final_fn(tp: TopNPlan, task: TaskContext, *, with_rank: bool = True) -> Any:
    """The per-partition step of a batch (or window) Top-N: each key's top n once (with
    ``with_rank=False``, as the input's columns: the local phase before the shuffle)."""

    def final_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        def phase(stats: dict[str, int] | None) -> Iterator[pa.RecordBatch]:
            ranking = Ranking(tp)
            state: pa.Table | None = None
            for batch in batches:
                if batch.num_rows:
                    _, rows = encode_rows(tp, conform(batch, tp.input_schema))
                    _, state = ranking.run(state, [rows])
            if state is not None:
                out, kept = ranking.run(state, [])
                if with_rank:
                    yield from out.to_batches()
                else:
                    yield from kept.select(tp.input_schema.names).to_batches()
            if stats is not None:
                stats.update(ranking.stats())

        return task.run(phase)

    final_fn.__name__ = "topn_final"
    return final_fn
