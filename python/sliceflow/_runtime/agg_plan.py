"""What every operator's plan (sliceflow.window.plan, changelog_plan) builds the same way:
column lookup, grouping-key and argument checks, the kernel's input schema, the output's key
and aggregate columns, and the aggregates' type rules. Spark's result types and the kernels'
state schemas are asked of the C++ core (``cpp/agg/state_schema.h``), so that the plans, the
kernels that check the schemas they are given, and the fuzzers share one rule.

>>> import pyarrow as pa
>>> result_type("avg", pa.decimal128(10, 2))
Decimal128Type(decimal128(14, 6))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from sliceflow._core import agg as agg_kernel
from sliceflow._runtime.change_kinds import is_op_type, op_type_error
from sliceflow._runtime.spark_types import spark_type_name
from sliceflow.aggregates import AggSpec

__all__ = [
    "DEFAULT_BUCKETS",
    "carried_type",
    "check_key_type",
    "check_output_names",
    "INTERNAL_PREFIX",
    "column_index",
    "column_name",
    "core_schema",
    "grouping_columns",
    "is_comparable",
    "is_us_timestamp",
    "kernel_input_schema",
    "key_columns",
    "output_fields",
    "plan_arguments",
    "positive_int",
    "result_type",
    "visible_names",
]

#: State-store buckets of a streaming operator that is given none (part of its checkpoint).
DEFAULT_BUCKETS = 8


class _SchemaCapsule:
    """An ``arrow_schema`` capsule from the core, for pyarrow's PyCapsule import (once)."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __arrow_c_schema__(self) -> Any:
        return self._capsule


def core_schema(capsule: Any) -> pa.Schema:
    """The schema that the core exported as ``capsule`` (an ``arrow_schema`` struct)."""
    return pa.schema(_SchemaCapsule(capsule))


def carried_type(t: pa.DataType) -> pa.DataType:
    """How a value of type ``t`` travels in partials and comes out (large_string → string)."""
    return pa.string() if pa.types.is_large_string(t) else t


def result_type(fn: str, t: pa.DataType | None) -> pa.DataType:
    """The result type of aggregate ``fn`` over an argument of Arrow type ``t`` (Spark's rules,
    cpp/agg/state_schema.h; ``t`` is None for count(*)).

    Raises ``TypeError`` when Spark or the kernel has no such aggregate, ``ValueError`` for an
    unknown ``fn``.

    >>> result_type("sum", pa.int32())
    DataType(int64)
    >>> result_type("min", pa.large_string())
    DataType(string)
    """
    capsule = None if t is None else carried_type(t).__arrow_c_schema__()
    return core_schema(agg_kernel.result_type(fn, capsule)).field(0).type


# ---------------------------------------------------------------------------------------------
# Argument and key types (what the kernels read)


def _is_signed_int(t: pa.DataType) -> bool:
    return t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())


def _is_float(t: pa.DataType) -> bool:
    return t in (pa.float32(), pa.float64())


def _is_decimal(t: pa.DataType) -> bool:
    return bool(pa.types.is_decimal128(t) and t.precision <= 38)


def is_us_timestamp(t: pa.DataType) -> bool:
    """Spark's TIMESTAMP / TIMESTAMP_NTZ in Arrow: ``timestamp[us]``, any zone."""
    return bool(pa.types.is_timestamp(t) and t.unit == "us")


