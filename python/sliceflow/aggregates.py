"""Aggregate specs: which aggregate function, over which column, under which output name.

Plain values that every operator takes (:func:`sliceflow.window.aggregate`,
:func:`sliceflow.changelog.aggregate`, :func:`sliceflow.spark.window_agg`,
:func:`sliceflow.spark.changelog_agg`); each operator's plan checks the argument's type and
derives Spark's result type. ``from sliceflow import window as W; W.count()`` is the same
function (:mod:`sliceflow.window` re-exports these names).

>>> from sliceflow import aggregates as A
>>> [a.name for a in (A.count(), A.sum("price"), A.count_distinct("bidder").alias("n"))]
['count(1)', 'sum(price)', 'n']
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = [
    "AGG_FUNCTIONS",
    "AggSpec",
    "ColumnArg",
    "agg_name",
    "agg_specs",
    "is_column_object",
    "avg",
    "count",
    "count_distinct",
    "first_value",
    "last_value",
    "max",
    "min",
    "sum",
]

#: Aggregate functions the kernels compute, by the name the plan uses.
AGG_FUNCTIONS = ("count", "sum", "avg", "min", "max", "count_distinct", "first_value", "last_value")

#: A column argument: a column name (every entry point; the ``sliceflow.spark`` ones also take
#: nested fields, ``"repo.name"``) or a pyspark ``Column`` (the ``sliceflow.spark`` entry
#: points only, which resolve it as ``DataFrame.groupBy`` does).
ColumnArg: TypeAlias = "str | Column"

#: How pyspark prints a Column: ``Column<'repo.name'>``.
_PRINTED = re.compile(r"^Column<'(.*)'>$", re.S)


def is_column_object(value: object) -> bool:
    """Whether ``value`` is a pyspark Column (classic or Connect), told apart without
    importing pyspark (this module does not need it).

    >>> is_column_object("price")
    False
    """
    return any(
        t.__name__ == "Column" and t.__module__.startswith("pyspark.") for t in type(value).__mro__
    )


def _text(col: object) -> str:
    """A column argument as an aggregate's default name shows it (a Column as pyspark prints it;
    a Spark entry point names it as Spark does once it has resolved it)."""
    if isinstance(col, str):
        return col
    m = _PRINTED.match(str(col))
    return m.group(1) if m else str(col)


def agg_name(fn: str, text: str | None) -> str:
    """The default output name of aggregate ``fn`` over a column Spark shows as ``text``
    (None: ``count(*)``), as Spark names the aggregate.

    >>> agg_name("count_distinct", "bidder"), agg_name("sum", "repo.stars"), agg_name("count", None)
    ('count(DISTINCT bidder)', 'sum(repo.stars)', 'count(1)')
    """
    if text is None:
        return "count(1)"
    if fn == "count_distinct":
        return f"count(DISTINCT {text})"
    return f"{fn}({text})"


@dataclass(frozen=True)
class AggSpec:
    """One aggregate: function, argument column (``None``: ``count(*)``) and output name.

    >>> sum("price")
    AggSpec(fn='sum', col='price', name='sum(price)')
    >>> sum("price").alias("total").name
    'total'
    """

    fn: str
    col: ColumnArg | None
    name: str

    def __post_init__(self) -> None:
        if self.fn not in AGG_FUNCTIONS:
            raise ValueError(f"unknown aggregate {self.fn!r} (one of {', '.join(AGG_FUNCTIONS)})")
        if self.col is None and self.fn != "count":
            raise ValueError(f"{self.fn} needs a column")
        # Checked as plain objects: a caller without a type checker may pass anything.
        col: object = self.col
        name: object = self.name
        if col is not None and not (isinstance(col, str) and col) and not is_column_object(col):
            raise TypeError(
                f"the argument of {self.fn} must be a column name (a non-empty str) or a "
                f"pyspark Column, not {self.col!r}"
            )
        if not isinstance(name, str) or not name:
            raise ValueError(f"an output name must be a non-empty string, not {self.name!r}")

    def alias(self, name: str) -> AggSpec:
        """The same aggregate with output column ``name``."""
        checked: object = name
        if not isinstance(checked, str) or not checked:
            raise ValueError(f"an alias must be a non-empty string, not {name!r}")
        return dataclasses.replace(self, name=name)


def agg_specs(aggs: AggSpec | Iterable[AggSpec]) -> list[AggSpec]:
    """``aggs`` (one spec or an iterable of them) as a list; a TypeError naming the type of an
    item that is not a spec (a caller without a type checker may pass anything).

    >>> [a.name for a in agg_specs(count())]
    ['count(1)']
    """
    items: list[object] = [aggs] if isinstance(aggs, AggSpec) else list(aggs)
    specs: list[AggSpec] = []
    for item in items:
        if not isinstance(item, AggSpec):
            raise TypeError(
                "aggs must be aggregate specs from sliceflow.window (count, sum, ...), "
                f"not {type(item).__name__}"
            )
        specs.append(item)
    return specs


def _agg(fn: str, col: ColumnArg) -> AggSpec:
    if not isinstance(col, str) and not is_column_object(col):
        raise TypeError(
            f"{fn} takes a column name (a str) or a pyspark Column, not {type(col).__name__}"
        )
    return AggSpec(fn, col, agg_name(fn, _text(col)))


def count(col: ColumnArg | None = None) -> AggSpec:
    """Rows (``count()``, ``count("*")``: Spark's ``count(1)``) or non-null values of ``col``.

    >>> count().name, count("bidder").name
    ('count(1)', 'count(bidder)')
    """
    if col is None or (isinstance(col, str) and col == "*"):
        return AggSpec("count", None, "count(1)")
    return _agg("count", col)


def sum(col: ColumnArg) -> AggSpec:
    """Sum of ``col``: BIGINT for integers (ANSI: overflow is an error), DOUBLE for floats,
    ``DECIMAL(min(38, p+10), s)`` for decimals; null when the window has no non-null value.

    >>> sum("price").name
    'sum(price)'
    """
    return _agg("sum", col)


def avg(col: ColumnArg) -> AggSpec:
    """Mean of ``col``: DOUBLE, or ``DECIMAL(min(38, p+4), min(38, s+4))`` for decimals.

    >>> avg("price").name
    'avg(price)'
    """
    return _agg("avg", col)


def min(col: ColumnArg) -> AggSpec:
    """Smallest value of ``col`` (its type; NaN is the largest float; strings bytewise).

    >>> min("price").name
    'min(price)'
    """
    return _agg("min", col)


def max(col: ColumnArg) -> AggSpec:
    """Largest value of ``col`` (its type; NaN is the largest float; strings bytewise).

    >>> max("price").name
    'max(price)'
    """
    return _agg("max", col)


def count_distinct(col: ColumnArg) -> AggSpec:
    """Number of distinct non-null values of ``col`` (0 when there are none).

    >>> count_distinct("bidder").name
    'count(DISTINCT bidder)'
    """
    return _agg("count_distinct", col)


def first_value(col: ColumnArg) -> AggSpec:
    """The non-null value of ``col`` with the smallest event time (ties: the smallest value).

    >>> first_value("price").name
    'first_value(price)'
    """
    return _agg("first_value", col)


def last_value(col: ColumnArg) -> AggSpec:
    """The non-null value of ``col`` with the largest event time (ties: the largest value).

    >>> last_value("price").name
    'last_value(price)'
    """
    return _agg("last_value", col)
