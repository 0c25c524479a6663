"""The plan of a regular join of two changelogs (Flink SQL's streaming equi-join): the user's
columns checked and named in errors, the kernel plan, the output schema and the state identity.

The output has Spark's columns for ``L.join(R, on=[names], how=how)``: the key columns once
(the left side's for ``inner`` and ``left``, the right side's for ``right``, the first that is
not null for ``full``), then the left side's other columns, then the right side's. The kernel
(``sliceflow._core.join``, ``cpp/join/``) reads each side's key columns, its other columns (the
identity a retraction is matched on) and, for a changelog, its op codes; the rows themselves
stay Arrow (:mod:`sliceflow.join.step`).

>>> import pyarrow as pa
>>> orders = pa.schema([("op", pa.string()), ("customer_id", pa.int64()), ("amount", pa.int64())])
>>> customers = pa.schema([("customer_id", pa.int64()), ("name", pa.string())])
>>> jp = build_plan(orders, customers, ["customer_id"], "left", left_op_col="op")
>>> jp.output_schema.names
['op', 'customer_id', 'amount', 'name']
>>> build_plan(customers, customers, ["customer_id"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: join: column 'name' is on both sides and not in on; rename it on one side ...
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
from sliceflow._runtime.spark_types import spark_type_name
from sliceflow._runtime.state_format import Identity, input_columns, plan_identity

__all__ = ["DEFAULT_BUNDLE_ROWS", "HOW", "JoinPlan", "build_plan", "canonical_how", "identity"]

#: Flink's ``table.exec.mini-batch.size`` in the issue's API.
DEFAULT_BUNDLE_ROWS = 5000

#: The join types, as Spark spells them (``DataFrame.join``'s ``how``), by their kernel name.
HOW: dict[str, str] = {
    "inner": "inner",
    "left": "left",
    "leftouter": "left",
    "left_outer": "left",
    "right": "right",
    "rightouter": "right",
    "right_outer": "right",
    "full": "full",
    "outer": "full",
    "fullouter": "full",
    "full_outer": "full",
}
_REFUSED = ("cross", "semi", "leftsemi", "left_semi", "anti", "leftanti", "left_anti")


def canonical_how(how: Any) -> str:
    """``how`` as ``inner``, ``left``, ``right`` or ``full`` (Spark's spellings accepted:
    ``left_outer``, ``outer``, ``full_outer``, ...); ``ValueError`` naming it otherwise.

    >>> canonical_how("FULL_OUTER")
    'full'
    """
    if not isinstance(how, str):
        raise TypeError(f"how must be a str, not {type(how).__name__}")
    key = how.lower()
    if key in HOW:
        return HOW[key]
    if key in _REFUSED:
        raise ValueError(
            f"join: how={how!r} is not supported on changelogs; supported: inner, left, right, "
            "full (and Spark's spellings left_outer, right_outer, outer, full_outer)"
        )
    raise ValueError(
        f"join: unknown how {how!r}; expected inner, left, right or full (or Spark's spellings "
        "left_outer, right_outer, outer, full_outer)"
    )


@dataclass(frozen=True)
class JoinPlan:
    """Everything the kernel and the operators need; see :func:`build_plan`."""

    #: The kernel plan (``cpp/join/plan.h``).
    plan: dict[str, Any]
    #: Each side's input columns (with its op column, when it has one).
    left_schema: pa.Schema
    right_schema: pa.Schema
    on: tuple[str, ...]
    how: str
    left_op_col: str | None
    right_op_col: str | None
    #: Each side's row: its key columns, then its other columns (the op column left out).
    left_row: pa.Schema
    right_row: pa.Schema
    #: ``op`` then the joined columns (Spark's order).
    output_schema: pa.Schema

    def side_schema(self, side: int) -> pa.Schema:
        return self.left_schema if side == 0 else self.right_schema

    def row_schema(self, side: int) -> pa.Schema:
        return self.left_row if side == 0 else self.right_row

    def op_col(self, side: int) -> str | None:
        return self.left_op_col if side == 0 else self.right_op_col

    @property
    def joined_schema(self) -> pa.Schema:
        """The output's columns without ``op``: Spark's ``L.join(R, on, how)``."""
        return self.output_schema.remove(0)


def _side_row(
    schema: pa.Schema, on: Sequence[str], op_col: str | None, side: str
) -> tuple[pa.Schema, list[str]]:
    """A side's row (keys first, then its other columns in order) and its other columns."""
    if not isinstance(schema, pa.Schema):
        raise TypeError(f"the {side} schema must be a pyarrow.Schema, not {type(schema).__name__}")
    for name in on:
        column_index(schema, name, f"join column of the {side} side")
    if op_col is not None:
        if op_col in on:
            raise ValueError(f"join: the {side} op column {op_col!r} cannot also be a join column")
        op_column_index(schema, op_col)
    others = [f.name for f in schema if f.name not in on and f.name != op_col]
    for name in others:
        t = schema.field(name).type
        if op_col is not None and (pa.types.is_nested(t) or pa.types.is_binary(t)):
            raise ValueError(
                f"join: column {name!r} of the {side} side has type {spark_type_name(t)}: over a "
                "changelog (op column) a retraction is matched on the whole row, whose columns "
                "must be BOOLEAN, numbers, DECIMAL, STRING, DATE or TIMESTAMP"
            )
    fields = [schema.field(n) for n in [*on, *others]]
    return pa.schema(fields), others


