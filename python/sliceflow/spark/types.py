"""Schema plumbing between Spark and sliceflow's Arrow schemas."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import types as T

from sliceflow.schemas import SchemaLike, to_arrow_schema


def spark_type(dtype: pa.DataType) -> T.DataType:
    """The Spark type an Arrow type stands for (the inverse of Spark's Arrow conversion)."""
    if pa.types.is_struct(dtype):
        return T.StructType([T.StructField(f.name, spark_type(f.type), f.nullable) for f in dtype])
    if pa.types.is_map(dtype):
        return T.MapType(T.StringType(), spark_type(dtype.item_type))
    if pa.types.is_list(dtype):
        return T.ArrayType(spark_type(dtype.value_type), dtype.value_field.nullable)
    if pa.types.is_decimal(dtype):
        return T.DecimalType(dtype.precision, dtype.scale)
    if pa.types.is_timestamp(dtype):
        return T.TimestampType() if dtype.tz is not None else T.TimestampNTZType()
    simple = {
        pa.bool_(): T.BooleanType(),
        pa.int8(): T.ByteType(),
        pa.int16(): T.ShortType(),
        pa.int32(): T.IntegerType(),
        pa.int64(): T.LongType(),
        pa.float32(): T.FloatType(),
        pa.float64(): T.DoubleType(),
        pa.string(): T.StringType(),
        pa.large_string(): T.StringType(),
        pa.binary(): T.BinaryType(),
        pa.large_binary(): T.BinaryType(),
        pa.date32(): T.DateType(),
    }
    return simple[dtype]


def resolve_schema(schema: SchemaLike) -> tuple[pa.Schema, T.StructType]:
    """The Arrow schema sliceflow decodes into and the Spark StructType it stands for.

    A DDL string is parsed by Spark itself when a session is active, so that the Spark side
    sees exactly the type the user wrote.
    """
    if isinstance(schema, T.StructType):
        return to_arrow_schema(schema), schema
    if isinstance(schema, str):
        spark = SparkSession.getActiveSession()
        if spark is not None:
            parsed = T._parse_datatype_string(schema)
            if isinstance(parsed, T.StructType):
                return to_arrow_schema(parsed), parsed
    arrow_schema = to_arrow_schema(schema)
    return arrow_schema, spark_type(pa.struct(list(arrow_schema)))  # type: ignore[return-value]


def session_time_zone(spark: Any = None) -> str:
    """Spark's session time zone (used for timestamps without an offset)."""
    spark = spark or SparkSession.getActiveSession()
    if spark is None:
        return "UTC"
    return spark.conf.get("spark.sql.session.timeZone", "UTC") or "UTC"
