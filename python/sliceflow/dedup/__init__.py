"""Deduplication (Flink SQL's ``ROW_NUMBER() OVER (PARTITION BY by ORDER BY order_by) = 1``) on
Arrow data, in this process: the C++ kernel alone, no Spark.

:func:`deduplicate` runs the kernel exactly as :func:`sliceflow.spark.deduplicate` runs it in
each bucket of a streaming query: the micro-batches one after the other, the retained rows
carried from one to the next, and the changes each one emits (``op`` then the row's columns),
or, for ``keep="first"`` in arrival order over insert-only rows, each key's first row once.

>>> import pyarrow as pa
>>> b1 = pa.table({"id": [1, 1, 2], "ts": [5, 9, 1]})
>>> b2 = pa.table({"id": [2], "ts": [3]})
>>> out = deduplicate([b1, b2], "id", keep="last", order_by="ts")
>>> [tuple(r.values()) for r in out.to_pylist()]
[('+I', 1, 9), ('+I', 2, 1), ('-U', 2, 1), ('+U', 2, 3)]
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

import pyarrow as pa

from sliceflow._runtime.micro_batches import micro_batches
from sliceflow.dedup.plan import DEFAULT_BUNDLE_ROWS, build_plan
from sliceflow.dedup.step import DedupStep

__all__ = ["DEFAULT_BUNDLE_ROWS", "deduplicate"]


def deduplicate(
    data: pa.Table | pa.RecordBatch | Sequence[pa.Table | pa.RecordBatch],
    by: str | Sequence[str],
    *,
    keep: str = "first",
    order_by: str | None = None,
    op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    stats: MutableMapping[str, int] | None = None,
) -> pa.Table:
    """One row per key, in this process, as a streaming ``deduplicate`` emits it.

    Args:
        data: one micro-batch (a pyarrow ``Table`` or ``RecordBatch``) or a list of them,
            applied in order with the retained rows carried from one to the next; a bundle
            never spans two micro-batches.
        by: the key column(s).
        keep: ``"first"`` (the smallest ``order_by``: Spark's ascending order, nulls first) or
            ``"last"`` (the largest).
        order_by: one column (numbers, DECIMAL, STRING, DATE, TIMESTAMP, BOOLEAN); ``None``:
            arrival order. Ties go to the earlier row with ``"first"``, the later one with
            ``"last"``.
        op_col: a STRING column of ``+I``/``-U``/``+U``/``-D`` (null: ``+I``): the input is a
            changelog; every live row of a key is retained, so that retracting the kept row
            brings the next one back.
        mini_batch: one net change per key per bundle; ``False``: one change per row.
        bundle_rows: rows per bundle.
        stats: a dict to which the kernel's counters are added.

    Returns:
        A Table: ``op`` then the input's columns but the op column (a changelog); for
        ``keep="first"`` in arrival order without ``op_col``, the first row of each key once,
        without ``op`` (append-only, like ``dropDuplicates``).
    """
    tables = micro_batches(data)
    dp = build_plan(
        tables[0].schema,
        by,
        keep=keep,
        order_by=order_by,
        op_col=op_col,
        mini_batch=mini_batch,
        bundle_rows=bundle_rows,
    )
    step = DedupStep(dp)
    state = step.empty_state()
    outputs: list[pa.RecordBatch] = []
    for table in tables:
        if table.schema != dp.input_schema:
            table = table.cast(dp.input_schema)
        rows = table.combine_chunks().to_batches()
        batch = rows[0] if rows else pa.RecordBatch.from_pylist([], schema=dp.input_schema)
        out, state = step.run(state, batch, stats)
        outputs.append(out)
    return pa.Table.from_batches(outputs, step.output_schema)
