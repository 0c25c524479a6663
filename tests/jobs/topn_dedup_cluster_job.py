"""Runs sliceflow's topn and deduplicate on Spark's local-cluster mode (real executor processes)
and checks them against Spark's own window functions.

PYTHONPATH=tests python tests/jobs/cluster_suite.py topn_dedup   # non-zero exit: rows differ

Batch (a DataFrame of 4 partitions, 3,000 rows over 60 keys and a null key, event times
unique, values with ties and nulls):

* ``topn(df, 3, by=["k"], order_by=[F.desc("v"), "ts"])`` must equal Spark's
  ``row_number() over (partition by k order by v desc, ts) <= 3`` with that rank;
* ``deduplicate(df, "k", keep=..., order_by="ts")`` must equal ``row_number() = 1`` ordered by
  ``ts`` descending (``"last"``) and ascending (``"first"``).

Streaming: the same rows as 3 NDJSON files read by the ``sliceflow.json`` stream source on the
executors (``maxFilesPerTrigger=1``: a micro-batch each), into ``topn`` and
``deduplicate(keep="last")``, each collected with ``foreachBatch``. Nothing is late, so each
changelog, applied in order, must end as the batch answer over all rows (seed 004's rule), and
the changelogs must hold updates (``-U``/``+U``) across micro-batches.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from support.cluster_session import collect_stream, python_workers

from sliceflow.spark import deduplicate, topn

ROWS = 3_000
PARTITIONS = 4
FILES = 3
SCHEMA = "k BIGINT, ts TIMESTAMP, v BIGINT"
T0 = datetime(2026, 11, 25, tzinfo=timezone.utc)


def make_rows() -> list[dict]:
    rng = random.Random(2026)
    seconds = rng.sample(range(10 * ROWS), ROWS)  # unique event times: a total order
    rows = []
    for i in range(ROWS):
        k = None if rng.random() < 0.02 else rng.randrange(60)
        v = None if rng.random() < 0.05 else rng.randrange(40)  # ties in v: ts breaks them
        rows.append({"k": k, "ts": T0 + timedelta(seconds=seconds[i]), "v": v})
    return rows


def spark_topn(df: DataFrame, n: int) -> DataFrame:
    w = Window.partitionBy("k").orderBy(F.desc("v"), "ts")
    return df.withColumn("rank", F.row_number().over(w)).filter(F.col("rank") <= n)


def spark_dedup(df: DataFrame, keep: str) -> DataFrame:
    order = F.desc("ts") if keep == "last" else F.asc("ts")
    w = Window.partitionBy("k").orderBy(order)
    return df.withColumn("_rn", F.row_number().over(w)).filter("_rn = 1").drop("_rn")


def difference(a: DataFrame, b: DataFrame) -> int:
    return a.exceptAll(b).count() + b.exceptAll(a).count()


def batch(spark: SparkSession, rows: list[dict]) -> tuple[int, int, int]:
    table = pa.Table.from_pylist(
        rows, schema=pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us", "UTC")),
                                ("v", pa.int64())])
    )  # fmt: skip
    df = spark.createDataFrame(table).repartition(PARTITIONS).cache()
    partitions = df.rdd.getNumPartitions()
    ours = topn(df, 3, by=["k"], order_by=[F.desc("v"), "ts"]).cache()
    out_rows = ours.count()
    diff = difference(ours, spark_topn(df, 3))
    for keep in ("last", "first"):
        got = deduplicate(df, "k", keep=keep, order_by="ts")
        diff += difference(got, spark_dedup(df, keep))
        out_rows += got.count()
    return out_rows, diff, partitions


def write_files(folder: str, rows: list[dict]) -> None:
    os.makedirs(folder)
    now = time.time() - 3600
    per_file = len(rows) // FILES
    for i in range(FILES):
        part = rows[i * per_file : (i + 1) * per_file if i < FILES - 1 else len(rows)]
        path = os.path.join(folder, f"part-{i:03d}.json")
        with open(path, "w", encoding="utf-8") as f:
            for r in part:
                ts = r["ts"].strftime("%Y-%m-%dT%H:%M:%S.000Z")
                f.write(json.dumps({"k": r["k"], "ts": ts, "v": r["v"]}) + "\n")
        os.utime(path, (now + 60 * i, now + 60 * i))  # the oldest file first


def applied(changes: list[tuple]) -> Counter:
    """The rows a changelog (op first) leaves, applied in order."""
    live: Counter = Counter()
    for op, *row in changes:
        if op in ("+I", "+U"):
            live[tuple(row)] += 1
        elif live[tuple(row)] > 0:
            live[tuple(row)] -= 1
        else:
            live[("retracted before inserted", *row)] += 1  # a defect: counted as a difference
    return +live


def streaming(spark: SparkSession, rows: list[dict], tmp: str) -> tuple[int, int, int]:
    folder = os.path.join(tmp, "source")
    write_files(folder, rows)
    src = (
        spark.readStream.format("sliceflow.json")
        .schema(SCHEMA)
        .option("maxFilesPerTrigger", 1)
        .load(folder)
    )
    every = spark.read.schema(SCHEMA).json(folder)
    diff = changes = updates = 0
    for name, query, want in (
        ("topn", topn(src, 3, by=["k"], order_by=[F.desc("v"), "ts"]), spark_topn(every, 3)),
        ("dedup", deduplicate(src, "k", keep="last", order_by="ts"), spark_dedup(every, "last")),
    ):
        collected = collect_stream(query, os.path.join(tmp, f"checkpoint-{name}"))
        log = [r for b in sorted(collected) for r in collected[b]]
        got, expected = applied(log), Counter(tuple(r) for r in want.collect())
        d = sum(((got - expected) + (expected - got)).values())
        batches = sorted(b for b in collected if collected[b])
        ops = Counter(r[0] for r in log)
        print(f"  stream {name}: micro-batches {batches}, ops {dict(ops)}, diff={d}")
        diff += d + (0 if len(batches) == FILES else 1)
        changes += len(log)
        updates += min(ops["-U"], ops["+U"])
    return changes, diff, updates


def check(spark: SparkSession) -> tuple[str, bool]:
    """The batch and streaming checks on ``spark``: the summary line and whether all held."""
    start = time.monotonic()
    workers = python_workers(spark)
    rows = make_rows()
    t0 = time.monotonic()
    out_rows, diff_batch, partitions = batch(spark, rows)
    print(f"  batch: rows={out_rows} diff={diff_batch} ({time.monotonic() - t0:.1f}s)")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sliceflow-topn-dedup-") as tmp:
        changes, diff_stream, updates = streaming(spark, rows, tmp)
    print(f"  streaming: changes={changes} ({time.monotonic() - t0:.1f}s)")
    diff = diff_batch + diff_stream
    summary = (
        f"rows={out_rows} workers={workers} diff={diff} diff_batch={diff_batch} "
        f"diff_stream={diff_stream} changes={changes} updates={updates} "
        f"seconds={time.monotonic() - start:.0f}"
    )
    return summary, diff == 0 and out_rows > 0 and updates > 0 and partitions == PARTITIONS
