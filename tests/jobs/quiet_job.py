"""Two streaming sliceflow queries in a session with Spark's default logging, as a user runs
them: tests/spark/test_quiet_console.py reads what reaches this process's stderr.

    python tests/jobs/quiet_job.py WORK
"""

from __future__ import annotations

import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from sliceflow import window as W
from sliceflow.spark import changelog_agg, window_agg

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def main(work: str) -> None:
    # Spark's Python workers run this interpreter, as the README's session sets it up.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    source = os.path.join(work, "rows")
    os.makedirs(source)
    table = pa.table(
        {
            "k": pa.array([i % 5 for i in range(200)], pa.int64()),
            "v": pa.array(range(200), pa.int64()),
            "ts": pa.array([i * 1_000_000 for i in range(200)], pa.timestamp("us", "UTC")),
        }
    )
    pq.write_table(table, os.path.join(source, "part-0.parquet"))
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
        .getOrCreate()
    )
    rows = spark.readStream.schema("k BIGINT, v BIGINT, ts TIMESTAMP").parquet(source)
    windows = window_agg(
        rows.withWatermark("ts", "10 seconds"),
        W.tumble("ts", "1 minute"),
        by="k",
        aggs=[W.count().alias("n")],
    )
    totals = changelog_agg(rows, by="k", aggs=[W.sum("v").alias("total")])
    for name, df, mode in (("windows", windows, "append"), ("totals", totals, "update")):
        query = (
            df.writeStream.outputMode(mode)
            .format("memory")
            .queryName(name)
            .option("checkpointLocation", os.path.join(work, name))
            .start()
        )
        query.processAllAvailable()
        query.stop()
        print(name, spark.table(name).count(), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
