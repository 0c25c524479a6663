"""The plan of a window aggregation: validation, Spark's result types and the Arrow schemas.

:func:`build_plan` turns an input schema, a :class:`~sliceflow.window.WindowSpec`, the
grouping columns and the aggregates into everything both phases need
(docs/window-kernel.md): the plan ``dict`` for ``sliceflow._core.window``, which input columns
the local phase reads (keys, time, then each argument column once), and the local input,
partial and output schemas. Everything about types is decided here, on the driver, so that a
bad spec fails before any task runs.

>>> import pyarrow as pa
>>> from sliceflow import window as W
>>> schema = pa.schema([("auction", pa.int64()), ("price", pa.decimal128(10, 2)),
...                     ("ts", pa.timestamp("us", tz="UTC"))])
>>> wp = build_plan(schema, W.tumble("ts", "1 minute"), ["auction"],
...                 [W.count(), W.sum("price").alias("total")])
>>> wp.plan["aggs"]
[{'fn': 'count', 'arg': -1}, {'fn': 'sum', 'arg': 2}]
>>> wp.output_schema.field("total").type
Decimal128Type(decimal128(20, 2))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sliceflow import _core
from sliceflow.agg_plan import carried_type, core_schema, result_type
from sliceflow.aggregates import AggSpec, agg_specs
from sliceflow.spark_types import spark_type_name
from sliceflow.window_spec import WindowSpec

__all__ = ["WindowPlan", "build_plan", "plan_arguments", "result_type", "spark_type_name"]

WINDOW_COLUMNS = ("window_start", "window_end", "window_time")

#: Defaults of the local phase's bundle buffer (flush after this many rows or bytes).
DEFAULT_BUNDLE_ROWS = 200_000
DEFAULT_BUNDLE_BYTES = 64 << 20


@dataclass(frozen=True)
class WindowPlan:
    """Everything the two phases need; see :func:`build_plan`."""

    plan: dict[str, Any]
    #: The schema the plan was built for (the data the local phase reads).
    input_schema: pa.Schema
    #: For each local input column, the index of its column in ``input_schema``.
    input_indices: tuple[int, ...]
    local_schema: pa.Schema
    partial_schema: pa.Schema
    output_schema: pa.Schema

    @property
    def input_columns(self) -> list[str]:
        """The input column names the local phase reads, in local input order (a column used
        both as a key and as an argument appears twice)."""
        return [self.input_schema.field(i).name for i in self.input_indices]

    def local_batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The local input columns of ``batch`` (zero-copy but for large_string columns, which
        are cast to string). ``batch`` has ``input_schema``."""
        schema = batch.schema
        if schema is not self.input_schema and not schema.equals(self.input_schema):
            if schema.names != self.input_schema.names or schema.types != self.input_schema.types:
                raise ValueError(
                    "every batch must have the schema the window plan was built for: "
                    f"expected {self.input_schema}, got {schema}"
                )
        columns = [batch.column(i) for i in self.input_indices]
        columns = [
            c if c.type == f.type else c.cast(f.type)
            for c, f in zip(columns, self.local_schema, strict=True)
        ]
        return pa.RecordBatch.from_arrays(columns, schema=self.local_schema)


# ---------------------------------------------------------------------------------------------
# Types


def _is_signed_int(t: pa.DataType) -> bool:
    return t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())


def _is_float(t: pa.DataType) -> bool:
    return t in (pa.float32(), pa.float64())


def _is_decimal(t: pa.DataType) -> bool:
    return bool(pa.types.is_decimal128(t) and t.precision <= 38)


def _is_us_timestamp(t: pa.DataType) -> bool:
    return bool(pa.types.is_timestamp(t) and t.unit == "us")


