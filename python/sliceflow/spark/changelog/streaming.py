"""Streaming ``changelog_agg``: per-key aggregate state in Spark's state store, kept per bucket
of keys in proportion to the keys each micro-batch touches.

::

    deltas (encoder output, packed per bucket: bucket_rows.pack_by_bucket)
      ─ groupBy(__bucket).transformWithStateInPandas(ChangelogBucketProcessor)
          per bucket and micro-batch: open the bucket's key states (this worker's cached
          aggregator when it holds the stored version, else brought up to it from the log, else
          loaded from the base and the log), apply the micro-batch's delta rows in arrival order
          in bundles, emit each bundle's net changes, write the changed keys' states as one log
          entry (or a new base when the log has outgrown a share of it)

The bucket's state is layout 2 (``spark/_runtime/bucket_state.py``, docs/state.md): a base
value whose one payload section is the kernel's key states (little-endian,
``cpp/changelog/state_codec.h``), log entries whose one changes section holds the changed keys'
states (a key with 0 rows: gone), and a head, all sealed under the plan identity of
``changelog.plan.identity``: a restart with another aggregation is refused, naming the field
that changed; a restart with other tuning options (``bundle_rows``, ``mini_batch``) is not. A
checkpoint of layout 1 (one value per bucket) restarts: its value is the base.
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

#: The logged state that holds a bucket's key states (its base value keeps layout 1's name).
STATE_NAME = "sliceflow_changelog_bucket"


class ChangelogImage:
    """A bucket's key states held by the global phase's aggregator (a logged state's image)."""

    def __init__(self, cp: ChangelogPlan) -> None:
        self.phase = GlobalPhase(cp, "changelog")

    def load_base(self, sections: list[bytes]) -> None:
        self.phase.load(sections[0])

    def apply(self, sections: list[bytes]) -> None:
        self.phase.apply_changes(sections[0])

    def changes(self) -> list[bytes] | None:
        return [self.phase.dump_changes()] if self.phase.changed_keys() else None

    def base(self) -> list[bytes]:
        phase = self.phase
        payload = phase.dump()
        # Keys that left keep their slots; rebuild once they outnumber the live keys.
        if phase.key_slots() > 2 * phase.live_keys() + 1024:
            phase.reset()
            phase.load(payload)
        return [payload]

    def empty(self) -> bool:
        return self.phase.live_keys() == 0

    def memory_usage(self) -> int:
        return self.phase.memory_usage()


class ChangelogBucketProcessor(BucketProcessor):
    """One call per (micro-batch, bucket): the bucket's delta rows through the aggregator."""

    operator = "changelog_agg"

    def __init__(self, cp: ChangelogPlan, task: TaskContext) -> None:
        super().__init__(changelog_identity(cp), cp.delta_schema, task)
        self._cp = cp

    def setup(self) -> None:
        cp = self._cp
        self._state = self.logged(STATE_NAME, lambda: ChangelogImage(cp))

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        image = self._state.open(call.bucket, call.stats)
        phase = image.phase
        for batch in call.batches:
            yield from phase.add(batch)
        yield from phase.end_bundle()
        self._state.commit(image, call.stats)
        call.stats.update(phase.stats())
        phase.reset_stats()  # the kept image starts the next call at zero
        call.stats["buckets_touched"] = 1


def streaming(
    cp: ChangelogPlan, packed: DataFrame, output: T.StructType, task: TaskContext
) -> DataFrame:
    """The streaming plan of ``changelog_agg`` after its encoder: ``packed`` holds the delta
    rows packed per bucket."""
    processor = ChangelogBucketProcessor(cp, task)
    return process_buckets(packed, processor, output)
