"""The brute-force changelog model (sliceflow.testing.changelog_reference): seed 000's tables,
hand-computed cases for every aggregate with retractions, and properties on random valid
changelogs (materialising the changelog gives the final table, with and without mini-batch)."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sliceflow import window as W
from sliceflow.testing.changelog_reference import (
    ChangelogModel,
    changelog_reference,
    materialize,
    same_value,
)

NAN = math.nan


def ins(**row: Any) -> dict[str, Any]:
    return {"op": "+I", **row}


def ub(**row: Any) -> dict[str, Any]:
    return {"op": "-U", **row}


def ua(**row: Any) -> dict[str, Any]:
    return {"op": "+U", **row}


def de(**row: Any) -> dict[str, Any]:
    return {"op": "-D", **row}


def ref(batches, by, aggs, **kw) -> list[tuple]:
    kw.setdefault("op_col", "op")
    return changelog_reference(batches, by, aggs, **kw)


def both(batches, by, aggs, **kw) -> tuple[list[tuple], list[tuple]]:
    """(mini-batch off, mini-batch on)."""
    return ref(batches, by, aggs, mini_batch=False, **kw), ref(batches, by, aggs, **kw)


def same_rows(a: Sequence[tuple], b: Sequence[tuple]) -> bool:
    return len(a) == len(b) and all(
        len(x) == len(y) and all(same_value(u, v) for u, v in zip(x, y, strict=True))
        for x, y in zip(a, b, strict=True)
    )


# ------------------------------------------------------------------------------------------
# Seed 000: SELECT day, SUM(cnt) total FROM (SELECT day, MOD(user_id, 10),
#   COUNT(DISTINCT user_id) cnt FROM source GROUP BY day, MOD(user_id, 10)) GROUP BY day

DAY = "2023-12-19"
SEED_ROWS = [{"user_id": u, "day": DAY, "b": u % 10} for u in (1, 2, 11)]


def seed_query(batches: list[list[dict]], mini_batch: bool) -> list[str]:
    """Runs the two levels micro-batch by micro-batch (the inner changelog of a micro-batch is
    the outer's micro-batch, as in one streaming query); the outer changelog as 'opTotal'."""
    inner = ChangelogModel(
        ["day", "b"], [W.count_distinct("user_id").alias("cnt")], mini_batch=mini_batch
    )
    outer = ChangelogModel(
        ["day"], [W.sum("cnt").alias("total")], op_col="op", mini_batch=mini_batch
    )
    out = []
    for batch in batches:
        changes = inner.process(batch)
        rows = [dict(zip(("op", "day", "b", "cnt"), r, strict=True)) for r in changes]
        out += outer.process(rows)
    assert all(day == DAY for _, day, _ in out)
    return [f"{op}{total}" for op, _, total in out]


def test_seed_000_one_row_per_micro_batch():
    batches = [[r] for r in SEED_ROWS]
    assert seed_query(batches, mini_batch=False) == "+I1 -U1 +U2 -U2 +U1 -U1 +U3".split()
    assert seed_query(batches, mini_batch=True) == "+I1 -U1 +U2 -U2 +U3".split()


def test_seed_000_one_micro_batch():
    assert seed_query([SEED_ROWS], mini_batch=True) == ["+I3"]
    # without mini-batch a micro-batch changes nothing: one change per row
    assert seed_query([SEED_ROWS], mini_batch=False) == "+I1 -U1 +U2 -U2 +U1 -U1 +U3".split()


def test_seed_000_inner_tables():
    aggs = [W.count_distinct("user_id").alias("cnt")]
    per_row = changelog_reference([[r] for r in SEED_ROWS], ["day", "b"], aggs)
    assert per_row == [
        ("+I", DAY, 1, 1),
        ("+I", DAY, 2, 1),
        ("-U", DAY, 1, 1),
        ("+U", DAY, 1, 2),
    ]
    assert changelog_reference([SEED_ROWS], ["day", "b"], aggs) == [
        ("+I", DAY, 1, 2),
        ("+I", DAY, 2, 1),
    ]
    assert changelog_reference([SEED_ROWS], ["day", "b"], aggs, emit="final") == [
        ("+I", DAY, 1, 2),
        ("+I", DAY, 2, 1),
    ]


# ------------------------------------------------------------------------------------------
# Row rules and net changes


def test_retraction_of_absent_key_is_ignored():
    stats: dict[str, int] = {}
    batches = [[de(k=1, v=5), ub(k=1, v=5), ins(k=1, v=2)]]
    for mb in (False, True):
        stats.clear()
        assert ref(batches, ["k"], [W.sum("v")], mini_batch=mb, stats=stats) == [("+I", 1, 2)]
        assert stats["retractions_ignored"] == 2
    # a key's retraction after its state was cleared is ignored too
    off, on = both([[ins(k=1, v=5), de(k=1, v=5), de(k=1, v=5)]], ["k"], [W.sum("v")])
    assert off == [("+I", 1, 5), ("-D", 1, 5)]
    assert on == []


def test_delete_then_reinsert_in_one_bundle_is_an_update():
    aggs = [W.count(), W.sum("v")]
    batches = [[ins(k=1, v=5)], [de(k=1, v=5), ins(k=1, v=7)]]
    off, on = both(batches, ["k"], aggs)
    assert off == [("+I", 1, 1, 5), ("-D", 1, 1, 5), ("+I", 1, 1, 7)]
    assert on == [("+I", 1, 1, 5), ("-U", 1, 1, 5), ("+U", 1, 1, 7)]
    # the same value back: nothing at all with mini-batch
    off, on = both([[ins(k=1, v=5)], [de(k=1, v=5), ins(k=1, v=5)]], ["k"], aggs)
    assert off == [("+I", 1, 1, 5), ("-D", 1, 1, 5), ("+I", 1, 1, 5)]
    assert on == [("+I", 1, 1, 5)]


def test_delete_clears_the_state():
    # the new +I after -D starts from empty accumulators (max is 3, not 9)
    out = ref([[ins(k=1, v=9), de(k=1, v=9), ins(k=1, v=3)]], ["k"], [W.max("v")], mini_batch=False)
    assert out == [("+I", 1, 9), ("-D", 1, 9), ("+I", 1, 3)]


def test_insert_then_delete_in_one_bundle_emits_nothing():
    off, on = both([[ins(k=1, v=5), de(k=1, v=5)]], ["k"], [W.count()])
    assert off == [("+I", 1, 1), ("-D", 1, 1)]
    assert on == []
    # an update pair inside one bundle that ends where it began: nothing
    batches = [[ins(k=1, v=5)], [ub(k=1, v=5), ua(k=1, v=6), ub(k=1, v=6), ua(k=1, v=5)]]
    assert ref(batches, ["k"], [W.sum("v")]) == [("+I", 1, 5)]


def test_unchanged_value_emits_nothing():
    batches = [[ins(k=1, v=5)], [ins(k=1, v=3)], [ins(k=1, v=None)]]
    off, on = both(batches, ["k"], [W.max("v")])
    assert off == on == [("+I", 1, 5)]
    # count() moves: every row changes the value
    off, on = both(batches, ["k"], [W.max("v"), W.count()])
    assert (
        on
        == off
        == [
            ("+I", 1, 5, 1),
            ("-U", 1, 5, 1),
            ("+U", 1, 5, 2),
            ("-U", 1, 5, 2),
            ("+U", 1, 5, 3),
        ]
    )


def test_update_pair_without_mini_batch_emits_two_changes():
    batches = [[ins(k="a", v=1)], [ub(k="a", v=1), ua(k="a", v=4)]]
    off, on = both(batches, ["k"], [W.sum("v"), W.count()])
    assert off == [
        ("+I", "a", 1, 1),
        ("-D", "a", 1, 1),  # the -U takes the row count to 0: the key is deleted
        ("+I", "a", 4, 1),
    ]
    assert on == [("+I", "a", 1, 1), ("-U", "a", 1, 1), ("+U", "a", 4, 1)]


def test_mini_batch_emits_keys_in_first_touch_order():
    rows = [ins(k=3, v=1), ins(k=1, v=1), de(k=2, v=9), ins(k=2, v=1), ins(k=3, v=2)]
    out = ref([rows], ["k"], [W.sum("v")])
    assert [r[1] for r in out] == [3, 1, 2]  # k=2 first touched by an (ignored) retraction
    assert out == [("+I", 3, 3), ("+I", 1, 1), ("+I", 2, 1)]
    # across bundles: order within each bundle
    out = ref([rows], ["k"], [W.sum("v")], bundle_rows=2)
    assert out == [("+I", 3, 1), ("+I", 1, 1), ("+I", 2, 1), ("-U", 3, 1), ("+U", 3, 3)]


def test_bundles_cut_each_micro_batch():
    rows = [ins(k=1, v=1), ins(k=1, v=2), ins(k=1, v=3)]
    # bundle_rows=2: [1, 2] [3] | [1, 2] [3]
    out = ref([rows, rows], ["k"], [W.sum("v")], bundle_rows=2)
    assert [(op, s) for op, _, s in out] == [
        ("+I", 3),
        ("-U", 3),
        ("+U", 6),
        ("-U", 6),
        ("+U", 9),
        ("-U", 9),
        ("+U", 12),
    ]
    # bundle_rows larger than a micro-batch: still one bundle per micro-batch
    out = ref([rows, rows], ["k"], [W.sum("v")], bundle_rows=100)
    assert [(op, s) for op, _, s in out] == [("+I", 6), ("-U", 6), ("+U", 12)]
    # bundle_rows=1 is mini-batch off
    assert ref([rows, rows], ["k"], [W.sum("v")], bundle_rows=1) == ref(
        [rows, rows], ["k"], [W.sum("v")], mini_batch=False
    )


def test_emit_final():
    rows = [ins(k="b", v=2), ins(k=None, v=1), ins(k="a", v=3), ins(k="c", v=1), de(k="c", v=1)]
    for mb in (False, True):
        assert ref([rows[:2], rows[2:]], ["k"], [W.sum("v")], mini_batch=mb, emit="final") == [
            ("+I", None, 1),
            ("+I", "a", 3),
            ("+I", "b", 2),
        ]
    assert ref([], ["k"], [W.sum("v")], emit="final") == []


def test_state_counters():
    rows = [ins(k=1, v=1), ins(k=1, v=2), de(k=2, v=1), ins(k=3, v=1), de(k=3, v=1)]
    stats: dict[str, int] = {}
    ref([rows], ["k"], [W.sum("v")], mini_batch=False, stats=stats)
    assert stats == {"rows_in": 5, "retractions_ignored": 1, "state_reads": 5, "state_writes": 4}
    stats = {}
    ref([rows], ["k"], [W.sum("v")], stats=stats)
    # keys 1, 2, 3: one read each; key 2 was and stays absent: no write
    assert stats == {"rows_in": 5, "retractions_ignored": 1, "state_reads": 3, "state_writes": 2}


# ------------------------------------------------------------------------------------------
# Input


def test_ops():
    rows = [{"op": None, "k": 1}, {"op": "+U", "k": 1}, {"op": "+I", "k": 1}]
    assert ref([rows], ["k"], [W.count()]) == [("+I", 1, 3)]
    # op_col=None: every row is an insert, whatever its columns
    assert changelog_reference([[de(k=1)]], ["k"], [W.count()]) == [("+I", 1, 1)]
    for bad in ("-X", "I", "+i", "", 1):
        with pytest.raises(ValueError, match=re.escape(repr(bad)) + ".*'op'"):
            ref([[ins(k=1), {"op": bad, "k": 1}]], ["k"], [W.count()])
    with pytest.raises(ValueError, match="emit"):
        ref([], ["k"], [W.count()], emit="table")
    with pytest.raises(ValueError, match="bundle_rows"):
        ref([], ["k"], [W.count()], bundle_rows=0)


def test_null_keys_and_float_key_normalisation():
    rows = [
        ins(k=None, v=1),
        ins(k=-0.0, v=2),
        ins(k=0.0, v=3),
        ins(k=NAN, v=4),
        ins(k=float("nan"), v=5),
        ins(k=None, v=6),
    ]
    out = ref([rows], ["k"], [W.sum("v")])
    assert len(out) == 3
    assert out[0] == ("+I", None, 7)
    assert out[1] == ("+I", 0.0, 5) and math.copysign(1, out[1][1]) == 1  # -0.0 shown as 0.0
    assert out[2][0] == "+I" and math.isnan(out[2][1]) and out[2][2] == 9
    # retracting with the other zero retracts from the same key
    assert ref([rows, [de(k=0.0, v=2), de(k=-0.0, v=3)]], ["k"], [W.sum("v")])[3:] == [
        ("-D", 0.0, 5)
    ]
    # several key columns
    out = ref(
        [[ins(a=1, b="x", v=1), ins(a=1, b=None, v=2), ins(a=1, b="x", v=3)]],
        ["a", "b"],
        [W.sum("v")],
    )
    assert out == [("+I", 1, "x", 4), ("+I", 1, None, 2)]


def test_no_key_columns():
    out = ref([[ins(v=1), ins(v=2)], [de(v=1)]], [], [W.sum("v")])
    assert out == [("+I", 3), ("-U", 3), ("+U", 2)]


# ------------------------------------------------------------------------------------------
# Aggregates with retractions


def test_count_rows_and_values():
    batches = [
        [ins(k=1, v=None), ins(k=1, v=2)],
        [de(k=1, v=2)],
        [de(k=1, v=None)],
    ]
    off, on = both(batches, ["k"], [W.count(), W.count("v")])
    assert on == [("+I", 1, 2, 1), ("-U", 1, 2, 1), ("+U", 1, 1, 0), ("-D", 1, 1, 0)]
    assert off == [
        ("+I", 1, 1, 0),
        ("-U", 1, 1, 0),
        ("+U", 1, 2, 1),
        ("-U", 1, 2, 1),
        ("+U", 1, 1, 0),
        ("-D", 1, 1, 0),
    ]


def test_sum_and_avg_of_integers():
    batches = [[ins(k=1, v=1), ins(k=1, v=2), ins(k=1, v=None)], [de(k=1, v=2)], [de(k=1, v=1)]]
    out = ref(batches, ["k"], [W.sum("v"), W.avg("v"), W.count()])
    assert out == [
        ("+I", 1, 3, 1.5, 3),
        ("-U", 1, 3, 1.5, 3),
        ("+U", 1, 1, 1.0, 2),
        ("-U", 1, 1, 1.0, 2),
        ("+U", 1, None, None, 1),  # only the null row is left: sum and avg are null
    ]
    assert type(out[2][3]) is float
    # avg of integers is the exactly rounded mean
    assert ref([[ins(k=1, v=1), ins(k=1, v=1), ins(k=1, v=2)]], ["k"], [W.avg("v")]) == [
        ("+I", 1, 4 / 3)
    ]


def test_sum_of_floats_is_one_double_in_arrival_order():
    batches = [[ins(k=1, v=1e20), ins(k=1, v=1.0)], [de(k=1, v=1e20)]]
    # 1e20 + 1.0 == 1e20 in a double, so after the retraction the sum is 0.0, not 1.0
    assert ref(batches, ["k"], [W.sum("v")]) == [("+I", 1, 1e20), ("-U", 1, 1e20), ("+U", 1, 0.0)]
    # NaN stays NaN: an unchanged value, nothing emitted; inf - inf is NaN
    out = ref([[ins(k=1, v=NAN)], [ins(k=1, v=1.0)]], ["k"], [W.sum("v")])
    assert len(out) == 1 and math.isnan(out[0][2])
    out = ref([[ins(k=1, v=math.inf), ins(k=1, v=1.0)], [de(k=1, v=math.inf)]], ["k"], [W.sum("v")])
    assert out[0] == ("+I", 1, math.inf) and out[1] == ("-U", 1, math.inf) and math.isnan(out[2][2])


def test_sum_and_avg_of_decimals():
    t = {"v": pa.decimal128(5, 2)}
    batches = [
        [ins(k=1, v=Decimal("1.00")), ins(k=1, v=Decimal("2.01"))],
        [de(k=1, v=Decimal("1.00"))],
    ]
    out = ref(batches, ["k"], [W.sum("v"), W.avg("v")], types=t)
    assert out == [
        ("+I", 1, Decimal("3.01"), Decimal("1.505000")),
        ("-U", 1, Decimal("3.01"), Decimal("1.505000")),
        ("+U", 1, Decimal("2.01"), Decimal("2.010000")),
    ]
    # avg rounds half up at scale s + 4
    out = ref(
        [[ins(k=1, v=Decimal("0.01")), ins(k=1, v=Decimal("0.01")), ins(k=1, v=Decimal("0.00"))]],
        ["k"],
        [W.avg("v")],
        types=t,
    )
    assert out == [("+I", 1, Decimal("0.006667"))]
    # the type is inferred from the values when not given
    out = ref([[ins(k=1, v=Decimal("1.5")), ins(k=1, v=Decimal("2.25"))]], ["k"], [W.sum("v")])
    assert out == [("+I", 1, Decimal("3.75"))]


def test_min_max_after_retracting_the_extreme():
    batches = [
        [ins(k=1, v=5), ins(k=1, v=3), ins(k=1, v=9), ins(k=1, v=3)],
        [de(k=1, v=3)],  # one 3 is left
        [de(k=1, v=3)],  # min goes to 5
        [de(k=1, v=9)],  # max goes to 5
        [ins(k=1, v=None)],
        [de(k=1, v=5)],  # only the null row: min and max are null
    ]
    out = ref(batches, ["k"], [W.min("v"), W.max("v")])
    assert out == [
        ("+I", 1, 3, 9),
        ("-U", 1, 3, 9),
        ("+U", 1, 5, 9),
        ("-U", 1, 5, 9),
        ("+U", 1, 5, 5),
        ("-U", 1, 5, 5),
        ("+U", 1, None, None),
    ]


def test_min_max_of_strings_dates_timestamps_and_nan():
    d1, d2 = dt.date(2024, 1, 1), dt.date(2023, 6, 30)
    t1, t2 = dt.datetime(2024, 1, 1, 12), dt.datetime(2024, 1, 1, 13)
    rows = [ins(k=1, s="b", d=d1, t=t1, f=NAN), ins(k=1, s="ab", d=d2, t=t2, f=1.0)]
    aggs = [W.min("s"), W.max("s"), W.min("d"), W.max("t"), W.min("f")]
    out = ref([rows], ["k"], aggs)
    assert out == [("+I", 1, "ab", "b", d2, t2, 1.0)]
    out = ref([rows], ["k"], [W.max("f")])
    assert math.isnan(out[0][2])  # NaN is the largest float
    out = ref([rows, [de(k=1, s="ab", d=d2, t=t2, f=1.0)]], ["k"], aggs)
    assert out[1:] == [("-U", 1, "ab", "b", d2, t2, 1.0), ("+U", 1, "b", "b", d1, t1, out[2][6])]
    assert math.isnan(out[2][6])


def test_count_distinct_multiplicities():
    batches = [
        [ins(k=1, v=5), ins(k=1, v=5), ins(k=1, v=6), ins(k=1, v=None)],
        [de(k=1, v=5)],  # one 5 is still live: unchanged, nothing emitted (count() not asked)
        [de(k=1, v=5)],
        [de(k=1, v=None)],  # nulls never count
    ]
    out = ref(batches, ["k"], [W.count_distinct("v")])
    assert out == [("+I", 1, 2), ("-U", 1, 2), ("+U", 1, 1)]
    rows = [ins(k=1, f=-0.0), ins(k=1, f=0.0), ins(k=1, f=NAN), ins(k=1, f=float("nan"))]
    assert ref([rows], ["k"], [W.count_distinct("f")]) == [("+I", 1, 2)]
    assert ref([rows, [de(k=1, f=0.0)]], ["k"], [W.count_distinct("f")]) == [("+I", 1, 2)]


def test_first_last_retract_the_earliest_occurrence():
    aggs = [W.first_value("v"), W.last_value("v")]
    batches = [
        [ins(k=1, v="a"), ins(k=1, v="b"), ins(k=1, v="a")],
        [de(k=1, v="a")],  # removes the first "a": live b, a
        [de(k=1, v="a")],  # live b
        [ins(k=1, v=None)],  # nulls are not values: unchanged
        [ins(k=1, v="c"), de(k=1, v="b")],  # live c
        [de(k=1, v="zz")],  # not a live value: accumulators unchanged (but the row count moves)
    ]
    out = ref(batches, ["k"], aggs)
    assert out == [
        ("+I", 1, "a", "a"),
        ("-U", 1, "a", "a"),
        ("+U", 1, "b", "a"),
        ("-U", 1, "b", "a"),
        ("+U", 1, "b", "b"),
        ("-U", 1, "b", "b"),
        ("+U", 1, "c", "c"),
    ]
    # last_value: retracting a value that occurs earlier and last removes the earlier one
    out = ref([[ins(k=1, v=1), ins(k=1, v=2), ins(k=1, v=1)], [de(k=1, v=1)]], ["k"], aggs)
    assert out == [("+I", 1, 1, 1), ("-U", 1, 1, 1), ("+U", 1, 2, 1)]


def test_floats_compare_by_bit_pattern():
    out = ref([[ins(k=1, v=0.0)], [ins(k=1, v=-0.0)]], ["k"], [W.last_value("v")])
    assert [op for op, *_ in out] == ["+I", "-U", "+U"]
    assert math.copysign(1, out[2][2]) == -1
    # min keeps the value that made its class live: -0.0 then 0.0 is still -0.0, no change
    out = ref([[ins(k=1, v=-0.0)], [ins(k=1, v=0.0)]], ["k"], [W.min("v")])
    assert len(out) == 1 and math.copysign(1, out[0][2]) == -1
    assert same_value(NAN, float("nan")) and not same_value(0.0, -0.0)
    assert not same_value(1, 1.0) and not same_value(None, 0) and same_value(None, None)


# ------------------------------------------------------------------------------------------
# Overflow


BIG = (1 << 63) - 1


def test_bigint_sum_overflow_ansi_raises_when_emitted():
    with pytest.raises(OverflowError, match="ARITHMETIC_OVERFLOW"):
        ref([[ins(k=1, v=BIG), ins(k=1, v=1)]], ["k"], [W.sum("v")], mini_batch=False)
    # in one bundle the overflowing intermediate value is never emitted
    rows = [ins(k=1, v=BIG), ins(k=1, v=1), de(k=1, v=1)]
    assert ref([rows], ["k"], [W.sum("v")]) == [("+I", 1, BIG)]
    with pytest.raises(OverflowError):
        ref([rows], ["k"], [W.sum("v")], mini_batch=False)
    # emit="final" judges the final values only
    assert ref([rows], ["k"], [W.sum("v")], mini_batch=False, emit="final") == [("+I", 1, BIG)]
    with pytest.raises(OverflowError):
        ref([rows[:2]], ["k"], [W.sum("v")], emit="final")


def test_bigint_sum_wraps_without_ansi():
    rows = [ins(k=1, v=BIG), ins(k=1, v=1)]
    out = ref([rows], ["k"], [W.sum("v")], mini_batch=False, ansi=False)
    assert out == [("+I", 1, BIG), ("-U", 1, BIG), ("+U", 1, -(1 << 63))]
    # a sum that wraps back to the same BIGINT is unchanged
    out = ref([[ins(k=1, v=1)], [ins(k=1, v=1 << 62)] * 4], ["k"], [W.sum("v")], ansi=False)
    assert out == [("+I", 1, 1)]


def test_decimal_sum_overflow():
    t = {"v": pa.decimal128(38, 0)}  # sum: DECIMAL(38, 0)
    big = Decimal(10**38 - 1)
    rows = [ins(k=1, v=big), ins(k=1, v=Decimal(1))]
    assert ref([rows], ["k"], [W.sum("v")], ansi=False, types=t) == [("+I", 1, None)]
    with pytest.raises(OverflowError, match="ARITHMETIC_OVERFLOW"):
        ref([rows], ["k"], [W.sum("v")], types=t)
    assert ref([rows[:1]], ["k"], [W.sum("v")], types=t) == [("+I", 1, big)]
    assert ref([rows, [de(k=1, v=Decimal(1))]], ["k"], [W.sum("v")], ansi=False, types=t) == [
        ("+I", 1, None),
        ("-U", 1, None),
        ("+U", 1, big),
    ]


# ------------------------------------------------------------------------------------------
# Properties on random valid changelogs

KEYS = st.sampled_from([0, 1, 2, None])
INTS = st.one_of(st.none(), st.integers(-3, 3))
FLOATS = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, -2.0, NAN, 1e16, 1.0]))
STRS = st.one_of(st.none(), st.sampled_from(["", "a", "b", "ab"]))

