"""Flink's sliced windows (TUMBLE, HOP, CUMULATE) with Spark's types, on a C++ kernel.

Window specs and aggregate specs are plain values; :func:`aggregate` runs them on Arrow data in
this process (the kernel alone), and :func:`sliceflow.spark.window_agg` runs them on a Spark
DataFrame (a local phase before the shuffle, a global phase after it).

>>> import datetime
>>> import pyarrow as pa
>>> from sliceflow import window as W
>>> bids = pa.table({
...     "auction": [1, 1, 2],
...     "price": [10, 30, 20],
...     "ts": pa.array([datetime.datetime(2024, 1, 1, 0, m, 5) for m in (0, 0, 1)],
...                    pa.timestamp("us")),
... })
>>> out = W.aggregate(bids, W.tumble("ts", "1 minute"), ["auction"],
...                   [W.count().alias("bids"), W.max("price").alias("top")])
>>> out.select(["auction", "bids", "top"]).to_pylist()
[{'auction': 1, 'bids': 2, 'top': 30}, {'auction': 2, 'bids': 1, 'top': 20}]

Semantics (docs/window-kernel.md): windows are ``[start, end)`` aligned to the epoch plus
``offset``; ``window_time = end - 1 µs``; a window is emitted for a key when it holds at least
one row with a non-null time; rows with a null time are skipped. Result types are Spark's
(``sum`` of integers is BIGINT, ``avg`` of ``DECIMAL(p,s)`` is ``DECIMAL(p+4,s+4)``, ...).
"""

from __future__ import annotations

import builtins
import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

from sliceflow.arrow_c_data import buffer_sizes, import_struct, with_user_columns
from sliceflow.durations import DurationLike, format_duration, parse_duration

__all__ = [
    "AggSpec",
    "WindowSpec",
    "aggregate",
    "avg",
    "count",
    "count_distinct",
    "cumulate",
    "first_value",
    "hop",
    "last_value",
    "max",
    "min",
    "sum",
    "tumble",
]

WindowKind = Literal["tumble", "hop", "cumulate"]

#: Aggregate functions the kernel computes, by the name the plan uses.
AGG_FUNCTIONS = ("count", "sum", "avg", "min", "max", "count_distinct", "first_value", "last_value")

#: Defaults of the local phase's bundle buffer (flush after this many rows or bytes).
DEFAULT_BUNDLE_ROWS = 200_000
DEFAULT_BUNDLE_BYTES = 64 << 20


# ---------------------------------------------------------------------------------------------
# Window specs


