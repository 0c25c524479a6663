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

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sliceflow._runtime.kernels import conform
from sliceflow._runtime.spark_types import spark_struct
from sliceflow.join.plan import JoinPlan
from sliceflow.join.plan import identity as join_identity
from sliceflow.join.step import JoinState, JoinStep
from sliceflow.spark._runtime.bucket_labels import bucket_labels
from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor, process_buckets
from sliceflow.spark._runtime.bucket_rows import PACKED_SCHEMA, hash_buckets, pack_rows
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark._runtime.keyed_rows import KeyedRows, no_changes
from sliceflow.spark._runtime.recipe import OperatorCall
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.spark.json.fused_scan import local_phase_frame

__all__ = ["STATE_NAME", "JoinBucketProcessor", "JoinImage", "join_stream", "packed_inputs"]

#: The logged state that holds a bucket's live rows of both sides.
STATE_NAME = "sliceflow_join_bucket"


def _encode(rows: pa.RecordBatch) -> bytes:
    return bytes(rows.serialize().to_pybytes())


def _side(schema: pa.Schema, on: tuple[str, ...]) -> KeyedRows:
    def decode(data: bytes) -> pa.RecordBatch:
        return pa.ipc.read_record_batch(pa.py_buffer(data), schema)

    return KeyedRows(schema, on, _encode, decode)


class JoinImage:
    """A bucket's live rows of both sides (a ``BucketImage``): a base of two sections (each
    side's rows), log entries of six (each side's ``KeyedRows`` changes)."""

    def __init__(self, jp: JoinPlan) -> None:
        self.sides = (_side(jp.left_row, jp.on), _side(jp.right_row, jp.on))

    def take(self, touched: pa.RecordBatch) -> JoinState:
        """Both sides' live rows of the keys of ``touched`` (rows with the ``on`` columns),
        out of the image until :meth:`put`."""
        return JoinState(self.sides[0].take(touched), self.sides[1].take(touched))

    def put(self, state: JoinState) -> None:
        """The touched keys' live rows after the call."""
        self.sides[0].put(state.left)
        self.sides[1].put(state.right)

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
    """One call per (micro-batch, bucket): both sides' rows through one kernel step."""

    operator = "join"

    def __init__(self, jp: JoinPlan, buckets: int, task: TaskContext) -> None:
        super().__init__(join_identity(jp, buckets), [jp.left_schema, jp.right_schema], task)
        self._jp = jp

    def setup(self) -> None:
        jp = self._jp
        self._step = JoinStep(jp)
        self._state = self.logged(
            STATE_NAME, lambda: JoinImage(jp), base_sections=2, change_sections=6
        )

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        jp = self._jp
        inputs = [(side, batch) for side, batch in call.inputs if batch.num_rows]
        if not inputs:
            return
        keys = pa.schema([jp.left_row.field(n) for n in jp.on])
        touched = pa.concat_batches(
            [pa.RecordBatch.from_arrays(b.select(jp.on).columns, schema=keys) for _, b in inputs]
        )
        image = self._state.open(call.bucket, call.stats)
        out, state = self._step.run(image.take(touched), inputs, call.stats)
        image.put(state)
        self._state.commit(image, call.stats)
        call.stats["buckets_touched"] = 1
        yield out


def packed_inputs(
    jp: JoinPlan, frames: tuple[DataFrame, DataFrame], buckets: int, fusion: bool
) -> list[DataFrame]:
    """Each side's rows (``frames``: the left and the right stream, with the plan's input
    columns) packed per bucket of ``pmod(hash(on), buckets)``, tagged with the side (0, 1);
    with ``fusion``, inside a ``sliceflow.json`` stream's read."""
    labels = bucket_labels(buckets)
    packed = []
    for side, frame in enumerate(frames):
        schema = jp.side_schema(side)

        def pack_fn(
            batches: Iterator[pa.RecordBatch], side: int = side, schema: pa.Schema = schema
        ) -> Iterator[pa.RecordBatch]:
            def keyed() -> Iterator[pa.RecordBatch]:
                for batch in batches:
                    batch = conform(batch, schema)
                    bucket = pa.array(hash_buckets(batch, jp.on, len(labels)), pa.int64())
                    yield batch.add_column(0, "__bucket", bucket)

            return pack_rows(keyed(), labels, schema, wake_all=False, source=side)

        pack_fn.__name__ = "join_pack"
        selected = frame.select(*[F.col(quote(n)) for n in schema.names])
        output = spark_struct(PACKED_SCHEMA)
        packed.append(local_phase_frame(selected, pack_fn, output, "join", fusion, streams=True))
    return packed


def join_stream(
    call: OperatorCall, jp: JoinPlan, left: DataFrame, right: DataFrame, buckets: int | None
) -> DataFrame:
    """The streaming plan of ``jp`` over the streams ``left`` and ``right`` (``call``: the
    left side's operator call, whose settings and task the query runs with)."""
    buckets = call.buckets(buckets, "join")
    call.require_state_store()
    fusion = call.settings.fusion and call.settings.stream_fusion
    packed = packed_inputs(jp, (left, right), buckets, fusion)
    processor = JoinBucketProcessor(jp, buckets, call.task)
    return process_buckets(packed, processor, spark_struct(jp.output_schema))
