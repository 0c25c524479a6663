"""The plan of a deduplication (``ROW_NUMBER() OVER (PARTITION BY by ORDER BY order_by) = 1``):
the user's columns checked and named in errors, the kernel plan and the schemas.

The kernel (``sliceflow._core.dedup``, ``cpp/dedup/``) reads only the key columns, the order
column and, over a retracting input, the identity columns a retraction is matched on (every
column of the row). The rows' payload never enters it: it stays Arrow, and the kernel answers
with row indices (:mod:`sliceflow.dedup.step`).

>>> import pyarrow as pa
>>> s = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.string())])
>>> dp = build_plan(s, ["id"], keep="last", order_by="ts")
>>> dp.payload_schema.names, dp.changelog
(['id', 'ts', 'v'], True)
>>> build_plan(s, ["id"], keep="first").changelog  # arrival order: append-only
False
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sliceflow._runtime.agg_plan import (
    check_key_type,
    column_index,
    grouping_columns,
    op_column_index,
    positive_int,
)
from sliceflow._runtime.order_types import check_orderable
from sliceflow._runtime.spark_types import spark_type_name
from sliceflow._runtime.state_format import Identity, input_columns, plan_identity

__all__ = ["DEFAULT_BUNDLE_ROWS", "DedupPlan", "build_plan", "identity"]

#: Flink's ``table.exec.mini-batch.size`` in the issue's API.
DEFAULT_BUNDLE_ROWS = 5000


@dataclass(frozen=True)
class DedupPlan:
    """Everything the kernel and the operators need; see :func:`build_plan`."""

    #: The kernel plan (``cpp/dedup/plan.h``).
    plan: dict[str, Any]
    #: The input's columns (with the op column, when there is one).
    input_schema: pa.Schema
    #: The row's columns: the input's without the op column (the output after ``op``).
    payload_schema: pa.Schema
    by: tuple[str, ...]
    keep: str
    order_by: str | None
    op_col: str | None
    #: A column that orders the rows by arrival (batch: a sequence number), not part of the row.
    arrival_col: str | None
    #: Whether the streaming output is a changelog (else append-only ``+I`` rows, no ``op``).
    changelog: bool

    @property
    def kernel_columns(self) -> list[str]:
        """The payload columns the kernel reads, in its order (keys, order, identity)."""
        names = list(self.by)
        if self.order_by is not None:
            names.append(self.order_by)
        elif self.arrival_col is not None:
            names.append(self.arrival_col)
        if self.op_col is not None:
            names += self.payload_schema.names
        return names


def build_plan(
    schema: pa.Schema,
    by: str | Sequence[str],
    *,
    keep: str = "first",
    order_by: str | None = None,
    op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    arrival_col: str | None = None,
) -> DedupPlan:
    """Checks a deduplication of rows of ``schema`` and derives its plan.

    Raises ``ValueError`` (``TypeError`` for an argument of the wrong Python type) naming the
    argument or column at fault: ``keep`` not ``"first"``/``"last"``, a missing column, a key
    that cannot be grouped by, an ``order_by`` column that cannot be ordered (MAP, ARRAY,
    STRUCT, BINARY), an op column that is not a STRING.

    >>> import pyarrow as pa
    >>> build_plan(pa.schema([("k", pa.int32())]), "k", keep="newest")
    Traceback (most recent call last):
    ...
    ValueError: keep must be 'first' or 'last', not 'newest'
    """
    if not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema, not {type(schema).__name__}")
    if keep not in ("first", "last"):
        raise ValueError(f"keep must be 'first' or 'last', not {keep!r}")
    if not isinstance(mini_batch, bool):
        raise TypeError(f"mini_batch must be a bool, not {type(mini_batch).__name__}")
    positive_int(bundle_rows, "bundle_rows")
    by_list = grouping_columns(by)
    if not by_list:
        raise ValueError("deduplicate needs at least one column in by")
    for name in by_list:
        check_key_type(name, schema.field(column_index(schema, name, "by column")).type)
    if order_by is not None:
        if not isinstance(order_by, str):
            raise TypeError(
                f"order_by must be one column name (a str) or None, not {type(order_by).__name__}"
            )
        i = column_index(schema, order_by, "order_by column")
        check_orderable(order_by, schema.field(i).type)
    payload = schema
    if arrival_col is not None:
        payload = payload.remove(column_index(payload, arrival_col, "arrival column"))
    if op_col is not None:
        op_column_index(schema, op_col)
        if op_col in by_list or op_col == order_by:
            raise ValueError(f"op column {op_col!r} cannot also be a by or order_by column")
        payload = payload.remove(column_index(payload, op_col, "op column"))
        for f in payload:
            if pa.types.is_nested(f.type) or pa.types.is_binary(f.type):
                raise ValueError(
                    f"column {f.name!r} has type {spark_type_name(f.type)}: over a changelog "
                    "(op_col) deduplicate matches a retraction on the whole row, whose columns "
                    "must be BOOLEAN, numbers, DECIMAL, STRING, DATE or TIMESTAMP"
                )
    plan = {
        "num_keys": len(by_list),
        "ordered": order_by is not None or arrival_col is not None,
        "retracting": op_col is not None,
        "num_identity": len(payload) if op_col is not None else 0,
        "keep": keep,
        "mini_batch": mini_batch,
        "bundle_rows": bundle_rows,
    }
    changelog = not (keep == "first" and order_by is None and op_col is None)
    return DedupPlan(
        plan=plan,
        input_schema=schema,
        payload_schema=payload,
        by=tuple(by_list),
        keep=keep,
        order_by=order_by,
        op_col=op_col,
        arrival_col=arrival_col,
        changelog=changelog,
    )


def identity(dp: DedupPlan, buckets: int, watermark_col: str | None) -> Identity:
    """The plan identity of a streaming deduplicate's state: the key types, which row is kept
    and by what order, whether the input retracts, the retained row's columns, the column
    whose watermark expires keys (or none), the bucket count and the key, order and op columns
    by name."""
    schema = dp.input_schema
    fields = [
        ("keep", dp.keep),
        ("order", "arrival" if dp.order_by is None else str(schema.field(dp.order_by).type)),
        ("retractions", "yes" if dp.op_col is not None else "no"),
        ("row", ", ".join(f"{f.name} {f.type}" for f in dp.payload_schema)),
        ("expiry", watermark_col or "none"),
    ]
    return plan_identity(
        keys=[schema.field(n).type for n in dp.by],
        aggregates=[],
        buckets=buckets,
        ansi=True,
        operator_fields=fields,
        columns=input_columns(
            dp.by, order=() if dp.order_by is None else [dp.order_by], op=dp.op_col
        ),
    )
