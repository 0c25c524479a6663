"""Runs sliceflow's changelog_agg on Spark's local-cluster mode (real executor processes) and
checks its rows against Spark's own ``groupBy().agg()`` and the brute-force model
(``sliceflow.testing.changelog_reference``).

PYTHONPATH=tests python tests/jobs/cluster_suite.py changelog   # non-zero exit: rows differ

Batch (a DataFrame of 4 partitions):

* insert-only: 6,000 random rows (200 keys plus a null key, values with nulls); count(*),
  count, sum, max, count_distinct by key must equal ``groupBy().agg()``, every op ``+I``;
* changelog (op column): each of 4 partitions is on its own a valid changelog (``+I``, null
  op, ``-U``/``+U`` pairs, ``-D`` of rows inserted earlier in that partition; keys shared by
  the partitions), so the final table does not depend on how the shuffle interleaves them:
  it must equal ``changelog_reference(..., emit="final")``; once with count/sum/max/
  count_distinct (no local fold), once with count/sum/avg (folded before the shuffle),
  mini-batch on and off.

Streaming: seed 000's two-level query over 3 parquet files (one micro-batch each,
``maxFilesPerTrigger=1``): inner ``changelog_agg`` by (day, user_id % 10) count_distinct
user_id, outer by day sum(cnt) with ``op_col="op"``, into ``foreachBatch``. The outer changelog
materialized after every micro-batch must equal the model's; each micro-batch fits one bundle
per bucket, so the multiset of outer changelog rows per micro-batch must equal the model's
too.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import random
import tempfile
import time
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from support.cluster_session import collect_stream, python_workers

from sliceflow import window as W
from sliceflow.spark import ChangelogMetrics, changelog_agg
from sliceflow.testing.changelog_reference import (
    ChangelogModel,
    changelog_reference,
    materialize,
)

ROWS = 6_000
PARTITIONS = 4
STREAM_BATCHES = 3
STREAM_ROWS = 1_500
DAY0 = dt.date(2026, 11, 23)


# ---------------------------------------------------------------------------------------------
# batch, insert-only, vs Spark's groupBy().agg()


def insert_only(spark):
    rng = np.random.default_rng(2026)
    k = rng.integers(0, 200, ROWS).astype(object)
    k[rng.random(ROWS) < 0.02] = None
    v = rng.integers(-1_000, 1_000, ROWS).astype(object)
    v[rng.random(ROWS) < 0.05] = None
    table = pa.table({"k": pa.array(list(k), pa.int64()), "v": pa.array(list(v), pa.int64())})
    df = spark.createDataFrame(table).repartition(PARTITIONS).cache()
    df.count()
    ours = changelog_agg(
        df,
        ["k"],
        [
            W.count().alias("n"),
            W.count("v").alias("nv"),
            W.sum("v").alias("s"),
            W.max("v").alias("hi"),
            W.count_distinct("v").alias("d"),
        ],
    ).cache()
    rows = ours.count()
    not_insert = ours.filter(F.col("op").isNull() | (F.col("op") != "+I")).count()
    theirs = df.groupBy("k").agg(
        F.count(F.lit(1)).alias("n"),
        F.count("v").alias("nv"),
        F.sum("v").alias("s"),
        F.max("v").alias("hi"),
        F.countDistinct("v").alias("d"),
    )
    a = ours.drop("op")
    diff = a.exceptAll(theirs).union(theirs.exceptAll(a)).count()
    spark_rows = theirs.count()
    partitions = df.rdd.getNumPartitions()
    return rows, spark_rows, diff, not_insert, partitions


# ---------------------------------------------------------------------------------------------
# batch, changelog input, vs the model's final table


def changelog_partition(p: int) -> list[dict]:
    """A valid changelog on its own: every retraction retracts a row this partition inserted
    earlier (and still live), keys shared with the other partitions."""
    rnd = random.Random(1000 + p)
    live: list[tuple] = []
    out: list[dict] = []
    while len(out) < 1_500:
        r = rnd.random()
        if live and r < 0.2:
            row = live.pop(rnd.randrange(len(live)))
            out.append({"op": "-D", "k": row[0], "v": row[1]})
        elif live and r < 0.35:
            i = rnd.randrange(len(live))
            old = live[i]
            new = (old[0], rnd.choice([None, rnd.randint(-50, 50)]))
            live[i] = new
            out.append({"op": "-U", "k": old[0], "v": old[1]})
            out.append({"op": "+U", "k": new[0], "v": new[1]})
        else:
            key = None if rnd.random() < 0.02 else rnd.randint(0, 80)
            row = (key, None if rnd.random() < 0.05 else rnd.randint(-50, 50))
            live.append(row)
            out.append({"op": None if rnd.random() < 0.1 else "+I", "k": row[0], "v": row[1]})
    return out


def changelog_batch(spark):
    parts = [changelog_partition(p) for p in range(PARTITIONS)]
    schema = T.StructType(
        [
            T.StructField("op", T.StringType()),
            T.StructField("k", T.LongType()),
            T.StructField("v", T.LongType()),
        ]
    )
    # One partition per changelog, each in its own order (the rows are made on the executors).
    rdd = spark.sparkContext.parallelize(range(PARTITIONS), PARTITIONS).flatMap(
        lambda p: [(r["op"], r["k"], r["v"]) for r in changelog_partition(p)]
    )
    df = spark.createDataFrame(rdd, schema)
    partitions = df.rdd.getNumPartitions()
    cases = [
        (
            [
                W.count().alias("n"),
                W.sum("v").alias("s"),
                W.max("v").alias("hi"),
                W.count_distinct("v").alias("d"),
            ],
            {},
        ),
        ([W.count().alias("n"), W.sum("v").alias("s"), W.avg("v").alias("a")], {}),
        (
            [W.count().alias("n"), W.sum("v").alias("s"), W.avg("v").alias("a")],
            {"mini_batch": False},
        ),
        ([W.max("v").alias("hi"), W.count_distinct("v").alias("d")], {"bundle_rows": 7}),
    ]
    rows = diff = 0
    for aggs, kwargs in cases:
        metrics = ChangelogMetrics(spark)
        got = changelog_agg(df, ["k"], aggs, op_col="op", metrics=metrics, **kwargs).collect()
        want = changelog_reference(
            [[r for part in parts for r in part]], ["k"], aggs, op_col="op", emit="final"
        )
        got_t = [tuple(r) for r in got]
        rows += len(got_t)
        diff += compare(got_t, want)
        m = metrics.value
        if m.get("rows_in") != sum(len(p) for p in parts) or m.get("retractions_ignored"):
            print(f"changelog batch {aggs} {kwargs}: metrics {m}")
            diff += 1
    return rows, diff, partitions


def _same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
    return x == y


def compare(got: list[tuple], want: list[tuple]) -> int:
    """The number of rows of ``got`` and ``want`` without a partner (floats compared with a
    tolerance: the additions happen in another order)."""
    key = lambda r: tuple((v is not None, v) for v in r if not isinstance(v, float))  # noqa: E731
    rest = sorted(want, key=key)
    unmatched = 0
    for row in sorted(got, key=key):
        for i, w in enumerate(rest):
            if len(w) == len(row) and all(_same(a, b) for a, b in zip(row, w, strict=True)):
                del rest[i]
                break
        else:
            unmatched += 1
    if unmatched or rest:
        print(f"  got-only {unmatched}, want-only {len(rest)}: e.g. {rest[:3]}")
    return unmatched + len(rest)


# ---------------------------------------------------------------------------------------------
# streaming: seed 000's two-level query over files


def stream_batches() -> list[list[dict]]:
    rng = random.Random(7)
    batches = []
    for b in range(STREAM_BATCHES):
        rows = []
        for _ in range(STREAM_ROWS):
            # later batches reach more users: existing (day, b) keys grow (-U/+U), new ones
            # appear (+I), and day 3 only exists from the second batch on
            user = rng.randint(0, 150 * (b + 1))
            day = DAY0 + dt.timedelta(days=rng.randint(0, 2 + min(b, 1)))
            rows.append({"day": day, "user_id": None if rng.random() < 0.01 else user})
        batches.append(rows)
    return batches


def write_stream_files(folder: str, batches: list[list[dict]]) -> None:
    os.makedirs(folder)
    now = time.time() - 3600
    for i, rows in enumerate(batches):
        table = pa.table(
            {
                "day": pa.array([r["day"] for r in rows], pa.date32()),
                "user_id": pa.array([r["user_id"] for r in rows], pa.int64()),
            }
        )
        path = os.path.join(folder, f"part-{i:03d}.parquet")
        pq.write_table(table, path)
        # The file source takes the oldest files first: one file per micro-batch, in order.
        os.utime(path, (now + 60 * i, now + 60 * i))


def model_stream(batches):
    inner = ChangelogModel(["day", "b"], [W.count_distinct("user_id").alias("cnt")])
    outer = ChangelogModel(
        ["day"], [W.sum("cnt").alias("total")], op_col="op", types={"cnt": pa.int64()}
    )
    inner_out, outer_out = [], []
    for rows in batches:
        rows = [dict(r, b=None if r["user_id"] is None else r["user_id"] % 10) for r in rows]
        changes = inner.process(rows)
        inner_out.append(changes)
        outer_out.append(
            outer.process([dict(zip(["op", "day", "b", "cnt"], c, strict=True)) for c in changes])
        )
    return inner_out, outer_out


def run_stream(spark, folder: str, checkpoint: str):
    src = (
        spark.readStream.schema("day DATE, user_id BIGINT")
        .option("maxFilesPerTrigger", 1)
        .parquet(folder)
    )
    inner_metrics, outer_metrics = ChangelogMetrics(spark), ChangelogMetrics(spark)
    inner = changelog_agg(
        src.withColumn("b", F.col("user_id") % 10),
        by=["day", "b"],
        aggs=[W.count_distinct("user_id").alias("cnt")],
        metrics=inner_metrics,
    )
    outer = changelog_agg(
        inner, by=["day"], aggs=[W.sum("cnt").alias("total")], op_col="op", metrics=outer_metrics
    )
    collected = collect_stream(outer, checkpoint)
    return collected, inner_metrics.value, outer_metrics.value


def streaming(spark, tmp: str):
    batches = stream_batches()
    folder = os.path.join(tmp, "source")
    write_stream_files(folder, batches)
    inner_want, want = model_stream(batches)
    collected, inner_m, outer_m = run_stream(spark, folder, os.path.join(tmp, "checkpoint"))
    got = [collected[i] for i in sorted(collected) if collected[i]]
    diff_batches = 0 if len(got) == len(want) == STREAM_BATCHES else 1
    # the table the outer changelog materializes to, after every micro-batch
    diff_table = 0
    for n in range(1, min(len(got), len(want)) + 1):
        g = materialize([r for b in got[:n] for r in b], 1)
        w = materialize([r for b in want[:n] for r in b], 1)
        diff_table += len(set(g.items()) ^ set(w.items()))
    # each micro-batch's outer changelog as a multiset (one bundle per bucket and micro-batch:
    # one net change per day, whatever order the inner rows arrive in)
    diff_changelog = sum(
        sum(((Counter(g) - Counter(w)) + (Counter(w) - Counter(g))).values())
        for g, w in zip(got, want, strict=False)
    )
    rows = sum(len(b) for b in got)
    inner_rows = sum(len(b) for b in inner_want)
    counters_ok = (
        inner_m.get("rows_in") == sum(len(b) for b in batches)
        and outer_m.get("rows_in") == inner_rows
    )
    print(
        f"  stream: batch ids {sorted(collected)}, outer rows per batch "
        f"{[len(b) for b in got]} (model {[len(b) for b in want]}), ops "
        f"{dict(Counter(r[0] for b in got for r in b))}, diff_table={diff_table} "
        f"diff_changelog={diff_changelog}; inner rows_in={inner_m.get('rows_in')} "
        f"buckets_touched={inner_m.get('buckets_touched')}; outer rows_in="
        f"{outer_m.get('rows_in')} (model inner changelog rows {inner_rows}) deltas_in="
        f"{outer_m.get('deltas_in')}"
    )
    return rows, diff_table + diff_changelog + diff_batches, counters_ok


def check(spark: SparkSession) -> tuple[str, bool]:
    """The batch and streaming checks on ``spark``: the summary line and whether all held."""
    start = time.monotonic()
    workers = python_workers(spark)
    t0 = time.monotonic()
    rows, spark_rows, diff_insert, not_insert, parts_insert = insert_only(spark)
    print(
        f"  insert-only: rows={rows} spark_rows={spark_rows} partitions={parts_insert} "
        f"diff={diff_insert} not_insert={not_insert} ({time.monotonic() - t0:.1f}s)"
    )
    t0 = time.monotonic()
    cl_rows, diff_changelog_batch, parts_cl = changelog_batch(spark)
    print(
        f"  changelog batch: rows={cl_rows} partitions={parts_cl} "
        f"diff={diff_changelog_batch} ({time.monotonic() - t0:.1f}s)"
    )
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sliceflow-changelog-") as tmp:
        stream = streaming(spark, tmp)
    print(f"  streaming: ({time.monotonic() - t0:.1f}s)")
    s_rows, stream_diff, counters_ok = stream
    diff = diff_insert + not_insert + diff_changelog_batch + stream_diff
    summary = (
        f"rows={rows} spark_rows={spark_rows} workers={workers} diff={diff} "
        f"diff_insert={diff_insert} diff_changelog_batch={diff_changelog_batch} "
        f"stream_rows={s_rows} diff_stream={stream_diff} "
        f"seconds={time.monotonic() - start:.0f}"
    )
    ok = (
        diff == 0
        and rows == spark_rows > 0
        and cl_rows > 0
        and s_rows > 0
        and counters_ok
        and parts_insert >= 4
        and parts_cl >= 4
    )
    return summary, ok
