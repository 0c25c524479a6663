"""``sliceflow.spark.window_agg`` against Spark's own ``groupBy(window(...), keys).agg(...)``.

Tumble and hop on randomized data (hypothesis, few examples: Spark is slow): offsets (Spark's
startTime), slides that do not divide the size, null keys, -0.0/NaN keys, pre-1970 times,
TIMESTAMP and TIMESTAMP_NTZ, several partitions, an empty DataFrame; the brute-force reference
is checked against Spark on the same data. ``first_value``/``last_value`` (by event time; Spark's
``first``/``last`` are not) and cumulate windows (Spark has none) are compared with the reference.
ANSI mode: a BIGINT sum overflow raises with ``spark.sql.ansi.enabled=true`` and wraps as
Spark does with ``false``.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F
from support.spark_helpers import spark_conf

from sliceflow import window as W
from sliceflow.spark import window_agg
from sliceflow.testing.window_reference import (
    RefAgg,
    RefWindow,
    assert_tables_equal,
    reference_aggregate,
)

pytestmark = pytest.mark.spark

S = 1_000_000  # µs per second
TS = pa.timestamp("us")
TS_UTC = pa.timestamp("us", tz="UTC")
EPOCH_1900 = -2_208_988_800 * S
EPOCH_2026 = 1_795_392_000 * S
# Each example runs Spark jobs (seconds each): a budget of its own, whatever the profile.
FEW = settings(
    max_examples=10,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _seconds(us: int) -> str:
    return f"{us} microseconds"


def make_spec(time: str, w: RefWindow):
    d = dt.timedelta
    if w.kind == "tumble":
        return W.tumble(time, _seconds(w.size), offset=d(microseconds=w.offset))
    if w.kind == "hop":
        return W.hop(time, _seconds(w.size), _seconds(w.slide), offset=d(microseconds=w.offset))
    return W.cumulate(time, _seconds(w.slide), _seconds(w.size), offset=d(microseconds=w.offset))


def make_agg(a: RefAgg):
    fn = getattr(W, a.fn)
    return (fn() if a.column is None else fn(a.column)).alias(a.name)


SPARK_FNS = {
    "count": lambda c: F.count(F.lit(1)) if c is None else F.count(c),
    "sum": F.sum,
    "avg": F.avg,
    "min": F.min,
    "max": F.max,
    "count_distinct": F.count_distinct,
}


def spark_window(df, time: str, w: RefWindow, by: list[str], aggs: list[RefAgg]):
    """Spark's own answer: groupBy(window(time, size, slide, startTime), *by).agg(...),
    flattened to sliceflow's columns."""
    assert w.kind in ("tumble", "hop") and abs(w.offset) < w.slide
    win = F.window(time, _seconds(w.size), _seconds(w.slide), _seconds(w.offset)).alias("w")
    out = df.groupBy(win, *by).agg(*[SPARK_FNS[a.fn](a.column).alias(a.name) for a in aggs])
    return out.select(
        F.col("w.start").alias("window_start"),
        F.col("w.end").alias("window_end"),
        (F.col("w.end") - F.expr("INTERVAL 1 MICROSECOND")).alias("window_time"),
        *by,
        *[a.name for a in aggs],
    )


def inexact(table: pa.Table, aggs: list[RefAgg]) -> list[str]:
    return [
        a.name
        for a in aggs
        if a.fn == "avg"
        or (a.fn == "sum" and pa.types.is_floating(table.schema.field(a.column).type))
    ]


def to_arrow(df) -> pa.Table:
    t = df.toArrow()
    # Spark may hand strings over as large_string: compare values, not the Arrow flavour.
    return t.cast(
        pa.schema(
            [
                pa.field(f.name, pa.string() if pa.types.is_large_string(f.type) else f.type)
                for f in t.schema
            ]
        )
    )


# ------------------------------------------------------------------------------------------
# Data


