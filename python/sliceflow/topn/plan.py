"""The plan of a Top-N: validation, the order keys and the Arrow schemas.

:func:`build_plan` checks the partition columns, the order keys (column, direction, where nulls
go), ``n`` and the op column against the input schema, and derives what the kernel
(``sliceflow._core.topn``) and the Spark wiring need: the kernel plan ``dict``, the payload
columns (every input column but the op column), the row-identity columns a retraction is
matched by, and the state and output schemas. A bad call fails here, on the driver, naming the
column or option at fault.

>>> import pyarrow as pa
>>> schema = pa.schema([("cat", pa.string()), ("price", pa.int64()), ("id", pa.int64())])
>>> tp = build_plan(schema, 3, ["cat"], [OrderKey("price", descending=True), OrderKey("id")])
>>> tp.output_schema.names
['op', 'cat', 'price', 'id', 'rank']
>>> [(o.column, o.descending, o.nulls_first) for o in tp.order]
[('price', True, False), ('id', False, True)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sliceflow._runtime.agg_plan import (
    DEFAULT_BUCKETS,
    check_key_type,
    column_index,
    grouping_columns,
    op_column_index,
    positive_int,
)
from sliceflow._runtime.order_types import check_orderable
from sliceflow._runtime.spark_types import spark_type_name
from sliceflow._runtime.state_format import Identity, input_columns, plan_identity

__all__ = [
    "MAX_N",
    "DEFAULT_BUCKETS",
    "DEFAULT_BUNDLE_ROWS",
    "OrderKey",
    "TopNPlan",
    "build_plan",
    "identity",
    "order_key",
]

#: Flink's ``table.exec.mini-batch.size`` in the issue's API.
DEFAULT_BUNDLE_ROWS = 5000


#: The largest ``n`` (the kernel's bound on the rows it keeps per key, ``cpp/topn/ranker.cpp``).
MAX_N = 1 << 30


@dataclass(frozen=True)
class OrderKey:
    """One order key: a column, its direction and where its nulls go (``None``: Spark's
    default, first ascending and last descending)."""

    column: str
    descending: bool = False
    nulls_first: bool | None = None

    def __post_init__(self) -> None:
        if self.nulls_first is None:
            object.__setattr__(self, "nulls_first", not self.descending)


def order_key(value: Any) -> OrderKey:
    """An :class:`OrderKey` from a column name (ascending) or an ``OrderKey``."""
    if isinstance(value, OrderKey):
        return value
    if isinstance(value, str):
        return OrderKey(value)
    raise TypeError(f"order_by takes column names or sort expressions, not {type(value).__name__}")


@dataclass(frozen=True)
class TopNPlan:
    """Everything the Top-N kernel and its wiring need; see :func:`build_plan`."""

    plan: dict[str, Any]
    input_schema: pa.Schema
    n: int
    by: tuple[str, ...]
    order: tuple[OrderKey, ...]
    op_col: str | None
    #: The input columns the output carries (all but the op column), in input order.
    payload_schema: pa.Schema
    #: The payload columns a retraction is matched by (the non-nested ones).
    row_id_columns: tuple[str, ...]
    #: The payload with its encoded ``__key``, ``__sort`` (and ``__row``) columns: what the
    #: state keeps and what a bucket's new rows carry (and ``__op``).
    state_schema: pa.Schema
    rows_schema: pa.Schema
    output_schema: pa.Schema
    with_rank: bool = True
    mini_batch: bool = True
    bundle_rows: int = DEFAULT_BUNDLE_ROWS
    buckets: int = DEFAULT_BUCKETS
    emit: str = "changelog"

    @property
    def retract(self) -> bool:
        return self.op_col is not None


def build_plan(
    schema: pa.Schema,
    n: int,
    by: str | Sequence[str] | None,
    order_by: Sequence[OrderKey | str] | OrderKey | str,
    *,
    with_rank: bool = True,
    op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    buckets: int = DEFAULT_BUCKETS,
    emit: str = "changelog",
) -> TopNPlan:
    """Validates a Top-N over ``schema`` and derives its plan and schemas.

    ``emit="changelog"``: the output is ``op``, the payload, ``rank``; ``"final"`` (a batch, or
    the window Top-N of a stream): the payload and ``rank``, each key's top ``n`` once.
    Raises ``ValueError`` (``TypeError`` for an argument of the wrong Python type) naming the
    column or option at fault.
    """
    if not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema, not {type(schema).__name__}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be an int, not {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be at least 1 (the number of rows kept per key), not {n}")
    if n > MAX_N:
        raise ValueError(
            f"n must be at most {MAX_N:,} (2^30, the rows a Top-N keeps per key), not {n:,}"
        )
    if emit not in ("changelog", "final"):
        raise ValueError(f"emit must be 'changelog' or 'final', not {emit!r}")
    bundle_rows = positive_int(bundle_rows, "bundle_rows")
    buckets = positive_int(buckets, "buckets")
    if isinstance(order_by, (str, OrderKey)):
        order_by = [order_by]
    order = tuple(order_key(o) for o in order_by)
    if not order:
        raise ValueError("order_by needs at least one column")
    by_list = grouping_columns(by)
    for name in by_list:
        check_key_type(name, schema.field(column_index(schema, name, "partition column")).type)
    if op_col is not None:
        op_column_index(schema, op_col)
        if op_col in by_list:
            raise ValueError(f"op column {op_col!r} cannot also be a partition column")
    for o in order:
        t = schema.field(column_index(schema, o.column, "order_by column")).type
        if o.column == op_col:
            raise ValueError(f"order_by column {o.column!r} is the op column")
        check_orderable(o.column, t)
    payload = pa.schema([f for f in schema if f.name != op_col])
    if "rank" in payload.names and with_rank:
        raise ValueError("the input already has a column 'rank'; rename it or pass with_rank=False")
    if emit == "changelog" and "op" in payload.names:
        raise ValueError(
            "the input already has a column 'op' (the changelog output's first column); rename "
            "it, or pass it as op_col if it is a changelog"
        )
    row_ids = tuple(f.name for f in payload if not pa.types.is_nested(f.type))
    encoded = [
        pa.field("__key", pa.large_binary(), False),
        pa.field("__sort", pa.large_binary(), False),
    ]
    if op_col is not None:
        encoded.append(pa.field("__row", pa.large_binary(), False))
    state_schema = pa.schema([*payload, *encoded])
    rows_schema = pa.schema([*state_schema, pa.field("__op", pa.int8(), False)])
    rank_field = [pa.field("rank", pa.int32(), False)] if with_rank else []
    op_field = [pa.field("op", pa.string(), False)] if emit == "changelog" else []
    output = pa.schema([*op_field, *payload, *rank_field])
    plan = {
        "n": n,
        "with_rank": bool(with_rank),
        "mini_batch": bool(mini_batch),
        "bundle_rows": bundle_rows,
        "retract": op_col is not None,
        "emit": emit,
    }
    return TopNPlan(
        plan=plan,
        input_schema=schema,
        n=n,
        by=tuple(by_list),
        order=order,
        op_col=op_col,
        payload_schema=payload,
        row_id_columns=row_ids,
        state_schema=state_schema,
        rows_schema=rows_schema,
        output_schema=output,
        with_rank=bool(with_rank),
        mini_batch=bool(mini_batch),
        bundle_rows=bundle_rows,
        buckets=buckets,
        emit=emit,
    )


def identity(tp: TopNPlan) -> Identity:
    """The plan identity of a streaming changelog Top-N (what its checkpointed state belongs
    to): the partition key types, the order keys, ``n``, whether ranks are emitted, whether the
    input retracts, the payload columns (the state holds them), the bucket count and the key,
    order and op columns by name. Tuning options (``bundle_rows``, ``mini_batch``) are left
    out.

    >>> import pyarrow as pa
    >>> tp = build_plan(pa.schema([("k", pa.int64()), ("v", pa.int32())]), 2, "k", ["v"])
    >>> identity(tp)  # doctest: +NORMALIZE_WHITESPACE
    [('keys', 'BIGINT'), ('order', 'v ASC NULLS FIRST'), ('n', '2'), ('rank', 'yes'),
     ('retractions', 'no'), ('columns', 'k BIGINT, v INT'), ('buckets', '8'),
     ('input columns', 'by `k`; order `v`')]
    """
    types = {f.name: f.type for f in tp.payload_schema}
    order = ", ".join(
        f"{o.column} {'DESC' if o.descending else 'ASC'} "
        f"NULLS {'FIRST' if o.nulls_first else 'LAST'}"
        for o in tp.order
    )
    return plan_identity(
        keys=[types[k] for k in tp.by],
        buckets=tp.buckets,
        operator_fields=[
            ("order", order),
            ("n", str(tp.n)),
            ("rank", "yes" if tp.with_rank else "no"),
            ("retractions", "yes" if tp.retract else "no"),
            (
                "columns",
                ", ".join(f"{f.name} {spark_type_name(f.type)}" for f in tp.payload_schema),
            ),
        ],
        columns=input_columns(tp.by, order=[o.column for o in tp.order], op=tp.op_col),
    )