@dataclass(frozen=True)
class WindowSpec:
    """A window definition: its kind, the event-time column and its durations in µs.

    Made by :func:`tumble`, :func:`hop` and :func:`cumulate`. ``size`` is the window length
    (cumulate: the max size), ``slide`` the distance between window starts (tumble: ``size``;
    cumulate: the step), ``offset`` shifts the alignment (Spark's ``startTime``).

    >>> hop("ts", "10 minutes", "5 minutes")
    WindowSpec(kind='hop', time_col='ts', size=600000000, slide=300000000, offset=0)
    """

    kind: WindowKind
    time_col: str
    size: int
    slide: int
    offset: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("tumble", "hop", "cumulate"):
            raise ValueError(f"unknown window kind {self.kind!r} (tumble, hop or cumulate)")
        if not isinstance(self.time_col, str) or not self.time_col:
            raise TypeError(f"the time column must be a column name, not {self.time_col!r}")
        for field in ("size", "slide", "offset"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{field} must be an int (µs), not {type(value).__name__}")
        size_name, slide_name = {
            "tumble": ("size", "size"),
            "hop": ("size", "slide"),
            "cumulate": ("max_size", "step"),
        }[self.kind]
        if self.size <= 0:
            raise ValueError(
                f"the window {size_name} must be positive, got {format_duration(self.size)}"
            )
        if self.slide <= 0:
            raise ValueError(
                f"the window {slide_name} must be positive, got {format_duration(self.slide)}"
            )
        if self.kind == "tumble" and self.slide != self.size:
            raise ValueError("a tumbling window slides by its size (slide must equal size)")
        if self.kind == "hop" and self.slide > self.size:
            raise ValueError(
                f"the slide ({format_duration(self.slide)}) must not be larger than the window "
                f"size ({format_duration(self.size)}), as in Spark's window()"
            )
        if self.kind == "cumulate" and self.size % self.slide != 0:
            raise ValueError(
                f"the max_size ({format_duration(self.size)}) must be a multiple of the step "
                f"({format_duration(self.slide)})"
            )

    @property
    def step(self) -> int:
        """Cumulate: the step (µs); the same as ``slide``."""
        return self.slide

    @property
    def max_size(self) -> int:
        """Cumulate: the max window size (µs); the same as ``size``."""
        return self.size

    @property
    def period(self) -> int:
        """The alignment period: only ``offset mod period`` matters (tumble: size; hop: slide;
        cumulate: max_size)."""
        return self.slide if self.kind == "hop" else self.size

    @property
    def normalized_offset(self) -> int:
        """``offset`` reduced to ``[0, period)``: the same windows."""
        return self.offset % self.period

    @property
    def slice_size(self) -> int:
        """The length of the slices windows are made of (hop: gcd(size, slide))."""
        return math.gcd(self.size, self.slide) if self.kind == "hop" else self.slide


def _check_time_col(ts: str) -> str:
    if not isinstance(ts, str):
        raise TypeError(f"the time column must be given by name (a str), not {type(ts).__name__}")
    return ts


def _offset(offset: DurationLike | None) -> int:
    return 0 if offset is None else parse_duration(offset, "offset")


def tumble(ts: str, size: DurationLike, offset: DurationLike | None = None) -> WindowSpec:
    """Tumbling windows of ``size`` on the time column ``ts``: ``[offset + k·size, + size)``.

    Durations are Spark interval strings (``"5 minutes"``, ``"1 hour 30 minutes"``) or
    ``datetime.timedelta``; ``offset`` is Spark's ``startTime`` and may be negative.

    >>> tumble("ts", "1 minute")
    WindowSpec(kind='tumble', time_col='ts', size=60000000, slide=60000000, offset=0)
    """
    n = parse_duration(size, "size")
    return WindowSpec("tumble", _check_time_col(ts), n, n, _offset(offset))


def hop(
    ts: str, size: DurationLike, slide: DurationLike, offset: DurationLike | None = None
) -> WindowSpec:
    """Hopping (sliding) windows of ``size`` every ``slide`` (``0 < slide <= size``).

    Windows start at ``offset + k·slide``. The kernel cuts time into slices of
    ``gcd(size, slide)`` and moves each window forward by retract-merge where it can.

    >>> hop("ts", size="1 day", slide="1 minute").slice_size
    60000000
    """
    return WindowSpec(
        "hop",
        _check_time_col(ts),
        parse_duration(size, "size"),
        parse_duration(slide, "slide"),
        _offset(offset),
    )


def cumulate(
    ts: str, step: DurationLike, max_size: DurationLike, offset: DurationLike | None = None
) -> WindowSpec:
    """Cumulating windows (Flink's CUMULATE): cycles of ``max_size`` that grow by ``step``.

    In a cycle starting at ``c`` the windows are ``[c, c + j·step)`` for
    ``j = 1 … max_size/step``; ``max_size`` must be a multiple of ``step``.

    >>> cumulate("ts", step="1 hour", max_size="1 day").kind
    'cumulate'
    """
    return WindowSpec(
        "cumulate",
        _check_time_col(ts),
        parse_duration(max_size, "max_size"),
        parse_duration(step, "step"),
        _offset(offset),
    )


# ---------------------------------------------------------------------------------------------
# Aggregate specs


@dataclass(frozen=True)
class AggSpec:
    """One aggregate: function, argument column (``None``: ``count(*)``) and output name.

    >>> sum("price")
    AggSpec(fn='sum', col='price', name='sum(price)')
    >>> sum("price").alias("total").name
    'total'
    """

    fn: str
    col: str | None
    name: str

    def __post_init__(self) -> None:
        if self.fn not in AGG_FUNCTIONS:
            raise ValueError(f"unknown aggregate {self.fn!r} (one of {', '.join(AGG_FUNCTIONS)})")
        if self.col is None and self.fn != "count":
            raise ValueError(f"{self.fn} needs a column")
        if self.col is not None and (not isinstance(self.col, str) or not self.col):
            raise TypeError(
                f"the argument of {self.fn} must be a column name (a non-empty str), "
                f"not {self.col!r}"
            )
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"an output name must be a non-empty string, not {self.name!r}")

    def alias(self, name: str) -> AggSpec:
        """The same aggregate with output column ``name``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"an alias must be a non-empty string, not {name!r}")
        return dataclasses.replace(self, name=name)


def _agg(fn: str, col: str, label: str | None = None) -> AggSpec:
    if not isinstance(col, str):
        raise TypeError(f"{fn} takes a column name (a str), not {type(col).__name__}")
    return AggSpec(fn, col, f"{label or fn}({col})")


def count(col: str | None = None) -> AggSpec:
    """Rows (``count()``, ``count("*")``: Spark's ``count(1)``) or non-null values of ``col``.

    >>> count().name, count("bidder").name
    ('count(1)', 'count(bidder)')
    """
    if col is None or col == "*":
        return AggSpec("count", None, "count(1)")
    return _agg("count", col)


def sum(col: str) -> AggSpec:
    """Sum of ``col``: BIGINT for integers (ANSI: overflow is an error), DOUBLE for floats,
    ``DECIMAL(min(38, p+10), s)`` for decimals; null when the window has no non-null value.

    >>> sum("price").name
    'sum(price)'
    """
    return _agg("sum", col)


def avg(col: str) -> AggSpec:
    """Mean of ``col``: DOUBLE, or ``DECIMAL(min(38, p+4), min(38, s+4))`` for decimals.

    >>> avg("price").name
    'avg(price)'
    """
    return _agg("avg", col)


def min(col: str) -> AggSpec:
    """Smallest value of ``col`` (its type; NaN is the largest float; strings bytewise).

    >>> min("price").name
    'min(price)'
    """
    return _agg("min", col)


def max(col: str) -> AggSpec:
    """Largest value of ``col`` (its type; NaN is the largest float; strings bytewise).

    >>> max("price").name
    'max(price)'
    """
    return _agg("max", col)


def count_distinct(col: str) -> AggSpec:
    """Number of distinct non-null values of ``col`` (0 when there are none).

    >>> count_distinct("bidder").name
    'count(DISTINCT bidder)'
    """
    if not isinstance(col, str):
        raise TypeError(f"count_distinct takes a column name (a str), not {type(col).__name__}")
    return AggSpec("count_distinct", col, f"count(DISTINCT {col})")


def first_value(col: str) -> AggSpec:
    """The non-null value of ``col`` with the smallest event time (ties: the smallest value).

    >>> first_value("price").name
    'first_value(price)'
    """
    return _agg("first_value", col)


def last_value(col: str) -> AggSpec:
    """The non-null value of ``col`` with the largest event time (ties: the largest value).

    >>> last_value("price").name
    'last_value(price)'
    """
    return _agg("last_value", col)


# ---------------------------------------------------------------------------------------------
# The kernel on Arrow data


def _kernel() -> Any:
    from sliceflow import _core

    try:
        return _core.window
    except AttributeError:  # pragma: no cover - a build without the window kernel
        raise ImportError(
            "this build of sliceflow._core has no window kernel; rebuild sliceflow"
        ) from None


def _import_batch(struct_type: pa.DataType, capsule: Any) -> pa.RecordBatch:
    return pa.RecordBatch.from_struct_array(import_struct(struct_type, capsule))


def _add_stats(into: MutableMapping[str, int], counters: Mapping[str, int]) -> None:
    for name, value in counters.items():
        into[name] = into.get(name, 0) + int(value)


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with exactly ``schema``'s field names and types (cast where they differ:
    list child names, string vs large_string, a timestamp's zone). No copy when equal."""
    if batch.schema.equals(schema):
        return batch
    if batch.num_columns != len(schema):
        raise ValueError(f"expected {len(schema)} columns, got {batch.num_columns}")
    columns = [
        column if column.type == field.type else column.cast(field.type)
        for column, field in zip(batch.columns, schema, strict=True)
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _local_phase(
    wp: Any, batches: Iterable[pa.RecordBatch], stats: MutableMapping[str, int] | None = None
) -> Iterator[pa.RecordBatch]:
    """Input batches → partial batches (the local phase, on one partition)."""
    agg = _kernel().LocalAggregator(
        wp.plan, wp.local_schema.__arrow_c_schema__(), wp.partial_schema.__arrow_c_schema__()
    )
    struct_type = pa.struct(list(wp.partial_schema))
    for batch in batches:
        local = wp.local_batch(batch)
        if local.num_rows == 0:
            continue
        try:
            flushed = agg.add(*local.__arrow_c_array__(), buffer_sizes=buffer_sizes(local))
        except ValueError as e:
            raise with_user_columns(e, wp.local_schema.names, wp.input_columns) from e
        if flushed:
            while (capsule := agg.take()) is not None:
                yield _import_batch(struct_type, capsule)
    capsule = agg.finish()
    if capsule is not None:
        yield _import_batch(struct_type, capsule)
    if stats is not None:
        _add_stats(stats, agg.stats())


def _global_phase(
    wp: Any,
    batches: Iterable[pa.RecordBatch],
    stats: MutableMapping[str, int] | None = None,
    max_output_rows: int = 65536,
) -> Iterator[pa.RecordBatch]:
    """Partial batches sorted by (``__key``, ``__slice``) → output batches (one partition)."""
    agg = _kernel().GlobalAggregator(
        wp.plan,
        wp.partial_schema.__arrow_c_schema__(),
        wp.output_schema.__arrow_c_schema__(),
        max_output_rows,
    )
    struct_type = pa.struct(list(wp.output_schema))
    for batch in batches:
        if batch.num_rows == 0:
            continue
        partial = conform(batch, wp.partial_schema)
        agg.add(*partial.__arrow_c_array__(), buffer_sizes=buffer_sizes(partial))
        while (capsule := agg.pull()) is not None:
            yield _import_batch(struct_type, capsule)
    agg.finish()
    while (capsule := agg.pull()) is not None:
        yield _import_batch(struct_type, capsule)
    if stats is not None:
        _add_stats(stats, agg.stats())


#: aggregate()'s bundle limits when none are given: the whole input (it is in memory already).
_UNBOUNDED_BUNDLE = 1 << 62

ArrowData = pa.Table | pa.RecordBatch | pa.RecordBatchReader | Iterable[pa.RecordBatch]


def _schema_and_batches(data: ArrowData) -> tuple[pa.Schema, Iterable[pa.RecordBatch]]:
    if isinstance(data, pa.Table):
        return data.schema, data.to_batches()
    if isinstance(data, pa.RecordBatch):
        return data.schema, [data]
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, data
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise TypeError(
            "data must be a pyarrow Table, RecordBatch, RecordBatchReader or an iterable of "
            f"RecordBatches, not {type(data).__name__}"
        )
    iterator = iter(data)
    first = next(iterator, None)
    if first is None:
        raise ValueError("data has no record batches (no schema to plan with)")
    if not isinstance(first, pa.RecordBatch):
        raise TypeError(f"data must yield pyarrow RecordBatches, not {type(first).__name__}")

    def chained() -> Iterator[pa.RecordBatch]:
        yield first
        yield from iterator

    return first.schema, chained()


def aggregate(
    data: ArrowData,
    spec: WindowSpec,
    by: str | Sequence[str] | None,
    aggs: Sequence[AggSpec],
    *,
    ansi: bool = True,
    bundle_rows: int | None = None,
    bundle_bytes: int | None = None,
    stats: MutableMapping[str, int] | None = None,
) -> pa.Table:
    """Windowed aggregation of Arrow data in this process: the C++ kernel alone, no Spark.

    Runs both phases as :func:`sliceflow.spark.window_agg` does on a cluster: the local
    aggregator over every batch, the partial rows grouped by key and sorted by slice, then the
    global aggregator. With one bundle (the default) the local phase writes its partial rows
    already in that order; when the bundle flushes more than once, pyarrow sorts them.

    Args:
        data: a pyarrow ``Table``, ``RecordBatch``, ``RecordBatchReader`` or an iterable of
            ``RecordBatch`` (all of one schema). The time column is ``timestamp[us]`` (with or
            without a time zone).
        spec: the window (:func:`tumble`, :func:`hop`, :func:`cumulate`).
        by: the grouping column(s); ``None`` or ``[]`` for one group.
        aggs: the aggregates (:func:`count`, :func:`sum`, ...), in output order.
        ansi: Spark's ``spark.sql.ansi.enabled``: integer/decimal sum overflow raises
            ``OverflowError`` (``[ARITHMETIC_OVERFLOW] ...``) instead of wrapping / null.
        bundle_rows, bundle_bytes: the local bundle buffer flushes after this many input rows
            or bytes (default: one bundle for the whole input, which is in memory already: the
            bundle holds at most one partial row per input row).
        stats: a dict to which the kernel's counters are added (``rows_in``,
            ``rows_null_time``, ``partials_out``, ``windows_fired``, ``slices_retracted``, ...).

    Returns:
        A Table: ``window_start``, ``window_end``, ``window_time`` (the time column's type), the
        ``by`` columns, then one column per aggregate. Rows are grouped by key, and within a
        key ordered by window end, then start.

    Example:
        >>> import pyarrow as pa
        >>> t = pa.table({"k": ["a", "a", "b"], "v": [1, 2, 3],
        ...               "ts": pa.array([0, 30_000_000, 90_000_000], pa.timestamp("us"))})
        >>> out = aggregate(t, tumble("ts", "1 minute"), "k", [sum("v")])
        >>> out.select(["k", "sum(v)"]).to_pylist()
        [{'k': 'a', 'sum(v)': 3}, {'k': 'b', 'sum(v)': 3}]
    """
    from sliceflow.window_plan import build_plan

    schema, batches = _schema_and_batches(data)
    one_bundle = bundle_rows is None
    rows = _UNBOUNDED_BUNDLE if bundle_rows is None else bundle_rows
    size = _UNBOUNDED_BUNDLE if bundle_bytes is None else bundle_bytes
    wp = build_plan(schema, spec, by, aggs, ansi=ansi, bundle_rows=rows, bundle_bytes=size)
    wp.plan["sort_partials"] = True
    flushed = list(_local_phase(wp, batches, stats))
    partials = pa.Table.from_batches(flushed, wp.partial_schema)
    if len(flushed) > 1:
        partials = partials.sort_by([("__key", "ascending"), ("__slice", "ascending")])
    chunk = DEFAULT_BUNDLE_ROWS if one_bundle else builtins.max(1, rows)
    outputs = list(_global_phase(wp, partials.to_batches(max_chunksize=chunk), stats))
    return pa.Table.from_batches(outputs, wp.output_schema)
