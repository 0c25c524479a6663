"""``sliceflow.spark.changelog_agg`` in Spark (``local[2]``): batch against Spark's own
``groupBy().agg()`` and the brute-force model, streaming (file source, one file per
micro-batch) against the model and seed 000's tables, chained aggregations in one query, batch
equal to the materialized stream (seed 004), restart from a checkpoint into a file sink, and
the errors a user meets."""

from __future__ import annotations

import math
import random
from decimal import Decimal

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F
from support.changelog_data import SCHEMA, by_key, random_changelog, table_of
from support.spark_helpers import collect_stream, stream_of, write_micro_batches

from sliceflow import window as W
from sliceflow.spark import ChangelogMetrics, changelog_agg
from sliceflow.testing.changelog_reference import (
    ChangelogModel,
    changelog_reference,
    materialize,
)
from sliceflow.testing.spark import run_to_end

pytestmark = pytest.mark.spark

# ------------------------------------------------------------------------------------------
# Batch


def test_batch_matches_spark_groupby(spark):
    rng = random.Random(7)
    n = 3000
    data = pa.table(
        {
            "k": pa.array([rng.choice([None, *range(50)]) for _ in range(n)], pa.int64()),
            "s": pa.array([rng.choice(["x", "y", None]) for _ in range(n)]),
            "v": pa.array([rng.choice([None, *range(-100, 100)]) for _ in range(n)], pa.int64()),
        }
    )
    df = spark.createDataFrame(data).repartition(4)
    ours = changelog_agg(
        df,
        ["k", "s"],
        [
            W.count().alias("n"),
            W.count("v").alias("nv"),
            W.sum("v").alias("sv"),
            W.avg("v").alias("av"),
            W.min("v").alias("lo"),
            W.max("v").alias("hi"),
            W.count_distinct("v").alias("dv"),
        ],
    )
    spark_out = df.groupBy("k", "s").agg(
        F.count("*").alias("n"),
        F.count("v").alias("nv"),
        F.sum("v").alias("sv"),
        F.avg("v").alias("av"),
        F.min("v").alias("lo"),
        F.max("v").alias("hi"),
        F.countDistinct("v").alias("dv"),
    )
    got = [tuple(r) for r in ours.collect()]
    assert {r[0] for r in got} == {"+I"}
    assert ours.columns == ["op", "k", "s", "n", "nv", "sv", "av", "lo", "hi", "dv"]
    assert sorted(map(str, (r[1:] for r in got))) == sorted(
        map(str, (tuple(r) for r in spark_out.collect()))
    )


@pytest.mark.parametrize("mini_batch", [True, False])
def test_batch_changelog_input_is_the_final_table(spark, mini_batch):
    rows = random_changelog(3, 400)
    df = spark.createDataFrame(table_of(rows)).repartition(1)
    aggs = [
        W.count().alias("n"),
        W.sum("v").alias("sv"),
        W.max("v").alias("hi"),
        W.first_value("s").alias("fs"),
        W.avg("d").alias("ad"),
    ]
    metrics = ChangelogMetrics(spark)
    got = changelog_agg(
        df, ["k"], aggs, op_col="op", mini_batch=mini_batch, metrics=metrics
    ).collect()
    want = changelog_reference([rows], ["k"], aggs, op_col="op", emit="final")
    assert sorted(map(str, (tuple(r) for r in got))) == sorted(map(str, want))
    m = metrics.value
    assert m["rows_in"] == 400 and m["deltas_in"] == 400
    assert m["inserts"] == len(want)


def test_batch_bad_op_fails_with_its_value(spark):
    df = spark.createDataFrame(pa.table({"k": [1, 2], "op": ["+I", "UPSERT"]}))
    with pytest.raises(Exception, match="holds 'UPSERT'"):
        changelog_agg(df, "k", [W.count()], op_col="op").collect()


