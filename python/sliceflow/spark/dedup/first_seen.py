"""The streaming plan of ``deduplicate(keep="first")`` in arrival order over insert-only rows:
append-only, each key's first row once (``sliceflow.dedup.first_seen``; the other plans are in
``spark/dedup/query.py``).

::

    df ─ mapInArrow(each row's bucket, Spark's hash of the keys; pack rows per bucket; with a
       watermark, a wake-up message for every bucket; inside a sliceflow.json stream's read
       with spark.sliceflow.fusion.streams.enabled)
       ─ groupBy(__bucket).transformWithStateInPandas(FirstSeenBucketProcessor: open the
       bucket's entries (bucket layout 2: this worker's kernel when it holds the stored
       version), one kernel step, emit the first rows, write the step's key and time columns
       as one log entry)

Before the shuffle each task's input is reduced to the rows that can be emitted whatever the
state (``FirstSeenStep.candidates``: a key's first row, and with a watermark its later rows
whose time beats every earlier one's), as Flink's local-global deduplication: most duplicates
never leave the task that read them.

A bucket's base is one sealed value whose one section is the kernel's payload: per key its key
bytes and, with a watermark, its expiry (the first row's time plus the delay) and the watermark
the bucket last ran at; a log entry is a step's watermark and the key and time columns of its
rows (:class:`FirstSeenImage`), replayed through the same step. With a watermark the rules are
``dropDuplicatesWithinWatermark``'s (``cpp/dedup/first_seen.h``): rows at or before the previous
micro-batch's watermark are late, and entries whose expiry is at or before the watermark leave
after each micro-batch's rows. So that "the previous micro-batch's watermark" is the one the
bucket last ran at, every bucket runs in every micro-batch with data (the wake-up messages)
and, through an event-time timer one millisecond past the watermark it last ran at, in every
micro-batch whose watermark moved.
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
from sliceflow._runtime.state_log import read_entry
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


class FirstSeenImage:
    """A bucket's entries held by the append-only kernel (a logged state's image): a log entry
    is one step's kernel columns (the keys, then the time) with its watermark, and replaying it
    runs the same step (``FirstSeenStep.replay``), so an entry holds the rows that reached the
    bucket in that micro-batch, never the entries it keeps."""

    def __init__(self, step: FirstSeenStep, timed: bool) -> None:
        self.step = step
        self._timed = timed
        step.load(None)
        self._last: tuple[pa.RecordBatch, int] | None = None

    def advance(
        self, rows: pa.RecordBatch, watermark_ms: int, stats: dict[str, int]
    ) -> pa.RecordBatch:
        out = self.step.advance(rows, watermark_ms, stats)
        self._last = (self.step.kernel_rows(rows), watermark_ms)
        return out

    def load_base(self, sections: list[bytes]) -> None:
        self.step.load(sections[0])

    def apply(self, sections: list[bytes]) -> None:
        watermark, rows = sections
        if len(watermark) != 8:
            raise ValueError(
                "deduplicate state log entry: a damaged watermark (damaged checkpoint)"
            )
        what = "deduplicate state log entry"
        table = read_entry(what, lambda: pa.ipc.open_stream(pa.py_buffer(rows)).read_all())
        batches = table.combine_chunks().to_batches()
        batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)
        self.step.replay(batch, int.from_bytes(watermark, "little", signed=True))

    def changes(self) -> list[bytes] | None:
        last, self._last = self._last, None
        if last is None:
            return None
        rows, watermark = last
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, rows.schema) as writer:
            writer.write_batch(rows)
        return [watermark.to_bytes(8, "little", signed=True), sink.getvalue().to_pybytes()]

    def base(self) -> list[bytes]:
        self._last = None
        payload = self.step.payload()
        self.step.load(payload)  # drops the slots of expired keys
        return [payload]

    def empty(self) -> bool:
        # With a watermark the state stays while empty: it holds the watermark last run at.
        return not self._timed and self.step.live_keys == 0

    def memory_usage(self) -> int:
        return self.step.memory_usage()


class FirstSeenBucketProcessor(BucketProcessor):
    """One call per (micro-batch, bucket), without a watermark only for buckets with rows."""

    operator = "deduplicate"

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
        dp, time_col, delay_ms = self._dp, self._time_col, self._delay_ms
        timed = time_col is not None
        self._state = self.logged(
            STATE_NAME,
            lambda: FirstSeenImage(FirstSeenStep(dp, time_col, delay_ms), timed),
            change_sections=2,
        )

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        batches = [b for b in call.batches if b.num_rows]
        timed = self._time_col is not None
        if not batches and not timed:
            return
        image = self._state.open(call.bucket, call.stats)
        step = image.step
        watermark = (call.watermark_ms or 0) if timed else 0
        previous = step.previous_watermark
        if not batches and previous == watermark:
            # A wake-up, and the watermark has not moved: nothing can change.
            self._state.commit(image, call.stats)
            return
        rows = (
            pa.concat_batches(batches)
            if batches
            else pa.RecordBatch.from_pylist([], schema=self._dp.input_schema)
        )
        out = image.advance(rows, watermark, call.stats)
        self._state.commit(image, call.stats)
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
