"""Runs sliceflow's window_agg on Spark's local-cluster mode (real executor processes) and
checks its rows against Spark's own ``groupBy(window(...), key).agg(...)``.

PYTHONPATH=tests python tests/jobs/cluster_suite.py window   # non-zero exit: rows differ

A hop window (10 minutes sliding by 1 minute, startTime 30 seconds, so windows do not align
with the minute) over 20,000 bids spread over 3 hours across 4 partitions, 50 auctions plus
null auctions; count(*), count, sum, avg, min, max of the price. The kernel's counters (summed
over the executors' tasks by a Spark accumulator) must show one fired window per output row.

Streaming: the same bids in 5 parquet files ordered by time but with rows up to 15 minutes out
of order (one micro-batch each), watermark 2 minutes; the streaming hop must emit per
micro-batch the rows of Spark's own append-mode window aggregation, late rows included.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from sliceflow import window as W
from sliceflow.spark import WindowMetrics, window_agg
from sliceflow.testing.spark import run_to_end, window_bounds

ROWS = 20_000
SECOND = 1_000_000
EPOCH = 1_795_392_000 * SECOND  # 2026-11-23 00:00 UTC


def bids() -> pa.Table:
    rng = np.random.default_rng(2026)
    ts = EPOCH + rng.integers(-3600 * SECOND, 7200 * SECOND, ROWS)
    auction = rng.integers(0, 50, ROWS).astype(object)
    auction[rng.random(ROWS) < 0.02] = None
    price = rng.integers(1, 1_000_000, ROWS).astype(object)
    price[rng.random(ROWS) < 0.05] = None
    return pa.table(
        {
            "ts": pa.array(ts, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            "auction": pa.array(list(auction), pa.int64()),
            "price": pa.array(list(price), pa.int64()),
        }
    )


HOP = ("10 minutes", "1 minute", "30 seconds")


def spark_hop(df):
    win = F.window("ts", *HOP).alias("w")
    return (
        df.groupBy(win, "auction")
        .agg(*aggregates_spark())
        .select(*window_bounds("w"), "auction", "n", "np", "s", "a", "lo", "hi")
    )


def aggregates_spark():
    return [
        F.count(F.lit(1)).alias("n"),
        F.count("price").alias("np"),
        F.sum("price").alias("s"),
        F.avg("price").alias("a"),
        F.min("price").alias("lo"),
        F.max("price").alias("hi"),
    ]


def aggregates_ours():
    return [
        W.count().alias("n"),
        W.count("price").alias("np"),
        W.sum("price").alias("s"),
        W.avg("price").alias("a"),
        W.min("price").alias("lo"),
        W.max("price").alias("hi"),
    ]


def run_stream(df, checkpoint: str) -> dict[int, list[tuple]]:
    got: dict[int, list[tuple]] = {}

    def each(batch_df, batch_id: int) -> None:
        rounded = batch_df.withColumn("a", F.round("a", 6))
        got[batch_id] = sorted(str(tuple(r)) for r in rounded.collect())

    run_to_end(df, checkpoint, each)
    return {b: rows for b, rows in got.items() if rows}


def streaming(spark) -> tuple[int, int, int]:
    """(rows, Spark's rows, micro-batches whose rows differ)."""
    table = bids()
    jitter = np.random.default_rng(7).integers(0, 900 * SECOND, table.num_rows)
    order = np.argsort(table.column("ts").cast(pa.int64()).to_numpy() + jitter, kind="stable")
    table = table.take(pa.array(order))
    folder = tempfile.mkdtemp(prefix="sliceflow-stream-")
    files = 5
    step = table.num_rows // files
    for i in range(files):
        path = os.path.join(folder, "src", f"part-{i}.parquet")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(table.slice(i * step, step if i < files - 1 else None), path)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    schema = spark.createDataFrame(table.slice(0, 0)).schema
    stream = (
        spark.readStream.schema(schema)
        .option("maxFilesPerTrigger", 1)
        .parquet(os.path.join(folder, "src"))
        .withWatermark("ts", "2 minutes")
    )
    ours = run_stream(
        window_agg(stream, W.hop("ts", *HOP[:2], offset=HOP[2]), ["auction"], aggregates_ours()),
        os.path.join(folder, "ck_ours"),
    )
    theirs = run_stream(spark_hop(stream), os.path.join(folder, "ck_spark"))
    differing = sum(ours.get(b) != theirs.get(b) for b in set(ours) | set(theirs))
    return sum(map(len, ours.values())), sum(map(len, theirs.values())), differing


def check(spark: SparkSession) -> tuple[str, bool]:
    """Batch and streaming hop on ``spark``: the summary line and whether every check held."""
    df = spark.createDataFrame(bids()).repartition(4).cache()
    df.count()
    metrics = WindowMetrics(spark)
    ours = window_agg(
        df,
        W.hop("ts", *HOP[:2], offset=HOP[2]),
        ["auction"],
        aggregates_ours(),
        metrics=metrics,
    ).cache()
    rows = ours.count()
    theirs = spark_hop(df).cache()
    spark_rows = theirs.count()
    # avg is a double computed in a different order: compare it rounded.
    a, b = (d.withColumn("a", F.round("a", 6)) for d in (ours, theirs))
    diff = a.exceptAll(b).union(b.exceptAll(a)).count()
    workers = df.rdd.mapPartitions(lambda _: [os.getpid()]).distinct().count()
    fired = metrics.value.get("windows_fired", -1)
    rows_in = metrics.value.get("rows_in", -1)
    stream_rows, stream_spark_rows, stream_diff = streaming(spark)
    for d in (df, ours, theirs):
        d.unpersist()
    summary = (
        f"rows={rows} spark_rows={spark_rows} workers={workers} diff={diff} "
        f"windows_fired={fired} rows_in={rows_in} stream_rows={stream_rows} "
        f"stream_spark_rows={stream_spark_rows} stream_diff={stream_diff}"
    )
    batch_ok = not diff and rows == spark_rows == fired > 0 and rows_in == ROWS
    stream_ok = not stream_diff and stream_rows == stream_spark_rows > 0
    return summary, batch_ok and stream_ok
