"""The sliceflow demo: decode a Nexmark bid stream on local Spark, with sliceflow and with
Spark's own JSON readers, then aggregate the bids per auction over a sliding window
(hop 1 hour / 1 minute) with sliceflow's sliced windows and with Spark's ``window()``; check that
both give the same rows, and print the times. Exits with status 1 if any row differs.

Run it from the repository root once ``bash scripts/demo.sh`` (or ``bash scripts/setup.sh``)
has made ``.venv`` with sliceflow installed; the argument is the number of bids:

    .venv/bin/python examples/json_demo.py            # 500k bids
    .venv/bin/python examples/json_demo.py 2000000    # more

(``bash scripts/demo.sh`` itself runs the streaming pipeline, ``examples/pipeline_demo.py``.)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from pyspark.sql import functions as F

import sliceflow.spark as sfs
from sliceflow import window as W
from sliceflow.testing import BID_DDL, write_bids
from sliceflow.testing.spark import local_session


def timed(label: str, df, results: list) -> None:
    start = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    results.append((label, time.perf_counter() - start))


def main(n: int) -> None:
    # Spark's Python workers run PYSPARK_PYTHON (default: `python3` on the PATH, which may lack
    # sliceflow): this interpreter, unless the caller chose one.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = local_session("local[2]", "sliceflow-demo")
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "bids")
        t0 = time.perf_counter()
        # 20 bids per second of event time: 500k bids span about 7 hours, so the hop windows
        # of the sample below differ from one another
        write_bids(folder, n, files=4, events_per_second=20)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print(
            f"generated {n:,} Nexmark bids, {size / 1e6:.0f} MB of NDJSON in "
            f"{time.perf_counter() - t0:.1f} s"
        )

        text = spark.read.text(folder)
        spark_rows = text.select(F.from_json("value", BID_DDL).alias("b")).select("b.*")
        sf_rows = text.select(sfs.from_json("value", BID_DDL).alias("b")).select("b.*")
        spark_file = spark.read.schema(BID_DDL).json(folder)
        sf_file = spark.read.format("sliceflow.json").schema(BID_DDL).load(folder)

        print("\nsample (sliceflow.spark.from_json):")
        sf_rows.show(5, truncate=40)

        diff = sf_rows.exceptAll(spark_rows).count() + spark_rows.exceptAll(sf_rows).count()
        diff_file = sf_file.exceptAll(spark_file).count() + spark_file.exceptAll(sf_file).count()
        print(f"rows that differ from Spark: from_json {diff}, data source {diff_file}")

        results: list = []
        for _ in range(2):  # the first round warms the JVM and the Python workers up
            results.clear()
            timed("read.text + Spark from_json", spark_rows, results)
            timed("read.text + sliceflow from_json", sf_rows, results)
            timed("spark.read.json(schema)", spark_file, results)
            timed("sliceflow.json data source", sf_file, results)
        base = dict(results)
        print(f"\n{f'job (local[2], {n:,} bids)':<40} {'time':>8} {'MB/s':>8} {'vs Spark':>9}")
        pairs = {
            "read.text + sliceflow from_json": "read.text + Spark from_json",
            "sliceflow.json data source": "spark.read.json(schema)",
        }
        for label, seconds in results:
            ratio = f"{base[pairs[label]] / seconds:.2f}x" if label in pairs else ""
            print(f"{label:<40} {seconds:>7.2f}s {size / 1e6 / seconds:>8.0f} {ratio:>9}")
        window_diff = windows(spark, sf_file.limit(min(n, WINDOW_BIDS)), tmp)
    spark.stop()
    if diff or diff_file or window_diff:
        sys.exit("sliceflow's rows differ from Spark's")


#: Bids in the window job (Spark's window() copies each one into 60 windows: it is the slow side).
WINDOW_BIDS = 100_000


def windows(spark, bids, tmp: str) -> int:
    """hop(1 hour, 1 minute) per auction: sliceflow's window_agg against Spark's window()."""
    path = os.path.join(tmp, "bids.parquet")
    bids.select("auction", "bidder", "price", "dateTime").write.parquet(path)
    bids = spark.read.parquet(path)
    n = bids.count()
    metrics = sfs.WindowMetrics(spark)
    ours = sfs.window_agg(
        bids,
        W.hop("dateTime", size="1 hour", slide="1 minute"),
        by=["auction"],
        aggs=[
            W.count().alias("bids"),
            W.sum("price").alias("total"),
            W.max("price").alias("top"),
            W.count_distinct("bidder").alias("bidders"),
        ],
        metrics=metrics,
    )
    theirs = (
        bids.groupBy(F.window("dateTime", "1 hour", "1 minute"), "auction")
        .agg(
            F.count("*").alias("bids"),
            F.sum("price").alias("total"),
            F.max("price").alias("top"),
            F.countDistinct("bidder").alias("bidders"),
        )
        .select("window.start", "window.end", "auction", "bids", "total", "top", "bidders")
    )
    mine = ours.select("window_start", "window_end", "auction", "bids", "total", "top", "bidders")
    results = []
    jobs = (("Spark groupBy(window(1 h, 1 min))", theirs), ("sliceflow window_agg", mine))
    for label, df in jobs:
        start = time.perf_counter()
        df.write.parquet(os.path.join(tmp, label.split()[0]))
        results.append((label, time.perf_counter() - start))
    theirs = spark.read.parquet(os.path.join(tmp, "Spark"))
    mine = spark.read.parquet(os.path.join(tmp, "sliceflow"))
    print("\nsample (sliceflow.spark.window_agg, hop 1 hour / 1 minute):")
    mine.orderBy("auction", "window_start").show(5)
    diff = mine.exceptAll(theirs).count() + theirs.exceptAll(mine).count()
    print(f"window rows that differ from Spark: {diff}")
    (_, spark_s), (_, ours_s) = results
    print(f"\n{f'job: sliding window per auction ({n:,} bids)':<40} {'time':>8} {'vs Spark':>9}")
    print(f"{results[0][0]:<40} {spark_s:>7.2f}s")
    print(f"{results[1][0]:<40} {ours_s:>7.2f}s {spark_s / ours_s:>8.2f}x")
    m = metrics.value
    fired = max(m.get("windows_fired", 0), 1)
    print(
        f"kernel: {m.get('rows_in', 0):,} rows, {m.get('windows_fired', 0):,} windows fired, "
        f"{(m.get('slices_merged', 0) + m.get('slices_retracted', 0)) / fired / 4:.2f} slices "
        "merged + retracted per window and aggregate"
    )
    return diff


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500_000)
