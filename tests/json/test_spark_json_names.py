"""``sliceflow.spark.from_json`` without an alias names its column as Spark's ``from_json``
does (``from_json(value)``), whatever the argument (a name, a Column, a nested field)."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

import sliceflow.spark as sfs

pytestmark = pytest.mark.spark


def test_default_name_is_sparks(spark):
    df = spark.createDataFrame([('{"a": 1}', ('{"a": 2}',))], "value string, m struct<v: string>")
    for col in ("value", F.col("value"), df.value, df["value"], "m.v", F.col("m.v")):
        ours = df.select(sfs.from_json(col, "a INT"))
        theirs = df.select(F.from_json(col, "a INT"))
        assert ours.columns == theirs.columns, col
        assert ours.collect() == theirs.collect()
    # A schema with a repeated field name crosses with unique names and is cast back.
    ours = df.select(sfs.from_json("value", "a INT, a INT"))
    assert ours.columns == df.select(F.from_json("value", "a INT, a INT")).columns
    assert ours.columns == ["from_json(value)"]