def build_plan(
    left: pa.Schema,
    right: pa.Schema,
    on: str | Sequence[str],
    how: str = "inner",
    *,
    left_op_col: str | None = None,
    right_op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
) -> JoinPlan:
    """Checks a join of rows of ``left`` and ``right`` on the columns ``on`` and derives its plan.

    Raises ``ValueError`` (``TypeError`` for an argument of the wrong Python type) naming the
    argument or column at fault: no ``on`` column, one missing on a side, a key type that
    cannot be joined on or differs between the sides, an unknown ``how``, an op column that is
    not a STRING or is a join column, a column other than the keys on both sides.
    """
    how = canonical_how(how)
    if not isinstance(mini_batch, bool):
        raise TypeError(f"mini_batch must be a bool, not {type(mini_batch).__name__}")
    positive_int(bundle_rows, "bundle_rows")
    names = grouping_columns(on)
    if not names:
        raise ValueError("join needs at least one column in on")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"on must name columns (str), not {type(name).__name__}")
    if len(set(names)) != len(names):
        raise ValueError(f"join: on names a column twice: {names}")
    left_row, left_others = _side_row(left, names, left_op_col, "left")
    right_row, right_others = _side_row(right, names, right_op_col, "right")
    for name in names:
        lt, rt = left.field(name).type, right.field(name).type
        check_key_type(name, lt)
        check_key_type(name, rt)
        if spark_type_name(lt) != spark_type_name(rt):
            raise ValueError(
                f"join: column {name!r} is {spark_type_name(lt)} on the left and "
                f"{spark_type_name(rt)} on the right; cast one side so both have the same type"
            )
    both = [n for n in left_others if n in right_others]
    if both:
        raise ValueError(
            f"join: column {both[0]!r} is on both sides and not in on; rename it on one side "
            "(withColumnRenamed) or add it to on"
        )
    keys = []
    for name in names:
        source = right if how == "right" else left
        f = source.field(name)
        keys.append(f.with_nullable(True) if how == "full" else f)
    left_fields = [
        left.field(n).with_nullable(True) if how in ("right", "full") else left.field(n)
        for n in left_others
    ]
    right_fields = [
        right.field(n).with_nullable(True) if how in ("left", "full") else right.field(n)
        for n in right_others
    ]
    output = pa.schema(
        [pa.field("op", pa.string(), nullable=False), *keys, *left_fields, *right_fields]
    )
    plan = {
        "num_keys": len(names),
        "left_identity": len(left_others),
        "right_identity": len(right_others),
        "left_retracting": left_op_col is not None,
        "right_retracting": right_op_col is not None,
        "how": how,
        "mini_batch": mini_batch,
        "bundle_rows": bundle_rows,
    }
    return JoinPlan(
        plan=plan,
        left_schema=left,
        right_schema=right,
        on=tuple(names),
        how=how,
        left_op_col=left_op_col,
        right_op_col=right_op_col,
        left_row=left_row,
        right_row=right_row,
        output_schema=output,
    )


def identity(jp: JoinPlan, buckets: int, *, state_ttl: bool = False) -> Identity:
    """The plan identity of a streaming join's state: the key types, the join type, which
    sides retract, each side's row, whether rows carry the time they arrived (``state_ttl``:
    the field is there only then, its duration is not part of it), the bucket count and the
    key and op columns by name."""
    fields = [
        ("how", jp.how),
        ("retractions", f"left {'yes' if jp.left_op_col else 'no'}, "
                        f"right {'yes' if jp.right_op_col else 'no'}"),
        ("left row", ", ".join(f"{f.name} {spark_type_name(f.type)}" for f in jp.left_row)),
        ("right row", ", ".join(f"{f.name} {spark_type_name(f.type)}" for f in jp.right_row)),
    ]  # fmt: skip
    if state_ttl:
        fields.append(("state ttl", "on"))
    columns = input_columns(jp.on)
    for side, op in (("left", jp.left_op_col), ("right", jp.right_op_col)):
        if op is not None:
            columns += f"; {side} op `{op.replace('`', '``')}`"
    return plan_identity(
        keys=[jp.left_row.field(n).type for n in jp.on],
        buckets=buckets,
        operator_fields=fields,
        columns=columns,
    )
