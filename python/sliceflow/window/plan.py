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

from sliceflow._core import window as window_kernel
from sliceflow._runtime.agg_plan import (
    check_output_names,
    column_index,
    core_schema,
    grouping_columns,
    is_us_timestamp,
    kernel_input_schema,
    key_columns,
    output_fields,
    plan_arguments,
    positive_int,
    result_type,
)
from sliceflow._runtime.spark_types import spark_type_name
from sliceflow._runtime.state_format import (
    Identity,
    aggregate_arguments,
    aggregate_types,
    input_columns,
    plan_identity,
)
from sliceflow.aggregates import AggSpec, agg_specs
from sliceflow.window.spec import WindowSpec

# result_type is sliceflow._runtime.agg_plan's, kept importable from here.
__all__ = ["WindowPlan", "build_plan", "identity", "result_type", "spark_type_name"]

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
    by = grouping_columns(by)
    aggs = agg_specs(aggs)
    if not isinstance(ansi, bool):
        raise TypeError(f"ansi must be a bool, not {type(ansi).__name__}")
    positive_int(bundle_rows, "bundle_rows")
    positive_int(bundle_bytes, "bundle_bytes")

    # Output names first: a clash is the plainest mistake to report.
    check_output_names(WINDOW_COLUMNS, by, aggs)

    key_idx = key_columns(schema, by)
    time_idx = column_index(schema, spec.time_col, "time column")
    time_type = schema.field(time_idx).type
    if not is_us_timestamp(time_type):
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
    names = [f"__k{j}" for j in range(n)] + ["__time"]
    names += [f"__v{j}" for j in range(len(indices) - n - 1)]
    local_schema = kernel_input_schema(schema, indices, names)
    output_schema = pa.schema(
        [pa.field(name, time_type) for name in WINDOW_COLUMNS]
        + output_fields(schema, by, key_idx, aggs, arg_types)
    )

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
        window_kernel.partial_schema(plan, local_schema.__arrow_c_schema__())
    )
    return WindowPlan(
        plan=plan,
        input_schema=schema,
        input_indices=tuple(indices),
        local_schema=local_schema,
        partial_schema=partial_schema,
        output_schema=output_schema,
    )


def identity(wp: WindowPlan, emit: str, buckets: int) -> Identity:
    """The plan identity of a streaming ``window_agg``'s state: the keys and aggregates, the
    window (kind, size, slide and offset in microseconds), the time column's type, the emit
    mode, the bucket count, ANSI mode and the key, time and argument columns by name."""
    plan = wp.plan
    n = plan["num_keys"]
    keys = [wp.local_schema.field(i).type for i in range(n)]
    names = [wp.input_schema.field(i).name for i in wp.input_indices]
    window = (
        f"{plan['kind']}(size={plan['size']}us, slide={plan['slide']}us, offset={plan['offset']}us)"
    )
    time_type = spark_type_name(wp.local_schema.field(plan["num_keys"]).type)
    return plan_identity(
        keys=keys,
        aggregates=aggregate_types(plan, wp.local_schema),
        buckets=buckets,
        ansi=plan["ansi"],
        operator_fields=[("window", window), ("time", time_type), ("emit", emit)],
        columns=input_columns(names[:n], time=names[n], arguments=aggregate_arguments(plan, names)),
    )
