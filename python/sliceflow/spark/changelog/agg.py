"""``changelog_agg``: Flink SQL's changelog group aggregation on a Spark DataFrame.

::

    batch:     df ─ mapInArrow(encoder: key bytes, signed deltas, folded per key where exact)
                  ─ repartition(__key) ─ mapInArrow(aggregator, emit="final") ─ one +I per key

    streaming: df ─ mapInArrow(encoder) ─ groupBy(__bucket)
                  ─ transformWithStateInPandas(aggregator per bucket: read the bucket's state
                    once, apply the micro-batch's rows in bundles, emit net changes, write the
                    state once) ─ changelog rows (output mode append)

The state of a streaming query lives in Spark's state store (RocksDB), one value per *bucket*
(``hash(key) mod buckets``): one Python call handles every key of a bucket, so there is no
Python call (and no state-store round trip) per key. All per-row work is in the C++ kernel
(``sliceflow._core.changelog``); docs/changelog-kernel.md has the semantics.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from sliceflow._runtime.kernels import conform
from sliceflow._runtime.spark_types import spark_struct
from sliceflow.aggregates import AggSpec, ColumnArg, agg_specs
from sliceflow.changelog import GlobalPhase, encode
from sliceflow.changelog.plan import (
    DEFAULT_BUNDLE_ROWS,
    ChangelogPlan,
    build_plan,
)
from sliceflow.spark._runtime.bucket_labels import bucket_labels
from sliceflow.spark._runtime.bucket_rows import PACKED_SCHEMA, pack_by_bucket
from sliceflow.spark._runtime.metrics import ChangelogMetrics
from sliceflow.spark._runtime.recipe import OperatorCall
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.spark.changelog.streaming import streaming
from sliceflow.spark.json.fused_scan import local_phase_frame

__all__ = ["ChangelogMetrics", "changelog_agg"]


def changelog_agg(
    df: DataFrame,
    by: ColumnArg | Sequence[ColumnArg] | None,
    aggs: Sequence[AggSpec],
    *,
    op_col: ColumnArg | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    buckets: int | None = None,
    metrics: ChangelogMetrics | None = None,
) -> DataFrame:
    """Group aggregation that consumes and produces a changelog (Flink SQL's semantics).

    Args:
        df: a batch or streaming DataFrame. A streaming one needs the RocksDB state store
            provider (``spark.sql.streaming.stateStore.providerClass``), as every
            ``transformWithState`` query does.
        by: grouping column(s), as ``DataFrame.groupBy`` takes them: names, nested fields
            (``"repo.name"``: the output column is ``name``) or pyspark Columns
            (``F.col("repo")``, ``df.repo``, ``F.col("repo").alias("r")``, ``F.col("a") + 1``);
            ``None`` or ``[]`` for one group.
        aggs: :func:`sliceflow.window.count`, ``sum``, ``avg``, ``min``, ``max``,
            ``count_distinct``, ``first_value``, ``last_value`` (``.alias(name)``); all of them
            retract. Their arguments: names, nested fields or pyspark Columns.
        op_col: a STRING column of ``+I``/``-U``/``+U``/``-D`` (null is ``+I``; any other value
            fails the task with an error naming it), e.g. the ``op`` column of another
            ``changelog_agg``; ``None``: every row is an insert.
        mini_batch: fold each bundle's rows per key and emit one net change per key (Flink's
            ``table.exec.mini-batch.enabled``); ``False``: one change per row.
        bundle_rows: bundles are cut every this many rows (Flink's
            ``table.exec.mini-batch.size``); a bundle never spans micro-batches.
        buckets: streaming only: how many state-store entries the keys are hashed into (one
            Python call and one state read and write per touched bucket per micro-batch).
            Default: the Spark conf ``spark.sliceflow.changelog.buckets``, else 8. It is part
            of the checkpoint: a query must restart with the bucket count it started with.
        metrics: a :class:`ChangelogMetrics` to which the kernel's counters are added.

    Returns:
        ``op`` (STRING), the ``by`` columns, one column per aggregate (Spark SQL's result
        types). Streaming: the changelog, output mode ``append``. Batch: one ``+I`` row per key
        alive at the end of the input (what the changelog materializes to).

    Example:
        >>> from pyspark.sql import functions as F
        >>> from sliceflow import window as W
        >>> inner = changelog_agg(src.withColumn("b", F.col("user_id") % 10), by=["day", "b"],
        ...                       aggs=[W.count_distinct("user_id").alias("cnt")])  # doctest: +SKIP
        >>> outer = changelog_agg(inner, by=["day"], aggs=[W.sum("cnt").alias("total")],
        ...                       op_col="op")  # doctest: +SKIP
    """
    call = OperatorCall.begin("changelog_agg", df, metrics)
    buckets = call.buckets(buckets, "changelog")
    by_list = call.names(by)
    op_name = call.column(op_col) if op_col is not None else None
    aggs = call.aggregates(agg_specs(aggs))
    schema = call.input_schema([*by_list, op_name, *(a.col for a in aggs)])
    cp = build_plan(
        schema,
        by_list,
        aggs,
        op_col=op_name,
        mini_batch=mini_batch,
        bundle_rows=bundle_rows,
        buckets=buckets,
        ansi=call.settings.ansi,
    )
    task = call.task

    def encode_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        inputs = (conform(b, cp.input_schema) for b in batches)
        return task.run(lambda stats: encode(cp, inputs, stats))

    encode_fn.__name__ = "changelog_agg_encode"
    selected = call.select(cp.input_schema)
    output_struct = spark_struct(cp.output_schema)
    if df.isStreaming:
        labels = bucket_labels(buckets)

        def encode_packed_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for deltas in encode_fn(batches):
                yield pack_by_bucket(deltas.column(0).to_numpy(), deltas, labels)

        encode_packed_fn.__name__ = "changelog_agg_encode"
        call.require_state_store()
        packed = local_phase_frame(
            selected,
            encode_packed_fn,
            spark_struct(PACKED_SCHEMA),
            "changelog_agg",
            call.settings.fusion and call.settings.stream_fusion,
            streams=True,
        )
        return streaming(cp, packed, output_struct, task)
    deltas = local_phase_frame(
        selected, encode_fn, spark_struct(cp.delta_schema), "changelog_agg", call.settings.fusion
    )
    return _batch(cp, deltas, output_struct, task)


def _batch(
    cp: ChangelogPlan, deltas: DataFrame, output: T.StructType, task: TaskContext
) -> DataFrame:
    def final_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task.start()
        phase = GlobalPhase(cp, "final")
        for batch in batches:
            yield from phase.add(batch)
        yield from phase.finish()
        task.report(phase.stats())

    final_fn.__name__ = "changelog_agg_final"
    # Rows of a key from one input partition keep their order through the shuffle.
    return deltas.repartition("__key").mapInArrow(final_fn, output)
