"""A brute-force reference for sliceflow's windowed aggregation (docs/window-kernel.md).

Deliberately naive: every row with a non-null time is put into every window that contains it,
enumerated straight from the window definitions (no slices, no partial aggregates), and each
aggregate is computed from the raw values of its (key, window) group with Python integers,
``Fraction`` and ``Decimal`` (exact), following Spark's result types and null rules. It is meant
for tests: slow, but obviously correct.

>>> import pyarrow as pa
>>> t = pa.table({"k": ["a", "a", "b"], "ts": pa.array([0, 90, 30], pa.timestamp("us")),
...               "v": [1, 2, 3]})
>>> out = reference_aggregate(t, "ts", RefWindow("tumble", 60), ["k"],
...                           [RefAgg("sum", "v", "s")])
>>> [(r["window_start"].second, r["k"], r["s"]) for r in out.to_pylist()]
[(0, 'a', 1), (0, 'a', 2), (0, 'b', 3)]
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pyarrow as pa

from sliceflow.testing.reference_values import (
    decimal_from_unscaled,
    decimal_unscaled,
    equality_class,
    key_value_shown,
    null_first_order,
    plain_values,
    round_half_up,
    to_arrow,
    value_order,
)

__all__ = [
    "RefAgg",
    "RefWindow",
    "aggregate_group",
    "assert_tables_equal",
    "canonical_rows",
    "micros",
    "output_schema",
    "reference_aggregate",
    "result_type",
    "row_order",
    "windows_of",
]

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
FNS = ("count", "sum", "avg", "min", "max", "count_distinct", "first_value", "last_value")


def micros(d: int | _dt.timedelta) -> int:
    """A duration in microseconds (an ``int`` is taken as microseconds already)."""
    if isinstance(d, _dt.timedelta):
        return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds
    return int(d)


@dataclass(frozen=True)
class RefWindow:
    """A window kind with its durations in microseconds.

    ``tumble``: ``size`` (``slide`` is ignored, taken as ``size``); ``hop``: ``size`` and
    ``slide``; ``cumulate``: ``size`` is the max size and ``slide`` the step.
    """

    kind: str
    size: int
    slide: int | None = None
    offset: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("tumble", "hop", "cumulate"):
            raise ValueError(f"unknown window kind {self.kind!r}")
        size, slide = micros(self.size), micros(self.slide if self.slide is not None else self.size)
        object.__setattr__(self, "size", size)
        slide = size if self.kind == "tumble" else slide
        object.__setattr__(self, "slide", slide)
        object.__setattr__(self, "offset", micros(self.offset))
        if size <= 0 or slide <= 0 or slide > size:
            raise ValueError(f"bad window durations: {self}")
        if self.kind == "cumulate" and size % slide:
            raise ValueError(f"cumulate: max size is not a multiple of the step: {self}")


@dataclass(frozen=True)
class RefAgg:
    """One aggregate: ``fn`` (one of :data:`FNS`), its argument column (``None``: count(*)),
    and the output column name."""

    fn: str
    column: str | None
    name: str

    def __post_init__(self) -> None:
        if self.fn not in FNS:
            raise ValueError(f"unknown aggregate {self.fn!r}")
        if self.column is None and self.fn != "count":
            raise ValueError(f"{self.fn} needs a column")


# ---------------------------------------------------------------------------------------------
# Windows


def windows_of(ts: int, w: RefWindow) -> list[tuple[int, int]]:
    """Every window ``(start, end)`` that contains the instant ``ts`` (µs), in start order."""
    out: list[tuple[int, int]] = []
    slide = w.slide
    assert slide is not None  # __post_init__ sets it (to size for tumble)
    if w.kind in ("tumble", "hop"):
        # starts offset + k*slide with start <= ts < start + size
        k = (ts - w.offset - w.size) // slide
        while True:
            start = w.offset + k * slide
            if start > ts:
                break
            if start <= ts < start + w.size:
                out.append((start, start + w.size))
            k += 1
        return out
    cycle = w.offset + ((ts - w.offset) // w.size) * w.size
    assert cycle <= ts < cycle + w.size
    for j in range(1, w.size // slide + 1):
        end = cycle + j * slide
        if end > ts:
            out.append((cycle, end))
    return out


# ---------------------------------------------------------------------------------------------
# Types


def _is_int(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t))


def _is_float(t: pa.DataType) -> bool:
    return bool(pa.types.is_floating(t))


def _is_decimal(t: pa.DataType) -> bool:
    return bool(pa.types.is_decimal(t))


def _comparable(t: pa.DataType) -> bool:
    return (
        pa.types.is_boolean(t)
        or _is_int(t)
        or _is_float(t)
        or _is_decimal(t)
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_date32(t)
        or pa.types.is_timestamp(t)
    )


def result_type(fn: str, t: pa.DataType | None) -> pa.DataType:
    """The result type of aggregate ``fn`` over an argument of type ``t`` (Spark's rules)."""
    if fn in ("count", "count_distinct"):
        if fn == "count_distinct" and not _comparable(t):
            raise TypeError(f"{fn} of {t}")
        return pa.int64()
    if t is None:  # only count takes no argument
        raise TypeError(f"{fn} needs an argument")
    if fn == "sum":
        if _is_int(t):
            return pa.int64()
        if _is_float(t):
            return pa.float64()
        if _is_decimal(t):
            return pa.decimal128(min(38, t.precision + 10), t.scale)
    elif fn == "avg":
        if _is_int(t) or _is_float(t):
            return pa.float64()
        if _is_decimal(t):
            return pa.decimal128(min(38, t.precision + 4), min(38, t.scale + 4))
    elif _comparable(t):
        return t
    raise TypeError(f"{fn} of {t}")


# ---------------------------------------------------------------------------------------------
# Aggregates


def _float_sum(vals: list[float]) -> float:
    if any(math.isnan(v) for v in vals):
        return math.nan
    pos = any(v == math.inf for v in vals)
    neg = any(v == -math.inf for v in vals)
    if pos and neg:
        return math.nan
    if pos:
        return math.inf
    if neg:
        return -math.inf
    return float(sum((Fraction(v) for v in vals), Fraction(0)))


class _Overflow(OverflowError):
    pass


def aggregate_group(fn: str, t: pa.DataType | None, rows: list[tuple[int, Any]], ansi: bool) -> Any:
    """One aggregate over the ``(time, value)`` pairs of a group (value None for count(*))."""
    if fn == "count":
        return len(rows) if t is None else sum(1 for _, v in rows if v is not None)
    assert t is not None  # only count(*) has no argument
    vals = [v for _, v in rows if v is not None]
    if fn == "count_distinct":
        return len({equality_class(v) for v in vals})
    if not vals:
        return None
    if fn == "sum":
        if _is_int(t):
            s: int = sum(vals)
            if INT64_MIN <= s <= INT64_MAX:
                return s
            if ansi:
                raise _Overflow(f"[ARITHMETIC_OVERFLOW] sum {s} overflows bigint")
            return (s + (1 << 63)) % (1 << 64) - (1 << 63)
        if _is_float(t):
            return _float_sum(vals)
        rt = result_type("sum", t)
        s = sum(decimal_unscaled(v, t.scale) for v in vals)
        if abs(s) >= 10**rt.precision:
            if ansi:
                raise _Overflow(f"[ARITHMETIC_OVERFLOW] decimal sum overflows {rt}")
            return None
        return decimal_from_unscaled(s, t.scale)
    if fn == "avg":
        if _is_int(t):
            return float(Fraction(sum(vals), len(vals)))
        if _is_float(t):
            return _float_sum(vals) / len(vals)
        rt = result_type("avg", t)
        st = result_type("sum", t)
        s = sum(decimal_unscaled(v, t.scale) for v in vals)
        if abs(s) >= 10**st.precision:
            if ansi:
                raise _Overflow(f"[ARITHMETIC_OVERFLOW] decimal sum overflows {st}")
            return None
        u = round_half_up(Fraction(s, len(vals) * 10**t.scale), rt.scale)
        if abs(u) >= 10**rt.precision:
            if ansi:
                raise _Overflow(f"[ARITHMETIC_OVERFLOW] decimal avg overflows {rt}")
            return None
        return decimal_from_unscaled(u, rt.scale)
    if fn == "min":
        return min(vals, key=value_order)
    if fn == "max":
        return max(vals, key=value_order)
    timed = [(ts, v) for ts, v in rows if v is not None]
    if fn == "first_value":
        return min(timed, key=lambda p: (p[0], value_order(p[1])))[1]
    if fn == "last_value":
        return max(timed, key=lambda p: (p[0], value_order(p[1])))[1]
    raise ValueError(fn)


# ---------------------------------------------------------------------------------------------
# The reference


def output_schema(
    schema: pa.Schema, time: str, by: Sequence[str], aggs: Sequence[RefAgg]
) -> pa.Schema:
    tt = schema.field(time).type
    fields = [pa.field(n, tt) for n in ("window_start", "window_end", "window_time")]
    fields += [pa.field(k, schema.field(k).type) for k in by]
    for a in aggs:
        at = None if a.column is None else schema.field(a.column).type
        fields.append(pa.field(a.name, result_type(a.fn, at)))
    return pa.schema(fields)


def reference_aggregate(
    table: pa.Table | pa.RecordBatch,
    time: str,
    window: RefWindow,
    by: Sequence[str],
    aggs: Sequence[RefAgg],
    *,
    ansi: bool = True,
) -> pa.Table:
    """Windowed aggregation by brute force: the expected output, sorted canonically.

    Raises ``OverflowError`` (message ``[ARITHMETIC_OVERFLOW] ...``) where ANSI mode fails.
    """
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    by = list(by)
    schema = output_schema(table.schema, time, by, aggs)
    times = plain_values(table.column(time))
    keys = [plain_values(table.column(k)) for k in by]
    args = [None if a.column is None else plain_values(table.column(a.column)) for a in aggs]
    arg_types = [None if a.column is None else table.schema.field(a.column).type for a in aggs]

    groups: dict[tuple[Any, ...], list[int]] = {}
    shown: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for i, ts in enumerate(times):
        if ts is None:
            continue
        raw = tuple(col[i] for col in keys)
        norm = tuple(equality_class(v) for v in raw)
        shown.setdefault(norm, tuple(key_value_shown(v) for v in raw))
        for w in windows_of(ts, window):
            groups.setdefault((norm, w), []).append(i)

    rows = []
    for (norm, (start, end)), idx in groups.items():
        values = []
        for a, col, at in zip(aggs, args, arg_types, strict=True):
            pairs = [(times[i], None if col is None else col[i]) for i in idx]
            values.append(aggregate_group(a.fn, at, pairs, ansi))
        rows.append((start, end, end - 1, *shown[norm], *values))
    rows.sort(key=lambda r: row_order(r, len(by)))
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    arrays = [to_arrow(list(c), f.type) for c, f in zip(columns, schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


def row_order(row: Sequence[Any], num_keys: int) -> tuple[Any, ...]:
    """Canonical order: by key (nulls first, NaN last), then window end, then start."""
    keys = tuple(null_first_order(v) for v in row[3 : 3 + num_keys])
    return (keys, row[1], row[0])


# ---------------------------------------------------------------------------------------------
# Comparison


def canonical_rows(table: pa.Table, by: Sequence[str]) -> list[tuple[Any, ...]]:
    """The table's rows as tuples (dates and timestamps as integers), in canonical order."""
    cols = [plain_values(table.column(i)) for i in range(table.num_columns)]
    rows = list(zip(*cols, strict=True)) if cols else []
    rows.sort(key=lambda r: row_order(r, len(by)))
    return rows


def _same(a: Any, b: Any, rel: float, strict_zero: bool) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if strict_zero and a == 0 == b:
            return math.copysign(1, a) == math.copysign(1, b)
        return a == b or math.isclose(a, b, rel_tol=rel, abs_tol=0.0)
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return Decimal(a) == Decimal(b)
    return type(a) is type(b) and a == b


def assert_tables_equal(
    got: pa.Table,
    expected: pa.Table,
    by: Sequence[str],
    *,
    rel: float = 1e-9,
    inexact: Iterable[str] = (),
    check_schema: bool = True,
) -> None:
    """Asserts that ``got`` holds the rows of ``expected`` in any order.

    Columns named in ``inexact`` (floating sums and averages, whose value depends on the order
    of addition) compare with relative tolerance ``rel``; other floats compare exactly, with
    ``-0.0 == 0.0`` except in the key columns (keys must come out normalised: ``0.0``).
    """
    if isinstance(got, pa.RecordBatch):
        got = pa.Table.from_batches([got])
    if check_schema:
        assert got.schema.names == expected.schema.names, (got.schema, expected.schema)
        assert got.schema.types == expected.schema.types, (got.schema, expected.schema)
    else:
        assert got.num_columns == expected.num_columns, (got.schema, expected.schema)
    inexact = set(inexact)
    names = expected.schema.names
    g, e = canonical_rows(got, by), canonical_rows(expected, by)
    key_cols = set(range(3, 3 + len(by)))
    problems = []
    gi = ei = 0
    # Walk both sorted lists: rows whose (key, window) is on one side only are reported too.
    while gi < len(g) or ei < len(e):
        gr = g[gi] if gi < len(g) else None
        er = e[ei] if ei < len(e) else None
        if er is None or (gr is not None and row_order(gr, len(by)) < row_order(er, len(by))):
            problems.append(f"unexpected row {gr}")
            gi += 1
            continue
        if gr is None or row_order(er, len(by)) < row_order(gr, len(by)):
            problems.append(f"missing row {er}")
            ei += 1
            continue
        for c, (a, b) in enumerate(zip(gr, er, strict=True)):
            rel_c = rel if names[c] in inexact else 0.0
            if not _same(a, b, rel_c, c in key_cols):
                problems.append(f"column {names[c]}: got {a!r}, expected {b!r} in row {er}")
        gi += 1
        ei += 1
    if problems:
        head = "\n".join(problems[:20])
        raise AssertionError(
            f"{len(problems)} differences ({len(g)} rows, expected {len(e)}):\n{head}"
        )


def window_order_ok(table: pa.Table, by: Sequence[str]) -> bool:
    """The kernel's row order: rows of one key are contiguous, within a key by end, start."""
    starts = plain_values(table.column("window_start"))
    ends = plain_values(table.column("window_end"))
    keys = list(
        zip(*[[equality_class(v) for v in plain_values(table.column(k))] for k in by], strict=True)
    ) or [()] * len(starts)
    seen: set[tuple[Any, ...]] = set()
    for i in range(len(starts)):
        if i and keys[i] == keys[i - 1]:
            if (ends[i], starts[i]) <= (ends[i - 1], starts[i - 1]):
                return False
        else:
            if keys[i] in seen:
                return False
            seen.add(keys[i])
    return True
