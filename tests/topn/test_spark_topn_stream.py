"""Streaming ``sliceflow.spark.topn`` (``local[2]``): the window Top-N of Nexmark q5 on a
``window_agg`` stream (each window's top 3 once, in the micro-batch that emits the window,
equal to Spark's batch query), the changelog Top-N against the plain-Python model per
micro-batch, materialized equal to the batch result, restart from a checkpoint into a file
sink, and a chain with ``changelog_agg`` in one query."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import Window
from pyspark.sql import functions as F
from support.spark_helpers import collect_stream, stream_of, write_micro_batches
from test_spark_topn import SCHEMA, random_rows, table_of

from sliceflow import window as W
from sliceflow.spark import TopNMetrics, changelog_agg, topn, window_agg
from sliceflow.testing.topn_reference import TopNModel
from sliceflow.topn.plan import OrderKey

pytestmark = pytest.mark.spark

BIDS = pa.schema([("auction", pa.int64()), ("ts", pa.timestamp("us", "UTC"))])
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def bid_batches(seed: int, batches: int, rows: int) -> list[pa.Table]:
    """Bids whose times move forward by micro-batch (a few seconds out of order)."""
    rng = random.Random(seed)
    out = []
    for b in range(batches):
        base = b * 20
        times = [T0 + dt.timedelta(seconds=base + rng.uniform(-3, 20)) for _ in range(rows)]
        auctions = [rng.randrange(12) for _ in range(rows)]
        out.append(pa.table({"auction": auctions, "ts": times}, BIDS))
    return out


def test_window_topn_emits_each_window_once_equal_to_spark(spark, tmp_path):
    batches = bid_batches(1, 5, 150)
    write_micro_batches(str(tmp_path / "src"), batches)
    spec = W.hop("ts", size="10 seconds", slide="5 seconds")

    def hot(df):
        return window_agg(df, spec, by=["auction"], aggs=[W.count().alias("bids")])

    def stream():
        return stream_of(spark, str(tmp_path / "src"), BIDS).withWatermark("ts", "4 seconds")

    order = [F.desc("bids"), "auction"]
    top = topn(hot(stream()), 3, by=["window_start", "window_end"], order_by=order)
    assert top.columns == [*hot(stream()).columns, "rank"]
    got = collect_stream(top, str(tmp_path / "ck"))
    alone = collect_stream(hot(stream()), str(tmp_path / "ck_alone"))
    windows = {}
    for b, rows in got.items():
        for r in rows:
            assert windows.setdefault((r[0], r[1]), b) == b, "a window in two micro-batches"
    # The windows of a micro-batch are exactly the ones window_agg emits in it.
    assert windows == {(r[0], r[1]): b for b, rows in alone.items() for r in rows}
    # Each window's top 3 equals Spark's row_number() over the batch window_agg.
    emitted = spark.createDataFrame(
        [r for rows in alone.values() for r in rows], hot(stream()).schema
    )
    w = Window.partitionBy("window_start", "window_end").orderBy(F.desc("bids"), "auction")
    want = emitted.withColumn("rank", F.row_number().over(w)).where("rank <= 3")
    assert sorted(r for rows in got.values() for r in rows) == sorted(
        tuple(r) for r in want.collect()
    )


def _by_key(rows: list[tuple], key_index: int) -> str:
    """Each key's changes in their order (keys of different buckets interleave freely)."""
    out: dict[Any, list[tuple]] = {}
    for r in rows:
        out.setdefault(str(r[key_index]), []).append(r)
    return str(sorted(out.items()))


ORDER = [OrderKey("v", True), OrderKey("id")]


def _orders():
    return [F.desc("v"), "id"]


@pytest.mark.parametrize("retract", [False, True])
@pytest.mark.parametrize("mini_batch", [True, False])
def test_changelog_equals_the_model_per_micro_batch(spark, tmp_path, retract, mini_batch):
    rows = random_rows(7, 360, keys=5, retract=retract)
    parts = [rows[i : i + 90] for i in range(0, 360, 90)]
    schema = SCHEMA if retract else SCHEMA.remove(SCHEMA.get_field_index("op"))
    write_micro_batches(str(tmp_path / "src"), [table_of(p, schema) for p in parts])
    metrics = TopNMetrics(spark)
    out = topn(
        stream_of(spark, str(tmp_path / "src"), schema),
        2,
        by=["k"],
        order_by=_orders(),
        op_col="op" if retract else None,
        mini_batch=mini_batch,
        buckets=3,
        metrics=metrics,
    )
    assert out.columns == ["op", "k", "s", "v", "d", "id", "rank"]
    got = collect_stream(out, str(tmp_path / "ck"))
    model = TopNModel(["k"], ORDER, 2, op_col="op" if retract else None, mini_batch=mini_batch)
    for b, part in enumerate(parts):
        if not retract:
            part = [{k: v for k, v in r.items() if k != "op"} for r in part]
        want = model.process(part)
        assert _by_key(got.get(b, []), 1) == _by_key(want, 1), f"micro-batch {b}"
    stats = metrics.value
    assert stats["rows_in"] == 360
    assert stats["retractions_ignored"] == model.ignored
    if mini_batch:
        # One state read and write per key per bundle (one bundle per bucket and micro-batch).
        keys_per_batch = sum(len({str(r["k"]) for r in p}) for p in parts)
        assert stats["state_reads"] == stats["state_writes"] == keys_per_batch


