"""Deduplication (Flink SQL's ``ROW_NUMBER() = 1``) on Arrow data, in this process: the step that
:func:`sliceflow.spark.deduplicate` runs per partition (batch) and per bucket (streaming).

A step hands the C++ kernel (``cpp/dedup/``) the key, order and identity columns of the retained
rows and of the new rows; the kernel answers with row indices (the changes to emit and the rows
to retain) and the rows themselves are gathered with Arrow's ``take``: no row's payload is
copied into the kernel and nothing runs per row in Python.

>>> import pyarrow as pa
>>> from sliceflow.dedup.plan import build_plan
>>> t = pa.record_batch({"id": [1, 1, 2], "ts": [5, 9, 1]})
>>> dp = build_plan(t.schema, ["id"], keep="last", order_by="ts")
>>> step = DedupStep(dp)
>>> out, state = step.run(step.empty_state(), t)
>>> [tuple(r.values()) for r in out.to_pylist()]
[('+I', 1, 9), ('+I', 2, 1)]
>>> out, state = step.run(state, pa.record_batch({"id": [2], "ts": [3]}))
>>> [tuple(r.values()) for r in out.to_pylist()]
[('-U', 2, 1), ('+U', 2, 3)]
"""

from __future__ import annotations

from collections.abc import MutableMapping

import numpy as np
import pyarrow as pa

from sliceflow._core import dedup as dedup_kernel
from sliceflow._runtime.arrow_c_data import buffer_sizes, c_array
from sliceflow._runtime.change_kinds import names_of
from sliceflow._runtime.kernels import add_stats
from sliceflow.dedup.plan import DedupPlan

__all__ = ["DedupStep"]


def _struct(batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [batch.column(n) for n in names], names=[f"__c{i}" for i in range(len(names))]
    )


class DedupStep:
    """The kernel of one deduplication and the Arrow around it.

    The state is a RecordBatch of :attr:`state_schema`: the retained rows (per key its kept row;
    over a retracting input every live row) in arrival order. Append-only plans (keep="first"
    in arrival order) retain the key columns alone (and ``extra`` columns, e.g. a watermark's
    time column), as nothing is emitted from the state.
    """

    def __init__(self, dp: DedupPlan, extra: tuple[str, ...] = ()) -> None:
        self._dp = dp
        self._kernel = dedup_kernel.Deduplicator(dp.plan)
        self._seen: dict[str, int] = {}
        if dp.changelog:
            names = [*dp.payload_schema.names, *([dp.arrival_col] if dp.arrival_col else [])]
        else:
            names = list(dict.fromkeys([*dp.kernel_columns, *extra]))
        schema = dp.input_schema
        self.state_schema = pa.schema([schema.field(n) for n in names])
        self.output_schema = (
            pa.schema([pa.field("op", pa.string(), nullable=False), *dp.payload_schema])
            if dp.changelog
            else dp.payload_schema
        )

    def empty_state(self) -> pa.RecordBatch:
        """A state with no rows."""
        return pa.RecordBatch.from_pylist([], schema=self.state_schema)

    def run(
        self,
        state: pa.RecordBatch,
        rows: pa.RecordBatch,
        stats: MutableMapping[str, int] | None = None,
    ) -> tuple[pa.RecordBatch, pa.RecordBatch]:
        """One step: the changes (``output_schema``; append-only: the new rows kept) and the
        next state."""
        dp = self._dp
        kernel_state = _struct(state, dp.kernel_columns)
        in_names = [*dp.kernel_columns, *([dp.op_col] if dp.op_col is not None else [])]
        kernel_rows = _struct(rows, in_names)
        emit_b, ops_b, keep_b = self._kernel.step(
            *c_array(kernel_state),
            buffer_sizes(kernel_state),
            *c_array(kernel_rows),
            buffer_sizes(kernel_rows),
        )
        emit = np.frombuffer(emit_b, dtype=np.int64)
        keep = np.frombuffer(keep_b, dtype=np.int64)
        if stats is not None:  # the kernel's counters grow over its steps: add this step's
            now = dict(self._kernel.stats())
            add_stats(stats, {k: v - self._seen.get(k, 0) for k, v in now.items()})
            self._seen = now
        s = state.num_rows
        combined = pa.concat_batches([state, rows.select(self.state_schema.names)])
        new_state = combined.take(pa.array(keep))
        if not dp.changelog:
            return rows.select(dp.payload_schema.names).take(pa.array(emit - s)), new_state
        ops = names_of(np.frombuffer(ops_b, dtype=np.int8))
        taken = combined.take(pa.array(emit)).select(dp.payload_schema.names)
        out = pa.RecordBatch.from_arrays([ops, *taken.columns], schema=self.output_schema)
        return out, new_state
