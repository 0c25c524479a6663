"""Streaming ``changelog_agg``: per-key aggregate state in Spark's state store, one value per
bucket of keys.

::

    deltas (encoder output, packed per bucket: bucket_rows.pack_by_bucket)
      ─ groupBy(__bucket).transformWithStateInPandas(ChangelogBucketProcessor)
          per bucket and micro-batch: load the bucket's key states once, apply the micro-batch's
          delta rows in arrival order in bundles, emit each bundle's net changes, store the key
          states once (or clear the value when no key is left)

The bucket's value is a sealed state value (docs/state.md) whose one payload section is the
kernel's key states (little-endian, ``cpp/changelog/state_codec.h``), under the plan identity of
``changelog.plan.identity``: a restart with another aggregation is refused, naming the
field that changed; a restart with other tuning options (``bundle_rows``, ``mini_batch``) is not.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from sliceflow.changelog import GlobalPhase
from sliceflow.changelog.plan import ChangelogPlan
from sliceflow.changelog.plan import identity as changelog_identity
from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor, process_buckets
from sliceflow.spark._runtime.tasks import TaskContext

__all__ = ["STATE_NAME", "ChangelogBucketProcessor", "streaming"]

#: The value state that holds a bucket's key states.
STATE_NAME = "sliceflow_changelog_bucket"


class ChangelogBucketProcessor(BucketProcessor):
    """One call per (micro-batch, bucket): the bucket's delta rows through the aggregator."""

    operator = "changelog_agg"
    state_names = (STATE_NAME,)

    def __init__(self, cp: ChangelogPlan, task: TaskContext) -> None:
        super().__init__(changelog_identity(cp), cp.delta_schema, task)
        self._cp = cp

    def setup(self) -> None:
        self._phase = GlobalPhase(self._cp, "changelog")

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        phase = self._phase
        phase.reset()
        stored = self.load(STATE_NAME, 1)
        if stored is not None:
            phase.load(stored[0])
        for batch in call.batches:
            yield from phase.add(batch)
        yield from phase.end_bundle()
        self.store(STATE_NAME, [phase.dump()] if phase.live_keys() else None)
        call.stats.update(phase.stats())
        call.stats["buckets_touched"] = 1


def streaming(
    cp: ChangelogPlan, packed: DataFrame, output: T.StructType, task: TaskContext
) -> DataFrame:
    """The streaming plan of ``changelog_agg`` after its encoder: ``packed`` holds the delta
    rows packed per bucket."""
    processor = ChangelogBucketProcessor(cp, task)
    return process_buckets(packed, processor, output)
