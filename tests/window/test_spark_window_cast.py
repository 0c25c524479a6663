"""``window_agg`` on STRING and DATE time columns, against Spark's ``groupBy(window(...))``.

Spark's ``window()`` takes a STRING or DATE time column and casts it to TIMESTAMP (its plan:
``Filter isnotnull(cast(ts as timestamp))`` under the window projection). Probed on Spark 4.3:

* the window bounds are TIMESTAMP (for a TIMESTAMP_NTZ column they stay TIMESTAMP_NTZ:
  ``test_spark_window.py::test_timestamp_ntz_and_pre_1970``);
* the cast uses the session time zone (a DATE is its midnight there);
* with ``spark.sql.ansi.enabled=false`` a string that does not parse, and a null, give a null
  time and the row is left out of every window (tumbling windows too);
* with ``spark.sql.ansi.enabled=true`` a string that does not parse fails the query with
  ``[CAST_INVALID_INPUT]``;
* ``withWatermark`` refuses a STRING, DATE or TIMESTAMP_NTZ column
  (``EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE``), so a streaming append-mode window over one cannot
  be written in Spark; ``window_agg`` refuses it on the driver with the cast to write instead.
"""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F
from support.spark_helpers import spark_conf
from test_spark_window import to_arrow

from sliceflow import window as W
from sliceflow.spark import window_agg
from sliceflow.testing.window_reference import assert_tables_equal

pytestmark = pytest.mark.spark

STRINGS = [
    ("2026-01-01 10:00:30", "a", 1),
    ("2026-01-01T10:01:30Z", "a", 2),  # an explicit zone
    ("2026-01-01", "b", 3),  # a date alone: midnight
    (" 2026-01-01 10:02:00 ", "a", 4),  # Spark's cast trims
    ("2026-01-01 10:00:59.999999", "b", 5),
    ("1969-12-31 23:59:30", "a", 6),  # before 1970
    (None, "a", 7),  # a null time
    ("2026-01-01 10:01", "b", 8),
]
GARBAGE = ("not a time", "a", 9)


def spark_answer(df, time: str, size: str, slide: str, by: list[str], aggs):
    win = F.window(time, size, slide).alias("w")
    out = df.groupBy(win, *by).agg(*aggs)
    return out.select(
        F.col("w.start").alias("window_start"),
        F.col("w.end").alias("window_end"),
        (F.col("w.end") - F.expr("INTERVAL 1 MICROSECOND")).alias("window_time"),
        *by,
        *[c for c in out.columns if c not in ("w", *by)],
    )


def compare(spark, df, time: str, size: str, slide: str) -> None:
    """window_agg against Spark on ``df``: tumble (slide == size) or hop, count / sum / min of
    the time column itself (which keeps its own type) and count_distinct."""
    spec = W.tumble(time, size) if slide == size else W.hop(time, size, slide)
    ours = window_agg(
        df,
        spec,
        ["k"],
        [
            W.count().alias("n"),
            W.sum("i").alias("si"),
            W.min(time).alias("first_time"),
            W.count_distinct("i").alias("di"),
        ],
    )
    theirs = spark_answer(
        df,
        time,
        size,
        slide,
        ["k"],
        [
            F.count(F.lit(1)).alias("n"),
            F.sum("i").alias("si"),
            F.min(time).alias("first_time"),
            F.count_distinct("i").alias("di"),
        ],
    )
    assert [(f.name, f.dataType) for f in ours.schema.fields] == [
        (f.name, f.dataType) for f in theirs.schema.fields
    ]
    expected = to_arrow(theirs)
    assert expected.num_rows > 0
    assert_tables_equal(to_arrow(ours), expected, ["k"])


