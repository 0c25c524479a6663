"""The Python side of sliceflow's windows: durations, specs, default names, the plan and its
schemas (Spark's result types), errors, and ``window_agg``'s wiring.

Kernel-backed tests (``W.aggregate``, ``window_agg`` results) skip when the build has no
``sliceflow._core.window``.
"""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

from sliceflow import window as W
from sliceflow._runtime.durations import format_duration, parse_duration
from sliceflow.window.plan import build_plan, result_type

US = 1
MS = 1000
S = 1_000_000
MIN = 60 * S
H = 60 * MIN
DAY = 24 * H

# ---------------------------------------------------------------------------------------------
# Durations

ACCEPTED = [
    ("1 day", DAY),
    ("1 days", DAY),
    ("1 DAY", DAY),
    ("interval 1 day", DAY),
    ("INTERVAL 1 DAY", DAY),
    ("interval  1 day", DAY),
    ("1 week", 7 * DAY),
    ("2 weeks", 14 * DAY),
    ("1 weeks 2 days", 9 * DAY),
    ("1 hour 30 minutes", 90 * MIN),
    ("1 HoUrS", H),
    ("1.5 seconds", 1_500_000),
    ("1.5 second", 1_500_000),
    (".5 seconds", 500_000),
    ("1. seconds", S),
    ("1.9999999 seconds", 1_999_999),
    ("1.123456789 seconds", 1_123_456),
    ("1 minute 1.5 seconds", 61_500_000),
    ("-1.5 seconds 2 seconds", 500_000),
    ("+1 day", DAY),
    ("+ 1 day", DAY),
    ("1 day -1 hour", 23 * H),
    ("1 week -1 day", 6 * DAY),
    (" 1 day ", DAY),
    ("1  day", DAY),
    ("1 day\t1 hour", 25 * H),
    ("01 day", DAY),
    ("1 day 1 day", 2 * DAY),
    ("10 milliseconds", 10 * MS),
    ("10 microseconds", 10 * US),
    ("1 microsecond 1 microseconds", 2),
    ("1 seconds ", S),
    ("0 months 1 day", DAY),
    ("1 day 0 months", DAY),
    ("100000 weeks", 100_000 * 7 * DAY),
]

REJECTED = [
    ("1.5 hours", "fractional"),
    ("0.5 day", "fractional"),
    ("1.5 minutes", "fractional"),
    ("1.5 milliseconds", "fractional"),
    ("1 month", "months and years are not supported"),
    ("1 year", "months and years are not supported"),
    ("1 days 1 months", "months and years are not supported"),
    ("1 sec", "unknown unit 'sec'"),
    ("1 secs", "unknown unit"),
    ("1 min", "unknown unit"),
    ("1 mins", "unknown unit"),
    ("1 ms", "unknown unit"),
    ("1 us", "unknown unit"),
    ("1 msec", "unknown unit"),
    ("1 h", "unknown unit"),
    ("1 d", "unknown unit"),
    ("1 nanosecond", "unknown unit"),
    ("1day", "'1day'"),
    ("1 days2 hours", "unknown unit"),
    ("1 hour, 2 minutes", "unknown unit 'hour,'"),
    ("1 second s", "expected a number"),
    ("1e3 seconds", "'1e3'"),
    ("0x10 seconds", "'0x10'"),
    ("1.1234567891 seconds", "more than 9 fractional digits"),
    ("interval", "no value after 'interval'"),
    ("interval1 day", "invalid interval prefix"),
    ("", "empty"),
    ("   ", "empty"),
    ("1", "has no unit"),
    ("day", "expected a number"),
    ("2147483648 days", "too many days"),
    ("'1' day", "expected a number"),
]


@pytest.mark.parametrize(("text", "micros"), ACCEPTED)
def test_duration_accepted(text: str, micros: int) -> None:
    assert parse_duration(text, "size") == micros


@pytest.mark.parametrize(("text", "why"), REJECTED)
def test_duration_rejected(text: str, why: str) -> None:
    with pytest.raises(ValueError, match="invalid slide duration") as e:
        parse_duration(text, "slide")
    assert why in str(e.value)


def test_duration_signs_and_timedelta() -> None:
    assert parse_duration("-1 day", "offset") == -DAY
    assert parse_duration("- 1 day", "offset") == -DAY
    assert parse_duration("-0 days", "offset") == 0
    assert parse_duration(dt.timedelta(minutes=-5), "offset") == -5 * MIN
    assert parse_duration(dt.timedelta(days=1, microseconds=3), "size") == DAY + 3
    assert parse_duration(dt.timedelta(0), "offset") == 0


@pytest.mark.parametrize("value", [60, 1.5, None, b"1 day", dt.time(1)])
def test_duration_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="the size must be a duration string"):
        parse_duration(value, "size")  # type: ignore[arg-type]


