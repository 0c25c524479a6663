"""Spark SQL's types as Arrow types and back: every rule sliceflow has for the two, in one place.

Three directions, one table of scalar types (:data:`SCALARS`):

* Arrow → Spark SQL name (:func:`spark_type_name`: ``BIGINT``, ``DECIMAL(10,2)``), for error
  messages; no pyspark needed.
* Arrow → pyspark ``DataType`` (:func:`spark_type`, :func:`spark_struct`): the Spark schema of
  Arrow data handed back to Spark (``mapInArrow`` / ``arrow_udf`` outputs, decoded JSON).
* pyspark ``DataType`` → Arrow, two ways: :func:`arrow_type`, the Arrow type in which Spark hands
  a column to Python (``mapInArrow``: timestamps in the session time zone, ``large_string``
  under ``spark.sql.execution.arrow.useLargeVarTypes``), and :func:`json_arrow_type`, the Arrow
  type JSON is decoded into for a Spark type (Spark's ``from_json`` types: no BINARY, STRING
  map keys, timestamps in UTC).

pyspark is imported only by the functions that take or make pyspark types, so that
``import sliceflow.window`` works without it.

>>> import pyarrow as pa
>>> spark_type_name(pa.struct([("a", pa.list_(pa.decimal128(10, 2)))]))
'STRUCT<a: ARRAY<DECIMAL(10,2)>>'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from sliceflow.errors import SchemaError

if TYPE_CHECKING:
    from pyspark.sql import types as T

__all__ = [
    "JSON_SCALAR_TYPES",
    "SCALARS",
    "arrow_type",
    "json_arrow_type",
    "spark_struct",
    "spark_type",
    "spark_type_name",
]

#: Scalar types: the Arrow type, Spark SQL's name and pyspark's class for it. Where two Arrow
#: types stand for one Spark type, the first is the one Spark hands over by default.
SCALARS: tuple[tuple[pa.DataType, str, str], ...] = (
    (pa.bool_(), "BOOLEAN", "BooleanType"),
    (pa.int8(), "TINYINT", "ByteType"),
    (pa.int16(), "SMALLINT", "ShortType"),
    (pa.int32(), "INT", "IntegerType"),
    (pa.int64(), "BIGINT", "LongType"),
    (pa.float32(), "FLOAT", "FloatType"),
    (pa.float64(), "DOUBLE", "DoubleType"),
    (pa.string(), "STRING", "StringType"),
    (pa.large_string(), "STRING", "StringType"),
    (pa.binary(), "BINARY", "BinaryType"),
    (pa.large_binary(), "BINARY", "BinaryType"),
    (pa.date32(), "DATE", "DateType"),
)

_NAME_OF_ARROW = {arrow: name for arrow, name, _ in SCALARS}
_CLASS_OF_ARROW = {arrow: cls for arrow, _, cls in SCALARS}
_ARROW_OF_CLASS: dict[str, pa.DataType] = {}
for _arrow, _, _cls in SCALARS:
    _ARROW_OF_CLASS.setdefault(_cls, _arrow)

#: The scalar Arrow types the JSON decoder produces (besides decimal128 and timestamp[us]).
JSON_SCALAR_TYPES = frozenset(
    arrow for arrow, _, cls in SCALARS if cls != "BinaryType" and arrow == _ARROW_OF_CLASS[cls]
)


def spark_type_name(t: pa.DataType) -> str:
    """The Spark SQL name of an Arrow type, for error messages (``BIGINT``, ``DECIMAL(10,2)``)."""
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        name = "TIMESTAMP" if t.tz is not None else "TIMESTAMP_NTZ"
        return name if t.unit == "us" else f"{name} (Arrow {t})"
    if t in _NAME_OF_ARROW:
        return _NAME_OF_ARROW[t]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"ARRAY<{spark_type_name(t.value_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{spark_type_name(t.key_type)}, {spark_type_name(t.item_type)}>"
    if pa.types.is_struct(t):
        return "STRUCT<" + ", ".join(f"{f.name}: {spark_type_name(f.type)}" for f in t) + ">"
    return f"Arrow {t}"


def spark_type(dtype: pa.DataType) -> T.DataType:
    """The pyspark type an Arrow type stands for (the inverse of Spark's Arrow conversion; a
    map's keys are STRING, as JSON's are). A KeyError for a type Spark has no name for."""
    from pyspark.sql import types as T

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
    scalar: type[T.DataType] = getattr(T, _CLASS_OF_ARROW[dtype])
    return scalar()


def spark_struct(schema: pa.Schema) -> T.StructType:
    """The pyspark ``StructType`` of an Arrow schema (names, types, nullability)."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, spark_type(f.type), f.nullable) for f in schema])