def _is_string(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def is_comparable(t: pa.DataType) -> bool:
    """Types min/max/first_value/last_value/count_distinct take (and grouping keys)."""
    return (
        t == pa.bool_()
        or _is_signed_int(t)
        or _is_float(t)
        or _is_decimal(t)
        or _is_string(t)
        or t == pa.date32()
        or is_us_timestamp(t)
    )


def check_key_type(name: str, t: pa.DataType) -> None:
    """Raises ``ValueError`` naming grouping column ``name`` unless its type ``t`` can be a key."""
    if is_comparable(t):
        return
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        why = "BINARY grouping keys are not supported"
    elif pa.types.is_nested(t):
        why = "nested (ARRAY/MAP/STRUCT) grouping keys are not supported"
    elif pa.types.is_timestamp(t):
        why = "timestamps must be in microseconds (Spark's TIMESTAMP); cast it to timestamp[us]"
    else:
        why = (
            "supported key types: BOOLEAN, integers, FLOAT, DOUBLE, DECIMAL, STRING, DATE, "
            "TIMESTAMP"
        )
    raise ValueError(f"grouping column {name!r} has type {spark_type_name(t)}: {why}")


def _check_arg_type(agg: AggSpec, t: pa.DataType) -> None:
    where = f"aggregate {agg.name!r}: column {agg.col!r} has type {spark_type_name(t)}"
    if pa.types.is_nested(t):
        raise ValueError(f"{where}; nested (ARRAY/MAP/STRUCT) columns are not supported")
    if pa.types.is_timestamp(t) and t.unit != "us":
        raise ValueError(f"{where}; timestamps must be in microseconds: cast it to timestamp[us]")
    if agg.fn == "count":
        if is_comparable(t) or pa.types.is_binary(t):
            return
        raise ValueError(f"{where}, which count does not support")
    try:
        result_type(agg.fn, t)
    except TypeError as e:
        raise ValueError(f"{where}; {e}") from None


# ---------------------------------------------------------------------------------------------
# The parts of a plan every operator builds the same way


#: The prefix of the columns sliceflow adds to a query (``__sliceflow_seq``, ...): never listed
#: among the input's columns in an error.
INTERNAL_PREFIX = "__sliceflow"


def visible_names(schema: pa.Schema) -> list[str]:
    """The names of ``schema``'s columns that a user sees (not sliceflow's own).

    >>> visible_names(pa.schema([("id", pa.int64()), ("__sliceflow_seq", pa.int64())]))
    ['id']
    """
    return [n for n in schema.names if not n.startswith(INTERNAL_PREFIX)]


def column_name(name: object, role: str) -> str:
    """``name`` if it is a str; a ``TypeError`` naming the ``role`` otherwise (the in-process
    entry points take column names only)."""
    if not isinstance(name, str):
        raise TypeError(f"{role} must be given by column name (a str), not {type(name).__name__}")
    return name


def column_index(schema: pa.Schema, name: object, role: str) -> int:
    """The index of column ``name`` in ``schema``; errors name the ``role`` ("grouping
    column") and the column: not a str, missing, or ambiguous."""
    name = column_name(name, role)
    indices = schema.get_all_field_indices(name)
    if not indices:
        raise ValueError(
            f"{role} {name!r} is not a column of the input "
            f"(columns: {', '.join(visible_names(schema))})"
        )
    if len(indices) > 1:
        raise ValueError(f"{role} {name!r} is ambiguous: the input has {len(indices)} such columns")
    return int(indices[0])


def op_column_index(schema: pa.Schema, op_col: str) -> int:
    """The index of the op column ``op_col`` (a STRING column of ``+I``/``-U``/``+U``/``-D``);
    ``ValueError`` naming it when it is missing or not a STRING."""
    i = column_index(schema, op_col, "op column")
    if not is_op_type(schema.field(i).type):
        raise op_type_error(op_col, schema.field(i).type)
    return i


def positive_int(value: Any, what: str) -> int:
    """``value`` if it is a positive int (not a bool); ``ValueError`` naming ``what`` otherwise."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{what} must be a positive int, not {value!r}")
    return value


def grouping_columns(by: str | Sequence[str] | None) -> list[str]:
    """The grouping column names: None → none, one name → a list of one."""
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    return list(by)


def check_output_names(leading: Sequence[str], by: Sequence[str], aggs: Sequence[AggSpec]) -> None:
    """``ValueError`` when the output (``leading`` columns, the keys, an aggregate each) would
    name two columns alike."""
    names = [*leading, *by, *(a.name for a in aggs)]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ValueError(
            f"duplicate output column name(s) {sorted(dupes)}: the output has "
            f"{', '.join(leading)}, the grouping columns and one column per aggregate; give "
            "aggregates distinct names with .alias(...)"
        )


def key_columns(schema: pa.Schema, by: Sequence[str]) -> list[int]:
    """The indices of the grouping columns ``by``, each checked to be a key type."""
    indices = [column_index(schema, name, "grouping column") for name in by]
    for name, i in zip(by, indices, strict=True):
        check_key_type(name, schema.field(i).type)
    return indices


def plan_arguments(
    schema: pa.Schema, aggs: Sequence[AggSpec], indices: list[int]
) -> tuple[list[dict[str, Any]], list[pa.DataType | None]]:
    """Checks every aggregate's argument column and appends each column once to ``indices``
    (the kernel's input columns). Returns the plan's aggregate entries (``fn`` and ``arg``,
    the argument's kernel input column or -1) and the argument types (None for count(*))."""
    arg_local: dict[str, int] = {}
    plan_aggs: list[dict[str, Any]] = []
    arg_types: list[pa.DataType | None] = []
    for agg in aggs:
        if agg.col is None:
            plan_aggs.append({"fn": agg.fn, "arg": -1})
            arg_types.append(None)
            continue
        role = f"aggregate {agg.name!r}: argument"
        col = column_name(agg.col, role)
        i = column_index(schema, col, role)
        t = schema.field(i).type
        _check_arg_type(agg, t)
        if col not in arg_local:
            arg_local[col] = len(indices)
            indices.append(i)
        plan_aggs.append({"fn": agg.fn, "arg": arg_local[col]})
        arg_types.append(t)
    return plan_aggs, arg_types


def kernel_input_schema(
    schema: pa.Schema, indices: Sequence[int], names: Sequence[str]
) -> pa.Schema:
    """The kernel's input: column ``indices[j]`` of ``schema`` named ``names[j]``, strings as
    string (large_string columns are cast batch by batch)."""
    return pa.schema(
        [
            schema.field(i).with_name(name).with_type(carried_type(schema.field(i).type))
            for name, i in zip(names, indices, strict=True)
        ]
    )


def output_fields(
    schema: pa.Schema,
    by: Sequence[str],
    key_indices: Sequence[int],
    aggs: Sequence[AggSpec],
    arg_types: Sequence[pa.DataType | None],
) -> list[pa.Field]:
    """The output's key columns (their input types, carried) and one column per aggregate (its
    result type; not null for count and count_distinct)."""
    fields = []
    for name, i in zip(by, key_indices, strict=True):
        f = schema.field(i)
        fields.append(pa.field(name, carried_type(f.type), f.nullable))
    for agg, t in zip(aggs, arg_types, strict=True):
        counted = agg.fn in ("count", "count_distinct")
        fields.append(pa.field(agg.name, result_type(agg.fn, t), nullable=not counted))
    return fields
