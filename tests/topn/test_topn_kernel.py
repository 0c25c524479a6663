"""The Top-N kernel in this process (sliceflow.topn) against the plain-Python model
(sliceflow.testing.topn_reference) on randomized changelogs, and the sort keys
(cpp/order/sort_key.h) against Spark's ORDER BY rules."""

from __future__ import annotations

import datetime as dt
import functools
import math
import random
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from sliceflow.testing.topn_reference import TopNModel, spark_compare
from sliceflow.topn import topn
from sliceflow.topn.plan import OrderKey


def _rows_of(table: pa.Table) -> list[tuple[Any, ...]]:
    return [tuple(r.values()) for r in table.to_pylist()]


def _same_rows(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    def norm(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in row)

    return [norm(r) for r in a] == [norm(r) for r in b]


def _random_changelog(
    rng: random.Random, batches: int, rows: int, keys: int, retract: bool
) -> list[list[dict[str, Any]]]:
    live: list[dict[str, Any]] = []
    out = []
    for _ in range(batches):
        batch = []
        for _ in range(rows):
            if retract and live and rng.random() < 0.3:
                row = live.pop(rng.randrange(len(live))) if rng.random() < 0.9 else dict(live[0])
                batch.append({**row, "op": rng.choice(["-U", "-D"])})
                continue
            row = {
                "k": rng.randrange(keys),
                "v": rng.choice([None, rng.randrange(20), rng.randrange(20)]),
                "id": rng.randrange(1000),
            }
            live.append(row)
            batch.append({**row, "op": rng.choice(["+I", "+U", None])} if retract else row)
        out.append(batch)
    return out


@pytest.mark.parametrize("retract", [False, True])
@pytest.mark.parametrize("with_rank", [True, False])
@pytest.mark.parametrize("mini_batch", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_changelog_matches_model(seed: int, mini_batch: bool, with_rank: bool, retract: bool):
    rng = random.Random(seed)
    data = _random_changelog(rng, batches=4, rows=60, keys=4, retract=retract)
    order = [OrderKey("v", descending=True), OrderKey("id")]
    n = rng.choice([1, 2, 3])
    bundle = rng.choice([1, 7, 5000])
    model = TopNModel(
        ["k"],
        order,
        n,
        with_rank=with_rank,
        op_col="op" if retract else None,
        mini_batch=mini_batch,
        bundle_rows=bundle,
    )
    expected = [row for batch in data for row in model.process(batch)]
    schema = pa.schema([("k", pa.int64()), ("v", pa.int64()), ("id", pa.int64())])
    if retract:
        schema = schema.append(pa.field("op", pa.string()))
    tables = [pa.Table.from_pylist(b, schema) for b in data]
    stats: dict[str, int] = {}
    got = topn(
        tables,
        n,
        by="k",
        order_by=order,
        with_rank=with_rank,
        op_col="op" if retract else None,
        mini_batch=mini_batch,
        bundle_rows=bundle,
        stats=stats,
    )
    assert _rows_of(got) == expected
    assert stats["retractions_ignored"] == model.ignored
    final = topn(
        tables,
        n,
        by="k",
        order_by=order,
        with_rank=with_rank,
        op_col="op" if retract else None,
        emit="final",
    )
    assert sorted(_rows_of(final), key=repr) == sorted((r[1:] for r in model.final()), key=repr)


def test_mini_batch_nets_out_and_counts_state_once_per_key_per_bundle():
    t = pa.table({"k": ["a"] * 4, "v": [1, 9, 3, 2], "op": ["+I", "+I", "-D", "-D"]})
    stats: dict[str, int] = {}
    out = topn(t.slice(0, 2), 1, by="k", order_by="v", op_col="op", stats=stats)
    assert _rows_of(out) == [("+I", "a", 1, 1)]
    assert stats["state_reads"] == 1 and stats["state_writes"] == 1
    # +9 then -D 9 inside one bundle: the top ends where it began, nothing is emitted.
    flip = pa.table({"k": ["a", "a"], "v": [0, 0], "op": ["+I", "-D"]})
    out = topn([t.slice(0, 1), flip], 1, by="k", order_by="v", op_col="op")
    assert _rows_of(out) == [("+I", "a", 1, 1)]


def test_retraction_brings_the_next_row_up_and_unknown_ones_are_counted():
    first = pa.table({"k": ["a"] * 3, "v": [3, 2, 1], "op": ["+I"] * 3})
    fix = pa.table({"k": ["a", "a"], "v": [3, 7], "op": ["-D", "-D"]})
    stats: dict[str, int] = {}
    out = topn(
        [first, fix],
        2,
        by="k",
        order_by=[OrderKey("v", descending=True)],
        op_col="op",
        with_rank=False,
        stats=stats,
    )
    assert _rows_of(out) == [("+I", "a", 3), ("+I", "a", 2), ("-D", "a", 3), ("+I", "a", 1)]
    assert stats["retractions_ignored"] == 1


_NUMBERS = [None, float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5, -1.5, 1e300, -1e-300]


@pytest.mark.parametrize(
    "values, arrow_type",
    [
        (_NUMBERS, pa.float64()),
        ([None, float("nan"), 0.0, -0.0, 2.5, -2.5, float("inf")], pa.float32()),
        ([None, -(2**63), 2**63 - 1, 0, -1, 1], pa.int64()),
        ([None, -128, 127, 0, -1], pa.int8()),
        ([None, True, False], pa.bool_()),
        (["", "a", "a\x00", "a\x00b", "ab", "b", "\x7f", "é", "\U0001f600", None], pa.string()),
        ([b"", b"\x00", b"\x00\x00", b"\xff", b"\x01", None], pa.binary()),
        (
            [Decimal("-1.25"), Decimal("0.00"), Decimal("99.99"), Decimal("-99.99"), None],
            pa.decimal128(4, 2),
        ),
        ([dt.date(1969, 12, 31), dt.date(1970, 1, 1), dt.date(2024, 2, 29), None], pa.date32()),
        (
            [dt.datetime(1960, 1, 1), dt.datetime(2030, 1, 1, 0, 0, 0, 1), None],
            pa.timestamp("us", "UTC"),
        ),
    ],
)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("nulls_first", [None, True, False])
def test_sort_keys_follow_spark_order(values, arrow_type, descending, nulls_first):
    rows = [{"k": 1, "x": v, "i": i} for i, v in enumerate(values)]
    order = [OrderKey("x", descending, nulls_first), OrderKey("i")]
    table = pa.Table.from_pylist(
        rows, pa.schema([("k", pa.int8()), ("x", arrow_type), ("i", pa.int64())])
    )
    got = topn(table, len(rows), by="k", order_by=order, emit="final")
    if arrow_type == pa.timestamp("us", "UTC"):
        rows = [
            {**r, "x": None if r["x"] is None else r["x"].replace(tzinfo=dt.timezone.utc)}
            for r in rows
        ]
    expected = sorted(rows, key=functools.cmp_to_key(lambda a, b: spark_compare(order, a, b)))
    assert [r["i"] for r in got.to_pylist()] == [r["i"] for r in expected]
    assert got.column("rank").to_pylist() == list(range(1, len(rows) + 1))


def test_bad_input_is_refused_naming_what():
    t = pa.table(
        {
            "k": [1],
            "m": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int64())),
            "v": [1],
            "op": ["+X"],
        }
    )
    with pytest.raises(ValueError, match="n must be at least 1"):
        topn(t, 0, by="k", order_by="v")
    with pytest.raises(ValueError, match="order_by column 'nope' is not a column"):
        topn(t, 1, by="k", order_by="nope")
    with pytest.raises(ValueError, match="order_by column 'm' has type MAP.*cannot be ordered"):
        topn(t, 1, by="k", order_by="m")
    with pytest.raises(ValueError, match="op column 'op' holds '\\+X'"):
        topn(t, 1, by="k", order_by="v", op_col="op")
    with pytest.raises(ValueError, match="partition column 'zz' is not a column"):
        topn(t, 1, by="zz", order_by="v")
    # n past the kernel's bound is refused at the call with the limit, whatever its size.
    for n in (2**30 + 1, 2**63, 10**30):
        with pytest.raises(ValueError, match=rf"n must be at most 1,073,741,824 .*not {n:,}$"):
            topn(t, n, by="k", order_by="v")
    assert topn(t.drop_columns(["m", "op"]), 2**30, by="k", order_by="v").num_rows == 1
    with pytest.raises(ValueError, match=r"op column 'k' must be a STRING column .*, not BIGINT$"):
        topn(t, 1, by="v", order_by="v", op_col="k")
