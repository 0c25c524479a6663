"""``deduplicate``: Flink SQL's deduplication (``ROW_NUMBER() OVER (PARTITION BY by ORDER BY
order_by) = 1``) on a Spark DataFrame, batch and streaming.

::

    batch:     df ─ mapInArrow(local phase, insert-only input: each partition's kept row per
                  key; inside a sliceflow.json read, the fused scan) (+ __seq: arrival order)
                  ─ repartition(by) ─ mapInArrow(one kernel step per partition, one bundle)
                  ─ the kept row per key

    streaming: df ─ mapInArrow(each row's bucket pmod(hash(by), buckets), Spark's hash computed
                  where the rows are; pack rows per bucket; inside a sliceflow.json stream's
                  read with spark.sliceflow.fusion.streams.enabled)
                  ─ groupBy(__bucket).transformWithStateInPandas(DedupBucketProcessor: open the
                    bucket's retained rows (layout 2: this worker's cached rows when current),
                    one kernel step over the touched keys' rows and the micro-batch's rows in
                    bundles, emit the changes, write the touched keys' new rows as a log entry)

The kernel (``cpp/dedup/``) sees the key, order and identity columns and answers with row
indices; the rows stay Arrow (``take``), and a bucket's retained rows (``KeyedRows``: a base,
then log entries of the keys a micro-batch touched) are Arrow IPC in sealed state values
(``state_format``), so no row goes through Python one by one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sliceflow._runtime.kernels import conform
from sliceflow._runtime.spark_types import spark_struct
from sliceflow.aggregates import ColumnArg
from sliceflow.dedup.plan import (
    DEFAULT_BUNDLE_ROWS,
    DedupPlan,
    build_plan,
)
from sliceflow.dedup.plan import identity as dedup_identity
from sliceflow.dedup.step import DedupStep
from sliceflow.spark._runtime.bucket_labels import bucket_labels
from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor, process_buckets
from sliceflow.spark._runtime.bucket_rows import pack_keyed_rows
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark._runtime.keyed_rows import KeyedRows
from sliceflow.spark._runtime.metrics import WindowMetrics
from sliceflow.spark._runtime.recipe import OperatorCall
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.spark.dedup.first_seen import packed_stream, streaming_first
from sliceflow.spark.json.fused_scan import LocalPhase, local_phase_frame

__all__ = ["DedupMetrics", "deduplicate"]

#: The value state that holds a bucket's retained rows.
STATE_NAME = "sliceflow_dedup_bucket"
_SEQ = "__sliceflow_seq"
_BATCH_BUNDLE = 1 << 62  # batch: one bundle, so each key emits its final row once


class DedupMetrics(WindowMetrics):
    """The deduplicate kernel's counters, summed over every task of the queries it is given to:
    ``rows_in``, ``retractions_in``, ``retractions_ignored`` (a retraction of a row never
    inserted), ``keys_loaded``, ``state_reads``, ``state_writes`` (per key: once per bundle
    with mini-batch, once per row without), ``inserts``, ``update_befores``,
    ``update_afters``, ``deletes``, ``bundles``, ``rows_late`` and ``keys_expired`` (streaming
    with a watermark), ``buckets_touched``. The append-only stream (``keep="first"`` in arrival
    order) counts ``rows_in``, ``local_duplicates`` (rows dropped before the shuffle),
    ``rows_stepped`` (rows that reached the buckets), ``keys_loaded``, ``state_reads`` (keys
    looked up, once per key and micro-batch), ``state_writes`` (entries added or expired),
    ``inserts``, ``rows_late``, ``keys_expired`` and ``buckets_touched``.

    Example:
        >>> metrics = DedupMetrics(spark)  # doctest: +SKIP
        >>> deduplicate(df, ["id"], keep="last", metrics=metrics).collect()  # doctest: +SKIP
        >>> metrics.value["rows_in"]  # doctest: +SKIP
        1000
    """

    def __repr__(self) -> str:
        return f"DedupMetrics({self.value})"


def deduplicate(
    df: DataFrame,
    by: ColumnArg | Sequence[ColumnArg],
    *,
    keep: str = "first",
    order_by: ColumnArg | None = None,
    op_col: ColumnArg | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    buckets: int | None = None,
    metrics: DedupMetrics | None = None,
) -> DataFrame:
    """One row per key: ``ROW_NUMBER() OVER (PARTITION BY by ORDER BY order_by) = 1``.

    Args:
        df: a batch or streaming DataFrame (a streaming one needs the RocksDB state store).
        by: the key column(s), as ``groupBy`` takes them: names, nested fields
            (``"user.id"``) or pyspark Columns (``F.col("id")``, ``df.id``,
            ``F.lower("email")``); a column that is not the input's own is computed for the
            deduplication and left out of the output.
        keep: ``"first"`` (the smallest ``order_by``, Spark's ascending order: nulls first) or
            ``"last"`` (the largest: descending, nulls last).
        order_by: one column (numbers, DECIMAL, STRING, DATE, TIMESTAMP, BOOLEAN): a name, a
            nested field or a pyspark Column; ``None``:
            arrival order (batch: the DataFrame's row order; stream: the order rows arrive).
            Ties go to the earlier row with ``"first"``, the later one with ``"last"`` (Flink's
            rule; Spark's own ``row_number`` leaves ties in no defined order).
        op_col: a STRING column of ``+I``/``-U``/``+U``/``-D`` (e.g. ``from_changelog``'s
            ``op``): the input is a changelog. As Flink's retractable rank, every live row of a
            key is kept, so that retracting the kept row brings the next one back (state grows
            with a key's live rows); a retraction matches a live row on all its columns, and one
            that matches none is ignored and counted (``retractions_ignored``).
        mini_batch: fold each bundle's rows per key into one net change (Flink's mini-batch);
            ``False``: one change per row.
        bundle_rows: bundles are cut every this many rows of a bucket's micro-batch.
        buckets: streaming only: state-store entries the keys are hashed into (default: the
            conf ``spark.sliceflow.dedup.buckets``, else 8); part of the checkpoint.
        metrics: a :class:`DedupMetrics` to which the kernel's counters are added.

    Returns:
        Batch: the input's rows kept (without the op column); each shuffle partition's rows
        are gathered into one Arrow batch for one kernel step (memory: a partition's rows;
        raise ``spark.sql.shuffle.partitions`` for very large inputs). Stream: the changelog
        ``op`` then the row's columns (output mode append), except ``keep="first"`` in arrival
        order over an insert-only stream, which only ever emits the first row of each key and has no
        ``op`` (like ``dropDuplicates``); its state is one entry per key, not a row. With a
        watermark on the stream (``withWatermark``) that plan follows
        ``dropDuplicatesWithinWatermark`` exactly: a key's entry expires at its first row's time
        plus the watermark delay and leaves at the end of the first micro-batch whose watermark
        is at or past that (so a later row of the key is emitted again), and rows at or before
        the previous micro-batch's watermark are dropped as late. The changelog plans drop rows
        older than the watermark and let a key's retained row leave once the watermark passes
        its time.

    Example:
        >>> latest = deduplicate(rows, by=["id"], keep="last", order_by="ts")  # doctest: +SKIP
        >>> first = deduplicate(events, by=["event_id"], keep="first")  # doctest: +SKIP
    """
    call = OperatorCall.begin("deduplicate", df, metrics)
    by_list = call.names(by)
    order_name = call.column(order_by) if order_by is not None else None
    op_name = call.column(op_col) if op_col is not None else None
    task = call.task
    if df.isStreaming:
        return call.without_added(
            _streaming(call, by_list, keep, order_name, op_name, mini_batch, bundle_rows, buckets)
        )
    seq = _SEQ if order_name is None else None
    frame = call.frame
    rows = call.input_schema(frame.columns, frame)
    schema = rows.append(pa.field(_SEQ, pa.int64(), nullable=False)) if seq else rows
    dp = build_plan(
        schema, by_list, keep=keep, order_by=order_name, op_col=op_name,
        mini_batch=True, bundle_rows=_BATCH_BUNDLE, arrival_col=seq,
    )  # fmt: skip
    if op_name is None:
        # Local phase (insert-only input): each input partition's own kept row per key first
        # (the first row of a union is the first of its parts' first rows, the same for the
        # last), so only those rows are shuffled; over a sliceflow.json read it runs inside the
        # read (the fused scan). Arrival order inside a partition is the rows' order, which
        # the local phase keeps, so __seq is numbered after it.
        local = _local_fn(dp, rows, TaskContext(call.settings.memory_limits, None))
        frame = local_phase_frame(
            call.select(rows), local, spark_struct(rows), "deduplicate", call.settings.fusion
        )
    source = frame.withColumn(_SEQ, F.monotonically_increasing_id()) if seq else frame

    def final_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task.start()
        parts = [conform(b, schema) for b in batches if b.num_rows]
        if not parts:
            return
        stats: dict[str, int] | None = {} if task.accumulator is not None else None
        out = _kept_rows(dp, pa.concat_batches(parts), stats)
        task.report(stats)
        yield out

    final_fn.__name__ = "deduplicate"
    keys = [F.col(quote(n)) for n in dp.by]
    # A key's rows from one input partition keep their order through the shuffle; __seq
    # restores the order across partitions.
    out = source.repartition(*keys).mapInArrow(final_fn, spark_struct(dp.payload_schema))
    return call.without_added(out)


def _local_fn(dp: DedupPlan, rows: pa.Schema, task: TaskContext) -> LocalPhase:
    """Each input partition's kept row per key, in the partition's order (no metrics: the
    final phase reports the kernel's counters once per row)."""

    def local_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task.start()
        parts = [conform(b, rows) for b in batches if b.num_rows]
        if not parts:
            return
        batch = pa.concat_batches(parts)
        if dp.arrival_col is not None:
            arrival = pa.array(np.arange(batch.num_rows, dtype=np.int64))
            batch = batch.append_column(dp.input_schema.field(dp.arrival_col), arrival)
        yield _kept_rows(dp, batch, None)

    local_fn.__name__ = "deduplicate_local"
    return local_fn


def _kept_rows(
    dp: DedupPlan, batch: pa.RecordBatch, stats: dict[str, int] | None
) -> pa.RecordBatch:
    """The kept row per key of ``batch``: one kernel step over all its rows, the row's
    columns (the local and the final phase of a batch deduplicate)."""
    step = DedupStep(dp)
    out, _ = step.run(step.empty_state(), batch, stats)
    return out.select(dp.payload_schema.names)


def _watermark(df: DataFrame) -> tuple[str, int] | None:
    """The stream's watermark column and its delay in milliseconds, or None."""
    for f in df.schema.fields:
        if "spark.watermarkDelayMs" in (f.metadata or {}):
            return f.name, int(f.metadata["spark.watermarkDelayMs"])
    return None


def _encode_state(rows: pa.RecordBatch) -> bytes:
    """A base: the retained rows as one Arrow IPC message (the value layout 1 kept)."""
    return bytes(rows.serialize().to_pybytes())


class DedupBucketProcessor(BucketProcessor):
    """One call per (micro-batch, bucket): the bucket's rows through one kernel step."""

    operator = "deduplicate"

    def __init__(
        self, dp: DedupPlan, buckets: int, watermark_col: str | None, task: TaskContext
    ) -> None:
        super().__init__(dedup_identity(dp, buckets, watermark_col), dp.input_schema, task)
        self._dp = dp
        self._watermark_col = watermark_col

    def setup(self) -> None:
        extra = (self._watermark_col,) if self._watermark_col else ()
        step = DedupStep(self._dp, extra)
        self._step = step
        schema, by = step.state_schema, self._dp.by

        def decode(data: bytes) -> pa.RecordBatch:
            return pa.ipc.read_record_batch(pa.py_buffer(data), schema)

        self._state = self.logged(
            STATE_NAME,
            lambda: KeyedRows(schema, by, _encode_state, decode),
            change_sections=3,
        )

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        import pyarrow.compute as pc

        batches = [b for b in call.batches if b.num_rows]
        if not batches:
            return
        image = self._state.open(call.bucket, call.stats)
        rows = pa.concat_batches(batches)
        wm = self._watermark_col
        if wm is not None and call.watermark_ms is not None and call.watermark_ms > 0:
            limit_us = call.watermark_ms * 1000
            limit = pa.scalar(limit_us, pa.timestamp("us"))
            live = pc.fill_null(pc.greater_equal(rows.column(wm).cast(limit.type), limit), True)
            call.stats["rows_late"] = rows.num_rows - int(pc.sum(live).as_py() or 0)
            rows = rows.filter(live)
            call.stats["keys_expired"] = image.expire(wm, limit_us)
        out, kept = self._step.run(image.take(rows), rows, call.stats)
        image.put(kept)
        self._state.commit(image, call.stats)
        call.stats["buckets_touched"] = 1
        yield out


class EventTimeDedupBucketProcessor(DedupBucketProcessor):
    """:class:`DedupBucketProcessor` on a stream with a watermark: Spark passes the watermark,
    which drops late rows and expires retained rows."""

    time_mode = "EventTime"


def _streaming(
    call: OperatorCall,
    by: list[str],
    keep: str,
    order_by: str | None,
    op_col: str | None,
    mini_batch: bool,
    bundle_rows: int,
    buckets: int | None,
) -> DataFrame:
    df, task = call.frame, call.task
    buckets = call.buckets(buckets, "dedup")
    schema = call.input_schema(df.columns)
    dp = build_plan(
        schema, by, keep=keep, order_by=order_by, op_col=op_col,
        mini_batch=mini_batch, bundle_rows=bundle_rows,
    )  # fmt: skip
    call.require_state_store()
    watermark = _watermark(df)
    watermark_col = watermark[0] if watermark is not None else None
    # over a sliceflow.json stream, the packing step may run inside its read (the fused scan)
    fusion = call.settings.fusion and call.settings.stream_fusion
    if not dp.changelog:
        identity = dedup_identity(dp, buckets, watermark_col)
        return streaming_first(df, dp, identity, buckets, watermark, task, fusion)
    selected = df.select(*[F.col(quote(n)) for n in schema.names])
    labels = bucket_labels(buckets)

    def pack_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return pack_keyed_rows(batches, dp.by, labels, schema, wake_all=False)

    packed = packed_stream(selected, pack_fn, fusion, watermark_col)
    kind = EventTimeDedupBucketProcessor if watermark_col else DedupBucketProcessor
    processor = kind(dp, buckets, watermark_col, task)
    output: T.StructType = spark_struct(DedupStep(dp).output_schema)
    return process_buckets(packed, processor, output)
