"""``from_json`` for PySpark Columns, decoded by sliceflow's C++ kernel."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F

from sliceflow._schema import SchemaLike
from sliceflow.json import _Session
from sliceflow.spark._memory_conf import apply_in_worker, from_session
from sliceflow.spark._types import resolve_schema, session_time_zone


def from_json(
    col: Column | str,
    schema: SchemaLike,
    options: Mapping[str, Any] | None = None,
) -> Column:
    """Parses a column of JSON strings into a struct column, exactly as Spark's ``from_json``.

    Same call shape and result as :func:`pyspark.sql.functions.from_json` (a struct schema:
    DDL string, ``StructType`` or ``pyarrow.Schema``; Spark's JSON options), decoded with
    simdjson in the Python workers instead of Jackson in the JVM. Works in ``select`` and
    ``withColumn`` on batch and streaming DataFrames.

    Example:
        >>> from sliceflow.spark import from_json
        >>> df = spark.createDataFrame([('{"auction": 7}',)], ["value"])  # doctest: +SKIP
        >>> df.select(from_json("value", "auction BIGINT").alias("bid"))  # doctest: +SKIP
    """
    arrow_schema, spark_schema = resolve_schema(schema)
    time_zone = session_time_zone()
    options_copy = dict(options or {})
    # A decoder made on the driver checks the options, patterns and time zone at once, so
    # that a mistake fails here and not inside a task.
    _Session(arrow_schema, options_copy, time_zone)
    memory_limits = from_session()

    def decode_batches(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        apply_in_worker(memory_limits)
        session = _Session(arrow_schema, options_copy, time_zone)
        for batch in batches:
            session.feed(batch)
            yield session.finish_struct()

    decode_batches.__name__ = "from_json"
    udf = F.arrow_udf(decode_batches, spark_schema)
    column = F.col(col) if isinstance(col, str) else col
    return udf(column)
