"""The regular join of two changelogs (Flink SQL's streaming equi-join, with mini-batch) on Arrow
data, in this process: the C++ kernel alone, no Spark.

:func:`join` runs the kernel exactly as :func:`sliceflow.spark.join` runs it in each bucket of
a streaming query: the micro-batches one after the other, both sides' live rows carried from
one to the next, and the changes each one emits (``op`` then the joined columns), whose
materialization after every micro-batch is the join of the two inputs materialized so far.

>>> import pyarrow as pa
>>> orders = [pa.table({"cid": [1, 2], "amount": [10, 20]}), pa.table({"cid": [3], "amount": [5]})]
>>> customers = [
...     pa.table({"op": ["+I"], "cid": [1], "name": ["ann"]}),
...     pa.table({"op": ["-U", "+U"], "cid": [1, 1], "name": ["ann", "anna"]}),
... ]
>>> out = join(orders, customers, "cid", "left", right_op_col="op")
>>> for row in out.to_pylist():
...     print(tuple(row.values()))
('+I', 1, 10, 'ann')
('+I', 2, 20, None)
('+I', 3, 5, None)
('-D', 1, 10, 'ann')
('+I', 1, 10, 'anna')
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import TypeAlias

import pyarrow as pa

from sliceflow._runtime.micro_batches import micro_batches
from sliceflow.join.plan import DEFAULT_BUNDLE_ROWS, build_plan
from sliceflow.join.step import JoinStep

__all__ = ["DEFAULT_BUNDLE_ROWS", "join"]

Data: TypeAlias = pa.Table | pa.RecordBatch | Sequence[pa.Table | pa.RecordBatch]


def _batch(table: pa.Table, schema: pa.Schema) -> pa.RecordBatch:
    if table.schema != schema:
        table = table.cast(schema)
    rows = table.combine_chunks().to_batches()
    return rows[0] if rows else pa.RecordBatch.from_pylist([], schema=schema)


def join(
    left: Data,
    right: Data,
    on: str | Sequence[str],
    how: str = "inner",
    *,
    left_op_col: str | None = None,
    right_op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    stats: MutableMapping[str, int] | None = None,
) -> pa.Table:
    """The join of two changelogs, in this process, as a streaming ``join`` emits it.

    Args:
        left, right: one micro-batch each (a pyarrow ``Table`` or ``RecordBatch``) or a list of
            them, as many on both sides: micro-batch i is ``left[i]``'s rows, then
            ``right[i]``'s, in arrival order; both sides' live rows are carried from one
            micro-batch to the next, and a bundle never spans two micro-batches.
        on: the join column(s), present on both sides with the same type.
        how: ``inner``, ``left``, ``right`` or ``full`` (Spark's spellings ``left_outer``,
            ``right_outer``, ``outer``, ``full_outer`` too).
        left_op_col, right_op_col: a STRING column of ``+I``/``-U``/``+U``/``-D`` (null:
            ``+I``): that side is a changelog, whose materialization is a multiset of rows;
            ``None``: insert-only.
        mini_batch: each output row changes at most once per bundle (a row added and taken
            back within a bundle emits nothing); ``False``: every row emits its changes at once.
        bundle_rows: rows per bundle.
        stats: a dict to which the kernel's counters are added.

    Returns:
        A Table: ``op`` then Spark's columns of ``L.join(R, on, how)``.
    """
    lefts, rights = micro_batches(left), micro_batches(right)
    if len(lefts) != len(rights):
        raise ValueError(
            f"join: {len(lefts)} left micro-batch(es) and {len(rights)} right one(s); give as "
            "many on both sides (an empty Table for a side without rows)"
        )
    jp = build_plan(
        lefts[0].schema, rights[0].schema, on, how,
        left_op_col=left_op_col, right_op_col=right_op_col,
        mini_batch=mini_batch, bundle_rows=bundle_rows,
    )  # fmt: skip
    step = JoinStep(jp)
    state = step.empty_state()
    outputs: list[pa.RecordBatch] = []
    for lt, rt in zip(lefts, rights, strict=True):
        inputs = [(0, _batch(lt, jp.left_schema)), (1, _batch(rt, jp.right_schema))]
        out, state = step.run(state, inputs, stats)
        outputs.append(out)
    return pa.Table.from_batches(outputs, step.output_schema)
