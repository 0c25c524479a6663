"""The session the local-cluster jobs (``tests/jobs/*_cluster_job.py``) run on: Spark's
``local-cluster[2,1,1024]`` (two executor JVMs of one core and 1 GiB, each with its own Python
workers), 4 shuffle partitions and the RocksDB state store, as transformWithState needs."""

from __future__ import annotations

import os
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from sliceflow.spark._runtime.state_store import PROVIDER_CONF, ROCKSDB_PROVIDER
from sliceflow.testing.spark import local_session
from support import JVM_OPTIONS


def cluster_session(app: str, conf: dict[str, str] | None = None) -> SparkSession:
    """A local-cluster session named ``app``, with ``conf``'s settings besides these."""
    base = {
        "spark.sql.shuffle.partitions": "4",
        PROVIDER_CONF: ROCKSDB_PROVIDER,
        "spark.executor.extraJavaOptions": JVM_OPTIONS,
    }
    return local_session("local-cluster[2,1,1024]", app, {**base, **(conf or {})})


def python_workers(spark: SparkSession) -> int:
    """How many Python worker processes answer 8 tasks (more than one: real executors)."""
    pids = spark.sparkContext.parallelize(range(8), 8).mapPartitions(lambda _: [os.getpid()])
    return pids.distinct().count()


def collect_stream(df: DataFrame, checkpoint: str) -> dict[int, list[tuple[Any, ...]]]:
    """Runs a streaming query to the end of its input (``availableNow``) in append mode;
    returns each micro-batch's rows (``foreachBatch``) by batch id."""
    collected: dict[int, list[tuple[Any, ...]]] = {}

    def keep(batch_df: DataFrame, batch_id: int) -> None:
        collected[batch_id] = [tuple(r) for r in batch_df.collect()]

    query = (
        df.writeStream.outputMode("append")
        .foreachBatch(keep)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return collected
