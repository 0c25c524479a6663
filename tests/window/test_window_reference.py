"""The brute-force window reference (sliceflow.testing.window_reference) on hand-computed cases
and on the examples of Flink's window TVF documentation and of Spark's ``window()`` docstring."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pyarrow as pa
import pytest

from sliceflow.testing.window_reference import (
    RefAgg,
    RefWindow,
    assert_tables_equal,
    reference_aggregate,
    result_type,
    window_order_ok,
    windows_of,
)

S = 1_000_000  # µs per second
MIN = 60 * S
TS = pa.timestamp("us")
TS_UTC = pa.timestamp("us", tz="UTC")


def us(*args: int) -> int:
    """µs since the epoch of a naive UTC datetime."""
    return (dt.datetime(*args) - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)


def rows(table: pa.Table, *names: str) -> list[tuple]:
    cols = [table.column(n).to_pylist() for n in names]
    return list(zip(*cols, strict=True))


# ------------------------------------------------------------------------------------------
# windows_of


def test_tumble_windows():
    w = RefWindow("tumble", 10)
    assert windows_of(0, w) == [(0, 10)]
    assert windows_of(9, w) == [(0, 10)]
    assert windows_of(10, w) == [(10, 20)]
    assert windows_of(-1, w) == [(-10, 0)]
    assert windows_of(-10, w) == [(-10, 0)]
    assert windows_of(-11, w) == [(-20, -10)]
    assert windows_of(5, RefWindow("tumble", 10, offset=3)) == [(3, 13)]
    assert windows_of(2, RefWindow("tumble", 10, offset=3)) == [(-7, 3)]


def test_hop_windows():
    w = RefWindow("hop", 10, 5)
    assert windows_of(0, w) == [(-5, 5), (0, 10)]
    assert windows_of(7, w) == [(0, 10), (5, 15)]
    assert windows_of(-1, w) == [(-10, 0), (-5, 5)]
    # a slide that does not divide the size: a row is in 2 or 3 windows
    w = RefWindow("hop", 10, 4)
    assert windows_of(9, w) == [(0, 10), (4, 14), (8, 18)]
    assert windows_of(10, w) == [(4, 14), (8, 18)]
    assert windows_of(-1, w) == [(-8, 2), (-4, 6)]
    # slide == size is a tumble
    assert windows_of(13, RefWindow("hop", 10, 10)) == windows_of(13, RefWindow("tumble", 10))


@pytest.mark.parametrize("ts", [-25, -1, 0, 1, 7, 12, 99])
def test_only_offset_mod_slide_matters(ts):
    for kind, size, slide, step in (("tumble", 6, 6, 6), ("hop", 10, 4, 4), ("cumulate", 6, 2, 6)):
        base = windows_of(ts, RefWindow(kind, size, slide, 1))
        for offset in (1 + step, 1 + 7 * step, 1 - step, 1 - 3 * step):
            assert windows_of(ts, RefWindow(kind, size, slide, offset)) == base


def test_cumulate_windows():
    w = RefWindow("cumulate", 6, 2, 1)  # cycles start at 1 + 6k, windows end every 2
    assert windows_of(1, w) == [(1, 3), (1, 5), (1, 7)]
    assert windows_of(4, w) == [(1, 5), (1, 7)]
    assert windows_of(6, w) == [(1, 7)]
    assert windows_of(7, w) == [(7, 9), (7, 11), (7, 13)]
    assert windows_of(0, w) == [(-5, 1)]
    assert windows_of(-5, w) == [(-5, -3), (-5, -1), (-5, 1)]
    assert windows_of(0, RefWindow("cumulate", 4, 4)) == [(0, 4)]


def test_window_validation():
    with pytest.raises(ValueError):
        RefWindow("hop", 5, 10)
    with pytest.raises(ValueError):
        RefWindow("cumulate", 10, 4)
    with pytest.raises(ValueError):
        RefWindow("tumble", 0)
    assert RefWindow("hop", dt.timedelta(minutes=10), dt.timedelta(minutes=5)).slide == 5 * MIN


# ------------------------------------------------------------------------------------------
# Flink's window TVF documentation (the Bid table) and Spark's window() docstring

BID = pa.table(
    {
        "bidtime": pa.array([us(2020, 4, 15, 8, m) for m in (5, 7, 9, 11, 13, 17)], TS),
        "price": pa.array(
            [Decimal(x) for x in ("4.00", "2.00", "5.00", "3.00", "1.00", "6.00")],
            pa.decimal128(10, 2),
        ),
        "item": ["C", "A", "D", "B", "E", "F"],
        "supplier_id": [
            "supplier1",
            "supplier1",
            "supplier2",
            "supplier2",
            "supplier1",
            "supplier2",
        ],
    }
)
SUM_PRICE = [RefAgg("sum", "price", "total")]


def _bid_windows(table: pa.Table) -> list[tuple]:
    return [
        (s.strftime("%H:%M"), e.strftime("%H:%M"), str(v))
        for s, e, v in rows(table, "window_start", "window_end", "total")
    ]


def test_flink_docs_tumble():
    out = reference_aggregate(BID, "bidtime", RefWindow("tumble", 10 * MIN), [], SUM_PRICE)
    assert out.schema.field("total").type == pa.decimal128(20, 2)
    assert _bid_windows(out) == [("08:00", "08:10", "11.00"), ("08:10", "08:20", "10.00")]


def test_flink_docs_hop():
    out = reference_aggregate(BID, "bidtime", RefWindow("hop", 10 * MIN, 5 * MIN), [], SUM_PRICE)
    assert _bid_windows(out) == [
        ("08:00", "08:10", "11.00"),
        ("08:05", "08:15", "15.00"),
        ("08:10", "08:20", "10.00"),
        ("08:15", "08:25", "6.00"),
    ]


def test_flink_docs_cumulate():
    out = reference_aggregate(
        BID, "bidtime", RefWindow("cumulate", 10 * MIN, 2 * MIN), [], SUM_PRICE
    )
    assert _bid_windows(out) == [
        ("08:00", "08:06", "4.00"),
        ("08:00", "08:08", "6.00"),
        ("08:00", "08:10", "11.00"),
        ("08:10", "08:12", "3.00"),
        ("08:10", "08:14", "4.00"),
        ("08:10", "08:16", "4.00"),
        ("08:10", "08:18", "10.00"),
        ("08:10", "08:20", "10.00"),
    ]


def test_flink_docs_tumble_by_supplier():
    out = reference_aggregate(
        BID,
        "bidtime",
        RefWindow("tumble", 10 * MIN),
        ["supplier_id"],
        [*SUM_PRICE, RefAgg("count", None, "n")],
    )
    got = [
        (s.strftime("%H:%M"), k, str(v), n)
        for s, k, v, n in rows(out, "window_start", "supplier_id", "total", "n")
    ]
    assert sorted(got) == [
        ("08:00", "supplier1", "6.00", 2),
        ("08:00", "supplier2", "5.00", 1),
        ("08:10", "supplier1", "1.00", 1),
        ("08:10", "supplier2", "9.00", 2),
    ]
    # grouped by key, within a key by window end
    assert window_order_ok(out, ["supplier_id"])
    assert out.schema.names == [
        "window_start", "window_end", "window_time", "supplier_id", "total", "n"
    ]  # fmt: skip


def test_spark_docs_window():
    t = pa.table({"date": pa.array([us(2016, 3, 11, 9, 0, 7)], TS_UTC), "val": [1]})
    out = reference_aggregate(
        t, "date", RefWindow("tumble", 5 * S), [], [RefAgg("sum", "val", "sum")]
    )
    assert out.schema.field("window_start").type == TS_UTC
    ((start, end, wt, total),) = rows(out, "window_start", "window_end", "window_time", "sum")
    assert start == dt.datetime(2016, 3, 11, 9, 0, 5, tzinfo=dt.timezone.utc)
    assert end == dt.datetime(2016, 3, 11, 9, 0, 10, tzinfo=dt.timezone.utc)
    assert wt == end - dt.timedelta(microseconds=1)
    assert total == 1


# ------------------------------------------------------------------------------------------
# Aggregates, nulls, keys


def _one_window(columns: dict, aggs: list[RefAgg], by=(), ansi=True, types=None) -> list[dict]:
    n = len(next(iter(columns.values())))
    data = {"ts": pa.array([0] * n, TS)}
    for name, values in columns.items():
        data[name] = pa.array(values, (types or {}).get(name))
    out = reference_aggregate(
        pa.table(data), "ts", RefWindow("tumble", 10), list(by), aggs, ansi=ansi
    )
    return out.drop_columns(["window_start", "window_end", "window_time"]).to_pylist()


def test_null_rules():
    aggs = [
        RefAgg("count", None, "n"),
        RefAgg("count", "v", "nv"),
        RefAgg("sum", "v", "s"),
        RefAgg("avg", "v", "a"),
        RefAgg("min", "v", "lo"),
        RefAgg("max", "v", "hi"),
        RefAgg("count_distinct", "v", "d"),
        RefAgg("first_value", "v", "f"),
        RefAgg("last_value", "v", "l"),
    ]
    got = _one_window({"v": [None, None]}, aggs, types={"v": pa.int32()})
    assert got == [
        {
            "n": 2,
            "nv": 0,
            "s": None,
            "a": None,
            "lo": None,
            "hi": None,
            "d": 0,
            "f": None,
            "l": None,
        }
    ]
    got = _one_window({"v": [None, 4, 2, None, 4]}, aggs, types={"v": pa.int32()})
    assert got == [
        {"n": 5, "nv": 3, "s": 10, "a": 10 / 3, "lo": 2, "hi": 4, "d": 2, "f": 2, "l": 4}
    ]


def test_null_time_rows_are_skipped():
    t = pa.table({"ts": pa.array([None, 5, None], TS), "k": [1, 2, 3]})
    out = reference_aggregate(t, "ts", RefWindow("tumble", 10), ["k"], [RefAgg("count", None, "n")])
    assert rows(out, "k", "n") == [(2, 1)]


def test_empty_input():
    t = pa.table({"ts": pa.array([], TS_UTC), "k": pa.array([], pa.large_string()),
                  "v": pa.array([], pa.decimal128(5, 1))})  # fmt: skip
    out = reference_aggregate(
        t, "ts", RefWindow("hop", 10, 5), ["k"], [RefAgg("sum", "v", "s"), RefAgg("avg", "v", "a")]
    )
    assert out.num_rows == 0
    assert out.schema == pa.schema(
        [("window_start", TS_UTC), ("window_end", TS_UTC), ("window_time", TS_UTC),
         ("k", pa.large_string()), ("s", pa.decimal128(15, 1)), ("a", pa.decimal128(9, 5))]
    )  # fmt: skip


def test_result_types():
    assert result_type("sum", pa.int8()) == pa.int64()
    assert result_type("sum", pa.float32()) == pa.float64()
    assert result_type("sum", pa.decimal128(30, 3)) == pa.decimal128(38, 3)
    assert result_type("avg", pa.decimal128(36, 36)) == pa.decimal128(38, 38)
    assert result_type("avg", pa.int64()) == pa.float64()
    assert result_type("min", pa.date32()) == pa.date32()
    assert result_type("last_value", pa.string()) == pa.string()
    assert result_type("count_distinct", pa.float64()) == pa.int64()
    with pytest.raises(TypeError):
        result_type("sum", pa.string())
    with pytest.raises(TypeError):
        result_type("avg", pa.date32())


def test_float_order_nan_largest_and_signed_zero():
    aggs = [RefAgg("min", "v", "lo"), RefAgg("max", "v", "hi"), RefAgg("count_distinct", "v", "d")]
    (got,) = _one_window({"v": [1.0, math.nan, -0.0, 0.0, -math.nan, -math.inf]}, aggs)
    assert got["lo"] == -math.inf and math.isnan(got["hi"]) and got["d"] == 4
    (got,) = _one_window({"v": [-0.0, 0.0, None]}, aggs)
    assert got["lo"] == 0.0 and got["hi"] == 0.0 and got["d"] == 1


def test_float_sum_specials():
    aggs = [RefAgg("sum", "v", "s"), RefAgg("avg", "v", "a")]
    (got,) = _one_window({"v": [math.inf, 1.0, -math.inf]}, aggs)
    assert math.isnan(got["s"]) and math.isnan(got["a"])
    (got,) = _one_window({"v": [math.inf, 1.0]}, aggs)
    assert got == {"s": math.inf, "a": math.inf}
    (got,) = _one_window({"v": [1e308, 1e308, -1e308]}, aggs)  # exact sum, no intermediate inf
    assert got["s"] == 1e308
    (got,) = _one_window({"v": [0.5, 0.25]}, aggs, types={"v": pa.float32()})
    assert got == {"s": 0.75, "a": 0.375}


def test_first_last_by_event_time_then_value():
    t = pa.table(
        {
            "ts": pa.array([5, 3, 3, 7, 7, 1, 9], TS),
            "v": ["e", "c2", "c1", "g1", "g2", None, None],
            "x": [1.0, math.nan, 2.0, 0.0, math.nan, 3.0, None],
        }
    )
    aggs = [
        RefAgg("first_value", "v", "fv"),
        RefAgg("last_value", "v", "lv"),
        RefAgg("first_value", "x", "fx"),
        RefAgg("last_value", "x", "lx"),
    ]
    out = reference_aggregate(t, "ts", RefWindow("tumble", 10), [], aggs).to_pylist()
    assert (out[0]["fv"], out[0]["lv"], out[0]["fx"]) == ("c1", "g2", 3.0)
    assert math.isnan(out[0]["lx"])  # NaN is the largest of the values at time 7


def test_int_sum_overflow():
    big = (1 << 63) - 1
    aggs = [RefAgg("sum", "v", "s"), RefAgg("avg", "v", "a")]
    with pytest.raises(OverflowError, match=r"^\[ARITHMETIC_OVERFLOW\]"):
        _one_window({"v": [big, 1]}, aggs)
    (got,) = _one_window({"v": [big, 1]}, aggs, ansi=False)
    assert got == {"s": -(1 << 63), "a": float(1 << 62)}
    (got,) = _one_window({"v": [big, big, big]}, aggs, ansi=False)
    assert got["s"] == big - 2  # 3 * (2^63 - 1) mod 2^64, as a signed value
    # only the total counts: intermediate overflow that comes back in range is no error
    (got,) = _one_window({"v": [big, 1, -1]}, aggs)
    assert got["s"] == big


def test_decimal_sum_and_avg():
    d = pa.decimal128(1, 0)
    aggs = [RefAgg("sum", "v", "s"), RefAgg("avg", "v", "a")]
    (got,) = _one_window({"v": [Decimal(1)] + [Decimal(0)] * 31}, aggs, types={"v": d})
    assert got == {"s": Decimal(1), "a": Decimal("0.0313")}  # 1/32 = 0.03125, half-up
    (got,) = _one_window({"v": [Decimal(-1)] + [Decimal(0)] * 31}, aggs, types={"v": d})
    assert got["a"] == Decimal("-0.0313")
    (got,) = _one_window({"v": [Decimal(1), Decimal(2), Decimal(2)]}, aggs, types={"v": d})
    assert got["a"] == Decimal("1.6667")


def test_decimal_overflow():
    d38 = pa.decimal128(38, 0)
    big = Decimal(10**38 - 1)
    aggs = [RefAgg("sum", "v", "s")]
    with pytest.raises(OverflowError):
        _one_window({"v": [big, Decimal(1)]}, aggs, types={"v": d38})
    assert _one_window({"v": [big, Decimal(1)]}, aggs, types={"v": d38}, ansi=False) == [
        {"s": None}
    ]
    assert _one_window({"v": [big, Decimal(-1)]}, aggs, types={"v": d38}) == [
        {"s": Decimal(10**38 - 2)}
    ]
    # avg(decimal(38,0)) is decimal(38,4): averages of 10^34 and more do not fit
    aggs = [RefAgg("avg", "v", "a")]
    assert _one_window({"v": [Decimal(10**34)]}, aggs, types={"v": d38}, ansi=False) == [
        {"a": None}
    ]
    with pytest.raises(OverflowError):
        _one_window({"v": [Decimal(10**34)]}, aggs, types={"v": d38})
    assert _one_window({"v": [Decimal(10**34 - 1)]}, aggs, types={"v": d38}) == [
        {"a": Decimal(10**34 - 1)}
    ]


def test_keys_normalised_and_nulls_grouped():
    t = pa.table(
        {
            "ts": pa.array([0, 1, 2, 3, 4, 5, 6], TS),
            "x": [0.0, -0.0, math.nan, -math.nan, None, None, 1.5],
        }
    )
    out = reference_aggregate(t, "ts", RefWindow("tumble", 10), ["x"], [RefAgg("count", None, "n")])
    got = rows(out, "x", "n")
    assert got[0] == (None, 2)
    assert got[1] == (0.0, 2) and math.copysign(1, got[1][0]) == 1
    assert got[2] == (1.5, 1)
    assert math.isnan(got[3][0]) and got[3][1] == 2


def test_multiple_keys_and_types():
    t = pa.table(
        {
            "ts": pa.array([0, 1, 2, 12], TS),
            "b": [True, True, False, True],
            "d": pa.array([0, 0, 0, 0], pa.date32()),
            "s": ["x", "x", "x", "x"],
            "v": pa.array([1, 2, 3, 4], pa.int8()),
        }
    )
    out = reference_aggregate(
        t, "ts", RefWindow("tumble", 10), ["b", "d", "s"], [RefAgg("sum", "v", "s_v")]
    )
    assert out.schema.field("d").type == pa.date32()
    assert rows(out, "b", "s_v", "window_start") == [
        (False, 3, dt.datetime(1970, 1, 1)),
        (True, 3, dt.datetime(1970, 1, 1)),
        (True, 4, dt.datetime(1970, 1, 1, 0, 0, 0, 10)),
    ]


def test_pre_1970_and_large_times():
    t = pa.table({"ts": pa.array([us(1900, 1, 1), us(2262, 1, 1)], TS)})
    out = reference_aggregate(t, "ts", RefWindow("tumble", 7 * 86_400 * S, offset=3 * S), [],
                              [RefAgg("count", None, "n")])  # fmt: skip
    starts = out.column("window_start").cast(pa.int64()).to_pylist()
    assert all((s - 3 * S) % (7 * 86_400 * S) == 0 for s in starts)
    assert starts[0] <= us(1900, 1, 1) < starts[0] + 7 * 86_400 * S


# ------------------------------------------------------------------------------------------
# The comparison helper


def test_assert_tables_equal():
    t = pa.table({"ts": pa.array([0, 1, 11], TS), "k": [1.0, 2.0, 1.0], "v": [0.1, 0.2, 0.3]})
    aggs = [RefAgg("sum", "v", "s")]
    exp = reference_aggregate(t, "ts", RefWindow("tumble", 10), ["k"], aggs)
    assert_tables_equal(exp.take([2, 0, 1]), exp, ["k"])
    nudged = exp.set_column(4, "s", pa.array([x * (1 + 1e-12) for x in exp["s"].to_pylist()]))
    with pytest.raises(AssertionError):
        assert_tables_equal(nudged, exp, ["k"])
    assert_tables_equal(nudged, exp, ["k"], inexact=["s"])
    with pytest.raises(AssertionError, match="missing row"):
        assert_tables_equal(exp.slice(1), exp, ["k"])
    with pytest.raises(AssertionError, match="unexpected row"):
        assert_tables_equal(pa.concat_tables([exp, exp.slice(0, 1)]), exp.slice(1), ["k"])
    neg = exp.set_column(3, "k", pa.array([-0.0 if x == 1.0 else x for x in exp["k"].to_pylist()]))
    zero = exp.set_column(3, "k", pa.array([0.0 if x == 1.0 else x for x in exp["k"].to_pylist()]))
    with pytest.raises(AssertionError, match="column k"):
        assert_tables_equal(neg, zero, ["k"])
    with pytest.raises(AssertionError):
        assert_tables_equal(exp.cast(exp.schema.set(4, pa.field("s", pa.float32()))), exp, ["k"])
