"""Runs sliceflow's window_agg on Spark's local-cluster mode (real executor processes) and
checks its rows against Spark's own ``groupBy(window(...), key).agg(...)``.

python tests/window_cluster_job.py   # exits non-zero when sliceflow's rows differ

A hop window (10 minutes sliding by 1 minute, startTime 30 seconds, so windows do not align
with the minute) over 20,000 bids spread over 3 hours across 4 partitions, 50 auctions plus
null auctions; count(*), count, sum, avg, min, max of the price. The kernel's counters (summed
over the executors' tasks by a Spark accumulator) must show one fired window per output row.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow as pa
from pyspark.sql import functions as F

from sliceflow import window as W
from sliceflow.spark import WindowMetrics, window_agg
from sliceflow.testing.spark import local_session

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


def main() -> None:
    spark = local_session(
        "local-cluster[2,1,1024]",
        "sliceflow-window-local-cluster",
        {"spark.sql.shuffle.partitions": "4"},
    )
    try:
        df = spark.createDataFrame(bids()).repartition(4).cache()
        df.count()
        metrics = WindowMetrics(spark)
        ours = window_agg(
            df,
            W.hop("ts", "10 minutes", "1 minute", offset="30 seconds"),
            ["auction"],
            [
                W.count().alias("n"),
                W.count("price").alias("np"),
                W.sum("price").alias("s"),
                W.avg("price").alias("a"),
                W.min("price").alias("lo"),
                W.max("price").alias("hi"),
            ],
            metrics=metrics,
        ).cache()
        rows = ours.count()
        win = F.window("ts", "10 minutes", "1 minute", "30 seconds").alias("w")
        theirs = (
            df.groupBy(win, "auction")
            .agg(
                F.count(F.lit(1)).alias("n"),
                F.count("price").alias("np"),
                F.sum("price").alias("s"),
                F.avg("price").alias("a"),
                F.min("price").alias("lo"),
                F.max("price").alias("hi"),
            )
            .select(
                F.col("w.start").alias("window_start"),
                F.col("w.end").alias("window_end"),
                (F.col("w.end") - F.expr("INTERVAL 1 MICROSECOND")).alias("window_time"),
                "auction",
                "n",
                "np",
                "s",
                "a",
                "lo",
                "hi",
            )
        ).cache()
        spark_rows = theirs.count()
        # avg is a double computed in a different order: compare it rounded.
        a, b = (d.withColumn("a", F.round("a", 6)) for d in (ours, theirs))
        diff = a.exceptAll(b).union(b.exceptAll(a)).count()
        workers = df.rdd.mapPartitions(lambda _: [os.getpid()]).distinct().count()
        fired = metrics.value.get("windows_fired", -1)
        rows_in = metrics.value.get("rows_in", -1)
        print(
            f"rows={rows} spark_rows={spark_rows} workers={workers} diff={diff} "
            f"windows_fired={fired} rows_in={rows_in}"
        )
        if diff or rows != spark_rows or fired != rows or rows_in != ROWS or rows == 0:
            sys.exit(1)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
