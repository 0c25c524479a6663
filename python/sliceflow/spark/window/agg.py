"""``window_agg``: Flink's sliced windows on a Spark DataFrame, two phases around one shuffle.

::

    df.select(keys, time, args) ─ mapInArrow(local phase: bundle buffer → partial rows)
      ─ repartition(__key) ─ sortWithinPartitions(xxhash64(__key), __key, __slice)
      ─ mapInArrow(global phase: per key, slices → windows, retract-merge) ─ result

The global phase needs each key's partials together, in slice order; the order of the keys
does not matter. Sorting by a hash of the key first lets Spark's sorter order almost every
pair of rows by its 8-byte prefix: the encoded keys share their first bytes (a null flag and a
length), so sorted by ``__key`` first nearly every comparison copied both keys out of the rows.

Over a batch ``sliceflow.json`` read the local phase runs inside the read instead (the fused
scan, :mod:`sliceflow.spark.json.fused_scan`): only the partial rows enter the JVM.

All per-row work happens in the C++ kernel (``sliceflow._core.window``); Python touches each
Arrow batch once. The plan, the Spark schemas and every check are made on the driver, so a bad
spec fails at the call, before any task runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sliceflow._runtime.agg_plan import column_name
from sliceflow._runtime.kernels import conform
from sliceflow._runtime.spark_types import spark_struct
from sliceflow.aggregates import AggSpec, ColumnArg, agg_specs
from sliceflow.spark._runtime import emit_steps as window_outputs
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark._runtime.emit_steps import EmitStep
from sliceflow.spark._runtime.metrics import WindowMetrics
from sliceflow.spark._runtime.recipe import OperatorCall
from sliceflow.spark.json.fused_scan import local_phase_frame
from sliceflow.spark.window import streaming as window_streaming
from sliceflow.window.incremental import keep_changed
from sliceflow.window.phases import global_phase, local_phase
from sliceflow.window.plan import DEFAULT_BUNDLE_BYTES, DEFAULT_BUNDLE_ROWS, build_plan
from sliceflow.window.spec import WindowSpec

__all__ = ["WindowMetrics", "default_buckets", "window_agg"]


def window_agg(
    df: DataFrame,
    spec: WindowSpec,
    by: ColumnArg | Sequence[ColumnArg] | None,
    aggs: Sequence[AggSpec],
    *,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    bundle_bytes: int = DEFAULT_BUNDLE_BYTES,
    emit: str = "all",
    buckets: int | None = None,
    metrics: WindowMetrics | None = None,
) -> DataFrame:
    """Windowed aggregation of a DataFrame with Flink's sliced windows; Spark's result types.

    The same rows as ``df.groupBy(F.window(...), *by).agg(...)`` (for hop windows: Spark's
    sliding ``window()``), with the window as three flat columns and HOP windows moved forward by
    retract-merge over shared slices instead of each row being copied into every window.

    On a streaming DataFrame the result is an append-mode stream: each window is emitted once,
    in the micro-batch whose watermark (Spark's own, from ``withWatermark`` on the time column)
    reaches its end, as Spark's append-mode ``groupBy(window(...))`` does; a row counts in the
    windows not emitted before its micro-batch and is left out of the others (late). Per key,
    the state holds one accumulator per slice, not per window (docs/window-kernel.md,
    "Streaming").

    Args:
        df: a batch or streaming DataFrame (streaming: with a watermark on the time column,
            and the RocksDB state store).
        spec: :func:`sliceflow.window.tumble`, :func:`~sliceflow.window.hop` or
            :func:`~sliceflow.window.cumulate` on a TIMESTAMP or TIMESTAMP_NTZ column (batch:
            also STRING or DATE, cast to TIMESTAMP as Spark's ``window()`` casts them).
            The time column may be a nested field (``"event.ts"``) or a pyspark Column.
        by: grouping column(s), as ``DataFrame.groupBy`` takes them: names, nested fields
            (``"repo.name"``: the output column is ``name``, as groupBy names it) or pyspark
            Columns (``F.col("repo")``, ``df.repo``, ``F.col("repo").alias("r")``, or an
            expression such as ``F.col("a") + 1``, named ``(a + 1)``); ``None`` or ``[]`` for
            windows over all rows.
        aggs: :func:`sliceflow.window.count`, ``sum``, ``avg``, ``min``, ``max``,
            ``count_distinct``, ``first_value``, ``last_value`` (``.alias(name)`` to rename),
            over a column name, a nested field or a pyspark Column (``W.sum("repo.stars")`` is
            named ``sum(repo.stars)``, as Spark names ``F.sum("repo.stars")``).
        bundle_rows, bundle_bytes: the local phase's bundle buffer flushes after this many
            input rows or bytes (per task).
        emit: ``"all"``, or for CUMULATE ``"incremental"``: a key's window is emitted only if
            its values differ from the key's previous window of the cycle (Flink's
            FLINK-39030); the first window of a key in a cycle always is.
        buckets: streaming only: how many state-store entries the keys are hashed into (one
            Python call per bucket per micro-batch). Default: the Spark conf
            ``spark.sliceflow.window.buckets``, else ``min(16, spark.sql.shuffle.partitions)``.
            Part of the checkpoint: a query restarts with the bucket count it started with.
        metrics: a :class:`WindowMetrics` to which the kernel's counters are added; streaming
            adds ``rows_late`` (rows left out of all their windows), ``late_row_windows``
            ((row, window) pairs left out), ``rows_null_time`` and ``windows_emitted``.

    Returns:
        A DataFrame with ``window_start``, ``window_end``, ``window_time`` (``end - 1 µs``, the
        time column's type), the ``by`` columns and one column per aggregate. Integer / decimal
        overflow follows ``spark.sql.ansi.enabled`` (error, or wrap / null).

    Example:
        >>> from sliceflow import window as W
        >>> from sliceflow.spark import window_agg
        >>> out = window_agg(bids, W.hop("ts", size="1 day", slide="1 minute"),
        ...                  by=["auction"],
        ...                  aggs=[W.count().alias("bids"), W.max("price").alias("top")],
        ...                  )  # doctest: +SKIP
    """
    call = OperatorCall.begin("window_agg", df, metrics)
    if emit not in ("all", "incremental"):
        raise ValueError(f"emit must be 'all' or 'incremental', not {emit!r}")
    if emit == "incremental" and getattr(spec, "kind", None) != "cumulate":
        raise ValueError("emit='incremental' applies to cumulate windows only")
    if not isinstance(spec, WindowSpec):
        raise TypeError(
            "spec must be a window spec from sliceflow.window (tumble, hop, cumulate), "
            f"not {type(spec).__name__}"
        )
    by_given = [by] if isinstance(by, (str, Column)) else list(by or [])
    time_name, *by_list = call.columns([spec.time_col, *by_given])
    aggs = call.aggregates(agg_specs(aggs))
    spec = dataclasses.replace(spec, time_col=column_name(time_name, "time column"))

    df, spec = _cast_time_column(call.frame, spec)
    referenced = [spec.time_col, *by_list, *(a.col for a in aggs)]
    schema = call.input_schema(referenced, df)
    wp = build_plan(
        schema,
        spec,
        by_list,
        aggs,
        ansi=call.settings.ansi,
        bundle_rows=bundle_rows,
        bundle_bytes=bundle_bytes,
    )
    partial_struct = spark_struct(wp.partial_schema)
    output_struct = spark_struct(wp.output_schema)
    task = call.task
    if df.isStreaming:
        _check_watermark(df, column_name(spec.time_col, "time column"))
        call.require_state_store()
        n_buckets = call.buckets(buckets, "window", _default_buckets(df.sparkSession))
        stream = df

        def rebuild(step: EmitStep | None) -> DataFrame:
            return window_streaming.streaming(
                stream,
                wp,
                by_list,
                output_struct,
                emit=emit,
                buckets=n_buckets,
                task=task,
                time_col=column_name(spec.time_col, "time column"),
                fusion=call.settings.fusion and call.settings.stream_fusion,
                emit_step=step,
            )

        return window_outputs.remember(rebuild(None), rebuild)

    def local_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        inputs = (conform(b, wp.input_schema) for b in batches)
        return task.run(lambda stats: local_phase(wp, inputs, stats))

    def global_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        def fired(stats: dict[str, int] | None) -> Iterator[pa.RecordBatch]:
            out = global_phase(wp, batches, stats)
            return _incremental_batches(wp, out) if emit == "incremental" else out

        return task.run(fired)

    local_fn.__name__ = "window_agg_local"
    global_fn.__name__ = "window_agg_global"
    selected = call.select(wp.input_schema, df)
    partials = local_phase_frame(
        selected, local_fn, partial_struct, "window_agg", call.settings.fusion
    )
    shuffled = partials.repartition("__key").sortWithinPartitions(
        F.xxhash64("__key"), "__key", "__slice"
    )
    return shuffled.mapInArrow(global_fn, output_struct)


def _incremental_batches(wp: Any, fired: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Batch CUMULATE with ``emit="incremental"``: the windows whose values changed."""
    last = None
    for batch in fired:
        kept, last = keep_changed(pa.Table.from_batches([batch]), last, wp, None)
        yield from kept.to_batches()


#: Time column types that Spark's ``window()`` casts to TIMESTAMP before windowing.
_CAST_TO_TIMESTAMP = (T.StringType, T.DateType, T.CharType, T.VarcharType)


def _cast_time_column(df: DataFrame, spec: WindowSpec) -> tuple[DataFrame, WindowSpec]:
    """Spark's ``window()`` takes a STRING or DATE time column and casts it to TIMESTAMP
    (``cast(ts AS TIMESTAMP)``: the session time zone; with ``spark.sql.ansi.enabled`` a string
    that does not parse fails the query with Spark's CAST_INVALID_INPUT, without it the row's
    time is null and the row is left out). The same here: the cast goes into the Spark plan, as
    a new column that the spec then names, so that the original column keeps its type where it
    is also a key or an argument. Other types are left to :func:`build_plan` to check.

    On a stream the time column must carry Spark's watermark, which Spark puts on TIMESTAMP
    columns only (STRING, DATE and TIMESTAMP_NTZ fail with EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE):
    such a column is refused here, with the cast to write."""
    name = column_name(spec.time_col, "time column")
    matches = [f for f in df.schema.fields if f.name == name]
    if len(matches) != 1:
        return df, spec
    dt = matches[0].dataType
    streaming_refused = (*_CAST_TO_TIMESTAMP, T.TimestampNTZType)
    if not isinstance(dt, _CAST_TO_TIMESTAMP) and not (
        df.isStreaming and isinstance(dt, streaming_refused)
    ):
        return df, spec
    type_name = dt.simpleString().upper()
    if df.isStreaming:
        raise ValueError(
            f"time column {name!r} has type {type_name}: a streaming window_agg fires windows "
            "by Spark's watermark, which Spark defines on TIMESTAMP columns only "
            "(EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE); cast the column first, e.g. "
            f"df.withColumn({name!r}, F.col({name!r}).cast('timestamp'))"
            f".withWatermark({name!r}, '10 seconds')"
        )
    cast_name = "__sliceflow_window_time"
    while cast_name in df.columns:
        cast_name += "_"
    cast = df.withColumn(cast_name, F.col(quote(name)).cast(T.TimestampType()))
    return cast, dataclasses.replace(spec, time_col=cast_name)


def _check_watermark(df: DataFrame, time_col: str) -> None:
    field = df.schema[time_col]
    if "spark.watermarkDelayMs" not in (field.metadata or {}):
        raise ValueError(
            "a streaming window_agg fires windows by Spark's watermark: define one on its time "
            f"column first, e.g. df.withWatermark({time_col!r}, '10 seconds')"
        )


def default_buckets(spark: SparkSession) -> int:
    """The bucket count of a streaming window_agg that does not give one: the Spark conf
    ``spark.sliceflow.window.buckets``, else ``min(16, spark.sql.shuffle.partitions)``."""
    call = OperatorCall.begin("window_agg", spark.range(0))
    return call.buckets(None, "window", _default_buckets(spark))


def _default_buckets(spark: SparkSession) -> int:
    """``min(16, spark.sql.shuffle.partitions)``: one bucket per shuffle partition, at most 16."""
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions", "200") or "200")
    return max(1, min(window_streaming.DEFAULT_BUCKETS, partitions))
