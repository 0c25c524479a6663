"""A streaming ``join``'s state and bucket processor: both sides' live rows per bucket, each
micro-batch's rows of both sides through one kernel step over the keys they touch.

::

    left  ─ mapInArrow(each row's bucket pmod(hash(on), buckets); pack rows per bucket, input 0)─┐
    right ─ mapInArrow(the same hash of the same columns; pack rows per bucket, input 1) ────────┤
          ─ union ─ groupBy(__bucket).transformWithStateInPandas(JoinBucketProcessor)

A key's rows of both sides land in the same bucket (the same Spark hash of the same types).
Per call, :class:`JoinImage` takes the touched keys' live rows of both sides out of the
bucket's image (``KeyedRows``, layout 2: a base, then log entries of the keys a micro-batch
touched), the kernel (``cpp/join/``) emits the changes and answers with each side's live rows of
those keys, which go back as the call's log entry. Cost per micro-batch follows the keys it
touches: the image's hashes are scanned once (Arrow ``is_in``), the kernel sees only the touched
keys' rows, and the log entry holds only them.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sliceflow._runtime.spark_types import spark_struct
from sliceflow.join.plan import JoinPlan
from sliceflow.join.plan import identity as join_identity
from sliceflow.join.step import JoinState, JoinStep
from sliceflow.spark._runtime.bucket_labels import bucket_labels
from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor, process_buckets
from sliceflow.spark._runtime.bucket_rows import PACKED_SCHEMA, pack_keyed_rows
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark._runtime.keyed_rows import KeyedRows, no_changes
from sliceflow.spark._runtime.recipe import OperatorCall
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.spark.json.fused_scan import local_phase_frame

__all__ = [
    "STATE_NAME",
    "NOW",
    "TOUCHED",
    "JoinBucketProcessor",
    "JoinImage",
    "join_stream",
    "packed_inputs",
]

#: The logged state that holds a bucket's live rows of both sides.
STATE_NAME = "sliceflow_join_bucket"
#: With ``state_ttl``: the column of a stored row that holds when it arrived (the micro-batch's
#: processing time).
TOUCHED = "__sliceflow_arrived"
_TOUCHED_FIELD = pa.field(TOUCHED, pa.timestamp("us"), nullable=False)
#: With ``state_ttl``: the column of a packed row that holds the micro-batch's time.
NOW = "__sliceflow_now"


def _encode(rows: pa.RecordBatch) -> bytes:
    return bytes(rows.serialize().to_pybytes())


def _side(schema: pa.Schema, on: tuple[str, ...]) -> KeyedRows:
    def decode(data: bytes) -> pa.RecordBatch:
        return pa.ipc.read_record_batch(pa.py_buffer(data), schema)

    return KeyedRows(schema, on, _encode, decode)


class JoinImage:
    """A bucket's live rows of both sides (a ``BucketImage``): a base of two sections (each
    side's rows), log entries of six (each side's ``KeyedRows`` changes). With ``touched``,
    each row also carries the time it arrived (:data:`TOUCHED`, for ``state_ttl``)."""

    def __init__(self, jp: JoinPlan, touched: bool = False) -> None:
        extra = [_TOUCHED_FIELD] if touched else []
        self.sides = (
            _side(pa.schema([*jp.left_row, *extra]), jp.on),
            _side(pa.schema([*jp.right_row, *extra]), jp.on),
        )

    def take(self, touched: pa.RecordBatch) -> tuple[pa.RecordBatch, pa.RecordBatch]:
        """Both sides' live rows of the keys of ``touched`` (rows with the ``on`` columns),
        out of the image until :meth:`put`."""
        return self.sides[0].take(touched), self.sides[1].take(touched)

    def put(self, left: pa.RecordBatch, right: pa.RecordBatch) -> None:
        """The touched keys' live rows after the call."""
        self.sides[0].put(left)
        self.sides[1].put(right)

    def expire(self, limit_us: int) -> int:
        """Drops the rows of both sides that arrived before ``limit_us`` (once per call,
        before :meth:`take`; only where there is such a row); how many."""
        dropped = 0
        limit = pa.scalar(limit_us, pa.timestamp("us"))
        for side in self.sides:
            rows = side.rows
            if rows.num_rows and pc.less(pc.min(rows.column(TOUCHED)), limit).as_py():
                dropped += side.expire(TOUCHED, limit_us)
        return dropped

    def load_base(self, sections: list[bytes]) -> None:
        self.sides[0].load_base(sections[:1])
        self.sides[1].load_base(sections[1:])

    def apply(self, sections: list[bytes]) -> None:
        self.sides[0].apply(sections[:3])
        self.sides[1].apply(sections[3:])

    def changes(self) -> list[bytes] | None:
        left, right = self.sides[0].changes(), self.sides[1].changes()
        if left is None and right is None:
            return None
        return [
            *(left if left is not None else no_changes(self.sides[0].schema)),
            *(right if right is not None else no_changes(self.sides[1].schema)),
        ]

    def base(self) -> list[bytes]:
        return [*self.sides[0].base(), *self.sides[1].base()]

    def empty(self) -> bool:
        return self.sides[0].empty() and self.sides[1].empty()

    def memory_usage(self) -> int:
        return self.sides[0].memory_usage() + self.sides[1].memory_usage()