def test_format_duration() -> None:
    assert format_duration(DAY) == "1 day"
    assert format_duration(2 * 7 * DAY) == "2 weeks"
    assert format_duration(90 * S) == "90 seconds"
    assert format_duration(1500) == "1500 microseconds"
    assert format_duration(-MIN) == "-1 minute"
    for micros in (DAY, 90 * S, 1500, 7, 3 * H):
        assert parse_duration(format_duration(micros)) == micros


# ---------------------------------------------------------------------------------------------
# Window specs


def test_tumble_hop_cumulate() -> None:
    assert W.tumble("ts", "1 minute") == W.WindowSpec("tumble", "ts", MIN, MIN, 0)
    spec = W.hop("ts", size="1 day", slide="1 minute", offset="-5 minutes")
    assert (spec.kind, spec.time_col, spec.size, spec.slide, spec.offset) == (
        "hop",
        "ts",
        DAY,
        MIN,
        -5 * MIN,
    )
    assert spec.normalized_offset == 0  # -5 minutes mod 1 minute
    assert spec.slice_size == MIN
    c = W.cumulate("ts", step="1 hour", max_size="1 day", offset=dt.timedelta(hours=-1))
    assert (c.kind, c.size, c.slide, c.step, c.max_size) == ("cumulate", DAY, H, H, DAY)
    assert c.normalized_offset == 23 * H
    assert W.hop("ts", "10 minutes", "4 minutes").slice_size == 2 * MIN
    assert W.hop("ts", "10 minutes", "10 minutes").slide == 10 * MIN  # slide == size is fine
    assert W.tumble("ts", dt.timedelta(seconds=5), offset="2 seconds").normalized_offset == 2 * S


def test_specs_are_frozen_and_hashable() -> None:
    spec = W.tumble("ts", "1 minute")
    with pytest.raises(AttributeError):
        spec.size = 5  # type: ignore[misc]
    assert len({spec, W.tumble("ts", "60 seconds")}) == 1
    agg = W.sum("x")
    with pytest.raises(AttributeError):
        agg.name = "y"  # type: ignore[misc]
    assert hash(agg) == hash(W.sum("x"))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: W.tumble("ts", "0 seconds"), "the window size must be positive, got 0 seconds"),
        (lambda: W.tumble("ts", "-1 minute"), "the window size must be positive, got -1 minute"),
        (lambda: W.hop("ts", "1 minute", "0 seconds"), "the window slide must be positive"),
        (
            lambda: W.hop("ts", "1 minute", "2 minutes"),
            r"the slide \(2 minutes\) must not be larger than the window size \(1 minute\)",
        ),
        (lambda: W.cumulate("ts", "0 seconds", "1 day"), "the window step must be positive"),
        (lambda: W.cumulate("ts", "1 hour", "0 seconds"), "the window max_size must be positive"),
        (
            lambda: W.cumulate("ts", "7 hours", "1 day"),
            r"the max_size \(1 day\) must be a multiple of the step \(7 hours\)",
        ),
        (lambda: W.cumulate("ts", "2 days", "1 day"), "must be a multiple of the step"),
        (lambda: W.tumble("ts", "1 month"), "invalid size duration '1 month'"),
        (lambda: W.hop("ts", "1 day", "1.5 hours"), "invalid slide duration"),
        (lambda: W.tumble("ts", "1 day", "1 sec"), "invalid offset duration"),
        (lambda: W.cumulate("ts", "1 hour", "1 mon"), "invalid max_size duration"),
        (lambda: W.WindowSpec("session", "ts", 1, 1), "unknown window kind 'session'"),
        (lambda: W.WindowSpec("tumble", "ts", 2, 1), "a tumbling window slides by its size"),
    ],
)
def test_spec_validation(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_spec_type_errors() -> None:
    with pytest.raises(TypeError, match="time column must be given by name"):
        W.tumble(5, "1 minute")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="the size must be a duration string"):
        W.tumble("ts", 60_000_000)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="size must be an int"):
        W.WindowSpec("tumble", "ts", 1.0, 1.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Aggregate specs and names


def test_default_names_match_spark() -> None:
    assert [
        a.name
        for a in (
            W.count(),
            W.count("*"),
            W.count("x"),
            W.sum("x"),
            W.avg("x"),
            W.min("x"),
            W.max("x"),
            W.count_distinct("x"),
            W.first_value("x"),
            W.last_value("x"),
        )
    ] == [
        "count(1)",
        "count(1)",
        "count(x)",
        "sum(x)",
        "avg(x)",
        "min(x)",
        "max(x)",
        "count(DISTINCT x)",
        "first_value(x)",
        "last_value(x)",
    ]
    assert W.count().col is None and W.count("*").col is None


def test_alias() -> None:
    a = W.sum("price")
    b = a.alias("total")
    assert (b.fn, b.col, b.name) == ("sum", "price", "total")
    assert a.name == "sum(price)"  # unchanged
    assert b.alias("t2").name == "t2"
    with pytest.raises(ValueError, match="non-empty string"):
        a.alias("")
    with pytest.raises(ValueError, match="non-empty string"):
        a.alias(None)  # type: ignore[arg-type]


def test_agg_spec_errors() -> None:
    with pytest.raises(TypeError, match="sum takes a column name"):
        W.sum(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="count_distinct takes a column name"):
        W.count_distinct(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown aggregate 'median'"):
        W.AggSpec("median", "x", "m")
    with pytest.raises(ValueError, match="max needs a column"):
        W.AggSpec("max", None, "m")


@pytest.mark.spark
def test_default_names_are_sparks(spark) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(1,)], "x int")
    names = df.agg(
        F.count(F.lit(1)),
        F.count("x"),
        F.sum("x"),
        F.avg("x"),
        F.min("x"),
        F.max("x"),
        F.count_distinct("x"),
        F.first_value(F.col("x")),
        F.last_value(F.col("x")),
    ).columns
    ours = [
        a.name
        for a in (
            W.count(),
            W.count("x"),
            W.sum("x"),
            W.avg("x"),
            W.min("x"),
            W.max("x"),
            W.count_distinct("x"),
            W.first_value("x"),
            W.last_value("x"),
        )
    ]
    assert ours == names


