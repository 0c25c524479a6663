"""The plan of a changelog aggregation: validation, Spark's result types and the Arrow schemas.

:func:`build_plan` turns an input schema, the grouping columns, the op column and the
aggregates into everything the encoder (local phase) and the aggregator (global phase) need
(docs/changelog-kernel.md): the plan ``dict`` for ``sliceflow._core.changelog``, which input
columns the encoder reads (keys, op, then each argument column once), and the encoder input,
delta and output schemas. Types are decided here, on the driver, so that a bad call fails
before any task runs.

>>> import pyarrow as pa
>>> from sliceflow import window as W
>>> schema = pa.schema([("day", pa.string()), ("user_id", pa.int32()), ("op", pa.string())])
>>> cp = build_plan(schema, ["day"], [W.count_distinct("user_id").alias("cnt")], op_col="op")
>>> cp.output_schema.names
['op', 'day', 'cnt']
>>> cp.plan["fold"]  # count_distinct cannot be folded before the shuffle
False
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sliceflow._core import changelog as changelog_kernel
from sliceflow._runtime.agg_plan import (
    DEFAULT_BUCKETS,
    check_output_names,
    core_schema,
    grouping_columns,
    kernel_input_schema,
    key_columns,
    op_column_index,
    output_fields,
    plan_arguments,
    positive_int,
)
from sliceflow._runtime.state_format import (
    Identity,
    aggregate_arguments,
    aggregate_types,
    input_columns,
    plan_identity,
)
from sliceflow.aggregates import AggSpec, agg_specs

__all__ = [
    "identity",
    "DEFAULT_BUCKETS",
    "DEFAULT_BUNDLE_ROWS",
    "DEFAULT_FOLD_ROWS",
    "ChangelogPlan",
    "build_plan",
]

#: Flink's ``table.exec.mini-batch.size`` in the issue's API.
DEFAULT_BUNDLE_ROWS = 5000
#: The encoder's fold bound (input rows folded before a flush).
DEFAULT_FOLD_ROWS = 200_000
#: State-store buckets per query (the grouping key of Spark's stateful operator). A constant,

#: Aggregates an encoder can fold over a changelog (exactly invertible partials).
_FOLDABLE_WITH_RETRACTIONS = frozenset({"count", "sum", "avg"})


@dataclass(frozen=True)
class ChangelogPlan:
    """Everything both phases need; see :func:`build_plan`."""

    plan: dict[str, Any]
    input_schema: pa.Schema
    #: For each encoder input column, the index of its column in ``input_schema``.
    input_indices: tuple[int, ...]
    encoder_schema: pa.Schema
    delta_schema: pa.Schema
    output_schema: pa.Schema

    def encoder_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The encoder input columns of ``batch`` (which has ``input_schema``'s columns)."""
        if batch.schema.names != self.input_schema.names:
            raise ValueError(
                "every batch must have the columns the changelog plan was built for: "
                f"expected {self.input_schema.names}, got {batch.schema.names}"
            )
        columns = [batch.column(i) for i in self.input_indices]
        columns = [
            c if c.type == f.type else c.cast(f.type)
            for c, f in zip(columns, self.encoder_schema, strict=True)
        ]
        return pa.RecordBatch.from_arrays(columns, schema=self.encoder_schema)