def _is_string(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _is_comparable(t: pa.DataType) -> bool:
    """Types min/max/first_value/last_value/count_distinct take (and grouping keys)."""
    return (
        t == pa.bool_()
        or _is_signed_int(t)
        or _is_float(t)
        or _is_decimal(t)
        or _is_string(t)
        or t == pa.date32()
        or _is_us_timestamp(t)
    )


def _is_nested(t: pa.DataType) -> bool:
    return bool(pa.types.is_nested(t))


# ---------------------------------------------------------------------------------------------
# Validation and planning


def _column(schema: pa.Schema, name: str, role: str) -> int:
    if not isinstance(name, str):
        raise TypeError(f"{role} must be given by column name (a str), not {type(name).__name__}")
    indices = schema.get_all_field_indices(name)
    if not indices:
        raise ValueError(
            f"{role} {name!r} is not a column of the input (columns: {', '.join(schema.names)})"
        )
    if len(indices) > 1:
        raise ValueError(f"{role} {name!r} is ambiguous: the input has {len(indices)} such columns")
    index: int = indices[0]
    return index


def _positive_int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{what} must be a positive int, not {value!r}")
    return value


def _check_key_type(name: str, t: pa.DataType) -> None:
    if _is_comparable(t):
        return
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        why = "BINARY grouping keys are not supported"
    elif _is_nested(t):
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
    if _is_nested(t):
        raise ValueError(f"{where}; nested (ARRAY/MAP/STRUCT) columns are not supported")
    if pa.types.is_timestamp(t) and t.unit != "us":
        raise ValueError(f"{where}; timestamps must be in microseconds: cast it to timestamp[us]")
    if agg.fn == "count":
        if _is_comparable(t) or pa.types.is_binary(t):
            return
        raise ValueError(f"{where}, which count does not support")
    try:
        result_type(agg.fn, t)
    except TypeError as e:
        raise ValueError(f"{where}; {e}") from None


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
        i = _column(schema, agg.col, f"aggregate {agg.name!r}: argument")
        t = schema.field(i).type
        _check_arg_type(agg, t)
        if agg.col not in arg_local:
            arg_local[agg.col] = len(indices)
            indices.append(i)
        plan_aggs.append({"fn": agg.fn, "arg": arg_local[agg.col]})
        arg_types.append(t)
    return plan_aggs, arg_types


def build_plan(
    schema: pa.Schema,
    spec: WindowSpec,
    by: str | Sequence[str] | None,
    aggs: Sequence[AggSpec],
    *,
    ansi: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    bundle_bytes: int = DEFAULT_BUNDLE_BYTES,
) -> WindowPlan:
    """Validates a window aggregation over ``schema`` and derives its plan and schemas.

    Raises ``ValueError`` (or ``TypeError`` for arguments of the wrong Python type) with a
    message naming the column or aggregate at fault: a missing or ambiguous column, a time
    column that is not ``timestamp[us]``, a key or argument type the kernel does not support
    (BINARY keys, nested types), an output name used twice.

    >>> import pyarrow as pa
    >>> from sliceflow import window as W
    >>> s = pa.schema([("k", pa.large_string()), ("ts", pa.timestamp("us"))])
    >>> build_plan(s, W.tumble("ts", "1 hour"), "k", [W.count()]).output_schema.names
    ['window_start', 'window_end', 'window_time', 'k', 'count(1)']
    """
    if not isinstance(schema, pa.Schema):
        raise TypeError(f"schema must be a pyarrow.Schema, not {type(schema).__name__}")
    if not isinstance(spec, WindowSpec):
        raise TypeError(
            "spec must be a window spec from sliceflow.window (tumble, hop, cumulate), "
            f"not {type(spec).__name__}"
        )
    if by is None:
        by = []
    elif isinstance(by, str):
        by = [by]
    else:
        by = list(by)
    aggs = agg_specs(aggs)
    if not isinstance(ansi, bool):
        raise TypeError(f"ansi must be a bool, not {type(ansi).__name__}")
    _positive_int(bundle_rows, "bundle_rows")
    _positive_int(bundle_bytes, "bundle_bytes")

    # Output names first: a clash is the plainest mistake to report.
    out_names = [*WINDOW_COLUMNS, *by, *(a.name for a in aggs)]
    dupes = {n for n in out_names if out_names.count(n) > 1}
    if dupes:
        raise ValueError(
            f"duplicate output column name(s) {sorted(dupes)}: the output has "
            "window_start, window_end, window_time, the grouping columns and one column per "
            "aggregate; give aggregates distinct names with .alias(...)"
        )

    key_idx = [_column(schema, name, "grouping column") for name in by]
    for name, i in zip(by, key_idx, strict=True):
        _check_key_type(name, schema.field(i).type)
    time_idx = _column(schema, spec.time_col, "time column")
    time_type = schema.field(time_idx).type
    if not _is_us_timestamp(time_type):
        hint = (
            "cast it to timestamp[us]"
            if pa.types.is_timestamp(time_type)
            else "cast it to TIMESTAMP first"
        )
        raise ValueError(
            f"time column {spec.time_col!r} has type {spark_type_name(time_type)}; windows need "
            f"a TIMESTAMP or TIMESTAMP_NTZ column (Arrow timestamp[us], any zone): {hint}"
        )

    indices = [*key_idx, time_idx]
    plan_aggs, arg_types = plan_arguments(schema, aggs, indices)

    n = len(by)
    # Strings reach the kernel as string (large_string columns are cast batch by batch).
    names = [f"__k{j}" for j in range(n)] + ["__time"]
    names += [f"__v{j}" for j in range(len(indices) - n - 1)]
    local_fields = [
        schema.field(i).with_name(name).with_type(carried_type(schema.field(i).type))
        for name, i in zip(names, indices, strict=True)
    ]
    local_schema = pa.schema(local_fields)

    out_fields = [pa.field(name, time_type) for name in WINDOW_COLUMNS]
    for name, i in zip(by, key_idx, strict=True):
        f = schema.field(i)
        out_fields.append(pa.field(name, carried_type(f.type), f.nullable))
    for agg, t in zip(aggs, arg_types, strict=True):
        counted = agg.fn in ("count", "count_distinct")
        out_fields.append(pa.field(agg.name, result_type(agg.fn, t), nullable=not counted))
    output_schema = pa.schema(out_fields)

    plan = {
        "kind": spec.kind,
        "size": spec.size,
        "slide": spec.slide,
        "offset": spec.normalized_offset,
        "num_keys": n,
        "aggs": plan_aggs,
        "ansi": ansi,
        "bundle_rows": bundle_rows,
        "bundle_bytes": bundle_bytes,
    }
    # The kernels check the partial schema against the same rule (cpp/window/plan.h).
    partial_schema = core_schema(
        _core.window.partial_schema(plan, local_schema.__arrow_c_schema__())
    )
    return WindowPlan(
        plan=plan,
        input_schema=schema,
        input_indices=tuple(indices),
        local_schema=local_schema,
        partial_schema=partial_schema,
        output_schema=output_schema,
    )
