"""Kernel state in Spark's state store: one value per bucket of keys.

A streaming ``changelog_agg`` groups its delta rows by ``__bucket`` (a hash of the grouping
key) and runs :class:`BucketProcessor` under ``transformWithStateInPandas``. Per bucket and
micro-batch, Spark calls :meth:`BucketProcessor.handleInputRows` once: the bucket's state blob
is read once, the kernel applies the micro-batch's rows (in arrival order, in bundles), emits
the net changes, and the new blob is written once (or the entry cleared when no key is left).
Checkpoints therefore hold the kernel's own state format (docs/changelog-kernel.md, "State
blob"), fingerprinted so that a restart with another aggregation fails clearly.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from sliceflow.changelog import GlobalPhase
from sliceflow.changelog_plan import ChangelogPlan
from sliceflow.spark.tasks import TaskContext

__all__ = [
    "PACKED_SCHEMA",
    "STATE_NAME",
    "BucketProcessor",
    "pack_by_bucket",
    "to_pandas",
    "unpack",
]

#: The name of the value state that holds a bucket's blob.
STATE_NAME = "sliceflow_changelog_bucket"
_STATE_SCHEMA = T.StructType([T.StructField("blob", T.BinaryType(), False)])


def to_pandas(batch: pa.RecordBatch) -> pd.DataFrame:
    """A kernel's output batch as a stateful processor yields it: Arrow-backed columns, so
    that integers with nulls stay integers and decimals stay exact."""
    return batch.to_pandas(types_mapper=pd.ArrowDtype)


#: What both streaming operators' stateful step receives: per bucket, its rows of one input
#: batch as one Arrow IPC message. transformWithStateInPandas hands its input over as pandas,
#: which cannot tell NaN from null in a float column nor keep a 64-bit integer column with
#: nulls exact; a bytes column goes through unchanged (and is far cheaper to convert than row
#: values).
PACKED_SCHEMA = pa.schema(
    [
        pa.field("__bucket", pa.int32(), nullable=False),
        pa.field("__rows", pa.binary(), nullable=False),
    ]
)


def _payloads_by_bucket(
    buckets: np.ndarray, rows: pa.RecordBatch
) -> tuple[np.ndarray, list[bytes]]:
    """The distinct ``buckets`` (ascending) and, for each, its ``rows`` (in their order) as an
    Arrow IPC message."""
    order = np.argsort(buckets, kind="stable")  # a bucket's rows keep their arrival order
    ordered = rows.take(pa.array(order))
    sorted_buckets = buckets[order]
    starts = np.flatnonzero(np.r_[True, sorted_buckets[1:] != sorted_buckets[:-1]])
    ends = np.append(starts[1:], len(sorted_buckets))
    payloads = [
        ordered.slice(int(a), int(b - a)).serialize().to_pybytes()
        for a, b in zip(starts, ends, strict=True)
    ]
    return sorted_buckets[starts], payloads


def pack_by_bucket(buckets: np.ndarray, rows: pa.RecordBatch, labels: np.ndarray) -> pa.RecordBatch:
    """One row per bucket of ``rows`` (row i is in bucket ``buckets[i]``), as PACKED_SCHEMA: the
    bucket's label (``labels[bucket]``, see ``bucket_labels``) and its rows (in their order)
    as an IPC message. Both streaming operators ship their rows to the state this way."""
    ids, payloads = _payloads_by_bucket(buckets, rows)
    return pa.RecordBatch.from_arrays(
        [pa.array(labels[ids], pa.int32()), pa.array(payloads, pa.binary())],
        schema=PACKED_SCHEMA,
    )


def unpack(frame: pd.DataFrame, schema: pa.Schema, operator: str) -> Iterator[pa.RecordBatch]:
    """The batches (as ``schema``) packed in the rows of ``frame``; empty payloads (a bucket's
    wake-up call) give none."""
    # Spark hands the columns over by position (named _0, _1, ...): bucket, then the payload.
    if frame.shape[1] != len(PACKED_SCHEMA):
        raise ValueError(
            f"{operator}: expected {len(PACKED_SCHEMA)} columns, Spark passed {frame.shape[1]}"
        )
    for payload in frame.iloc[:, 1]:
        if len(payload):
            yield pa.ipc.read_record_batch(pa.py_buffer(payload), schema)


class BucketProcessor(StatefulProcessor):
    """``transformWithStateInPandas`` processor: one call per (micro-batch, bucket)."""

    def __init__(
        self,
        cp: ChangelogPlan,
        task: TaskContext,
    ) -> None:
        self._cp = cp
        self._task = task

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._task.start()
        self._state = handle.getValueState(STATE_NAME, _STATE_SCHEMA)
        self._phase = GlobalPhase(self._cp, "changelog")
        self._stats: dict[str, int] = {}

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any
    ) -> Iterator[pd.DataFrame]:
        phase = self._phase
        phase.reset()
        value = self._state.get()  # one call: None when there is no value
        if value is not None:
            phase.load(bytes(value[0]))
        delta_schema = self._cp.delta_schema
        for frame in rows:
            for batch in unpack(frame, delta_schema, "changelog_agg"):
                for out in phase.add(batch):
                    yield to_pandas(out)
        for out in phase.end_bundle():
            yield to_pandas(out)
        if phase.live_keys():
            self._state.update((phase.dump(),))
        else:
            self._state.clear()
        if self._task.accumulator is not None:
            self._task.report({**phase.stats(), "buckets_touched": 1})

    def close(self) -> None:
        pass
