"""A stream's watermark kept across a fused step: its event time carried beside the local
phase's output.

Spark's watermark is the largest event time its ``EventTimeWatermark`` node has seen, less the
delay. A fused step (the ``sliceflow.json`` stream's read, or ``from_json`` and the local phase
in one ``mapInArrow``) hands the JVM the local phase's output, not the rows the watermark was
defined on. So each output row also carries :data:`EVENT_TIME`, the largest event time its
task has read so far, and the watermark is defined again on that column under the same delay
(:func:`rewatermarked`), then the column is dropped: the largest value Spark sees is the
largest event time of the micro-batch's rows, as in the unfused plan.

Invariant: a task's output rows carry the largest event time of the input it has read before
the row was produced, never a later one, so the watermark never runs ahead of the unfused one.

Cost: one ``max`` over each input batch's event-time column and one column per output batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql.types import StructField, StructType, TimestampType

__all__ = ["EVENT_TIME", "rewatermarked", "timed_phase", "with_event_time"]

#: The column of a fused stream's rows that its watermark is defined on.
EVENT_TIME = "__event_time"

_TIMESTAMP = pa.timestamp("us", tz="UTC")
#: The event time of a task's rows before it has read a timed one: the smallest, so that the
#: watermark (their largest) is left as the input's rows make it.
_NO_TIME = np.iinfo(np.int64).min


def with_event_time(output: StructType) -> StructType:
    """The fused step's output schema: the local phase's, and :data:`EVENT_TIME`."""
    return StructType([*output.fields, StructField(EVENT_TIME, TimestampType(), True)])


def timed_phase(
    phase: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
    inputs: Iterator[pa.RecordBatch],
    event_time: int,
) -> Iterator[pa.RecordBatch]:
    """``phase`` over ``inputs``, each output batch with :data:`EVENT_TIME`: the largest value
    of the input column ``event_time`` (a TIMESTAMP) read so far."""
    latest = [_NO_TIME]

    def timed() -> Iterator[pa.RecordBatch]:
        for batch in inputs:
            top = pc.max(batch.column(event_time).cast(pa.int64())).as_py()
            if top is not None and top > latest[0]:
                latest[0] = top
            yield batch

    for out in phase(timed()):
        times = pa.array(np.full(out.num_rows, latest[0]), pa.int64()).cast(_TIMESTAMP)
        yield out.append_column(EVENT_TIME, times)


def rewatermarked(fused: DataFrame, delay_ms: int) -> DataFrame:
    """The fused step's output with the input's watermark delay on :data:`EVENT_TIME`, which
    is then dropped."""
    return fused.withWatermark(EVENT_TIME, f"{delay_ms} milliseconds").drop(EVENT_TIME)
