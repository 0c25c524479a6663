"""The DataFrame columns an operator reads: finding them by the user's name, quoting them for
Spark, and the Arrow schema in which Spark hands them to Python.

Only the columns an aggregation uses travel to Python (each once). Type rules are
:mod:`sliceflow._runtime.spark_types`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from sliceflow._runtime.spark_types import arrow_type

__all__ = ["input_schema", "quote", "resolver"]


def quote(name: str) -> str:
    """``name`` as a Spark column reference (backquoted: dots and spaces are not paths)."""
    return "`" + name.replace("`", "``") + "`"


def resolver(df: DataFrame, case_sensitive: bool) -> Callable[[Any], Any]:
    """Maps a user's column name to the DataFrame's (Spark's case rules; top-level only).
    A name that is not a str, or that finds no single column, is returned as it is, for the
    plan builder to report."""
    names = df.columns

    def resolve(name: Any) -> Any:
        if not isinstance(name, str) or name in names or case_sensitive:
            return name
        matches = [n for n in names if n.lower() == name.lower()]
        return matches[0] if len(set(matches)) == 1 else name

    return resolve


def input_schema(
    df: DataFrame,
    referenced: Sequence[Any],
    time_zone: str,
    large_var: bool,
    operator: str = "sliceflow",
) -> pa.Schema:
    """The Arrow schema of the columns an operator reads (each once, in first-use order):
    only those travel to Python. With a missing or ambiguous column, every column (unsupported
    types as null), so that the plan builder reports the mistake against all of them. A
    column of a type no kernel takes is refused naming ``operator`` and the column."""
    used = list(dict.fromkeys(n for n in referenced if isinstance(n, str)))
    columns = df.columns
    if all(columns.count(name) == 1 for name in used):
        fields = {f.name: f for f in df.schema.fields}
        return pa.schema(
            [_arrow_field(fields[name], time_zone, large_var, operator) for name in used]
        )
    return _schema_for_errors(df, time_zone, large_var)


def _arrow_field(field: T.StructField, time_zone: str, large_var: bool, operator: str) -> pa.Field:
    dt = field.dataType
    if isinstance(dt, T.StringType):
        collation = getattr(dt, "collation", None) or "UTF8_BINARY"
        if collation != "UTF8_BINARY":
            raise ValueError(
                f"{operator}: column {field.name!r} has collation {collation}; sliceflow "
                "groups and compares strings bytewise (UTF8_BINARY) only"
            )
    try:
        return pa.field(field.name, arrow_type(dt, time_zone, large_var), field.nullable)
    except ValueError as e:
        raise ValueError(f"{operator}: column {field.name!r}: {e}") from None


def _schema_for_errors(df: DataFrame, time_zone: str, large_var: bool) -> pa.Schema:
    """An Arrow schema of every column (unsupported types as null), for build_plan's errors."""
    fields = []
    for f in df.schema.fields:
        try:
            t = arrow_type(f.dataType, time_zone, large_var)
        except ValueError:
            t = pa.null()
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)