PROP_AGGS = [
    W.count().alias("n"),
    W.count("v").alias("nv"),
    W.sum("v").alias("s"),
    W.avg("v").alias("a"),
    W.min("v").alias("mi"),
    W.max("v").alias("ma"),
    W.count_distinct("v").alias("cd"),
    W.first_value("v").alias("fv"),
    W.last_value("v").alias("lv"),
    W.sum("f").alias("sf"),
    W.max("f").alias("mf"),
    W.count_distinct("f").alias("cf"),
    W.min("s").alias("ms"),
    W.last_value("s").alias("ls"),
]
#: count() changes with every row; these sets leave values unchanged often.
AGG_SETS = [
    PROP_AGGS,
    [W.max("v")],
    [W.min("s"), W.count_distinct("v")],
    [W.sum("f"), W.avg("v")],
    [W.first_value("v"), W.last_value("f")],
]


@st.composite
def valid_changelogs(draw: st.DrawFn) -> list[list[dict]]:
    """Micro-batches of a valid changelog: a retraction retracts a row inserted earlier for its
    key and still live; a -U is immediately followed by a +U of the same key."""
    live: list[dict] = []
    rows: list[dict] = []

    def new_row(k: Any) -> dict:
        return {"k": k, "v": draw(INTS), "f": draw(FLOATS), "s": draw(STRS)}

    for _ in range(draw(st.integers(0, 30))):
        what = draw(st.sampled_from(["insert", "insert", "delete", "update"]))
        if what == "insert" or not live:
            row = new_row(draw(KEYS))
            live.append(row)
            rows.append({"op": draw(st.sampled_from(["+I", "+I", None, "+U"])), **row})
            continue
        old = live.pop(draw(st.integers(0, len(live) - 1)))
        if what == "delete":
            rows.append({**old, "op": draw(st.sampled_from(["-D", "-U"]))})
        else:
            row = new_row(old["k"])
            live.append(row)
            rows += [{**old, "op": "-U"}, {**row, "op": "+U"}]
    cuts = sorted(draw(st.lists(st.integers(0, len(rows)), max_size=4)))
    bounds = [0, *cuts, len(rows)]
    return [rows[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def key_of(values: Sequence[Any], num_keys: int = 1) -> tuple:
    return next(iter(materialize([("+I", *values)], num_keys)))


def check_changelog(out: list[tuple], num_keys: int = 1) -> dict[tuple, tuple]:
    """The output is itself a valid changelog: +I for an absent key, -U/-D carry the key's
    current row, -U is followed by a +U of the same key with a different row. Returns the
    materialised table."""
    table: dict[tuple, tuple] = {}
    for i, (op, *values) in enumerate(out):
        key = key_of(values, num_keys)
        if op == "+I":
            assert key not in table, out
        elif op == "+U":
            assert i > 0 and out[i - 1][0] == "-U", out
        else:
            assert key in table and same_rows([table[key]], [tuple(values)]), (i, out)
        if op == "-U":
            nop, *nvalues = out[i + 1]
            assert nop == "+U" and key_of(nvalues, num_keys) == key, out
            assert not same_rows([tuple(values)], [tuple(nvalues)]), out
        if op in ("+I", "+U"):
            table[key] = tuple(values)
        else:
            del table[key]
    assert_same_table(table, materialize(out, num_keys))
    return table


def assert_same_table(a: dict[tuple, tuple], b: dict[tuple, tuple]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert same_rows([a[k]], [b[k]]), (k, a[k], b[k])


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=valid_changelogs(),
    aggs=st.sampled_from(AGG_SETS),
    mini_batch=st.booleans(),
    bundle_rows=st.one_of(st.none(), st.integers(1, 6)),
)
def test_changelog_materializes_to_final(batches, aggs, mini_batch, bundle_rows):
    kw = {"op_col": "op", "mini_batch": mini_batch, "bundle_rows": bundle_rows}
    out = changelog_reference(batches, ["k"], aggs, **kw)
    table = check_changelog(out, 1)
    final = changelog_reference(batches, ["k"], aggs, emit="final", **kw)
    assert_same_table(table, materialize(final, 1))
    assert all(op == "+I" for op, *_ in final)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=valid_changelogs(),
    aggs=st.sampled_from(AGG_SETS),
    bundle_rows=st.one_of(st.none(), st.integers(1, 6)),
)
def test_mini_batch_is_the_composition_of_row_changes(batches, aggs, bundle_rows):
    """After every micro-batch, mini-batch on and off have materialised the same table; with
    one bundle per micro-batch each key changes at most once per micro-batch; bundles of one
    row are mini-batch off."""
    on = ChangelogModel(["k"], aggs, op_col="op", bundle_rows=bundle_rows)
    whole = ChangelogModel(["k"], aggs, op_col="op")
    off = ChangelogModel(["k"], aggs, op_col="op", mini_batch=False)
    t_on: list[tuple] = []
    t_off: list[tuple] = []
    t_whole: list[tuple] = []
    for batch in batches:
        t_on += on.process(batch)
        t_off += off.process(batch)
        changes = whole.process(batch)
        t_whole += changes
        keys = [key_of(r[1:]) for r in changes if r[0] != "+U"]
        assert len(keys) == len(set(keys)), changes
        assert_same_table(materialize(t_on, 1), materialize(t_off, 1))
        assert_same_table(materialize(t_whole, 1), materialize(t_off, 1))
    assert off.stats["retractions_ignored"] == 0
    one = changelog_reference(batches, ["k"], aggs, op_col="op", bundle_rows=1)
    assert same_rows(one, t_off)


def test_docstring_examples():
    import doctest

    import sliceflow.testing.changelog_reference as module

    failed, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried >= 8 and failed == 0
