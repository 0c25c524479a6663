"""The aggregates' type rules, shared by every operator's plan: Spark's result types and the
kernels' state schemas are asked of the C++ core (``cpp/agg/state_schema.h``), so that the
plans, the kernels that check the schemas they are given, and the fuzzers share one rule.

>>> import pyarrow as pa
>>> result_type("avg", pa.decimal128(10, 2))
Decimal128Type(decimal128(14, 6))
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from sliceflow import _core

__all__ = ["carried_type", "core_schema", "result_type"]


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
    return core_schema(_core.agg.result_type(fn, capsule)).field(0).type
