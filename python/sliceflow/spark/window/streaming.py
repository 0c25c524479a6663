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

A bucket keeps, under the plan identity of ``window.plan.identity`` (sealed state values,
docs/state.md): the watermark it last ran at (one value, read on every call) and its carried
rows in bucket layout 2 (``spark/_runtime/bucket_state.py``: a base, a log and a head, opened
only when the bucket has work). A log entry is one step's folded partial rows with the step's
two watermarks (:class:`WindowImage`): a micro-batch writes the (key, slice) partials of the
rows it brought, and a worker that holds the bucket's previous version replays the step's
sweep instead of reading the carried rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sliceflow._runtime.spark_types import spark_struct
from sliceflow._runtime.state_log import read_entry
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
    BucketState,
    fold,
    from_sections,
    read_table,
    rows_sections,
    sweep,
    watermark_from,
    watermark_sections,
    write_table,
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


#: The largest watermark (ms) whose microseconds fit an int64.
_MAX_WATERMARK_MS = (2**63 - 1) // 1000


class WindowImage:
    """A bucket's carried partial rows (and emitted windows) as a logged state's image: a log
    entry is one step's folded rows with the step's watermarks, and replaying it runs the same
    sweep (``window.state.sweep``), so an entry holds the rows the micro-batch brought, never
    the rows it carried."""

    def __init__(self, wp: WindowPlan, emit: str) -> None:
        self._wp = wp
        self._emit = emit
        self.state = BucketState(0, wp.partial_schema.empty_table())
        self._step: tuple[int, int, pa.Table] | None = None

    def step(
        self, watermark_ms: int, rows: list[pa.RecordBatch], stats: dict[str, int]
    ) -> pa.Table:
        """One step (``window.state.advance``) from :attr:`state`: the windows it fires."""
        wp, floor = self._wp, self.state.watermark_ms
        fresh = fold(wp, rows, floor * 1000, stats)
        out, self.state = sweep(wp, self._emit, self.state, watermark_ms, fresh, stats)
        if fresh.num_rows or self.state.watermark_ms != floor:
            self._step = (floor, self.state.watermark_ms, fresh)
        return out

    def load_base(self, sections: list[bytes]) -> None:
        self.state = from_sections(sections, self._wp, self.state.watermark_ms)

    def apply(self, sections: list[bytes]) -> None:
        bounds, fresh = sections
        if len(bounds) != 16:
            raise ValueError("window_agg state log entry: damaged watermarks (damaged checkpoint)")
        floor = int.from_bytes(bounds[:8], "little", signed=True)
        limit = int.from_bytes(bounds[8:], "little", signed=True)
        if not 0 <= floor <= limit <= _MAX_WATERMARK_MS:
            raise ValueError(
                f"window_agg state log entry: watermarks {floor} .. {limit} ms out of order or "
                "range (damaged checkpoint)"
            )
        wp = self._wp
        self.state.watermark_ms = floor
        what = "window_agg state log entry"
        fresh_rows = read_entry(what, lambda: read_table(fresh, wp.partial_schema))
        _, self.state = sweep(wp, self._emit, self.state, limit, fresh_rows)

    def changes(self) -> list[bytes] | None:
        step, self._step = self._step, None
        if step is None:
            return None
        floor, limit, fresh = step
        bounds = floor.to_bytes(8, "little", signed=True) + limit.to_bytes(8, "little", signed=True)
        return [bounds, write_table(fresh)]

    def base(self) -> list[bytes]:
        self._step = None
        return rows_sections(self.state)

    def empty(self) -> bool:
        emitted = self.state.emitted
        return self.state.partials.num_rows == 0 and (emitted is None or emitted.num_rows == 0)

    def memory_usage(self) -> int:
        emitted = self.state.emitted
        return int(self.state.partials.nbytes + (0 if emitted is None else emitted.nbytes))


class WindowBucketProcessor(BucketProcessor):
    """One call per bucket per micro-batch, and one per watermark advance (event time)."""

    operator = "window_agg"
    state_names = (STATE_NAME,)
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

    def setup(self) -> None:
        wp, emit = self._wp, self._emit
        self._rows = self.logged(
            DATA_STATE_NAME, lambda: WindowImage(wp, emit), base_sections=2, change_sections=2
        )

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
        image = self._rows.open(call.bucket, call.stats)
        image.state.watermark_ms = watermark_ms if previous is None else previous
        call.stats["bucket_runs"] = 1
        out = image.step(watermark_ms, rows, call.stats)
        self._rows.commit(image, call.stats)
        state = image.state
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
