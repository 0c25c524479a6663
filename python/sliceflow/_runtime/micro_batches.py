"""The micro-batches of an in-process operator call: what ``sliceflow.changelog.aggregate``,
``sliceflow.topn.topn`` and ``sliceflow.dedup.deduplicate`` take as ``data`` and run one after
the other, as a streaming query runs its micro-batches (state carried from one to the next).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

__all__ = ["micro_batches"]


def micro_batches(data: Any) -> list[pa.Table]:
    """``data`` -- one micro-batch (a Table or RecordBatch) or a list of them -- as a list of
    Tables with the same columns; ``TypeError`` / ``ValueError`` naming what is wrong.

    >>> import pyarrow as pa
    >>> [t.num_rows for t in micro_batches([pa.record_batch({"a": [1]}), pa.table({"a": [2, 3]})])]
    [1, 2]
    """
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        data = [data]
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence):
        raise TypeError(
            "data must be a pyarrow Table or RecordBatch (one micro-batch) or a list of them "
            f"(successive micro-batches), not {type(data).__name__}"
        )
    if not data:
        raise ValueError("data has no micro-batches (no schema to plan with)")
    tables: list[pa.Table] = []
    for item in data:
        if isinstance(item, pa.RecordBatch):
            item = pa.Table.from_batches([item])
        if not isinstance(item, pa.Table):
            raise TypeError(
                "each micro-batch must be a pyarrow Table or RecordBatch, not "
                f"{type(item).__name__}"
            )
        if tables and item.schema.names != tables[0].schema.names:
            raise ValueError(
                "every micro-batch must have the same columns: "
                f"{tables[0].schema.names} then {item.schema.names}"
            )
        tables.append(item)
    return tables