# ---------------------------------------------------------------------------------------------
# Plan and schemas

TS = pa.timestamp("us", tz="UTC")
NTZ = pa.timestamp("us")
SCHEMA = pa.schema(
    [
        ("auction", pa.int64()),
        ("bidder", pa.large_string()),
        ("price", pa.decimal128(10, 2)),
        ("qty", pa.int32()),
        ("rate", pa.float32()),
        ("ts", TS),
        ("ok", pa.bool_()),
        ("day", pa.date32()),
        ("blob", pa.binary()),
        ("tags", pa.list_(pa.string())),
        ("ts_ns", pa.timestamp("ns")),
        ("small", pa.int8()),
        ("u", pa.uint32()),
    ]
)


def test_plan_dict_and_local_columns() -> None:
    wp = build_plan(
        SCHEMA,
        W.hop("ts", "1 day", "1 minute", offset="-30 seconds"),
        ["auction", "bidder"],
        [
            W.count().alias("bids"),
            W.sum("price").alias("total"),
            W.max("price").alias("top"),
            W.count_distinct("bidder").alias("bidders"),
            W.first_value("qty"),
        ],
        ansi=False,
        bundle_rows=1000,
        bundle_bytes=1 << 20,
    )
    assert wp.plan == {
        "kind": "hop",
        "size": DAY,
        "slide": MIN,
        "offset": 30 * S,
        "num_keys": 2,
        "aggs": [
            {"fn": "count", "arg": -1},
            {"fn": "sum", "arg": 3},
            {"fn": "max", "arg": 3},
            {"fn": "count_distinct", "arg": 4},
            {"fn": "first_value", "arg": 5},
        ],
        "ansi": False,
        "bundle_rows": 1000,
        "bundle_bytes": 1 << 20,
    }
    # keys, time, then every argument column once (a key used as an argument appears again)
    assert wp.input_columns == ["auction", "bidder", "ts", "price", "bidder", "qty"]
    assert wp.local_schema.names == ["__k0", "__k1", "__time", "__v0", "__v1", "__v2"]
    # large_string columns reach the kernel as string
    assert wp.local_schema.types == [
        pa.int64(),
        pa.string(),
        TS,
        pa.decimal128(10, 2),
        pa.string(),
        pa.int32(),
    ]


def test_partial_schema() -> None:
    wp = build_plan(
        SCHEMA,
        W.tumble("ts", "1 minute"),
        ["auction"],
        [
            W.count(),
            W.count("blob"),
            W.sum("qty"),
            W.avg("rate"),
            W.sum("price"),
            W.min("bidder"),
            W.last_value("day"),
            W.count_distinct("bidder"),
            W.avg("price"),
        ],
    )
    fields = [(f.name, f.type, f.nullable) for f in wp.partial_schema]
    element = lambda t: pa.list_(pa.field("element", t))  # noqa: E731
    assert fields == [
        ("__key", pa.binary(), False),
        ("__slice", pa.int64(), False),
        ("__a0_n", pa.int64(), False),
        ("__a1_n", pa.int64(), False),
        ("__a2_s", pa.decimal128(38, 0), True),
        ("__a2_n", pa.int64(), True),
        ("__a3_s", pa.float64(), True),
        ("__a3_n", pa.int64(), True),
        ("__a4_s", pa.decimal128(38, 2), True),
        ("__a4_n", pa.int64(), True),
        ("__a5_v", pa.string(), True),  # large_string travels as string
        ("__a6_v", pa.date32(), True),
        ("__a6_t", pa.int64(), True),
        ("__a7_v", element(pa.string()), True),
        ("__a7_c", element(pa.int64()), True),
        ("__a8_s", pa.decimal128(38, 2), True),
        ("__a8_n", pa.int64(), True),
    ]