def test_plan_errors_at_the_call(spark):
    df = spark.createDataFrame(pa.table({"k": [1], "v": [2]}))
    with pytest.raises(ValueError, match="not a column"):
        changelog_agg(df, "nope", [W.count()])
    with pytest.raises(ValueError, match="op column 'v' must be a STRING"):
        changelog_agg(df, "k", [W.count()], op_col="v")
    with pytest.raises(TypeError, match="DataFrame"):
        changelog_agg(table_of([]), "k", [W.count()])


# ------------------------------------------------------------------------------------------
# Streaming


SEED_000 = pa.table({"user_id": [1, 2, 11], "day": ["2023-12-19"] * 3})


def _seed_query(stream, mini_batch: bool):
    inner = changelog_agg(
        stream.withColumn("b", F.col("user_id") % 10),
        by=["day", "b"],
        aggs=[W.count_distinct("user_id").alias("cnt")],
        mini_batch=mini_batch,
        buckets=4,
    )
    return changelog_agg(
        inner,
        by=["day"],
        aggs=[W.sum("cnt").alias("total")],
        op_col="op",
        mini_batch=mini_batch,
        buckets=4,
    )


@pytest.mark.parametrize(
    ("mini_batch", "one_per_batch", "want"),
    [
        (False, True, ["+I1", "-U1", "+U2", "-U2", "+U1", "-U1", "+U3"]),
        (True, True, ["+I1", "-U1", "+U2", "-U2", "+U3"]),
        (True, False, ["+I3"]),
    ],
)
def test_streaming_seed_000(spark, tmp_path, mini_batch, one_per_batch, want):
    """Seed 000's two-level query, two changelog_agg chained in one streaming query."""
    batches = [SEED_000.slice(i, 1) for i in range(3)] if one_per_batch else [SEED_000]
    write_micro_batches(str(tmp_path / "src"), batches)
    out = _seed_query(stream_of(spark, str(tmp_path / "src"), SEED_000.schema), mini_batch)
    got = collect_stream(out, str(tmp_path / "ck"))
    assert [f"{op}{total}" for b in sorted(got) for op, _, total in got[b]] == want