def arrow_type(dt: T.DataType, time_zone: str, large_var: bool) -> pa.DataType:
    """The Arrow type in which Spark's ``mapInArrow`` hands a column of pyspark type ``dt`` to
    Python (TIMESTAMP in ``time_zone``; STRING as ``large_string`` when ``large_var``). A
    ValueError for a type the operators do not take."""
    from pyspark.sql import types as T

    if isinstance(dt, T.DecimalType):
        return pa.decimal128(dt.precision, dt.scale)
    if isinstance(dt, T.StringType):
        return pa.large_string() if large_var else pa.string()
    if isinstance(dt, T.TimestampNTZType):
        return pa.timestamp("us")
    if isinstance(dt, T.TimestampType):
        return pa.timestamp("us", tz=time_zone)
    if isinstance(dt, T.ArrayType):
        return pa.list_(arrow_type(dt.elementType, time_zone, large_var))
    if isinstance(dt, T.MapType):
        return pa.map_(
            arrow_type(dt.keyType, time_zone, large_var),
            arrow_type(dt.valueType, time_zone, large_var),
        )
    if isinstance(dt, T.StructType):
        return pa.struct(
            [pa.field(f.name, arrow_type(f.dataType, time_zone, large_var)) for f in dt]
        )
    # BINARY: the kernels read binary; conform() casts a large_binary batch.
    scalar = _ARROW_OF_CLASS.get(type(dt).__name__)
    if scalar is None or type(dt) is not getattr(T, type(dt).__name__, None):
        raise ValueError(f"sliceflow does not support columns of type {dt.simpleString()}")
    return scalar


def json_arrow_type(dt: T.DataType) -> pa.DataType:
    """The Arrow type JSON is decoded into for pyspark type ``dt`` (``from_json``'s types:
    TIMESTAMP in UTC, STRING map keys). A :class:`~sliceflow.errors.SchemaError` for a type
    JSON decoding does not produce."""
    from pyspark.sql import types as T

    if isinstance(dt, T.StructType):
        return pa.struct([pa.field(f.name, json_arrow_type(f.dataType), f.nullable) for f in dt])
    if isinstance(dt, T.ArrayType):
        return pa.list_(json_arrow_type(dt.elementType))
    if isinstance(dt, T.MapType):
        if not isinstance(dt.keyType, T.StringType):
            raise SchemaError("JSON maps need STRING keys (as Spark's from_json does)")
        return pa.map_(pa.string(), json_arrow_type(dt.valueType))
    if isinstance(dt, T.DecimalType):
        return pa.decimal128(dt.precision, dt.scale)
    if isinstance(dt, (T.CharType, T.VarcharType)):
        raise SchemaError("CHAR/VARCHAR columns are not supported; use StringType")
    if type(dt) is T.TimestampType:
        return pa.timestamp("us", tz="UTC")
    if type(dt) is T.TimestampNTZType:
        return pa.timestamp("us")
    scalar = _ARROW_OF_CLASS.get(type(dt).__name__)
    if scalar in JSON_SCALAR_TYPES and type(dt) is getattr(T, type(dt).__name__):
        return scalar
    raise SchemaError(f"unsupported Spark type {dt.simpleString()} for JSON decoding")
