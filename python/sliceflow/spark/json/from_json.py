"""``from_json`` for PySpark Columns, decoded by sliceflow's C++ kernel.

Each call's decoding (schema, options, session time zone, worker memory limits) is kept on the
driver under a digest that names its UDF (``from_json.<digest>``), so that an operator over its
fields can find it in the plan and run the same decoding inside its own local phase
(:mod:`sliceflow.spark.json.from_json_lineage`). The kept decodings are bounded
(:data:`KEPT_DECODINGS`, the oldest dropped first): a dropped one is only not fused.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.functions import arrow_udf

from sliceflow._runtime.spark_types import json_arrow_type, spark_type
from sliceflow.json import DecodeSession
from sliceflow.json.options import JsonOptions, OptionValue
from sliceflow.json.schemas import SchemaLike, resolve_schema, root_value_type
from sliceflow.spark._runtime.columns import shown
from sliceflow.spark._runtime.memory_conf import apply_in_worker
from sliceflow.spark._runtime.session_settings import SessionSettings

if TYPE_CHECKING:
    from pyspark.sql._typing import UserDefinedFunctionLike

__all__ = ["KEPT_DECODINGS", "UDF_PREFIX", "JsonDecoding", "decoding_of", "from_json"]

#: How the name of a ``from_json`` UDF starts; a digest of its decoding follows.
UDF_PREFIX = "from_json."
#: How many decodings the driver keeps for fusion (distinct schemas and options).
KEPT_DECODINGS = 256


@dataclass(frozen=True)
class JsonDecoding:
    """What one ``from_json`` call decodes: a JSON text column into a struct of
    ``spark_schema`` (``arrow_schema`` for the kernel), with Spark's JSON ``options`` in the
    session's ``time_zone``."""

    arrow_schema: SchemaLike
    spark_schema: T.DataType
    options: dict[str, OptionValue]
    time_zone: str
    memory_limits: dict[str, str]

    def session(self) -> DecodeSession:
        """A decoder of this decoding, in a Python worker (sets the worker's memory limits)."""
        apply_in_worker(self.memory_limits)
        return DecodeSession(self.arrow_schema, self.options, self.time_zone)

    def values(self, batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        """Each batch of JSON text decoded (one Python worker's)."""
        session = self.session()
        for batch in batches:
            session.feed(batch)
            yield session.finish_values()

    def digest(self) -> str:
        """12 hex digits naming this decoding (its UDF's name after :data:`UDF_PREFIX`)."""
        text = repr((str(self.arrow_schema), self.spark_schema.json(),
                     sorted((k, repr(v)) for k, v in self.options.items()), self.time_zone,
                     sorted(self.memory_limits.items())))  # fmt: skip
        return hashlib.sha256(text.encode()).hexdigest()[:12]


_DECODINGS: OrderedDict[str, JsonDecoding] = OrderedDict()


def decoding_of(udf_name: str) -> JsonDecoding | None:
    """The decoding of the ``from_json`` UDF named ``udf_name`` made by this driver, or None."""
    if not udf_name.startswith(UDF_PREFIX):
        return None
    return _DECODINGS.get(udf_name[len(UDF_PREFIX) :])


def _kept(decoding: JsonDecoding) -> str:
    digest = decoding.digest()
    _DECODINGS[digest] = decoding
    _DECODINGS.move_to_end(digest)
    while len(_DECODINGS) > KEPT_DECODINGS:
        _DECODINGS.popitem(last=False)
    return UDF_PREFIX + digest


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
    decoding = JsonDecoding(arrow_schema, spark_schema, options_copy, time_zone,
                            settings.memory_limits)  # fmt: skip
    decode_batches = decoding.values
    udf_name = _kept(decoding)
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
        return _arrow_iter_udf(_named(decode_batches, udf_name), spark_schema)(checked).alias(name)
    # Arrow's Java StructVector keys children by name, so a struct with a repeated field name
    # cannot cross into the JVM: cross with unique names, then cast (by position) to the
    # user's schema. Spark gives each repeated name its last value and nulls the others.
    unique_arrow = json_arrow_type(unique)

    def decode_unique(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        for decoded in decode_batches(batches):
            yield decoded.view(unique_arrow)

    return (
        _arrow_iter_udf(_named(decode_unique, udf_name), unique)(checked)
        .cast(spark_schema)
        .alias(name)
    )


def _named(
    fn: Callable[[Iterator[pa.Array]], Iterator[pa.Array]], name: str
) -> Callable[[Iterator[pa.Array]], Iterator[pa.Array]]:
    """``fn`` as a function named ``name`` (the UDF's name in the plan)."""

    def decode(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        return fn(batches)

    decode.__name__ = decode.__qualname__ = name
    return decode


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