def test_output_schema() -> None:
    wp = build_plan(
        SCHEMA,
        W.cumulate("ts", "1 hour", "1 day"),
        ["bidder", "ok"],
        [W.count(), W.avg("qty"), W.max("bidder").alias("mx"), W.count_distinct("day")],
    )
    out = wp.output_schema
    assert out.names == [
        "window_start",
        "window_end",
        "window_time",
        "bidder",
        "ok",
        "count(1)",
        "avg(qty)",
        "mx",
        "count(DISTINCT day)",
    ]
    assert out.types == [TS, TS, TS, pa.string(), pa.bool_(), pa.int64(), pa.float64()] + [
        pa.string(),
        pa.int64(),
    ]
    assert [f.nullable for f in out] == [True] * 5 + [False, True, True, False]
    # TIMESTAMP_NTZ time column: NTZ window columns
    ntz = pa.schema([("k", pa.string()), ("t", NTZ)])
    out = build_plan(ntz, W.tumble("t", "1 hour"), "k", []).output_schema
    assert out.types == [NTZ, NTZ, NTZ, pa.string()]


@pytest.mark.parametrize(
    ("fn", "arg", "expected"),
    [
        ("count", None, pa.int64()),
        ("count", pa.string(), pa.int64()),
        ("sum", pa.int8(), pa.int64()),
        ("sum", pa.int16(), pa.int64()),
        ("sum", pa.int32(), pa.int64()),
        ("sum", pa.int64(), pa.int64()),
        ("sum", pa.float32(), pa.float64()),
        ("sum", pa.float64(), pa.float64()),
        ("sum", pa.decimal128(10, 2), pa.decimal128(20, 2)),
        ("sum", pa.decimal128(30, 5), pa.decimal128(38, 5)),
        ("sum", pa.decimal128(38, 38), pa.decimal128(38, 38)),
        ("avg", pa.int8(), pa.float64()),
        ("avg", pa.int64(), pa.float64()),
        ("avg", pa.float32(), pa.float64()),
        ("avg", pa.decimal128(10, 2), pa.decimal128(14, 6)),
        ("avg", pa.decimal128(36, 3), pa.decimal128(38, 7)),
        ("avg", pa.decimal128(38, 36), pa.decimal128(38, 38)),
        ("min", pa.float32(), pa.float32()),
        ("max", pa.decimal128(7, 3), pa.decimal128(7, 3)),
        ("max", pa.large_string(), pa.string()),
        ("min", pa.bool_(), pa.bool_()),
        ("first_value", pa.date32(), pa.date32()),
        ("last_value", TS, TS),
        ("last_value", NTZ, NTZ),
        ("count_distinct", pa.float64(), pa.int64()),
    ],
)
def test_result_types(fn: str, arg: pa.DataType | None, expected: pa.DataType) -> None:
    assert result_type(fn, arg) == expected


@pytest.mark.spark
def test_result_types_are_sparks(spark) -> None:
    """Spark's own result types for the aggregates, through Arrow."""
    from pyspark.sql import functions as F

    from sliceflow._runtime.spark_types import arrow_type

    df = spark.createDataFrame(
        [(1, 1, 1, 1, 1.0, 1.0, decimal.Decimal("1.00"), decimal.Decimal("1.000"))],
        "a tinyint, b smallint, c int, d bigint, e float, f double, g decimal(10,2), "
        "h decimal(36,3)",
    )
    arrow = {f.name: arrow_type(f.dataType, "UTC", False) for f in df.schema.fields}
    for fn, spark_fn in (("sum", F.sum), ("avg", F.avg)):
        got = df.agg(*[spark_fn(c) for c in df.columns]).schema
        for column, field in zip(df.columns, got.fields, strict=True):
            assert result_type(fn, arrow[column]) == arrow_type(field.dataType, "UTC", False), (
                fn,
                column,
            )