@st.composite
def spark_cases(draw, kinds=("tumble", "hop")):
    kind = draw(st.sampled_from(kinds))
    slide = draw(st.integers(1, 8)) * S
    if kind == "tumble":
        size = slide
    elif kind == "hop":
        size = draw(st.integers(slide // S, 20).map(lambda n: n * S) | st.just(3 * slide))
    else:
        size = slide * draw(st.integers(1, 5))
    period = size if kind == "cumulate" else slide
    offset = draw(st.integers(-(period // S) + 1, period // S - 1)) * S
    offset += draw(st.sampled_from([0, 0, 250_000, -1]))
    if abs(offset) >= period:
        offset = 0
    w = RefWindow(kind, size, slide, offset)

    n = draw(st.integers(0, 60))
    base = draw(st.sampled_from([EPOCH_2026, EPOCH_1900, 0]))
    times = draw(
        st.lists(
            st.none() | st.integers(-40 * S, 40 * S) | st.integers(-3, 3) | st.just(-1),
            min_size=n,
            max_size=n,
        )
    )
    times = [None if t is None else base + t for t in times]
    ints = draw(st.lists(st.none() | st.integers(-1000, 1000), min_size=n, max_size=n))
    keys = draw(st.lists(st.none() | st.sampled_from(["a", "b", "é"]), min_size=n, max_size=n))
    fkeys = draw(
        st.lists(st.none() | st.sampled_from([0.0, -0.0, math.nan, 2.5]), min_size=n, max_size=n)
    )
    xs = draw(
        st.lists(
            st.none()
            | st.sampled_from([-0.0, 0.0, math.nan, math.inf])
            | st.integers(-800, 800).map(lambda k: k / 8),
            min_size=n,
            max_size=n,
        )
    )
    decs = draw(
        st.lists(
            st.none() | st.integers(-(10**7), 10**7).map(lambda u: Decimal(u).scaleb(-2)),
            min_size=n,
            max_size=n,
        )
    )
    wides = draw(
        st.lists(
            st.none() | st.integers(-(10**12), 10**12).map(lambda u: Decimal(u).scaleb(-6)),
            min_size=n,
            max_size=n,
        )
    )
    time_type = draw(st.sampled_from([TS, TS_UTC]))
    table = pa.table(
        {
            "ts": pa.array(times, pa.int64()).cast(time_type),
            "k": pa.array(keys, pa.string()),
            "f": pa.array(fkeys, pa.float64()),
            "i": pa.array(ints, pa.int64()),
            "x": pa.array(xs, pa.float64()),
            "d": pa.array(decs, pa.decimal128(9, 2)),
            "e": pa.array(wides, pa.decimal128(38, 6)),
            "day": pa.array([None if v is None else v % 97 - 40 for v in ints], pa.int32()).cast(
                pa.date32()
            ),
        }
    )
    by = draw(st.sampled_from([[], ["k"], ["f"], ["k", "f"]]))
    partitions = draw(st.sampled_from([1, 3]))
    return table, w, by, partitions


SPARK_AGGS = [
    RefAgg("count", None, "n"),
    RefAgg("count", "x", "nx"),
    RefAgg("sum", "i", "si"),
    RefAgg("avg", "i", "ai"),
    RefAgg("sum", "x", "sx"),
    RefAgg("avg", "x", "ax"),
    RefAgg("sum", "d", "sd"),
    RefAgg("avg", "d", "ad"),
    RefAgg("sum", "e", "se"),
    RefAgg("avg", "e", "ae"),
    RefAgg("min", "x", "lox"),
    RefAgg("max", "x", "hix"),
    RefAgg("min", "k", "lok"),
    RefAgg("max", "day", "hiday"),
    RefAgg("count_distinct", "x", "dx"),
]
EVENT_TIME_AGGS = [
    RefAgg("first_value", "i", "fi"),
    RefAgg("last_value", "x", "lx"),
    RefAgg("first_value", "k", "fk"),
    RefAgg("last_value", "day", "lday"),
]


def _df(spark, table: pa.Table, partitions: int = 1):
    """A DataFrame of ``table``; a time column without a time zone becomes TIMESTAMP_NTZ (the
    session time zone is UTC, so the microseconds stay as they are)."""
    df = spark.createDataFrame(table)
    if table.schema.field("ts").type.tz is None:
        df = df.withColumn("ts", F.col("ts").cast("timestamp_ntz"))
    return df.repartition(partitions) if partitions > 1 else df


# ------------------------------------------------------------------------------------------
# Tests


@FEW
@given(case=spark_cases())
def test_window_agg_matches_spark_window(spark, case):
    table, w, by, partitions = case
    df = _df(spark, table, partitions)
    theirs = spark_window(df, "ts", w, by, SPARK_AGGS)
    ours = window_agg(df, make_spec("ts", w), by, [make_agg(a) for a in SPARK_AGGS])
    assert ours.schema == theirs.schema or [(f.name, f.dataType) for f in ours.schema.fields] == [
        (f.name, f.dataType) for f in theirs.schema.fields
    ]
    expected = to_arrow(theirs)
    assert_tables_equal(
        reference_aggregate(table, "ts", w, by, SPARK_AGGS).cast(expected.schema),
        expected,
        by,
        inexact=inexact(table, SPARK_AGGS),
    )  # the reference agrees with Spark
    assert_tables_equal(
        to_arrow(ours), expected, by, inexact=inexact(table, SPARK_AGGS), check_schema=False
    )


@FEW
@given(case=spark_cases(kinds=("hop", "cumulate")))
def test_window_agg_event_time_and_cumulate_match_reference(spark, case):
    table, w, by, partitions = case
    aggs = [*EVENT_TIME_AGGS, RefAgg("count", None, "n"), RefAgg("sum", "d", "sd")]
    df = _df(spark, table, partitions)
    ours = window_agg(df, make_spec("ts", w), by, [make_agg(a) for a in aggs])
    expected = reference_aggregate(table, "ts", w, by, aggs)
    assert_tables_equal(to_arrow(ours), expected.cast(to_arrow(ours).schema), by)


def test_empty_dataframe(spark):
    table = pa.table(
        {
            "ts": pa.array([], TS_UTC),
            "k": pa.array([], pa.string()),
            "i": pa.array([], pa.int64()),
        }
    )
    df = _df(spark, table)
    w = RefWindow("hop", 10 * S, 4 * S)
    aggs = [RefAgg("count", None, "n"), RefAgg("sum", "i", "si"), RefAgg("max", "i", "m")]
    ours = window_agg(df, make_spec("ts", w), ["k"], [make_agg(a) for a in aggs])
    theirs = spark_window(df, "ts", w, ["k"], aggs)
    assert [(f.name, f.dataType) for f in ours.schema.fields] == [
        (f.name, f.dataType) for f in theirs.schema.fields
    ]
    assert ours.count() == 0 and theirs.count() == 0


def test_timestamp_ntz_and_pre_1970(spark):
    times = [EPOCH_1900 + 7, EPOCH_1900 - 5 * S, -1, 0, None, 3 * S]
    table = pa.table(
        {"ts": pa.array(times, pa.int64()).cast(TS), "i": pa.array([1, 2, 3, 4, 5, 6], pa.int64())}
    )
    df = _df(spark, table, 2)
    assert df.schema["ts"].dataType.typeName() == "timestamp_ntz"
    w = RefWindow("hop", 6 * S, 4 * S, -3 * S)
    aggs = [RefAgg("count", None, "n"), RefAgg("sum", "i", "si")]
    ours = window_agg(df, make_spec("ts", w), [], [make_agg(a) for a in aggs])
    theirs = spark_window(df, "ts", w, [], aggs)
    assert [(f.name, f.dataType) for f in ours.schema.fields] == [
        (f.name, f.dataType) for f in theirs.schema.fields
    ]
    expected = to_arrow(theirs)
    assert_tables_equal(to_arrow(ours), expected, [])
    assert_tables_equal(reference_aggregate(table, "ts", w, [], aggs), expected, [])


def test_ansi_bigint_sum_overflow(spark):
    big = (1 << 63) - 1
    table = pa.table(
        {
            "ts": pa.array([0, 1, 2, 5 * S], pa.int64()).cast(TS_UTC),
            "k": ["a", "a", "a", "a"],
            "i": pa.array([big, big, 7, 1], pa.int64()),
        }
    )
    df = _df(spark, table, 2)
    w = RefWindow("tumble", 10 * S)
    aggs = [RefAgg("sum", "i", "si"), RefAgg("count", None, "n")]
    with spark_conf(spark, "spark.sql.ansi.enabled", "true"):
        with pytest.raises(Exception, match="ARITHMETIC_OVERFLOW"):
            spark_window(df, "ts", w, ["k"], aggs).collect()
        with pytest.raises(Exception, match="ARITHMETIC_OVERFLOW"):
            window_agg(df, make_spec("ts", w), ["k"], [make_agg(a) for a in aggs]).collect()
    with spark_conf(spark, "spark.sql.ansi.enabled", "false"):
        theirs = spark_window(df, "ts", w, ["k"], aggs)
        ours = window_agg(df, make_spec("ts", w), ["k"], [make_agg(a) for a in aggs])
        expected = to_arrow(theirs)
        assert expected["si"].to_pylist() == [6]  # 2·(2^63 − 1) + 8, wrapped
        assert_tables_equal(to_arrow(ours), expected, ["k"])