def materialize(changes: list[tuple]) -> list[str]:
    """The table a changelog with ranks describes (rows keyed by partition key and rank)."""
    table: dict[tuple, tuple] = {}
    for r in changes:
        key = (str(r[1]), r[-1])
        if r[0] in ("+I", "+U"):
            table[key] = r[1:]
        else:
            assert str(table.pop(key)) == str(r[1:])
    return sorted(str(v) for v in table.values())


def test_materialized_stream_equals_the_batch_result(spark, tmp_path):
    rows = random_rows(11, 400, keys=6, retract=True)
    parts = [rows[i : i + 100] for i in range(0, 400, 100)]
    write_micro_batches(str(tmp_path / "src"), [table_of(p) for p in parts])
    stream = topn(
        stream_of(spark, str(tmp_path / "src"), SCHEMA),
        3,
        by=["k"],
        order_by=_orders(),
        op_col="op",
        buckets=2,
        bundle_rows=7,
    )
    got = collect_stream(stream, str(tmp_path / "ck"))
    streamed = materialize([r for b in sorted(got) for r in got[b]])
    batch = topn(
        spark.createDataFrame(table_of(rows)).repartition(1),
        3,
        by=["k"],
        order_by=_orders(),
        op_col="op",
    )
    assert streamed == sorted(str(tuple(r)) for r in batch.collect())


def _sink_run(spark, src: str, sink: str, checkpoint: str) -> None:
    from sliceflow.testing.spark import run_to_end

    out = topn(
        stream_of(spark, src, SCHEMA), 2, by=["k"], order_by=_orders(), op_col="op", buckets=2
    )
    run_to_end(out, checkpoint, path=sink)


def test_restart_from_checkpoint_loses_and_doubles_nothing(spark, tmp_path):
    rows = random_rows(5, 320, retract=True)
    batches = [table_of(rows[i : i + 80]) for i in range(0, 320, 80)]
    write_micro_batches(str(tmp_path / "all"), batches)
    _sink_run(spark, str(tmp_path / "all"), str(tmp_path / "sink1"), str(tmp_path / "ck1"))
    write_micro_batches(str(tmp_path / "src"), batches[:2])
    _sink_run(spark, str(tmp_path / "src"), str(tmp_path / "sink2"), str(tmp_path / "ck2"))
    first = spark.read.parquet(str(tmp_path / "sink2")).count()
    write_micro_batches(str(tmp_path / "src"), batches[2:], first=2)
    _sink_run(spark, str(tmp_path / "src"), str(tmp_path / "sink2"), str(tmp_path / "ck2"))

    def sink(name: str) -> list[str]:
        return sorted(str(tuple(r)) for r in spark.read.parquet(str(tmp_path / name)).collect())

    whole = sink("sink1")
    assert 0 < first < len(whole)
    assert sink("sink2") == whole
    model = TopNModel(["k"], ORDER, 2, op_col="op")
    want = [r for i in range(0, 320, 80) for r in model.process(rows[i : i + 80])]
    assert whole == sorted(str(r) for r in want)


def test_chains_with_changelog_agg(spark, tmp_path):
    rows = random_rows(13, 300, keys=8, retract=True)
    parts = [rows[i : i + 100] for i in range(0, 300, 100)]
    write_micro_batches(str(tmp_path / "src"), [table_of(p) for p in parts])
    aggs = [W.count().alias("n"), W.max("id").alias("last")]

    def chain(df):
        per_key = changelog_agg(df, ["k"], aggs, op_col="op")
        return topn(per_key, 3, by=None, order_by=[F.desc("n"), F.desc("last")], op_col="op")

    got = collect_stream(
        chain(stream_of(spark, str(tmp_path / "src"), SCHEMA)), str(tmp_path / "ck")
    )
    table: dict[int, tuple] = {}
    for r in [r for b in sorted(got) for r in got[b]]:
        if r[0] in ("+I", "+U"):
            table[r[-1]] = r[1:]
        else:
            assert table.pop(r[-1]) == r[1:]
    batch = chain(spark.createDataFrame(table_of(rows)).repartition(1))
    assert sorted(table.values()) == sorted(tuple(r) for r in batch.collect())
