"""Streaming ``window_agg``: per-key slice accumulators in Spark's state store, fired by the
watermark.

::

    stream.select(keys, time, args)
      ─ mapInArrow (over a sliceflow.json stream: inside its read, the fused scan): each
                    row's bucket pmod(hash(keys), buckets) (Spark's hash, computed where the
                    rows are: sliceflow._runtime.spark_hash), the rows of each bucket as one
                    Arrow IPC message (+ an empty one per bucket), under the bucket's label
                    (bucket_labels: spread evenly over the partitions)
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

A bucket keeps two values (sealed state values, docs/state.md), under the plan identity of
``window.plan.identity``: the watermark it last ran at (read on every call) and its
carried rows (read only when the bucket has work).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sliceflow._runtime.spark_types import spark_struct
from sliceflow.spark._runtime.bucket_labels import bucket_labels
from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor, process_buckets
from sliceflow.spark._runtime.bucket_rows import PACKED_SCHEMA, pack_keyed_rows
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark._runtime.emit_steps import EmitStep
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.spark.json.fused_scan import local_phase_frame
from sliceflow.window.plan import WindowPlan
from sliceflow.window.plan import identity as window_identity
from sliceflow.window.state import (
    advance,
    from_sections,
    rows_sections,
    watermark_from,
    watermark_sections,
)

__all__ = [
    "DATA_STATE_NAME",
    "DEFAULT_BUCKETS",
    "STATE_NAME",
    "WindowBucketProcessor",
    "streaming",
]

#: Buckets when neither the call nor the conf says: at most this many, and no more than
#: ``spark.sql.shuffle.partitions`` (more buckets than tasks add calls, not parallelism).
DEFAULT_BUCKETS = 16

#: The value states of a bucket: the watermark it last ran at (read on every call), and its
#: carried rows (read only when the bucket has work).
STATE_NAME = "sliceflow_window_bucket"
DATA_STATE_NAME = "sliceflow_window_bucket_rows"


class WindowBucketProcessor(BucketProcessor):
    """One call per bucket per micro-batch, and one per watermark advance (event time)."""

    operator = "window_agg"
    state_names = (STATE_NAME, DATA_STATE_NAME)
    time_mode = "EventTime"

    def __init__(
        self,
        wp: WindowPlan,
        emit: str,
        buckets: int,
        task: TaskContext,
        emit_step: EmitStep | None = None,
    ) -> None:
        super().__init__(window_identity(wp, emit, buckets), wp.input_schema, task)
        self._wp = wp
        self._emit = emit
        self._emit_step = emit_step

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        watermark_ms = call.watermark_ms
        assert watermark_ms is not None  # event time
        rows = list(call.batches)
        stored = self.load(STATE_NAME, 1)
        previous = watermark_from(stored) if stored is not None else None
        if previous is not None and not rows and watermark_ms <= previous:
            # Only the packing step's empty message, and the watermark has not moved: no
            # window can fire.
            return
        # A bucket first runs in the first micro-batch with data: nothing is late yet.
        state = (
            from_sections(self.load(DATA_STATE_NAME, 2), self._wp, previous)
            if previous is not None
            else None
        )
        call.stats["bucket_runs"] = 1
        out, state = advance(self._wp, self._emit, state, watermark_ms, rows, call.stats)
        self.store(DATA_STATE_NAME, rows_sections(state))
        if state.watermark_ms != previous:
            self.store(STATE_NAME, watermark_sections(state.watermark_ms))
            # Run again as soon as the watermark moves (an expired timer is gone already).
            if previous is not None and not call.expired:
                self.handle.deleteTimer(previous + 1)
            self.handle.registerTimer(state.watermark_ms + 1)
        fired = iter(out.to_batches())
        yield from fired if self._emit_step is None else self._emit_step(fired)


def streaming(
    df: DataFrame,
    wp: WindowPlan,
    by: Sequence[str],
    output: T.StructType,
    *,
    emit: str,
    buckets: int,
    task: TaskContext,
    time_col: str,
    fusion: bool,
    emit_step: EmitStep | None = None,
) -> DataFrame:
    """The streaming plan of ``window_agg`` (``df`` is checked and planned already; its
    watermark is on ``time_col``); with ``emit_step``, each bucket call's fired windows go
    through it (``window_outputs``); with ``fusion``, over a ``sliceflow.json`` stream, the
    packing step runs inside the stream's read (the fused scan)."""
    labels = bucket_labels(buckets)
    keys = list(by)

    def pack_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return pack_keyed_rows(batches, keys, labels, wp.input_schema, wake_all=True)

    pack_fn.__name__ = "window_agg_pack"
    selected = df.select(*[F.col(quote(name)) for name in wp.input_schema.names])
    packed = local_phase_frame(
        selected,
        pack_fn,
        spark_struct(PACKED_SCHEMA),
        "window_agg",
        fusion,
        streams=True,
        event_time=time_col,
    )
    processor = WindowBucketProcessor(wp, emit, buckets, task, emit_step)
    return process_buckets(packed, processor, output)