@pytest.mark.parametrize("slide", ["1 minute", "20 seconds"])
def test_string_time_column_matches_spark(spark, slide):
    """Valid strings in several of Spark's formats, a null and (ANSI off) an unparseable one,
    under a session time zone that is not UTC."""
    with (
        spark_conf(spark, "spark.sql.session.timeZone", "America/Los_Angeles"),
        spark_conf(spark, "spark.sql.ansi.enabled", "false"),
    ):
        df = spark.createDataFrame([*STRINGS, GARBAGE], "s STRING, k STRING, i INT").repartition(2)
        compare(spark, df, "s", "1 minute", slide)


def test_string_time_column_ansi_fails_as_spark_does(spark):
    """ANSI on: a string that does not parse fails both queries with CAST_INVALID_INPUT; valid
    strings and nulls give Spark's rows."""
    with spark_conf(spark, "spark.sql.ansi.enabled", "true"):
        good = spark.createDataFrame(STRINGS, "s STRING, k STRING, i INT")
        compare(spark, good, "s", "1 minute", "1 minute")
        bad = spark.createDataFrame([*STRINGS, GARBAGE], "s STRING, k STRING, i INT")
        with pytest.raises(Exception, match=r"CAST_INVALID_INPUT.*'not a time'") as spark_error:
            spark_answer(bad, "s", "1 minute", "1 minute", ["k"], [F.count(F.lit(1))]).collect()
        with pytest.raises(Exception, match=r"CAST_INVALID_INPUT.*'not a time'") as ours:
            window_agg(bad, W.tumble("s", "1 minute"), ["k"], [W.count()]).collect()
        assert type(ours.value) is type(spark_error.value)


def test_date_time_column_matches_spark(spark):
    """A DATE is its midnight in the session time zone; hop windows over days."""
    rows = [
        (dt.date(2026, 1, 1), "a", 1),
        (dt.date(2026, 1, 2), "a", 2),
        (dt.date(2026, 1, 2), "b", 3),
        (None, "a", 4),
        (dt.date(1969, 12, 31), "b", 5),
        (dt.date(2026, 3, 8), "a", 6),  # the day the zone's clocks move forward
    ]
    with spark_conf(spark, "spark.sql.session.timeZone", "America/Los_Angeles"):
        df = spark.createDataFrame(rows, "d DATE, k STRING, i INT")
        compare(spark, df, "d", "2 days", "1 day")
        compare(spark, df, "d", "1 hour", "1 hour")


def test_cast_column_name_does_not_clash(spark):
    """A user column with the name the cast would take keeps its own values."""
    df = spark.createDataFrame(
        [("2026-01-01 00:00:01", 5, "a", 1), ("2026-01-01 00:00:02", 6, "a", 2)],
        "s STRING, __window_time INT, k STRING, i INT",
    )
    out = window_agg(df, W.tumble("s", "1 minute"), ["k"], [W.sum("__window_time").alias("t")])
    assert [r["t"] for r in out.collect()] == [11]


def test_streaming_string_time_column_is_refused(spark, tmp_path):
    """Spark cannot put a watermark on a STRING column; window_agg says how to cast it."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.json").write_text('{"s": "2026-01-01 00:00:01", "k": "a", "i": 1}\n')
    stream = spark.readStream.schema("s STRING, k STRING, i INT").json(str(folder))
    with pytest.raises(Exception, match="EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE"):
        stream.withWatermark("s", "1 second").groupBy(F.window("s", "1 minute")).count()
    with pytest.raises(ValueError, match=r"time column 's' has type STRING.*cast\('timestamp'\)"):
        window_agg(stream, W.tumble("s", "1 minute"), ["k"], [W.count()])
    # TIMESTAMP_NTZ: windows on a batch DataFrame (test_spark_window.py), no watermark in Spark
    ntz = stream.withColumn("t", F.col("s").cast("timestamp_ntz"))
    with pytest.raises(Exception, match="EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE"):
        ntz.withWatermark("t", "1 second")
    with pytest.raises(ValueError, match=r"time column 't' has type TIMESTAMP_NTZ.*cast"):
        window_agg(ntz, W.tumble("t", "1 minute"), ["k"], [W.count()])
