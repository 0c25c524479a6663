"""Top-N per key (Flink SQL's ``ROW_NUMBER() <= n``), with mini-batch bundles, in this process.

:func:`topn` runs the C++ kernel (``sliceflow._core.topn``) on Arrow data exactly as
:func:`sliceflow.spark.topn` runs it inside Spark tasks: :func:`encode_rows` adds each row's
encoded partition key, sort key (Spark's order as bytes) and row identity; a :class:`Ranking`
hands the kernel the retained rows followed by the new ones and gathers what it returns
(take-indices, ops, ranks) from the Arrow columns. The payload never leaves Arrow.

>>> import pyarrow as pa
>>> t = pa.table({"k": ["a", "a", "a", "b"], "v": [5, 9, 7, 1]})
>>> out = topn(t, 2, by="k", order_by=[OrderKey("v", descending=True)], emit="final")
>>> [tuple(r.values()) for r in out.to_pylist()]
[('a', 9, 1), ('a', 7, 2), ('b', 1, 1)]
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from sliceflow._core import topn as topn_kernel
from sliceflow._runtime.arrow_c_data import buffer_sizes, c_array
from sliceflow._runtime.change_kinds import codes_of, names_of
from sliceflow._runtime.kernels import add_stats
from sliceflow._runtime.micro_batches import micro_batches
from sliceflow.topn.plan import (
    DEFAULT_BUNDLE_ROWS,
    OrderKey,
    TopNPlan,
    build_plan,
)

__all__ = ["OrderKey", "Ranking", "bucket_ids", "encode_retained", "encode_rows", "topn"]


def _binary(parts: tuple[bytes, bytes], rows: int) -> pa.Array:
    offsets, data = parts
    return pa.Array.from_buffers(
        pa.large_binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def _kernel_encode(
    tp: TopNPlan,
    batch: pa.RecordBatch,
    names: list[str],
    order: Sequence[OrderKey],
    retract: bool,
    buckets: int,
) -> tuple[Any, ...]:
    """The C++ encoder over ``batch``'s columns ``names`` (the partition columns, then those of
    ``order``, then with ``retract`` the row identity): bucket bytes, keys, sort keys, row ids."""
    columns = [batch.column(batch.schema.get_field_index(n)) for n in names]
    sub = pa.RecordBatch.from_arrays(columns, names=[f"c{i}" for i in range(len(names))])
    return tuple(
        topn_kernel.encode(
            *c_array(sub),
            len(tp.by),
            [o.descending for o in order],
            [bool(o.nulls_first) for o in order],
            retract,
            buckets,
            buffer_sizes=buffer_sizes(sub),
        )
    )


def _encoded(
    tp: TopNPlan, batch: pa.RecordBatch, buckets: int
) -> tuple[bytes | None, list[pa.Array]]:
    """The kernel's encoding of ``batch``'s rows (any batch holding the partition, order and
    row-identity columns): each row's bucket bytes (with ``buckets``, else None) and its
    ``__key``, ``__sort`` (and ``__row``) columns."""
    names = [*tp.by, *(o.column for o in tp.order)]
    if tp.retract:
        names += list(tp.row_id_columns)
    bucket_bytes, keys, sorts, row_ids = _kernel_encode(
        tp, batch, names, tp.order, tp.retract, buckets
    )
    rows = batch.num_rows
    encoded = [_binary(keys, rows), _binary(sorts, rows)]
    if tp.retract:
        encoded.append(_binary(row_ids, rows))
    return bucket_bytes, encoded


def _payload(tp: TopNPlan, batch: pa.RecordBatch) -> list[pa.Array]:
    return [batch.column(batch.schema.get_field_index(f.name)) for f in tp.payload_schema]


def encode_rows(
    tp: TopNPlan, batch: pa.RecordBatch, buckets: int = 0
) -> tuple[np.ndarray | None, pa.RecordBatch]:
    """``batch`` (``tp.input_schema``'s columns) as ``tp.rows_schema``: the payload, its
    encoded ``__key``, ``__sort`` (and ``__row``) and the ``__op`` code; with ``buckets``,
    also each row's state bucket (else None)."""
    if batch.schema.names != tp.input_schema.names:
        raise ValueError(f"expected the columns {tp.input_schema.names}, got {batch.schema.names}")
    bucket_bytes, encoded = _encoded(tp, batch, buckets)
    out = [*_payload(tp, batch), *encoded]
    if tp.retract:
        ops = batch.column(batch.schema.get_field_index(tp.op_col))
        out.append(codes_of(ops, str(tp.op_col)))
    else:
        out.append(_inserts(batch.num_rows))
    rows = pa.RecordBatch.from_arrays(out, schema=tp.rows_schema)
    ids = None if bucket_bytes is None else np.frombuffer(bucket_bytes, np.int32)
    return ids, rows


def bucket_ids(tp: TopNPlan, batch: pa.RecordBatch, buckets: int) -> np.ndarray:
    """Each row's state bucket in ``[0, buckets)`` (int32): the hash of its encoded partition
    key, as :func:`encode_rows` gives it, without encoding the sort keys.

    Example:
        >>> from sliceflow.topn.plan import build_plan
        >>> tp = build_plan(pa.schema([("k", pa.int64()), ("v", pa.int64())]), 2, "k", ["v"])
        >>> batch = pa.record_batch({"k": [1, 2, 1], "v": [3, 4, 5]})
        >>> bool((bucket_ids(tp, batch, 8) == encode_rows(tp, batch, 8)[0]).all())
        True
    """
    if buckets < 1:
        raise ValueError(f"buckets must be at least 1, not {buckets}")
    if not tp.by:  # one partition: a batch of no columns would have no rows
        ids = encode_rows(tp, batch, buckets)[0]
        assert ids is not None
        return ids
    bucket_bytes = _kernel_encode(tp, batch, list(tp.by), (), False, buckets)[0]
    return np.frombuffer(bucket_bytes, np.int32)


def encode_retained(tp: TopNPlan, retained: pa.RecordBatch) -> pa.RecordBatch:
    """Retained rows as only their payload (``tp.payload_schema``, as a streaming bucket stores
    them) back as ``tp.rows_schema``: their ``__key``, ``__sort`` (and ``__row``) encoded again,
    ``__op`` +I. The encoding is a function of the payload, so these are the bytes the rows
    carried when they were ranked (~0.05 µs per row).

    Example:
        >>> from sliceflow.topn.plan import build_plan
        >>> tp = build_plan(pa.schema([("k", pa.int64()), ("v", pa.int64())]), 2, "k", ["v"])
        >>> batch = pa.record_batch({"k": [1], "v": [3]})
        >>> encode_retained(tp, batch).equals(encode_rows(tp, batch)[1])
        True
    """
    _, encoded = _encoded(tp, retained, 0)
    columns = [*_payload(tp, retained), *encoded, _inserts(retained.num_rows)]
    return pa.RecordBatch.from_arrays(columns, schema=tp.rows_schema)


def _inserts(rows: int) -> pa.Array:
    return pa.array(np.zeros(rows, np.int8))


class Ranking:
    """The kernel over one partition (batch), one micro-batch (window Top-N) or one bucket at
    a time (streaming): :meth:`run` ranks the retained rows plus new ones."""

    def __init__(self, tp: TopNPlan) -> None:
        self._tp = tp
        self._ranker = topn_kernel.Ranker(tp.plan)
        self._stats: dict[str, int] = {}

    def run(
        self, state: pa.Table | None, new: Iterable[pa.RecordBatch]
    ) -> tuple[pa.Table, pa.Table]:
        """Ranks ``state`` (retained rows, ``tp.state_schema``) followed by ``new``
        (``tp.rows_schema``); returns the output rows (``tp.output_schema``) and the rows to
        retain (``tp.state_schema``)."""
        parts = [] if state is None else [b for b in _with_op(state, self._tp).to_batches()]
        return self._rank(parts, 0 if state is None else state.num_rows, new, self._tp.state_schema)

    def run_payload(
        self, retained: pa.RecordBatch | None, new: Iterable[pa.RecordBatch]
    ) -> tuple[pa.Table, pa.Table]:
        """:meth:`run` with the retained rows as their payload alone (``tp.payload_schema``),
        in and out: what a streaming bucket stores. Their encoded columns are made again
        (:func:`encode_retained`)."""
        parts = [] if retained is None else [encode_retained(self._tp, retained)]
        state_rows = 0 if retained is None else retained.num_rows
        return self._rank(parts, state_rows, new, self._tp.payload_schema)

    def _rank(
        self,
        parts: list[pa.RecordBatch],
        state_rows: int,
        new: Iterable[pa.RecordBatch],
        kept_schema: pa.Schema,
    ) -> tuple[pa.Table, pa.Table]:
        tp = self._tp
        parts = [b for b in parts if b.num_rows]
        parts += [b for b in new if b.num_rows]
        combined = pa.concat_batches(parts) if parts else tp.rows_schema.empty_table().to_batches()
        if not isinstance(combined, pa.RecordBatch):
            combined = pa.RecordBatch.from_pylist([], tp.rows_schema)
        cols = ["__key", "__sort", *(["__row"] if tp.retract else []), "__op"]
        kernel_batch = combined.select(cols)
        index, ops, ranks, keep = self._ranker.add(
            *c_array(kernel_batch), state_rows, buffer_sizes=buffer_sizes(kernel_batch)
        )
        add_stats(self._stats, self._ranker.stats())
        taken = combined.select(tp.payload_schema.names).take(
            pa.array(np.frombuffer(index, np.int64))
        )
        columns = list(taken.columns)
        if tp.emit == "changelog":
            codes = pa.array(np.frombuffer(ops, np.int8))
            columns.insert(0, names_of(codes))
        if tp.with_rank:
            columns.append(pa.array(np.frombuffer(ranks, np.int32)))
        out = pa.Table.from_arrays(columns, schema=tp.output_schema)
        kept = combined.select(kept_schema.names).take(pa.array(np.frombuffer(keep, np.int64)))
        return out, pa.Table.from_batches([kept])

    def stats(self) -> dict[str, int]:
        """The counters summed over the calls so far."""
        return dict(self._stats)


def _with_op(state: pa.Table, tp: TopNPlan) -> pa.Table:
    return state.append_column(
        tp.rows_schema.field("__op"), pa.array(np.zeros(state.num_rows, np.int8))
    )


def topn(
    data: pa.Table | pa.RecordBatch | Sequence[pa.Table | pa.RecordBatch],
    n: int,
    *,
    by: str | Sequence[str] | None,
    order_by: Sequence[OrderKey | str] | OrderKey | str,
    with_rank: bool = True,
    op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    emit: str = "changelog",
    stats: MutableMapping[str, int] | None = None,
) -> pa.Table:
    """Top-N per key in this process: the C++ kernel alone, no Spark.

    Args:
        data: one micro-batch (a pyarrow ``Table`` or ``RecordBatch``) or a list of them,
            applied in order with the retained rows carried from one to the next; a bundle
            never spans two micro-batches.
        n: rows per key (at least 1, at most 2^30 = 1,073,741,824).
        by: the partition column(s); ``None`` or ``[]`` for one partition.
        order_by: column names (ascending) or :class:`OrderKey` s (direction, null order).
        with_rank: add ``rank`` (INT, 1..n, as Spark's ``row_number``); changes of rank emit
            ``-U``/``+U``.
        op_col: a STRING column of ``+I``/``-U``/``+U``/``-D`` (null: ``+I``).
        mini_batch: one net change per key and rank per bundle; ``False``: per row.
        bundle_rows: rows per bundle.
        emit: ``"changelog"`` or ``"final"`` (each key's top n once, as a batch query gives).
        stats: a dict to which the kernel's counters are added.

    Returns:
        A Table: (``op``,) the input columns but the op column, (``rank``).

    Example:
        >>> import pyarrow as pa
        >>> b1 = pa.table({"k": ["a", "a"], "v": [1, 2]})
        >>> b2 = pa.table({"k": ["a"], "v": [3]})
        >>> out = topn([b1, b2], 1, by="k", order_by=[OrderKey("v", descending=True)])
        >>> [tuple(r.values()) for r in out.to_pylist()]
        [('+I', 'a', 2, 1), ('-U', 'a', 2, 1), ('+U', 'a', 3, 1)]
    """
    tables = micro_batches(data)
    tp = build_plan(
        tables[0].schema,
        n,
        by,
        order_by,
        with_rank=with_rank,
        op_col=op_col,
        mini_batch=mini_batch,
        bundle_rows=bundle_rows,
        emit=emit,
    )
    ranking = Ranking(tp)
    state: pa.Table | None = None
    outputs: list[pa.Table] = []
    for table in tables:
        table = table.cast(tp.input_schema) if table.schema != tp.input_schema else table
        new = [encode_rows(tp, b)[1] for b in table.to_batches()]
        out, state = ranking.run(state, new)
        if emit == "changelog":
            outputs.append(out)
    if emit == "final":
        out, state = ranking.run(state, [])
        outputs.append(out)
    if stats is not None:
        add_stats(stats, ranking.stats())
    return pa.concat_tables(outputs) if outputs else tp.output_schema.empty_table()
