"""Streaming ``window_agg``: per-key slice accumulators in Spark's state store, fired by the
watermark.

::

    stream.select(__bucket = pmod(hash(keys), buckets), keys, time, args)
      ─ mapInArrow: the rows of each bucket as one Arrow IPC message (+ an empty one per bucket),
                    under the bucket's label (bucket_labels: spread evenly over the partitions)
      ─ groupBy(__bucket).transformWithStateInPandas(WindowBucketProcessor, EventTime)
          per bucket and micro-batch: load the carried partial rows, fold the new rows into
          (key, slice) partials (late rows left out), merge, fire the windows whose end the
          watermark reached, keep the partial rows that unfired windows still need

Firing follows Spark's append-mode window aggregation: in micro-batch b, a window is emitted
once, when ``window_end <= watermark_b``; a row of micro-batch b counts in each of its windows
that ended after ``watermark_{b-1}`` (the windows not emitted before b) and is left out of the
others. transformWithStateInPandas only tells the processor the current watermark, so each
bucket remembers the watermark it last ran at and is made to run at every watermark advance
(an event-time timer one millisecond after it) and in every micro-batch with data (every task
of the packing step sends each bucket a message, empty if it has no rows for it): the
remembered watermark is then always ``watermark_{b-1}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from sliceflow.kernels import conform
from sliceflow.spark.bucket_labels import bucket_labels
from sliceflow.spark.bucket_state import PACKED_SCHEMA, pack_by_bucket, to_pandas, unpack
from sliceflow.spark.columns import quote
from sliceflow.spark.tasks import TaskContext
from sliceflow.spark_types import spark_struct
from sliceflow.window_plan import WindowPlan
from sliceflow.window_state import BucketState, advance, read_table, write_table

__all__ = [
    "BUCKETS_CONF",
    "DATA_STATE_NAME",
    "DEFAULT_BUCKETS",
    "STATE_NAME",
    "WindowBucketProcessor",
    "streaming",
]

#: Spark conf with the number of buckets a streaming window_agg hashes its keys into.
BUCKETS_CONF = "spark.sliceflow.window.buckets"
#: Buckets when neither the call nor the conf says: at most this many, and no more than
#: ``spark.sql.shuffle.partitions`` (more buckets than tasks add calls, not parallelism).
DEFAULT_BUCKETS = 16

#: The value states of a bucket: what it is and the watermark it last ran at (read on every
#: call), and its carried rows (read only when the bucket has work).
STATE_NAME = "sliceflow_window_bucket"
DATA_STATE_NAME = "sliceflow_window_bucket_rows"
_STATE_SCHEMA = T.StructType(
    [
        T.StructField("plan", T.StringType(), False),
        T.StructField("watermark_ms", T.LongType(), False),
    ]
)
_DATA_SCHEMA = T.StructType(
    [
        T.StructField("partials", T.BinaryType(), False),
        T.StructField("emitted", T.BinaryType(), False),
    ]
)


def plan_fingerprint(wp: WindowPlan, emit: str, buckets: int) -> str:
    """Identifies the aggregation a checkpoint's state belongs to."""
    text = json.dumps(
        {"plan": wp.plan, "partial": str(wp.partial_schema), "emit": emit, "buckets": buckets},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def pack_rows(
    batches: Iterator[pa.RecordBatch], labels: np.ndarray, schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """Input batches (``__bucket``, then ``schema``'s columns) → one row per bucket and batch
    with the bucket's label (``labels[bucket]``, see ``bucket_labels``) and its rows (as
    ``schema``) as an IPC message; at the end, an empty message for every bucket, so that every
    bucket runs in every micro-batch that has data."""
    for batch in batches:
        if batch.num_rows == 0:
            continue
        rows = conform(batch.drop_columns([batch.schema.names[0]]), schema)
        buckets_of_rows = batch.column(0).to_numpy(zero_copy_only=False)
        yield pack_by_bucket(buckets_of_rows, rows, labels)
    yield pa.RecordBatch.from_arrays(
        [pa.array(labels, pa.int32()), pa.array([b""] * len(labels), pa.binary())],
        schema=PACKED_SCHEMA,
    )


class WindowBucketProcessor(StatefulProcessor):
    """``transformWithStateInPandas`` processor (time mode ``EventTime``): one call per bucket
    per micro-batch, and one per watermark advance."""

    def __init__(
        self,
        wp: WindowPlan,
        emit: str,
        buckets: int,
        task: TaskContext,
    ) -> None:
        self._wp = wp
        self._emit = emit
        self._task = task
        self._fingerprint = plan_fingerprint(wp, emit, buckets)

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._task.start()
        self._handle = handle
        self._state = handle.getValueState(STATE_NAME, _STATE_SCHEMA)
        self._data = handle.getValueState(DATA_STATE_NAME, _DATA_SCHEMA)

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any
    ) -> Iterator[pd.DataFrame]:
        batches = [
            batch for frame in rows for batch in unpack(frame, self._wp.input_schema, "window_agg")
        ]
        yield from self._advance(timerValues.getCurrentWatermarkInMs(), batches, expired=False)

    def handleExpiredTimer(
        self, key: Any, timerValues: Any, expiredTimerInfo: Any
    ) -> Iterator[pd.DataFrame]:
        yield from self._advance(timerValues.getCurrentWatermarkInMs(), [], expired=True)

    def close(self) -> None:
        pass

    def _previous_watermark(self) -> int | None:
        """The watermark the bucket last ran at; None before its first run."""
        value = self._state.get()  # one call: None when there is no value
        if value is None:
            return None
        plan, watermark_ms = value
        if plan != self._fingerprint:
            raise ValueError(
                "window_agg: the checkpoint holds the state of a different aggregation (window, "
                "keys, aggregates, emit mode, bucket count or column types changed); restart "
                "it with the query it was written by, or with a new checkpoint location"
            )
        return int(watermark_ms)

    def _load(self, watermark_ms: int) -> BucketState:
        wp = self._wp
        value = self._data.get()
        if value is None:
            return BucketState(watermark_ms, wp.partial_schema.empty_table())
        partials, emitted = value
        return BucketState(
            watermark_ms,
            read_table(bytes(partials), wp.partial_schema),
            read_table(bytes(emitted), wp.output_schema) if len(emitted) else None,
        )

    def _advance(
        self, watermark_ms: int, batches: Sequence[pa.RecordBatch], *, expired: bool
    ) -> Iterator[pd.DataFrame]:
        previous = self._previous_watermark()
        if previous is not None and not batches and watermark_ms <= previous:
            # Only the packing step's empty message, and the watermark has not moved: no
            # window can fire.
            return
        # A bucket first runs in the first micro-batch with data: nothing is late yet.
        state = self._load(previous) if previous is not None else None
        stats: dict[str, int] = {"bucket_runs": 1}
        out, state = advance(self._wp, self._emit, state, watermark_ms, batches, stats)
        self._data.update((write_table(state.partials), write_table(state.emitted)))
        if state.watermark_ms != previous:
            self._state.update((self._fingerprint, state.watermark_ms))
            # Run again as soon as the watermark moves (an expired timer is gone already).
            if previous is not None and not expired:
                self._handle.deleteTimer(previous + 1)
            self._handle.registerTimer(state.watermark_ms + 1)
        self._task.report(stats)
        # One frame per kernel output batch: PySpark takes Arrow-backed pandas columns of one
        # chunk only, and memory stays bounded by a batch.
        for batch in out.to_batches():
            if batch.num_rows:
                yield to_pandas(batch)


def streaming(
    df: DataFrame,
    wp: WindowPlan,
    by: Sequence[str],
    output: T.StructType,
    *,
    emit: str,
    buckets: int,
    task: TaskContext,
) -> DataFrame:
    """The streaming plan of ``window_agg`` (``df`` is checked and planned already)."""
    bucket = F.pmod(F.hash(*[F.col(quote(k)) for k in by]), F.lit(buckets)) if by else F.lit(0)
    columns = [F.col(quote(name)) for name in wp.input_schema.names]
    selected = df.select(bucket.cast("int").alias("__bucket"), *columns)

    labels = bucket_labels(buckets)

    def pack_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return pack_rows(batches, labels, wp.input_schema)

    pack_fn.__name__ = "window_agg_pack"
    packed = selected.mapInArrow(pack_fn, spark_struct(PACKED_SCHEMA))
    processor = WindowBucketProcessor(wp, emit, buckets, task)
    return packed.groupBy("__bucket").transformWithStateInPandas(
        statefulProcessor=processor,
        outputStructType=output,
        outputMode="Append",
        timeMode="EventTime",
    )
