"""The streaming plan of ``deduplicate(keep="first")`` in arrival order over insert-only rows:
append-only, each key's first row once (``sliceflow.dedup.first_seen``; the other plans are in
``spark/dedup/query.py``).

::

    df ─ mapInArrow(each row's bucket, Spark's hash of the keys; pack rows per bucket; with a
       watermark, a wake-up message for every bucket; inside a sliceflow.json stream's read
       with spark.sliceflow.fusion.streams.enabled)
       ─ groupBy(__bucket).transformWithStateInPandas(FirstSeenBucketProcessor: load the
       bucket's entries once, one kernel step, emit the first rows, store once)

Before the shuffle each task's input is reduced to the rows that can be emitted whatever the
state (``FirstSeenStep.candidates``: a key's first row, and with a watermark its later rows
whose time beats every earlier one's), as Flink's local-global deduplication: most duplicates
never leave the task that read them.

A bucket's state is one sealed value whose one section is the kernel's payload: per key its key
bytes and, with a watermark, its expiry (the first row's time plus the delay) and the watermark
the bucket last ran at. With a watermark the rules are ``dropDuplicatesWithinWatermark``'s
(``cpp/dedup/first_seen.h``): rows at or before the previous micro-batch's watermark are late,
and entries whose expiry is at or before the watermark leave after each micro-batch's rows. So that
"the previous micro-batch's watermark" is the one the bucket last ran at, every bucket runs in
every micro-batch with data (the wake-up messages) and, through an event-time timer one
millisecond past the watermark it last ran at, in every micro-batch whose watermark moved.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sliceflow._runtime.kernels import conform
from sliceflow._runtime.spark_types import spark_struct
from sliceflow._runtime.state_format import Identity
from sliceflow.dedup.first_seen import FirstSeenStep
from sliceflow.dedup.plan import DedupPlan
from sliceflow.spark._runtime.bucket_labels import bucket_labels
from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor, process_buckets
from sliceflow.spark._runtime.bucket_rows import PACKED_SCHEMA, hash_buckets, pack_rows
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.spark.json.fused_scan import LocalPhase, local_phase_frame

__all__ = ["FirstSeenBucketProcessor", "packed_first", "streaming_first"]

#: The value state of a bucket (the name the earlier Arrow IPC layout used too).
STATE_NAME = "sliceflow_dedup_bucket"


class FirstSeenBucketProcessor(BucketProcessor):
    """One call per (micro-batch, bucket), without a watermark only for buckets with rows."""

    operator = "deduplicate"
    state_names = (STATE_NAME,)

    def __init__(
        self,
        dp: DedupPlan,
        identity: Identity,
        time_col: str | None,
        delay_ms: int,
        task: TaskContext,
    ) -> None:
        super().__init__(identity, dp.input_schema, task)
        self._dp = dp
        self._time_col = time_col
        self._delay_ms = delay_ms

    def setup(self) -> None:
        self._step = FirstSeenStep(self._dp, self._time_col, self._delay_ms)

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        step = self._step
        batches = [b for b in call.batches if b.num_rows]
        timed = self._time_col is not None
        if not batches and not timed:
            return
        stored = self.load(STATE_NAME, 1)
        step.load(stored[0] if stored is not None else None)
        watermark = (call.watermark_ms or 0) if timed else 0
        previous = step.previous_watermark
        if not batches and previous == watermark:
            return  # a wake-up, and the watermark has not moved: nothing can change
        rows = (
            pa.concat_batches(batches)
            if batches
            else pa.RecordBatch.from_pylist([], schema=self._dp.input_schema)
        )
        out = step.advance(rows, watermark, call.stats)
        if timed or step.live_keys:
            # With a watermark the value stays while empty: it holds the watermark last run at.
            self.store(STATE_NAME, [step.payload()])
        else:
            self.store(STATE_NAME, None)
        call.stats["buckets_touched"] = 1
        if timed and previous != watermark:
            # Run again as soon as the watermark moves (an expired timer is gone already).
            if previous is not None and not call.expired:
                self.handle.deleteTimer(previous + 1)
            self.handle.registerTimer(watermark + 1)
        yield out


class EventTimeFirstSeenBucketProcessor(FirstSeenBucketProcessor):
    """:class:`FirstSeenBucketProcessor` on a stream with a watermark (Spark passes it and
    fires the buckets' timers)."""

    time_mode = "EventTime"


def packed_first(
    df: DataFrame,
    dp: DedupPlan,
    buckets: int,
    watermark: tuple[str, int] | None,
    task: TaskContext,
    fusion: bool,
) -> DataFrame:
    """The packing stage of :func:`streaming_first`: ``df`` reduced per task to the rows that
    can be emitted (``FirstSeenStep.candidates``) and packed per bucket
    (``bucket_rows.PACKED_SCHEMA``), with a watermark a wake-up message for every bucket; with
    ``fusion``, over a ``sliceflow.json`` stream, inside its read (the fused scan)."""
    schema = dp.input_schema
    selected = df.select(*[F.col(quote(n)) for n in schema.names])
    labels = bucket_labels(buckets)

    time_col, delay_ms = watermark if watermark is not None else (None, 0)

    def reduced(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # Only the rows that can be emitted cross the shuffle (FirstSeenStep.candidates).
        task.start()
        step = FirstSeenStep(dp, time_col, delay_ms)
        stats = {"rows_in": 0, "local_duplicates": 0}
        for batch in batches:
            if batch.num_rows:
                # the bucket of the values as Spark typed them (conform may widen a type)
                bucket = pa.array(hash_buckets(batch, dp.by, buckets), pa.int64())
                rows = conform(batch, schema)
                keep = step.candidates(rows.add_column(0, "__bucket", bucket))
                stats["rows_in"] += batch.num_rows
                stats["local_duplicates"] += batch.num_rows - keep.num_rows
                yield keep
        task.report(stats)

    def pack_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # with a watermark, every bucket runs in every micro-batch with data
        return pack_rows(reduced(batches), labels, schema, wake_all=watermark is not None)

    return packed_stream(selected, pack_fn, fusion, time_col)


def packed_stream(
    selected: DataFrame, pack_fn: LocalPhase, fusion: bool, event_time: str | None
) -> DataFrame:
    """``deduplicate``'s packing step over the stream ``selected`` (its input columns): in a
    ``mapInArrow``, or with ``fusion`` inside a ``sliceflow.json`` stream's read, the rows
    keeping the watermark on ``event_time`` (the fused scan)."""
    pack_fn.__name__ = "deduplicate_pack"
    output = spark_struct(PACKED_SCHEMA)
    return local_phase_frame(
        selected, pack_fn, output, "deduplicate", fusion, streams=True, event_time=event_time
    )


def streaming_first(
    df: DataFrame,
    dp: DedupPlan,
    identity: Identity,
    buckets: int,
    watermark: tuple[str, int] | None,
    task: TaskContext,
    fusion: bool,
) -> DataFrame:
    """The streaming plan of an append-only ``dp`` over ``df`` (checked and planned already);
    ``watermark``: the stream's time column and delay in ms, or None; ``fusion``: whether the
    packing stage may run inside a ``sliceflow.json`` stream's read."""
    time_col, delay_ms = watermark if watermark is not None else (None, 0)
    packed = packed_first(df, dp, buckets, watermark, task, fusion)
    kind = EventTimeFirstSeenBucketProcessor if watermark else FirstSeenBucketProcessor
    processor = kind(dp, identity, time_col, delay_ms, task)
    output: T.StructType = spark_struct(dp.payload_schema)
    return process_buckets(packed, processor, output)