class JoinBucketProcessor(BucketProcessor):
    """One call per (micro-batch, bucket): both sides' rows through one kernel step. With
    ``state_ttl_us``, the packed rows carry the micro-batch's time (:data:`NOW`), the stored
    rows their arrival time, and rows older than the duration leave first."""

    operator = "join"

    def __init__(
        self,
        jp: JoinPlan,
        buckets: int,
        task: TaskContext,
        state_ttl_us: int | None = None,
        now: pa.Field | None = None,
    ) -> None:
        identity = join_identity(jp, buckets, state_ttl=state_ttl_us is not None)
        schemas = [jp.left_schema, jp.right_schema]
        if now is not None:
            schemas = [s.append(now) for s in schemas]
        super().__init__(identity, schemas, task)
        self._jp = jp
        self._ttl_us = state_ttl_us

    def setup(self) -> None:
        jp = self._jp
        touched = self._ttl_us is not None
        self._step = JoinStep(jp)
        self._state = self.logged(
            STATE_NAME, lambda: JoinImage(jp, touched), base_sections=2, change_sections=6
        )

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        jp = self._jp
        inputs = [(side, batch) for side, batch in call.inputs if batch.num_rows]
        if not inputs:
            return
        ttl = self._ttl_us
        now_us = 0
        if ttl is not None:
            now_us = max(_micros(batch.column(NOW)) for _, batch in inputs)
            inputs = [(side, batch.drop_columns([NOW])) for side, batch in inputs]
        image = self._state.open(call.bucket, call.stats)
        if ttl is not None:
            call.stats["rows_expired"] = image.expire(now_us - ttl)
        keys = pa.schema([jp.left_row.field(n) for n in jp.on])
        touched = pa.concat_batches(
            [pa.RecordBatch.from_arrays(b.select(jp.on).columns, schema=keys) for _, b in inputs]
        )
        taken = image.take(touched)
        state = JoinState(taken[0].select(jp.left_row.names), taken[1].select(jp.right_row.names))
        out, new = self._step.run(state, inputs, call.stats)
        if ttl is None:
            image.put(new.left, new.right)
        else:  # a kept state row keeps its time, a new row arrived now
            kept = self._step.last_kept
            image.put(
                _with_touched(new.left, taken[0], kept[0], now_us),
                _with_touched(new.right, taken[1], kept[1], now_us),
            )
        self._state.commit(image, call.stats)
        call.stats["buckets_touched"] = 1
        yield out


def _micros(times: pa.Array) -> int:
    """The largest of a TIMESTAMP column, in microseconds since the epoch."""
    value = pc.max(times.cast(pa.timestamp("us", tz=times.type.tz))).value
    return int(value) if value is not None else 0


def _with_touched(
    rows: pa.RecordBatch, was: pa.RecordBatch, kept: np.ndarray, now_us: int
) -> pa.RecordBatch:
    """``rows`` (a side's live rows, taken from its state rows ``was`` then its new rows by
    ``kept``) with their arrival times: a state row's own, ``now_us`` for a new row."""
    before = was.column(TOUCHED).cast(pa.int64()).to_numpy(zero_copy_only=False)
    old = kept < len(before)
    times = np.full(len(kept), now_us, dtype=np.int64)
    times[old] = before[kept[old]]
    return rows.append_column(_TOUCHED_FIELD, pa.array(times, pa.int64()).cast(pa.timestamp("us")))


def packed_inputs(
    jp: JoinPlan,
    frames: tuple[DataFrame, DataFrame],
    buckets: int,
    fusion: bool,
    now: pa.Field | None = None,
) -> list[DataFrame]:
    """Each side's rows (``frames``: the left and the right stream, with the plan's input
    columns) packed per bucket of ``pmod(hash(on), buckets)``, tagged with the side (0, 1);
    with ``fusion``, inside a ``sliceflow.json`` stream's read. With ``now`` (the field of
    :data:`NOW`), each row also carries the micro-batch's time: Spark's
    ``current_timestamp()``, which a stream fixes per micro-batch and keeps in its offset log,
    so a replayed micro-batch sees the same time."""
    labels = bucket_labels(buckets)
    packed = []
    for side, frame in enumerate(frames):
        schema = jp.side_schema(side)
        columns = [F.col(quote(n)) for n in schema.names]
        if now is not None:
            schema = schema.append(now)
            columns.append(F.current_timestamp().alias(NOW))

        def pack_fn(
            batches: Iterator[pa.RecordBatch], side: int = side, schema: pa.Schema = schema
        ) -> Iterator[pa.RecordBatch]:
            return pack_keyed_rows(batches, jp.on, labels, schema, wake_all=False, source=side)

        pack_fn.__name__ = "join_pack"
        selected = frame.select(*columns)
        output = spark_struct(PACKED_SCHEMA)
        fused = fusion and now is None  # the fused scan reads the source's columns alone
        packed.append(local_phase_frame(selected, pack_fn, output, "join", fused, streams=True))
    return packed


def join_stream(
    call: OperatorCall,
    jp: JoinPlan,
    left: DataFrame,
    right: DataFrame,
    buckets: int | None,
    state_ttl_us: int | None = None,
) -> DataFrame:
    """The streaming plan of ``jp`` over the streams ``left`` and ``right`` (``call``: the
    left side's operator call, whose settings and task the query runs with); with
    ``state_ttl_us``, a row leaves the state that long after it arrived (by the micro-batches'
    times), checked in each call of its bucket before the bucket's rows join."""
    buckets = call.buckets(buckets, "join")
    call.require_state_store()
    fusion = call.settings.fusion and call.settings.stream_fusion
    now = None
    if state_ttl_us is not None:
        probe = left.select(F.current_timestamp().alias(NOW))
        now = call.input_schema([NOW], probe).field(NOW)
    packed = packed_inputs(jp, (left, right), buckets, fusion, now)
    processor = JoinBucketProcessor(jp, buckets, call.task, state_ttl_us, now)
    return process_buckets(packed, processor, spark_struct(jp.output_schema))