@pytest.mark.parametrize(
    ("by", "aggs", "message"),
    [
        (["nope"], [], r"grouping column 'nope' is not a column of the input \(columns: auction"),
        ([], [W.sum("prize")], "aggregate 'sum\\(prize\\)': argument 'prize' is not a column"),
        (["blob"], [], "grouping column 'blob' has type BINARY: BINARY grouping keys"),
        (["tags"], [], "grouping column 'tags' has type ARRAY<STRING>: nested"),
        (["u"], [], "grouping column 'u' has type Arrow uint32: supported key types"),
        (["ts_ns"], [], "timestamps must be in microseconds"),
        ([], [W.sum("bidder")], "aggregate 'sum\\(bidder\\)': column 'bidder' has type STRING;"),
        ([], [W.avg("ok")], "avg takes a numeric column"),
        ([], [W.sum("day")], "has type DATE"),
        ([], [W.min("blob")], "column 'blob' has type BINARY; min takes BOOLEAN"),
        ([], [W.count_distinct("tags")], "nested"),
        ([], [W.count("tags")], "nested"),
        ([], [W.max("u")], "Arrow uint32"),
        ([], [W.first_value("ts_ns")], "cast it to timestamp\\[us\\]"),
        ([], [W.count(), W.count()], r"duplicate output column name\(s\) \['count\(1\)'\]"),
        (["auction"], [W.sum("qty").alias("auction")], r"duplicate output column name"),
        ([], [W.max("qty").alias("window_end")], r"\['window_end'\]"),
        (["auction", "auction"], [], r"\['auction'\]"),
    ],
)
def test_plan_errors(by, aggs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_plan(SCHEMA, W.tumble("ts", "1 minute"), by, aggs)


@pytest.mark.parametrize(
    ("time_col", "message"),
    [
        ("qty", "time column 'qty' has type INT; windows need a TIMESTAMP or TIMESTAMP_NTZ"),
        ("day", "has type DATE.*cast it to TIMESTAMP first"),
        ("ts_ns", r"cast it to timestamp\[us\]"),
        ("missing", "time column 'missing' is not a column of the input"),
    ],
)
def test_time_column_errors(time_col: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_plan(SCHEMA, W.tumble(time_col, "1 minute"), [], [W.count()])


def test_plan_argument_errors() -> None:
    spec = W.tumble("ts", "1 minute")
    dup = pa.schema([("a", pa.int64()), ("a", pa.int64()), ("ts", TS)])
    with pytest.raises(ValueError, match="grouping column 'a' is ambiguous"):
        build_plan(dup, spec, ["a"], [])
    with pytest.raises(TypeError, match="spec must be a window spec"):
        build_plan(SCHEMA, "1 minute", [], [])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="aggs must be aggregate specs"):
        build_plan(SCHEMA, spec, [], ["count"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="bundle_rows must be a positive int"):
        build_plan(SCHEMA, spec, [], [], bundle_rows=0)
    with pytest.raises(ValueError, match="bundle_bytes must be a positive int"):
        build_plan(SCHEMA, spec, [], [], bundle_bytes=-1)
    with pytest.raises(TypeError, match="grouping column must be given by column name"):
        build_plan(SCHEMA, spec, [1], [])  # type: ignore[list-item]
    # by as one string, aggs as one spec, None for no keys
    wp = build_plan(SCHEMA, spec, "auction", W.count())  # type: ignore[arg-type]
    assert wp.plan["num_keys"] == 1 and len(wp.plan["aggs"]) == 1
    assert build_plan(SCHEMA, spec, None, [W.count()]).plan["num_keys"] == 0


def test_local_batch() -> None:
    schema = pa.schema([("k", pa.string()), ("ts", NTZ), ("v", pa.int64())])
    batch = pa.record_batch(
        [pa.array(["a", "b"]), pa.array([0, 1], NTZ), pa.array([5, 6])], schema=schema
    )
    wp = build_plan(schema, W.tumble("ts", "1 minute"), ["k"], [W.sum("v"), W.max("k")])
    local = wp.local_batch(batch)
    assert local.schema.names == ["__k0", "__time", "__v0", "__v1"]
    assert local.column(3).to_pylist() == ["a", "b"]
    other = pa.record_batch([pa.array([1]), pa.array([0], NTZ), pa.array([5])], names=schema.names)
    with pytest.raises(ValueError, match="every batch must have the schema"):
        wp.local_batch(other)


# ---------------------------------------------------------------------------------------------
# Spark wiring (no kernel needed: plans and schemas are made on the driver)


@pytest.mark.spark
@pytest.mark.parametrize("text", [t for t, _ in ACCEPTED] + [t for t, _ in REJECTED])
def test_durations_agree_with_spark_window(spark, text: str) -> None:
    """A string makes a window here exactly when it makes one in Spark, of the same size."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(dt.datetime(1970, 1, 1),)], "ts timestamp")
    try:
        row = df.select(F.window("ts", text).alias("w")).first()
    except Exception:
        spark_size = None
    else:
        spark_size = (row.w.end - row.w.start) // dt.timedelta(microseconds=1)
    try:
        ours = W.tumble("ts", text).size
    except ValueError:
        ours = None
    assert ours == spark_size


@pytest.mark.spark
def test_offsets_agree_with_spark_start_time(spark) -> None:
    from pyspark.sql import functions as F

    t = dt.datetime(2024, 1, 1, 12, 34, 56)
    df = spark.createDataFrame([(t,)], "ts timestamp_ntz")
    for size, slide, start in [
        ("1 hour", "1 hour", "15 minutes"),
        ("1 hour", "1 hour", "-15 minutes"),
        ("10 minutes", "3 minutes", "1 minute 30 seconds"),
        ("1 day", "1 day", "-1 hour"),
    ]:
        rows = df.select(F.window("ts", size, slide, start).alias("w")).collect()
        spark_starts = sorted(r.w.start for r in rows)
        spec = W.hop("ts", size, slide, offset=start)
        t_us = (t - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
        first = (
            spec.normalized_offset
            + ((t_us - spec.normalized_offset - spec.size) // spec.slide + 1) * spec.slide
        )
        ours = [
            dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=s)
            for s in range(first, t_us + 1, spec.slide)
        ]
        assert ours == spark_starts, (size, slide, start)


@pytest.mark.spark
def test_window_agg_schema_and_early_errors(spark) -> None:
    from pyspark.sql import types as T

    from sliceflow.spark import window_agg

    df = spark.createDataFrame(
        [],
        "auction bigint, bidder string, price decimal(10,2), ts timestamp, "
        "ntz timestamp_ntz, tags array<string>, b binary",
    )
    out = window_agg(
        df,
        W.hop("ts", size="1 day", slide="1 minute"),
        by=["auction"],
        aggs=[
            W.count().alias("bids"),
            W.sum("price").alias("total"),
            W.max("price").alias("top"),
            W.count_distinct("bidder").alias("bidders"),
            W.avg("price"),
        ],
    )
    assert [(f.name, f.dataType) for f in out.schema.fields] == [
        ("window_start", T.TimestampType()),
        ("window_end", T.TimestampType()),
        ("window_time", T.TimestampType()),
        ("auction", T.LongType()),
        ("bids", T.LongType()),
        ("total", T.DecimalType(20, 2)),
        ("top", T.DecimalType(10, 2)),
        ("bidders", T.LongType()),
        ("avg(price)", T.DecimalType(14, 6)),
    ]
    out = window_agg(df, W.tumble("NTZ", "1 hour"), "BIDDER", [W.min("TS")])
    assert out.columns == ["window_start", "window_end", "window_time", "bidder", "min(TS)"]
    assert out.schema["window_start"].dataType == T.TimestampNTZType()
    with pytest.raises(ValueError, match="grouping column 'tags' has type ARRAY<STRING>"):
        window_agg(df, W.tumble("ts", "1 hour"), ["tags"], [W.count()])
    with pytest.raises(ValueError, match="BINARY grouping keys are not supported"):
        window_agg(df, W.tumble("ts", "1 hour"), ["b"], [W.count()])
    with pytest.raises(ValueError, match=r"'nope' is not a column of the input \(columns: auction"):
        window_agg(df, W.tumble("ts", "1 hour"), ["auction"], [W.max("nope")])
    with pytest.raises(ValueError, match="time column 'auction' has type BIGINT"):
        window_agg(df, W.tumble("auction", "1 hour"), [], [W.count()])
    with pytest.raises(TypeError, match="spec must be a window spec"):
        window_agg(df, "1 hour", [], [W.count()])  # type: ignore[arg-type]


@pytest.mark.spark
def test_streaming_window_agg_needs_a_watermark_and_rocksdb(spark) -> None:
    from sliceflow.spark import window_agg

    stream = spark.readStream.format("rate").load()
    with pytest.raises(ValueError, match=r"withWatermark\('timestamp'"):
        window_agg(stream, W.tumble("timestamp", "1 minute"), [], [W.count()])
    # A watermark on another column does not fire windows of this one.
    other = stream.withColumn("t2", stream["timestamp"]).withWatermark("t2", "1 second")
    with pytest.raises(ValueError, match="define one on its time column"):
        window_agg(other, W.tumble("timestamp", "1 minute"), [], [W.count()])
    watermarked = stream.withWatermark("timestamp", "1 second")
    provider = "spark.sql.streaming.stateStore.providerClass"
    previous = spark.conf.get(provider)
    spark.conf.unset(provider)
    try:
        with pytest.raises(ValueError, match="needs the RocksDB state store"):
            window_agg(watermarked, W.tumble("timestamp", "1 minute"), [], [W.count()])
    finally:
        spark.conf.set(provider, previous)
    with pytest.raises(ValueError, match="emit='incremental' applies to cumulate"):
        window_agg(
            watermarked, W.tumble("timestamp", "1 minute"), [], [W.count()], emit="incremental"
        )
    with pytest.raises(ValueError, match="emit must be"):
        window_agg(watermarked, W.tumble("timestamp", "1 minute"), [], [W.count()], emit="x")
    with pytest.raises(ValueError, match="buckets must be"):
        window_agg(watermarked, W.tumble("timestamp", "1 minute"), [], [W.count()], buckets=0)
    for bad in ("0", "many"):
        spark.conf.set("spark.sliceflow.window.buckets", bad)
        try:
            with pytest.raises(ValueError, match="window.buckets must be a positive integer"):
                window_agg(watermarked, W.tumble("timestamp", "1 minute"), [], [W.count()])
        finally:
            spark.conf.unset("spark.sliceflow.window.buckets")


@pytest.mark.spark
def test_spark_arrow_types(spark) -> None:
    from pyspark.sql import types as T

    from sliceflow._runtime.spark_types import arrow_type, spark_struct

    cases = [
        (T.BooleanType(), pa.bool_()),
        (T.ByteType(), pa.int8()),
        (T.ShortType(), pa.int16()),
        (T.IntegerType(), pa.int32()),
        (T.LongType(), pa.int64()),
        (T.FloatType(), pa.float32()),
        (T.DoubleType(), pa.float64()),
        (T.DecimalType(12, 3), pa.decimal128(12, 3)),
        (T.StringType(), pa.string()),
        (T.BinaryType(), pa.binary()),
        (T.DateType(), pa.date32()),
        (T.TimestampType(), pa.timestamp("us", tz="Asia/Tokyo")),
        (T.TimestampNTZType(), pa.timestamp("us")),
        (T.ArrayType(T.LongType()), pa.list_(pa.int64())),
    ]
    for spark_type, expected in cases:
        assert arrow_type(spark_type, "Asia/Tokyo", False) == expected
    assert arrow_type(T.StringType(), "UTC", True) == pa.large_string()
    with pytest.raises(ValueError, match="does not support columns of type interval"):
        arrow_type(T.DayTimeIntervalType(), "UTC", False)
    wp = build_plan(SCHEMA, W.tumble("ts", "1 minute"), ["auction"], [W.count_distinct("qty")])
    partial = spark_struct(wp.partial_schema)
    assert partial["__key"] == T.StructField("__key", T.BinaryType(), False)
    assert partial["__a0_v"].dataType == T.ArrayType(T.IntegerType(), True)


# ---------------------------------------------------------------------------------------------
# With the kernel


def _bids() -> pa.Table:
    base = dt.datetime(2024, 1, 1)
    rows = [
        # auction, bidder, price, seconds after base
        (1, "ann", "10.50", 5),
        (1, "bob", "12.00", 50),
        (1, "ann", "15.25", 65),
        (2, "cat", "7.00", 30),
        (2, None, "8.00", 31),
        (2, "cat", None, 125),
        (None, "dan", "1.00", 10),
        (1, "eve", "3.00", None),  # null time: skipped
        (3, "fay", "99.99", 3600),
    ]
    return pa.table(
        {
            "auction": pa.array([r[0] for r in rows], pa.int64()),
            "bidder": pa.array([r[1] for r in rows], pa.string()),
            "price": pa.array(
                [None if r[2] is None else decimal.Decimal(r[2]) for r in rows],
                pa.decimal128(10, 2),
            ),
            "ts": pa.array(
                [None if r[3] is None else base + dt.timedelta(seconds=r[3]) for r in rows],
                pa.timestamp("us", tz="UTC"),
            ),
        }
    )


AGGS = [
    W.count().alias("bids"),
    W.sum("price").alias("total"),
    W.max("price").alias("top"),
    W.count_distinct("bidder").alias("bidders"),
    W.first_value("bidder").alias("first"),
    W.avg("price").alias("mean"),
]


def _ref(table: pa.Table, spec: W.WindowSpec, by: list[str], aggs: list[W.AggSpec]) -> pa.Table:
    from sliceflow.testing.window_reference import RefAgg, RefWindow, reference_aggregate

    window = RefWindow(spec.kind, spec.size, spec.slide, spec.offset)
    return reference_aggregate(
        table, spec.time_col, window, by, [RefAgg(a.fn, a.col, a.name) for a in aggs]
    )


@pytest.mark.parametrize(
    "spec",
    [
        W.tumble("ts", "1 minute"),
        W.hop("ts", "2 minutes", "30 seconds"),
        W.hop("ts", "90 seconds", "1 minute", offset="10 seconds"),
        W.cumulate("ts", "30 seconds", "2 minutes"),
    ],
)
def test_aggregate_matches_reference(spec: W.WindowSpec) -> None:
    from sliceflow.testing.window_reference import assert_tables_equal

    table = _bids()
    stats: dict[str, int] = {}
    got = W.aggregate(table, spec, ["auction"], AGGS, stats=stats)
    assert got.schema == build_plan(table.schema, spec, ["auction"], AGGS).output_schema
    assert_tables_equal(got, _ref(table, spec, ["auction"], AGGS), ["auction"])
    assert stats["rows_in"] == table.num_rows
    assert stats["rows_null_time"] == 1
    # the same through small batches and tiny bundles
    batches = table.to_batches(max_chunksize=2)
    again = W.aggregate(iter(batches), spec, ["auction"], AGGS, bundle_rows=3)
    assert_tables_equal(again, got, ["auction"])


def test_aggregate_inputs() -> None:
    table = _bids()
    spec = W.tumble("ts", "1 hour")
    expected = W.aggregate(table, spec, "auction", [W.count()])
    assert expected.num_rows == 4  # auctions 1, 2, None, 3
    batch = table.combine_chunks().to_batches()[0]
    assert W.aggregate(batch, spec, "auction", [W.count()]).equals(expected)
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    assert W.aggregate(reader, spec, "auction", [W.count()]).equals(expected)
    empty = W.aggregate(table.slice(0, 0), spec, "auction", [W.count()])
    assert empty.num_rows == 0 and empty.schema == expected.schema
    with pytest.raises(ValueError, match="no record batches"):
        W.aggregate(iter([]), spec, "auction", [W.count()])
    with pytest.raises(TypeError, match="data must be a pyarrow Table"):
        W.aggregate({"a": [1]}, spec, "auction", [W.count()])  # type: ignore[arg-type]


def test_aggregate_large_string() -> None:
    t = pa.table(
        {
            "k": pa.array(["a", "b", "a", None], pa.large_string()),
            "ts": pa.array([0, 1, 2, 3], pa.timestamp("us")),
        }
    )
    out = W.aggregate(t, W.tumble("ts", "1 second"), ["k"], [W.count(), W.max("k")])
    assert out.schema.field("k").type == pa.string()
    assert out.schema.field("max(k)").type == pa.string()
    rows = sorted((r["k"] or "", r["count(1)"], r["max(k)"]) for r in out.to_pylist())
    assert rows == [("", 1, None), ("a", 2, "a"), ("b", 1, "b")]


def test_aggregate_ansi_overflow() -> None:
    table = pa.table(
        {
            "v": pa.array([2**62, 2**62, 2**62], pa.int64()),
            "ts": pa.array([0, 1, 2], pa.timestamp("us")),
        }
    )
    spec = W.tumble("ts", "1 second")
    with pytest.raises(OverflowError, match=r"^\[ARITHMETIC_OVERFLOW\]"):
        W.aggregate(table, spec, [], [W.sum("v")])
    wrapped = W.aggregate(table, spec, [], [W.sum("v")], ansi=False)
    assert wrapped.column("sum(v)").to_pylist() == [3 * 2**62 - 2**64]


@pytest.mark.spark
@pytest.mark.parametrize(
    "spec",
    [
        W.tumble("ts", "1 minute"),
        W.hop("ts", "2 minutes", "30 seconds"),
        W.hop("ts", "90 seconds", "1 minute", offset="10 seconds"),
    ],
)
def test_window_agg_matches_spark(spark, spec: W.WindowSpec) -> None:
    from pyspark.sql import functions as F

    from sliceflow.spark import WindowMetrics, window_agg

    table = _bids()
    df = spark.createDataFrame(
        table.to_pylist(), "auction bigint, bidder string, price decimal(10,2), ts timestamp"
    ).repartition(3)
    metrics = WindowMetrics(spark)
    got = window_agg(df, spec, ["auction"], AGGS, metrics=metrics)
    duration = format_duration
    window = F.window(
        "ts",
        duration(spec.size),
        duration(spec.slide),
        duration(spec.normalized_offset),
    )
    expected = (
        df.where(F.col("ts").isNotNull())
        .groupBy(window.alias("w"), "auction")
        .agg(
            F.count(F.lit(1)).alias("bids"),
            F.sum("price").alias("total"),
            F.max("price").alias("top"),
            F.count_distinct("bidder").alias("bidders"),
            F.min_by("bidder", F.when(F.col("bidder").isNotNull(), F.col("ts"))).alias("first"),
            F.avg("price").alias("mean"),
        )
        .select(
            F.col("w.start").alias("window_start"),
            F.col("w.end").alias("window_end"),
            F.window_time("w").alias("window_time"),
            "auction",
            "bids",
            "total",
            "top",
            "bidders",
            "first",
            "mean",
        )
    )
    assert got.schema == expected.schema or [f.dataType for f in got.schema] == [
        f.dataType for f in expected.schema
    ]
    got_rows = sorted(map(tuple, got.collect()), key=repr)
    expected_rows = sorted(map(tuple, expected.collect()), key=repr)
    assert got_rows == expected_rows
    value = metrics.value
    assert value["rows_in"] == table.num_rows
    assert value["rows_null_time"] == 1
    assert value["windows_fired"] == len(expected_rows)