def build_plan(
    schema: pa.Schema,
    by: str | Sequence[str] | None,
    aggs: Sequence[AggSpec],
    *,
    op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    buckets: int = DEFAULT_BUCKETS,
    fold: bool | None = None,
    fold_rows: int = DEFAULT_FOLD_ROWS,
    ansi: bool = True,
) -> ChangelogPlan:
    """Validates a changelog aggregation over ``schema`` and derives its plan and schemas.

    ``fold=None`` folds before the shuffle where that is exact (docs/changelog-kernel.md,
    "Local fold"); ``True`` insists (an error where it cannot), ``False`` never folds.
    Raises ``ValueError`` (``TypeError`` for arguments of the wrong Python type) naming the
    column or aggregate at fault.

    >>> import pyarrow as pa
    >>> from sliceflow import window as W
    >>> s = pa.schema([("k", pa.int64()), ("v", pa.int64())])
    >>> cp = build_plan(s, "k", [W.count(), W.max("v")])
    >>> cp.plan["fold"], cp.delta_schema.names
    (True, ['__bucket', '__key', '__n', '__a0_n', '__a1_v'])
    """
    if not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema, not {type(schema).__name__}")
    by = grouping_columns(by)
    aggs = agg_specs(aggs)
    if not aggs:
        raise ValueError("changelog aggregation needs at least one aggregate")
    for name, value in (("mini_batch", mini_batch), ("ansi", ansi)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, not {type(value).__name__}")
    if fold is not None and not isinstance(fold, bool):
        raise TypeError(f"fold must be a bool or None, not {type(fold).__name__}")
    positive_int(bundle_rows, "bundle_rows")
    positive_int(buckets, "buckets")
    positive_int(fold_rows, "fold_rows")
    if buckets > 2**31 - 1:
        raise ValueError(f"buckets must fit an INT, not {buckets}")

    check_output_names(["op"], by, aggs)

    key_idx = key_columns(schema, by)
    indices = list(key_idx)
    op_column = -1
    if op_col is not None:
        i = op_column_index(schema, op_col)
        if op_col in by:
            raise ValueError(f"op column {op_col!r} cannot also be a grouping column")
        op_column = len(indices)
        indices.append(i)

    plan_aggs, arg_types = plan_arguments(schema, aggs, indices)

    retracting = op_col is not None
    foldable = all(
        a.fn in _FOLDABLE_WITH_RETRACTIONS if retracting else a.fn != "count_distinct" for a in aggs
    )
    if fold is None:
        fold = mini_batch and foldable
    elif fold and not mini_batch:
        raise ValueError("fold=True needs mini_batch=True (without it every row emits a change)")
    elif fold and not foldable:
        raise ValueError(
            "these aggregates cannot be folded before the shuffle: count_distinct never, and "
            "over a changelog (op_col) only count, sum and avg"
        )

    n = len(by)
    names = [f"__k{j}" for j in range(n)]
    if op_column >= 0:
        names.append("__op")
    names += [f"__v{j}" for j in range(len(indices) - len(names))]
    encoder_schema = kernel_input_schema(schema, indices, names)
    output_schema = pa.schema(
        [pa.field("op", pa.string(), nullable=False)]
        + output_fields(schema, by, key_idx, aggs, arg_types)
    )

    plan = {
        "num_keys": n,
        "op_column": op_column,
        "aggs": plan_aggs,
        "mini_batch": mini_batch,
        "fold": fold,
        "fold_rows": fold_rows,
        "bundle_rows": bundle_rows,
        "buckets": buckets,
        "ansi": ansi,
    }
    # The kernels check the delta schema against the same rule (cpp/changelog/plan.h).
    delta_schema = core_schema(
        changelog_kernel.delta_schema(plan, encoder_schema.__arrow_c_schema__())
    )
    return ChangelogPlan(
        plan=plan,
        input_schema=schema,
        input_indices=tuple(indices),
        encoder_schema=encoder_schema,
        delta_schema=delta_schema,
        output_schema=output_schema,
    )


def identity(cp: ChangelogPlan) -> Identity:
    """The plan identity of a streaming ``changelog_agg``'s state: the keys and aggregates,
    whether the input retracts (an op column: it decides the aggregates' state), the bucket
    count, ANSI mode and the key, op and argument columns by name."""
    plan = cp.plan
    n = plan["num_keys"]
    keys = [cp.encoder_schema.field(i).type for i in range(n)]
    names = [cp.input_schema.field(i).name for i in cp.input_indices]
    op = names[plan["op_column"]] if plan["op_column"] >= 0 else None
    return plan_identity(
        keys=keys,
        aggregates=aggregate_types(plan, cp.encoder_schema),
        buckets=plan["buckets"],
        ansi=plan["ansi"],
        operator_fields=[("retractions", "yes" if plan["op_column"] >= 0 else "no")],
        columns=input_columns(names[:n], op=op, arguments=aggregate_arguments(plan, names)),
    )
