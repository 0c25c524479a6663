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

import pandas as pd
import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from sliceflow._changelog_plan import ChangelogPlan
from sliceflow.changelog import GlobalPhase

__all__ = ["STATE_NAME", "BucketProcessor"]

#: The name of the value state that holds a bucket's blob.
STATE_NAME = "sliceflow_changelog_bucket"
_STATE_SCHEMA = T.StructType([T.StructField("blob", T.BinaryType(), False)])


def _to_pandas(batch: pa.RecordBatch) -> pd.DataFrame:
    # Arrow-backed columns: integers with nulls stay integers, decimals stay exact.
    return batch.to_pandas(types_mapper=pd.ArrowDtype)


def _from_pandas(frame: pd.DataFrame, schema: pa.Schema) -> pa.RecordBatch:
    # Spark hands the columns over by position (named _0, _1, ...), in the schema's order.
    if frame.shape[1] != len(schema):
        raise ValueError(
            f"changelog_agg: expected {len(schema)} delta columns, Spark passed {frame.shape[1]}"
        )
    arrays = [
        pa.array(frame.iloc[:, i], type=field.type, from_pandas=True)
        for i, field in enumerate(schema)
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


class BucketProcessor(StatefulProcessor):
    """``transformWithStateInPandas`` processor: one call per (micro-batch, bucket)."""

    def __init__(self, cp: ChangelogPlan, accumulator: Any = None) -> None:
        self._cp = cp
        self._accumulator = accumulator

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._state = handle.getValueState(STATE_NAME, _STATE_SCHEMA)
        self._phase = GlobalPhase(self._cp, "changelog")
        self._stats: dict[str, int] = {}

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any
    ) -> Iterator[pd.DataFrame]:
        phase = self._phase
        phase.reset()
        if self._state.exists():
            phase.load(bytes(self._state.get()[0]))
        delta_schema = self._cp.delta_schema
        for frame in rows:
            batch = _from_pandas(frame, delta_schema)
            for out in phase.add(batch):
                yield _to_pandas(out)
        for out in phase.end_bundle():
            yield _to_pandas(out)
        if phase.live_keys():
            self._state.update((phase.dump(),))
        else:
            self._state.clear()
        if self._accumulator is not None:
            stats = phase.stats()
            stats["buckets_touched"] = 1
            self._accumulator.add(stats)

    def close(self) -> None:
        pass
