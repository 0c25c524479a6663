"""What a user reads when ``changelog_agg`` or ``window_agg`` fails.

Errors found inside Spark tasks reach the driver as pyspark's ``PythonException`` (Spark wraps
every exception of a Python worker so); their text must still name the user's columns, show
the row at fault by its values (an Arrow batch's row number means nothing to the user), and
where Spark fails on the same input, carry Spark's own error text. Probed on Spark 4.3 with
``spark.sql.ansi.enabled=true``:

* BIGINT ``sum`` overflow: ``[ARITHMETIC_OVERFLOW] overflow. Use 'try_add' to tolerate
  overflow and return NULL instead. If necessary set "spark.sql.ansi.enabled" to "false" to
  bypass this error. SQLSTATE: 22003``;
* DECIMAL ``sum`` / ``avg`` overflow: ``[ARITHMETIC_OVERFLOW] Overflow in sum of decimals. Use
  'try_sum'`` (``'try_avg'``) ``to tolerate overflow …``.

What can be checked on the driver (an op column that is not a STRING) fails at the call,
before any job runs.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from support.spark_helpers import spark_conf

from sliceflow import changelog
from sliceflow import window as W
from sliceflow.spark import changelog_agg, window_agg

pytestmark = pytest.mark.spark

SPARK_TEXT = re.compile(r"\[ARITHMETIC_OVERFLOW\][^\n]*SQLSTATE: 22003")


def spark_text(error: BaseException) -> str:
    found = SPARK_TEXT.search(str(error))
    assert found, str(error)
    return found.group(0)


OPS = [
    ("d1", "+I", 1),
    ("d1", "+I", 2),
    ("d2", "+I", 3),
    ("d1", "-U", 1),
    ("d1", "+U", 5),
    ("d2", "UPDATE", 6),  # the sixth row
    ("d2", None, 7),
]


def test_bad_op_value_names_column_and_row_arrow():
    table = pa.table(
        {
            "day": [r[0] for r in OPS],
            "op": [r[1] for r in OPS],
            "v": pa.array([r[2] for r in OPS], pa.int64()),
        }
    )
    with pytest.raises(ValueError) as error:
        changelog.aggregate([table], ["day"], [W.sum("v").alias("total")], op_col="op")
    text = str(error.value)
    assert "op column 'op' holds 'UPDATE'" in text
    assert "{day='d2', op='UPDATE', v=6}" in text
    assert "__op" not in text and "row 1" not in text


def test_bad_op_value_names_column_and_row_spark(spark):
    df = spark.createDataFrame(OPS, "day STRING, op STRING, v BIGINT").coalesce(1)
    out = changelog_agg(df, ["day"], [W.sum("v").alias("total")], op_col="OP")  # Spark's case
    with pytest.raises(Exception) as error:
        out.collect()
    text = str(error.value)
    assert "op column 'op' holds 'UPDATE'" in text
    assert "{day='d2', op='UPDATE', v=6}" in text
    assert "__op" not in text


def test_op_column_type_is_checked_on_the_driver(spark):
    df = spark.createDataFrame([("d1", 1, 1)], "day STRING, op INT, v BIGINT")
    with pytest.raises(ValueError, match=r"op column 'op' must be a STRING column .*, not INT$"):
        changelog_agg(df, ["day"], [W.sum("v").alias("total")], op_col="op")
    arrays = spark.createDataFrame([("d1", ["+I"], 1)], "day STRING, op ARRAY<STRING>, v BIGINT")
    with pytest.raises(
        ValueError, match=r"op column 'op' must be a STRING column .*, not ARRAY<STRING>$"
    ):
        changelog_agg(arrays, ["day"], [W.count()], op_col="op")


BIG = (1 << 63) - 1
NINES = Decimal("9" * 38)


@pytest.mark.parametrize(
    ("ddl", "rows", "fn"),
    [
        ("v BIGINT", [BIG, BIG], "sum"),
        ("v DECIMAL(38,0)", [NINES, NINES], "sum"),
        ("v DECIMAL(38,0)", [NINES, NINES], "avg"),
    ],
    ids=["bigint-sum", "decimal-sum", "decimal-avg"],
)
def test_ansi_overflow_has_spark_text(spark, ddl, rows, fn):
    """window_agg and changelog_agg fail with Spark's ARITHMETIC_OVERFLOW text, then the
    aggregate's name."""
    ours_agg, spark_agg = getattr(W, fn)("v"), getattr(F, fn)("v")
    data = [
        (dt_, "k", v)
        for dt_, v in zip(["2026-01-01 00:00:01", "2026-01-01 00:00:02"], rows, strict=True)
    ]
    with spark_conf(spark, "spark.sql.ansi.enabled", "true"):
        df = spark.createDataFrame(data, f"s STRING, k STRING, {ddl}").withColumn(
            "ts", F.col("s").cast("timestamp")
        )
        with pytest.raises(Exception) as theirs:
            df.groupBy(F.window("ts", "1 minute"), "k").agg(spark_agg).collect()
        expected = spark_text(theirs.value)

        windowed = window_agg(df, W.tumble("ts", "1 minute"), ["k"], [ours_agg.alias("agg")])
        with pytest.raises(Exception) as ours:
            windowed.collect()
        assert spark_text(ours.value) == expected
        assert "aggregate 'agg'" in str(ours.value)

        grouped = changelog_agg(df, ["k"], [ours_agg.alias("agg")])
        with pytest.raises(Exception) as ours:
            grouped.collect()
        assert spark_text(ours.value) == expected
        assert "aggregate 'agg'" in str(ours.value)
