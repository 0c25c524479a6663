"""``sliceflow.spark.topn`` in Spark (``local[2]``): batch against Spark's window-function query
(``row_number() <= n``), the streaming changelog against the plain-Python model, materialized
equal to the batch result, restart from a checkpoint into a file sink, a chain with
``changelog_agg``, the window Top-N of Nexmark q5, and the errors a user meets."""

from __future__ import annotations

import random
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import Window
from pyspark.sql import functions as F

from sliceflow.spark import topn
from sliceflow.testing.topn_reference import TopNModel
from sliceflow.topn.plan import OrderKey

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [
        ("k", pa.int64()),
        ("s", pa.string()),
        ("v", pa.float64()),
        ("d", pa.decimal128(10, 2)),
        ("id", pa.int64()),
        ("op", pa.string()),
    ]
)


def random_rows(seed: int, n: int, keys: int = 6, retract: bool = False) -> list[dict[str, Any]]:
    """Rows with unique ids (so the order keys below are unique within a key); with
    ``retract``, -D / -U+U of live rows too."""
    rng = random.Random(seed)
    live: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for i in range(n):
        if retract and live and rng.random() < 0.3:
            old = live.pop(rng.randrange(len(live)))
            rows.append({**old, "op": rng.choice(["-D", "-U"])})
            continue
        row = {
            "k": rng.choice([None, *range(keys)]),
            "s": rng.choice(["a", "b", "\u00e9", None]),
            "v": rng.choice([None, float("nan"), -0.0, 0.0, *(float(x) for x in range(-5, 10))]),
            "d": rng.choice([None, Decimal(rng.randint(-999, 999)).scaleb(-2)]),
            "id": i,
        }
        live.append(row)
        rows.append({**row, "op": "+I"})
    return rows


def table_of(rows: Sequence[dict[str, Any]], schema: pa.Schema = SCHEMA) -> pa.Table:
    return pa.table({f.name: pa.array([r[f.name] for r in rows], f.type) for f in schema})


def _norm(rows) -> list[str]:
    return sorted(str(tuple(r)) for r in rows)


def _orders() -> list[list[Any]]:
    """Order keys unique within a key (``id`` last), built once a session exists."""
    return [
        [F.desc("v"), "id"],
        [F.col("s").asc_nulls_last(), F.desc("d"), "id"],
        [F.col("v").desc_nulls_first(), F.asc("id")],
        ["d", F.desc("id")],
    ]


@pytest.mark.parametrize("order", range(4))
@pytest.mark.parametrize("n", [1, 3])
def test_batch_matches_spark_row_number(spark, order, n):
    rows = random_rows(order * 10 + n, 400)
    df = spark.createDataFrame(table_of(rows)).drop("op")
    order_by = _orders()[order]
    got = topn(df, n, by=["k"], order_by=order_by)
    assert got.columns == ["k", "s", "v", "d", "id", "rank"]
    spark_order = [F.col(o) if isinstance(o, str) else o for o in order_by]
    w = Window.partitionBy("k").orderBy(*spark_order)
    want = df.withColumn("rank", F.row_number().over(w)).where(F.col("rank") <= n)
    assert _norm(got.collect()) == _norm(want.collect())
    no_rank = topn(df, n, by="k", order_by=order_by, with_rank=False)
    assert _norm(no_rank.collect()) == _norm(want.drop("rank").collect())


def test_batch_without_partition_and_with_changelog_input(spark):
    rows = random_rows(3, 300, retract=True)
    df = spark.createDataFrame(table_of(rows)).repartition(1)
    got = topn(df, 5, by=None, order_by=[F.desc("id")], op_col="op")
    model = TopNModel([], [OrderKey("id", True)], 5, op_col="op")
    model.process(rows)
    assert _norm(got.collect()) == _norm(r[1:] for r in model.final())


def test_errors_name_the_column_or_option(spark):
    df = spark.createDataFrame(
        [(1, 2, {"a": 1}, "+I")], "k INT, v INT, m MAP<STRING, INT>, op STRING"
    )
    with pytest.raises(ValueError, match="n must be at least 1"):
        topn(df, 0, by="k", order_by="v")
    with pytest.raises(ValueError, match="order_by column 'nope' is not a column"):
        topn(df, 1, by="k", order_by="nope")
    with pytest.raises(ValueError, match="order_by column 'm' has type MAP"):
        topn(df, 1, by="k", order_by=F.desc("m"))
    with pytest.raises(ValueError, match="must sort a column or a nested field"):
        topn(df, 1, by="k", order_by=(F.col("v") + 1).desc())
    with pytest.raises(TypeError, match="order_by takes column names or Column sort"):
        topn(df, 1, by="k", order_by=[3])
    bad = spark.createDataFrame([(1, 2, "+X")], "k INT, v INT, op STRING")
    with pytest.raises(Exception, match="op column 'op' holds '\\+X'"):
        topn(bad, 1, by="k", order_by="v", op_col="op").collect()
