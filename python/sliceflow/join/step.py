"""The regular join of two changelogs on Arrow data, in this process: the step that
:func:`sliceflow.spark.join` runs per bucket and micro-batch of a stream (and that
:func:`sliceflow.join.join` runs per micro-batch).

A step hands the C++ kernel (``cpp/join/``) each side's key and identity columns (its live rows
from the state, then its new rows with their op codes) and the order in which the new rows of
both sides arrived; the kernel answers with row indices: the changes to emit (a left and a right
row each, -1 for the null-padded side) and each side's live rows. The rows themselves are
gathered with Arrow's ``take``: no payload is copied into the kernel and nothing runs per row in
Python.

>>> import pyarrow as pa
>>> from sliceflow.join.plan import build_plan
>>> clicks = pa.record_batch({"user": [1, 2], "page": ["a", "b"]})
>>> users = pa.record_batch({"user": [1], "name": ["ann"]})
>>> step = JoinStep(build_plan(clicks.schema, users.schema, ["user"], "left"))
>>> out, state = step.run(step.empty_state(), [(0, clicks), (1, users)])
>>> [tuple(r.values()) for r in out.to_pylist()]  # one bundle: click 1 is padded, then not
[('+I', 1, 'a', 'ann'), ('+I', 2, 'b', None)]
>>> step = JoinStep(build_plan(clicks.schema, users.schema, ["user"], "left", mini_batch=False))
>>> out, state = step.run(step.empty_state(), [(0, clicks), (1, users)])
>>> [tuple(r.values()) for r in out.to_pylist()]  # row by row
[('+I', 1, 'a', None), ('+I', 2, 'b', None), ('-D', 1, 'a', None), ('+I', 1, 'a', 'ann')]
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sliceflow._core import join as join_kernel
from sliceflow._runtime.arrow_c_data import buffer_sizes, c_array
from sliceflow._runtime.change_kinds import codes_of, names_of
from sliceflow._runtime.kernels import add_stats
from sliceflow.join.plan import JoinPlan

__all__ = ["JoinState", "JoinStep"]


@dataclass(frozen=True)
class JoinState:
    """Each side's live rows (its :attr:`JoinPlan.left_row` / ``right_row`` columns)."""

    left: pa.RecordBatch
    right: pa.RecordBatch

    def side(self, side: int) -> pa.RecordBatch:
        return self.left if side == 0 else self.right


def _kernel_batch(batch: pa.RecordBatch) -> tuple[Any, ...]:
    renamed = pa.RecordBatch.from_arrays(
        batch.columns, names=[f"__c{i}" for i in range(batch.num_columns)]
    )
    schema, array = c_array(renamed)
    return schema, array, buffer_sizes(renamed)


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=schema)


class JoinStep:
    """The kernel of one join and the Arrow around it."""

    def __init__(self, jp: JoinPlan) -> None:
        self._jp = jp
        self._kernel = join_kernel.Joiner(jp.plan)
        self._seen: dict[str, int] = {}
        self.output_schema = jp.output_schema
        self.last_kept: tuple[np.ndarray, np.ndarray] = (
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
        )

    def empty_state(self) -> JoinState:
        """A state with no rows."""
        return JoinState(_empty(self._jp.left_row), _empty(self._jp.right_row))

    def _new_rows(
        self, side: int, batches: list[pa.RecordBatch]
    ) -> tuple[pa.RecordBatch, tuple[Any, ...]]:
        """A side's new rows (its row columns) and the kernel's batch of them (row, op codes)."""
        jp = self._jp
        schema = jp.side_schema(side)
        rows = pa.concat_batches(batches) if batches else _empty(schema)
        row = rows.select(jp.row_schema(side).names)
        op = jp.op_col(side)
        kernel_cols = row
        if op is not None:
            codes = codes_of(rows.column(op), op)
            kernel_cols = row.append_column("__op", codes)
        return row, _kernel_batch(kernel_cols)

    def run(
        self,
        state: JoinState,
        inputs: Iterable[tuple[int, pa.RecordBatch]],
        stats: MutableMapping[str, int] | None = None,
        *,
        changes: bool = True,
    ) -> tuple[pa.RecordBatch, JoinState]:
        """One step over ``inputs`` (``(side, batch)`` in arrival order, 0 left, 1 right, each
        batch in its side's input schema): the changes (:attr:`output_schema`; with
        ``changes=False`` none are gathered, for a caller that wants the live rows alone) and
        the next state."""
        parts: tuple[list[pa.RecordBatch], list[pa.RecordBatch]] = ([], [])
        sides: list[np.ndarray] = []
        for side, batch in inputs:
            if batch.num_rows:
                parts[side].append(batch)
                sides.append(np.full(batch.num_rows, side, dtype=np.int8))
        order = np.concatenate(sides).tobytes() if sides else b""
        left_new, left_k = self._new_rows(0, parts[0])
        right_new, right_k = self._new_rows(1, parts[1])
        emit_l, emit_r, ops_b, keep_l, keep_r = self._kernel.step(
            _kernel_batch(state.left), _kernel_batch(state.right), left_k, right_k, order
        )
        if stats is not None:  # the kernel's counters grow over its steps: add this step's
            now = dict(self._kernel.stats())
            add_stats(stats, {k: v - self._seen.get(k, 0) for k, v in now.items()})
            self._seen = now
        left_all = pa.concat_batches([state.left, left_new])
        right_all = pa.concat_batches([state.right, right_new])
        out = _empty(self.output_schema)
        if changes:
            out = self._output(
                left_all,
                right_all,
                np.frombuffer(emit_l, dtype=np.int64),
                np.frombuffer(emit_r, dtype=np.int64),
                np.frombuffer(ops_b, dtype=np.int8),
            )
        kept = (np.frombuffer(keep_l, dtype=np.int64), np.frombuffer(keep_r, dtype=np.int64))
        #: Each side's live rows after the last run, as indices into its state rows followed
        #: by its new rows (what a caller carrying a column beside the rows takes from).
        self.last_kept = kept
        new_state = JoinState(left_all.take(pa.array(kept[0])), right_all.take(pa.array(kept[1])))
        return out, new_state

    def _output(
        self,
        left: pa.RecordBatch,
        right: pa.RecordBatch,
        li: np.ndarray,
        ri: np.ndarray,
        ops: np.ndarray,
    ) -> pa.RecordBatch:
        jp = self._jp
        lt = left.take(pa.array(li, mask=li < 0))
        rt = right.take(pa.array(ri, mask=ri < 0))
        columns: list[pa.Array] = [names_of(ops)]
        for name in jp.on:
            if jp.how == "right":
                columns.append(rt.column(name))
            elif jp.how == "full":
                columns.append(pc.coalesce(lt.column(name), rt.column(name)))
            else:
                columns.append(lt.column(name))
        columns += [lt.column(n) for n in jp.left_row.names[len(jp.on) :]]
        columns += [rt.column(n) for n in jp.right_row.names[len(jp.on) :]]
        return pa.RecordBatch.from_arrays(columns, schema=self.output_schema)
