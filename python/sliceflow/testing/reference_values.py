"""Python values as the reference models compute with them: from Arrow and back, Spark's
orders and equality classes of values, and exact decimal arithmetic on unscaled integers.

>>> import math
>>> equality_class(-0.0) == equality_class(0.0)
True
>>> equality_class(math.nan) == equality_class(-math.nan)
True
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pyarrow as pa

__all__ = [
    "decimal_from_unscaled",
    "decimal_unscaled",
    "equality_class",
    "key_value_shown",
    "null_first_order",
    "plain_values",
    "round_half_up",
    "to_arrow",
    "value_order",
]


# ---------------------------------------------------------------------------------------------
# Arrow <-> Python


def plain_values(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """Python values: dates/timestamps as their integer counts (days, µs), others as pyarrow
    gives them (int, float, Decimal, str, bytes, bool)."""
    t = column.type
    if pa.types.is_timestamp(t):
        column = column.cast(pa.int64())
    elif pa.types.is_date32(t):
        column = column.cast(pa.int32())
    values: list[Any] = column.to_pylist()
    return values


def to_arrow(values: list[Any], t: pa.DataType) -> pa.Array:
    if pa.types.is_timestamp(t):
        return pa.array(values, pa.int64()).cast(t)
    if pa.types.is_date32(t):
        return pa.array(values, pa.int32()).cast(t)
    return pa.array(values, t)


# ---------------------------------------------------------------------------------------------
# Orders and normalisation


def value_order(v: Any) -> Any:
    """Total order of non-null values of one type: NaN above every float, -0.0 == 0.0."""
    if isinstance(v, float):
        return (1, 0.0) if math.isnan(v) else (0, v)
    return v


def equality_class(v: Any) -> Any:
    """Equality class (Spark's grouping): -0.0 == 0.0, every NaN equal."""
    if isinstance(v, float):
        return ("NaN",) if math.isnan(v) else v + 0.0
    return v


def key_value_shown(v: Any) -> Any:
    """The value Spark's groupBy shows for a float key: -0.0 becomes 0.0, NaN one NaN."""
    if isinstance(v, float):
        return math.nan if math.isnan(v) else v + 0.0
    return v


def null_first_order(v: Any) -> tuple[Any, ...]:
    return (0,) if v is None else (1, value_order(v))


# ---------------------------------------------------------------------------------------------
# Aggregates


def decimal_unscaled(v: Decimal, scale: int) -> int:
    """The exact integer ``v * 10**scale`` (no context rounding)."""
    sign, digits, exp = v.as_tuple()
    if not isinstance(exp, int):  # 'n', 'N', 'F': NaN, sNaN, Infinity
        raise ValueError(f"{v} is not a finite decimal")
    n = int("".join(map(str, digits)) or "0")
    shift = exp + scale
    if shift >= 0:
        n *= 10**shift
    else:
        divisor: int = 10**-shift  # -shift > 0; typeshed gives int ** int the type Any
        n, r = divmod(n, divisor)
        assert r == 0, (v, scale)
    return -n if sign else n


def decimal_from_unscaled(u: int, scale: int) -> Decimal:
    return Decimal((1 if u < 0 else 0, tuple(int(c) for c in str(abs(u))), -scale))


def round_half_up(q: Fraction, scale: int) -> int:
    """``q * 10**scale`` rounded half away from zero (Java's HALF_UP)."""
    x: Fraction = q * 10**scale
    n, d = abs(x.numerator), x.denominator
    r = (2 * n + d) // (2 * d)
    return -r if x < 0 else r