@pytest.mark.parametrize("mini_batch", [True, False])
def test_streaming_matches_model(spark, tmp_path, mini_batch):
    """Per micro-batch, every key's changes equal the model's (keys of different buckets
    come out in any order; a key's own changes in order). A bundle is one bucket's rows of a
    micro-batch here (the model cuts bundles over all keys, so no smaller cut is compared)."""
    rows = random_changelog(11, 240)
    cuts = [0, 50, 90, 170, 240]
    batches = [rows[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    write_micro_batches(str(tmp_path / "src"), [table_of(b) for b in batches])
    aggs = [
        W.count().alias("n"),
        W.sum("v").alias("sv"),
        W.min("v").alias("lo"),
        W.count_distinct("s").alias("ds"),
        W.last_value("d").alias("ld"),
    ]
    out = changelog_agg(
        stream_of(spark, str(tmp_path / "src"), SCHEMA),
        ["k"],
        aggs,
        op_col="op",
        mini_batch=mini_batch,
        buckets=3,
    )
    got = collect_stream(out, str(tmp_path / "ck"))
    assert sorted(got) == list(range(len(batches)))
    model = ChangelogModel(["k"], aggs, op_col="op", mini_batch=mini_batch)
    for b, batch in enumerate(batches):
        assert by_key(got[b], 1) == by_key(model.process(batch), 1), f"micro-batch {b}"


@pytest.mark.parametrize("cache_bytes", [None, "0"])
def test_streaming_state_log_matches_model(spark, tmp_path, cache_bytes):
    """Layout 2 (docs/state.md) over many micro-batches: the log grows and is compacted, and the
    result is the model's whether the workers keep their buckets (hits and catch-ups) or not
    (spark.sliceflow.state.cacheBytes = 0: every call reads the base and the log)."""
    rows = random_changelog(23, 600)
    batches = [rows[i : i + 40] for i in range(0, 600, 40)]
    write_micro_batches(str(tmp_path / "src"), [table_of(b) for b in batches])
    aggs = [W.count().alias("n"), W.sum("v").alias("sv"), W.max("s").alias("hs")]
    metrics = ChangelogMetrics(spark)
    if cache_bytes is not None:
        spark.conf.set("spark.sliceflow.state.cacheBytes", cache_bytes)
    try:
        out = changelog_agg(
            stream_of(spark, str(tmp_path / "src"), SCHEMA),
            ["k"],
            aggs,
            op_col="op",
            buckets=2,
            metrics=metrics,
        )
    finally:
        spark.conf.unset("spark.sliceflow.state.cacheBytes")
    got = collect_stream(out, str(tmp_path / "ck"))
    model = ChangelogModel(["k"], aggs, op_col="op", mini_batch=True)
    for b, batch in enumerate(batches):
        assert by_key(got[b], 1) == by_key(model.process(batch), 1), f"micro-batch {b}"
    counters = metrics.value
    assert counters["state_log_appends"] > 0 and counters["state_bytes_written"] > 0
    if cache_bytes == "0":
        assert counters.get("state_cache_hits", 0) == 0
        assert counters.get("state_catch_ups", 0) == 0
        assert counters["state_log_entries_read"] > 0
    else:
        assert counters.get("state_cache_hits", 0) + counters.get("state_catch_ups", 0) > 0


def test_a_malformed_state_cache_size_is_refused_naming_the_conf(spark):
    df = spark.createDataFrame([(1, 2)], "k BIGINT, v BIGINT")
    spark.conf.set("spark.sliceflow.state.cacheBytes", "lots")
    try:
        with pytest.raises(ValueError, match="spark.sliceflow.state.cacheBytes"):
            changelog_agg(df, ["k"], [W.count()])
    finally:
        spark.conf.unset("spark.sliceflow.state.cacheBytes")


def test_streaming_materializes_to_the_batch_result(spark, tmp_path):
    """Seed 004: the same aggregation on the same rows, batch and streaming, gives the same
    table (the streaming changelog applied as upserts and deletes)."""
    rows = random_changelog(5, 300)
    batches = [table_of(rows[i : i + 100]) for i in range(0, 300, 100)]
    write_micro_batches(str(tmp_path / "src"), batches)
    aggs = [W.count().alias("n"), W.max("v").alias("hi"), W.sum("d").alias("sd")]
    stream = changelog_agg(
        stream_of(spark, str(tmp_path / "src"), SCHEMA), ["k"], aggs, op_col="op", buckets=2
    )
    got = collect_stream(stream, str(tmp_path / "ck"))
    streamed = materialize([r for b in sorted(got) for r in got[b]], 1)
    batch_df = spark.createDataFrame(table_of(rows)).repartition(1)
    final = changelog_agg(batch_df, ["k"], aggs, op_col="op").collect()
    assert streamed == {(r[1],): tuple(r)[1:] for r in final}


def _file_sink_run(spark, src: str, sink: str, checkpoint: str, buckets: int = 4) -> None:
    aggs = [W.count().alias("n"), W.sum("v").alias("sv"), W.max("s").alias("hs")]
    out = changelog_agg(stream_of(spark, src, SCHEMA), ["k"], aggs, op_col="op", buckets=buckets)
    run_to_end(out, checkpoint, path=sink)


def _sink_rows(spark, sink: str) -> list[str]:
    return sorted(str(tuple(r)) for r in spark.read.parquet(sink).collect())


def test_restart_from_checkpoint_loses_and_doubles_nothing(spark, tmp_path):
    rows = random_changelog(9, 320)
    batches = [table_of(rows[i : i + 80]) for i in range(0, 320, 80)]
    # Uninterrupted: all four micro-batches in one run.
    write_micro_batches(str(tmp_path / "all"), batches)
    _file_sink_run(spark, str(tmp_path / "all"), str(tmp_path / "sink1"), str(tmp_path / "ck1"))
    # Stopped after two micro-batches, restarted from the checkpoint for the other two.
    write_micro_batches(str(tmp_path / "src"), batches[:2])
    _file_sink_run(spark, str(tmp_path / "src"), str(tmp_path / "sink2"), str(tmp_path / "ck2"))
    first = _sink_rows(spark, str(tmp_path / "sink2"))
    write_micro_batches(str(tmp_path / "src"), batches[2:], first=2)
    _file_sink_run(spark, str(tmp_path / "src"), str(tmp_path / "sink2"), str(tmp_path / "ck2"))
    whole = _sink_rows(spark, str(tmp_path / "sink1"))
    assert 0 < len(first) < len(whole)
    assert _sink_rows(spark, str(tmp_path / "sink2")) == whole
    model = changelog_reference(
        [rows[i : i + 80] for i in range(0, 320, 80)],
        ["k"],
        [W.count().alias("n"), W.sum("v").alias("sv"), W.max("s").alias("hs")],
        op_col="op",
    )
    assert whole == sorted(str(r) for r in model)


def test_restart_with_another_bucket_count_is_refused(spark, tmp_path):
    rows = random_changelog(2, 100)
    write_micro_batches(str(tmp_path / "src"), [table_of(rows[:50])])
    _file_sink_run(spark, str(tmp_path / "src"), str(tmp_path / "sink"), str(tmp_path / "ck"))
    write_micro_batches(str(tmp_path / "src"), [table_of(rows[50:])], first=1)
    changed = r"different query \(buckets: 4 in the checkpoint, now 5\)"
    with pytest.raises(StreamingQueryException, match=changed):
        _file_sink_run(
            spark, str(tmp_path / "src"), str(tmp_path / "sink"), str(tmp_path / "ck"), buckets=5
        )


def test_streaming_needs_the_rocksdb_state_store(spark, tmp_path):
    write_micro_batches(str(tmp_path / "src"), [table_of(random_changelog(1, 5))])
    stream = stream_of(spark, str(tmp_path / "src"), SCHEMA)
    key = "spark.sql.streaming.stateStore.providerClass"
    old = spark.conf.get(key)
    spark.conf.set(
        key, "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
    )
    try:
        with pytest.raises(ValueError, match="needs the RocksDB state store"):
            changelog_agg(stream, "k", [W.count()], op_col="op")
    finally:
        spark.conf.set(key, old)


def test_streaming_types_round_trip(spark, tmp_path):
    """Keys and values of every kind survive the pandas hand-over of transformWithStateInPandas
    (dates, timestamps, decimals, floats with NaN, booleans, nulls)."""
    import datetime as dt

    t0 = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.timezone.utc)
    table = pa.table(
        {
            "day": pa.array([dt.date(2026, 11, 23), None, dt.date(2026, 11, 23)], pa.date32()),
            "ts": pa.array([t0, t0, None], pa.timestamp("us", tz="UTC")),
            "ok": pa.array([True, None, False]),
            "f": pa.array([float("nan"), 1.5, None]),
            "d": pa.array([Decimal("1.25"), None, Decimal("-3.50")], pa.decimal128(10, 2)),
            "big": pa.array([2**62, 2**62, None], pa.int64()),
        }
    )
    write_micro_batches(str(tmp_path / "src"), [table])
    aggs = [
        W.min("ts").alias("first_ts"),
        W.max("f").alias("top_f"),
        W.sum("d").alias("sd"),
        W.max("ok").alias("any_ok"),
        W.sum("big").alias("sb"),
        W.count().alias("n"),
    ]
    out = changelog_agg(stream_of(spark, str(tmp_path / "src"), table.schema), ["day"], aggs)
    got = collect_stream(out, str(tmp_path / "ck"))
    rows = sorted(got[0], key=lambda r: str(r[1]))
    assert [r[0] for r in rows] == ["+I", "+I"]
    day, null_day = rows[0], rows[1]
    assert day[1] == dt.date(2026, 11, 23) and null_day[1] is None
    assert day[2] == t0.replace(tzinfo=None) and math.isnan(day[3])
    assert day[4] == Decimal("-2.25") and day[5] is True and day[6] == 2**62 and day[7] == 2
    assert null_day[2:] == (t0.replace(tzinfo=None), 1.5, None, None, 2**62, 1)
