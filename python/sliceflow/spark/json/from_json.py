"""``from_json`` for PySpark Columns, decoded by sliceflow's C++ kernel."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.functions import arrow_udf

from sliceflow._runtime.spark_types import json_arrow_type, spark_type
from sliceflow.json import DecodeSession
from sliceflow.json.options import JsonOptions
from sliceflow.json.schemas import SchemaLike, resolve_schema, root_value_type
from sliceflow.spark._runtime.columns import shown
from sliceflow.spark._runtime.memory_conf import apply_in_worker
from sliceflow.spark._runtime.session_settings import SessionSettings

if TYPE_CHECKING:
    from pyspark.sql._typing import UserDefinedFunctionLike


def from_json(
    col: Column | str,
    schema: SchemaLike,
    options: JsonOptions | None = None,
) -> Column:
    """Parses a column of JSON strings into a struct column, exactly as Spark's ``from_json``.

    Same call shape and result as :func:`pyspark.sql.functions.from_json` (a struct schema:
    DDL string, ``StructType`` or ``pyarrow.Schema``; or a whole-document ``ARRAY<...>`` /
    ``MAP<STRING, ...>``: DDL, ``ArrayType``, ``MapType``; Spark's JSON options), decoded with
    simdjson in the Python workers instead of Jackson in the JVM. Works in ``select`` and
    ``withColumn`` on batch and streaming DataFrames. Without an alias the result is named as
    Spark names it: ``from_json(value)``.

    Example:
        >>> from sliceflow.spark import from_json
        >>> df = spark.createDataFrame([('{"auction": 7}',)], ["value"])  # doctest: +SKIP
        >>> df.select(from_json("value", "auction BIGINT").alias("bid"))  # doctest: +SKIP
    """
    root_type = _root_value_spark_type(schema)
    if root_type is not None:
        arrow_schema: SchemaLike = root_type
        spark_schema: T.DataType = root_type
    else:
        arrow_schema, spark_schema = resolve_schema(schema)
    settings = SessionSettings.read()
    time_zone = settings.time_zone
    options_copy = dict(options or {})
    # A decoder made on the driver checks the options, patterns and time zone at once, so
    # that a mistake fails here and not inside a task.
    DecodeSession(arrow_schema, options_copy, time_zone)
    memory_limits = settings.memory_limits

    def decode_batches(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        apply_in_worker(memory_limits)
        session = DecodeSession(arrow_schema, options_copy, time_zone)
        for batch in batches:
            session.feed(batch)
            yield session.finish_values()

    decode_batches.__name__ = "from_json"
    column = F.col(col) if isinstance(col, str) else col
    # Spark's own from_json in a branch that never runs: the analyser checks the column's
    # type with Spark's error (DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE for an INT or BINARY
    # column, naming it) when the plan is built, and the optimizer drops the branch.
    checked = F.when(F.lit(True), column).otherwise(
        F.from_json(column, "`_` STRING").cast("string")
    )
    # Spark's own name for the result (``from_json(value)``), not the check's CASE WHEN.
    name = f"from_json({shown(col)})"
    unique = _unique_names(spark_schema)
    if unique == spark_schema:
        return _arrow_iter_udf(decode_batches, spark_schema)(checked).alias(name)
    # Arrow's Java StructVector keys children by name, so a struct with a repeated field name
    # cannot cross into the JVM: cross with unique names, then cast (by position) to the
    # user's schema. Spark gives each repeated name its last value and nulls the others.
    unique_arrow = json_arrow_type(unique)

    def decode_unique(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        for decoded in decode_batches(batches):
            yield decoded.view(unique_arrow)

    decode_unique.__name__ = "from_json"
    return _arrow_iter_udf(decode_unique, unique)(checked).cast(spark_schema).alias(name)


def _unique_names(dtype: T.DataType) -> T.DataType:
    """``dtype`` with the fields of every struct renamed apart (``a``, ``a_2``, ...)."""
    if isinstance(dtype, T.StructType):
        seen: set[str] = set()
        fields = []
        for field in dtype.fields:
            name, k = field.name, 1
            while name in seen:
                k += 1
                name = f"{field.name}_{k}"
            seen.add(name)
            fields.append(T.StructField(name, _unique_names(field.dataType), field.nullable))
        return T.StructType(fields)
    if isinstance(dtype, T.ArrayType):
        return T.ArrayType(_unique_names(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, T.MapType):
        return T.MapType(dtype.keyType, _unique_names(dtype.valueType), dtype.valueContainsNull)
    return dtype


def _arrow_iter_udf(
    fn: Callable[[Iterator[pa.Array]], Iterator[pa.Array]], return_type: T.DataType
) -> UserDefinedFunctionLike:
    """``arrow_udf(fn, return_type)``: Spark reads the UDF's kind (scalar iterator) from
    ``fn``'s type hints."""
    # pyspark's stubs have no overload for this form (no functionType: the kind comes from
    # the type hints), which pyspark documents and runs.
    udf: UserDefinedFunctionLike = arrow_udf(fn, return_type)  # type: ignore[call-overload]
    return udf


def _root_value_spark_type(schema: SchemaLike) -> T.ArrayType | T.MapType | None:
    """The Spark type of a whole-document ARRAY or MAP schema (as Spark parses its DDL)."""
    if isinstance(schema, (T.ArrayType, T.MapType)):
        root_value_type(schema)  # refuses what sliceflow cannot decode
        return schema
    if isinstance(schema, str) and root_value_type(schema) is not None:
        if SparkSession.getActiveSession() is not None:
            parsed = T._parse_datatype_string(schema)
            if isinstance(parsed, (T.ArrayType, T.MapType)):
                return parsed
        return spark_type(root_value_type(schema))  # type: ignore[return-value]
    if isinstance(schema, pa.DataType) and root_value_type(schema) is not None:
        return spark_type(schema)  # type: ignore[return-value]
    return None
