"""The append-only deduplication of a stream (``keep="first"`` in arrival order over insert-only
rows): each key's first row, once. What :func:`sliceflow.spark.deduplicate` runs per bucket for
that plan, in this process.

The state of a bucket is one entry per key (``cpp/dedup/first_seen.h``): the key's bytes and,
on a stream with a watermark, the event time the entry expires at (the first row's time plus the
watermark delay, as Spark's ``dropDuplicatesWithinWatermark`` keeps it). No row is retained;
the kernel answers with the indices of the rows to emit and the rows stay Arrow.

>>> import pyarrow as pa
>>> from sliceflow.dedup.plan import build_plan
>>> t = pa.record_batch({"id": [1, 1, 2], "v": ["a", "b", "c"]})
>>> step = FirstSeenStep(build_plan(t.schema, ["id"], keep="first"))
>>> out, payload = step.run(None, t)
>>> out.to_pylist()
[{'id': 1, 'v': 'a'}, {'id': 2, 'v': 'c'}]
>>> out, payload = step.run(payload, pa.record_batch({"id": [2, 3], "v": ["d", "e"]}))
>>> out.to_pylist()
[{'id': 3, 'v': 'e'}]
"""

from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np
import pyarrow as pa

from sliceflow._core import dedup as dedup_kernel
from sliceflow._runtime.arrow_c_data import buffer_sizes, c_array
from sliceflow._runtime.kernels import add_stats
from sliceflow.dedup.plan import DedupPlan

__all__ = ["PAYLOAD_VERSION", "FirstSeenStep"]

#: The payload layout this release writes (1: the key columns and first times as Arrow IPC).
PAYLOAD_VERSION = 2


def _struct(batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [batch.column(n) for n in names], names=[f"__c{i}" for i in range(len(names))]
    )


class FirstSeenStep:
    """The append-only kernel of one bucket at a time and the Arrow around it.

    Args:
        dp: an append-only plan (``dp.changelog`` false).
        time_col: the stream's watermark column, or None: without it entries never expire.
        delay_ms: the watermark delay (``withWatermark``'s threshold) in milliseconds.
    """

    def __init__(self, dp: DedupPlan, time_col: str | None = None, delay_ms: int = 0) -> None:
        if dp.changelog:
            raise ValueError(
                "FirstSeenStep runs keep='first' in arrival order over insert-only rows"
            )
        self._dp = dp
        self._time_col = time_col
        self._names = [*dp.by, *([time_col] if time_col is not None else [])]
        self._kernel = dedup_kernel.FirstSeen(len(dp.by), time_col is not None, delay_ms * 1000)
        self._seen: dict[str, int] = {}
        schema = dp.input_schema
        #: The state batch of payload format 1 (the key columns and the first row's time).
        self.legacy_schema = pa.schema([schema.field(n) for n in dict.fromkeys(self._names)])

    @property
    def previous_watermark(self) -> int | None:
        """The watermark (ms) the state last ran at: the last step's, else the loaded payload's;
        None for a new bucket or a state of payload format 1 before its first step."""
        value: int | None = self._kernel.previous_watermark()
        return value

    @property
    def live_keys(self) -> int:
        """Entries after the last run."""
        return int(self._kernel.live_keys())

    def load(self, payload: bytes | None) -> None:
        """Starts a bucket from its stored section (None: no state), of either layout."""
        if payload is None:
            self._kernel.load(b"")
        elif dedup_kernel.FirstSeen.payload_version(payload) == 1:
            rows = pa.ipc.read_record_batch(pa.py_buffer(payload), self.legacy_schema)
            kernel_rows = _struct(rows, self._names)
            self._kernel.load_rows(*c_array(kernel_rows), buffer_sizes(kernel_rows))
        else:
            self._kernel.load(payload)

    def advance(
        self,
        rows: pa.RecordBatch,
        watermark_ms: int = 0,
        stats: MutableMapping[str, int] | None = None,
    ) -> pa.RecordBatch:
        """One micro-batch over the loaded bucket: the rows to emit (``payload_schema``)."""
        kernel_rows = _struct(rows, self._names)
        emit = self._kernel.step(*c_array(kernel_rows), buffer_sizes(kernel_rows), watermark_ms)
        if stats is not None:  # the kernel's counters grow over its steps: add this step's
            now = dict(self._kernel.stats())
            add_stats(stats, {k: v - self._seen.get(k, 0) for k, v in now.items()})
            self._seen = now
        taken = rows.select(self._dp.payload_schema.names)
        return taken.take(pa.array(np.frombuffer(emit, dtype=np.int64)))

    def kernel_rows(self, rows: pa.RecordBatch) -> pa.RecordBatch:
        """The columns of ``rows`` a step reads (the key columns, then the time column): what
        :meth:`replay` takes."""
        return rows.select(list(dict.fromkeys(self._names)))

    def replay(self, kernel_rows: pa.RecordBatch, watermark_ms: int) -> None:
        """:meth:`advance` over :meth:`kernel_rows` of its rows, for the state alone (a bucket
        brought up to date from its log: the rows were emitted when the step first ran)."""
        struct = _struct(kernel_rows, self._names)
        self._kernel.step(*c_array(struct), buffer_sizes(struct), watermark_ms)
        self._seen = dict(self._kernel.stats())

    def memory_usage(self) -> int:
        """Bytes the loaded state holds."""
        return int(self._kernel.memory_usage())

    def candidates(self, rows: pa.RecordBatch) -> pa.RecordBatch:
        """The local reduction before the shuffle: the rows of ``rows`` (all its columns) that
        can be emitted whatever the state and watermark, in their order (a key's first row;
        with a watermark also its later rows whose time is above every earlier one's, up to its
        first null time). Successive calls are one sequence: a key's rows are compared with its
        rows of the earlier calls too (one task's batches in arrival order). The loaded state is
        left alone.

        >>> import pyarrow as pa
        >>> from sliceflow.dedup.plan import build_plan
        >>> t = pa.record_batch({"id": [1, 1, 2, 1], "v": ["a", "b", "c", "d"]})
        >>> FirstSeenStep(build_plan(t.schema, ["id"])).candidates(t).to_pylist()
        [{'id': 1, 'v': 'a'}, {'id': 2, 'v': 'c'}]
        """
        kernel_rows = _struct(rows, self._names)
        keep = self._kernel.candidates(*c_array(kernel_rows), buffer_sizes(kernel_rows))
        indices = np.frombuffer(keep, dtype=np.int64)
        return rows if len(indices) == rows.num_rows else rows.take(pa.array(indices))

    def payload(self) -> bytes:
        """The bucket's state after the last run (payload format :data:`PAYLOAD_VERSION`)."""
        return bytes(self._kernel.payload())

    def run(
        self,
        payload: bytes | None,
        rows: pa.RecordBatch,
        watermark_ms: int = 0,
        stats: MutableMapping[str, int] | None = None,
    ) -> tuple[pa.RecordBatch, bytes]:
        """:meth:`load`, :meth:`advance` and :meth:`payload` in one: (rows to emit, payload)."""
        self.load(payload)
        out = self.advance(rows, watermark_ms, stats)
        return out, self.payload()
