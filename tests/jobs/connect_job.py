"""Every sliceflow operator on a Spark Connect session, its results written as parquet.

    PYTHONPATH=tests python tests/jobs/connect_job.py DATA OUT

DATA: NDJSON bid files; OUT: one folder per query.

The Connect session is made as a user makes one, ``SparkSession.builder.remote("local[2]")``,
which starts a local Connect server (its own SparkContext) in this process; a classic session
cannot live beside it, so tests/spark/test_spark_connect.py runs this script in a subprocess (with
``SPARK_TESTING=1``: pyspark's local server then binds an ephemeral port and its client asks
the server for it, so that several Connect servers can run on one machine) and compares the
folders with :func:`run_queries` on its classic session, row for row. ``summary.json`` in OUT
holds the session's class, the metrics objects' errors and the time each query took;
``fused.json`` whether each query of :data:`FUSED` and :data:`NOT_FUSED` (an operator over the
``sliceflow.json`` source or ``from_json``'s fields) was fused.

Before anything registers the source, the session reads with ``format("sliceflow.json")`` as a
fresh process does (tests/jobs/fresh_process_job.py's :func:`run`, in its time zone): pyspark
finds the source by itself on Connect too; the reads go to ``summary.json`` as
``"no_register"``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import sliceflow.spark as sfs
from jobs import fresh_process_job
from sliceflow import window as W
from sliceflow.spark._runtime.session_settings import FUSION_CONF, STREAM_FUSION_CONF
from sliceflow.spark._runtime.state_store import PROVIDER_CONF, ROCKSDB_PROVIDER
from sliceflow.spark.json.from_json_lineage import FUSED_STEP_PREFIX
from sliceflow.spark.json.fused_scan import FUSED_SOURCE_PREFIX
from sliceflow.testing import BID_DDL

#: The confs both sessions run the queries with (those of tests/conftest.py that matter).
CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "2",
    PROVIDER_CONF: ROCKSDB_PROVIDER,
    STREAM_FUSION_CONF: "true",  # the fused queries below: streams fused too
}

#: The folders run_queries writes under OUT, one per query.
QUERIES = (
    "from_json",
    "source",
    "source_inferred",
    "source_stream",
    "window_batch",
    "window_unfused",
    "window_filtered",
    "window_stream",
    "changelog_batch",
    "changelog_stream",
    "topn_batch",
    "topn_stream",
    "window_topn_stream",
    "dedup_batch",
    "dedup_stream",
    "from_changelog",
    "columns_changelog",
    "columns_topn",
    "window_fused",
    "dedup_fused_stream",
    "window_fused_stream",
    "join_batch",
    "join_stream",
)

#: The queries that must be fused (their plans' names in ``OUT/fused.json``): over the
#: sliceflow.json source (a fused scan), and over from_json's fields (a fused step).
FUSED = (
    "window_batch",
    "changelog_batch",
    "topn_batch",
    "window_stream",
    "dedup_stream",
    "window_fused",
    "dedup_fused_stream",
    "window_fused_stream",
)
#: Queries that must not be fused: a filter between from_json and the operator.
NOT_FUSED = ("window_filtered",)


def is_fused(df: DataFrame) -> bool:
    """Whether ``df``'s plan reads a fused scan or decodes from_json in a fused step (classic:
    its analyzed plan; Connect: the server's explain)."""
    jdf = getattr(df, "_jdf", None)
    text = jdf.queryExecution().analyzed().toString() if jdf is not None else df._explain_string()
    return FUSED_SOURCE_PREFIX in text or f" {FUSED_STEP_PREFIX}" in text


def _bid_order() -> list[Any]:
    """A total order of the bids within a channel (ties in price broken by the other columns);
    made per call, as Column expressions belong to the session's kind."""
    return [F.desc("price"), "auction", "bidder", "dateTime", "url"]


def _window_aggs() -> list[Any]:
    return [
        W.count().alias("bids"),
        W.sum("price").alias("total"),
        W.max("price").alias("top"),
        W.avg("price").alias("mean"),
        W.count_distinct("bidder").alias("bidders"),
    ]


def _run_stream(df: DataFrame, path: str, checkpoint: str) -> None:
    query = (
        df.writeStream.outputMode("append")
        .format("parquet")
        .option("path", path)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()


def run_queries(spark: SparkSession, data: str, out: str) -> dict[str, float]:
    """Runs every operator on ``spark`` over the NDJSON files in ``data`` and writes each
    query's rows as parquet to ``out/<query>``; returns the seconds each query took."""
    sfs.register(spark)
    seconds: dict[str, float] = {}

    def timed(name: str, run: Callable[[str], None]) -> None:
        start = time.perf_counter()
        run(os.path.join(out, name))
        seconds[name] = round(time.perf_counter() - start, 2)

    text = spark.read.text(data)
    bids = text.select(sfs.from_json("value", BID_DDL).alias("b")).select("b.*")
    timed("from_json", bids.write.parquet)
    source = spark.read.format("sliceflow.json").schema(BID_DDL).load(data)
    timed("source", source.write.parquet)
    inferred = spark.read.format("sliceflow.json").load(data)  # the schema inferred
    timed("source_inferred", inferred.write.parquet)
    hop_spec = W.hop("dateTime", size="2 seconds", slide="500 milliseconds")
    hop = sfs.window_agg(bids, hop_spec, ["auction"], _window_aggs())
    timed("window_batch", hop.write.parquet)
    spark.conf.set(FUSION_CONF, "false")  # the same query, its from_json decoded apart
    unfused = sfs.window_agg(bids, hop_spec, ["auction"], _window_aggs())
    timed("window_unfused", unfused.write.parquet)
    spark.conf.unset(FUSION_CONF)
    filtered = sfs.window_agg(bids.filter("price > 0"), hop_spec, ["auction"], _window_aggs())
    timed("window_filtered", filtered.write.parquet)
    by_channel = sfs.changelog_agg(
        bids,
        by=["channel"],
        aggs=[W.count().alias("n"), W.max("price").alias("top"), W.sum("price").alias("total")],
    )
    timed("changelog_batch", by_channel.write.parquet)
    top = sfs.topn(bids, 3, by=["channel"], order_by=_bid_order())
    timed("topn_batch", top.write.parquet)
    # Over from_json's fields: decoded and folded in one step, on either session.
    fused = {"window_batch": hop, "changelog_batch": by_channel, "topn_batch": top,
             "window_filtered": filtered}  # fmt: skip
    latest = sfs.deduplicate(bids, by=["auction"], keep="last", order_by="dateTime")
    timed("dedup_batch", latest.write.parquet)
    envelopes = bids.select(
        F.lit(None).cast("struct<auction:bigint,price:bigint>").alias("before"),
        F.struct("auction", "price").alias("after"),
        F.when(F.col("bidder") % 3 == 0, F.lit("r")).otherwise(F.lit("c")).alias("op"),
        F.lit(0).cast("bigint").alias("ts_ms"),
    )
    timed("from_changelog", sfs.from_changelog(envelopes, format="debezium").write.parquet)
    # A join of a changelog (the envelopes' rows) with insert-only rows.
    changes = sfs.from_changelog(envelopes, format="debezium").withColumnRenamed("price", "paid")
    joined = sfs.join(
        bids.select("auction", "bidder", "channel"), changes, "auction", "left", right_op_col="op"
    )
    timed("join_batch", joined.write.parquet)
    # Columns as groupBy takes them: nested fields and the session's own Column objects.
    nested = text.select(sfs.from_json("value", BID_DDL).alias("b"))
    per_channel = sfs.changelog_agg(
        nested,
        by=[F.col("b.channel"), (F.col("b.auction") % 2).alias("parity")],
        aggs=[W.count(), W.max(nested.b.price), W.sum("b.price").alias("total")],
    )
    timed("columns_changelog", per_channel.write.parquet)
    top_by_column = sfs.topn(
        bids,
        2,
        by=[bids.channel],
        order_by=[F.desc(bids.price), bids["auction"], "bidder", "dateTime", "url"],
    )
    timed("columns_topn", top_by_column.write.parquet)

    # Streaming: the same files, one per micro-batch.
    stream = spark.readStream.schema("value STRING").option("maxFilesPerTrigger", 1).text(data)
    stream_bids = (
        stream.select(sfs.from_json("value", BID_DDL).alias("b"))
        .select("b.*")
        .withWatermark("dateTime", "200 milliseconds")
    )
    windows = sfs.window_agg(
        stream_bids, W.tumble("dateTime", "500 milliseconds"), ["auction"], _window_aggs()
    )
    checkpoints = os.path.join(out, "_checkpoints")
    source_stream = (
        spark.readStream.format("sliceflow.json")
        .schema(BID_DDL)
        .option("maxFilesPerTrigger", 1)
        .load(data)
    )
    timed(
        "source_stream",
        lambda path: _run_stream(source_stream, path, os.path.join(checkpoints, "source")),
    )
    timed(
        "window_stream",
        lambda path: _run_stream(windows, path, os.path.join(checkpoints, "window")),
    )
    # Two chained changelog aggregations: a changelog that feeds another (op_col).
    inner = sfs.changelog_agg(
        stream_bids.withColumn("bucket", F.col("auction") % 7),
        by=["channel", "bucket"],
        aggs=[W.count_distinct("bidder").alias("bidders"), W.min("price").alias("low")],
    )
    outer = sfs.changelog_agg(
        inner,
        by=["channel"],
        aggs=[W.sum("bidders").alias("bidders"), W.min("low").alias("low")],
        op_col="op",
    )
    timed(
        "changelog_stream",
        lambda path: _run_stream(outer, path, os.path.join(checkpoints, "changelog")),
    )
    leaders = sfs.topn(stream_bids, 3, by=["channel"], order_by=_bid_order())  # a changelog
    timed(
        "topn_stream",
        lambda path: _run_stream(leaders, path, os.path.join(checkpoints, "topn")),
    )
    hot = sfs.window_agg(
        stream_bids, W.tumble("dateTime", "500 milliseconds"), ["auction"], [W.count().alias("n")]
    )
    hot_top = sfs.topn(hot, 2, by=["window_start", "window_end"], order_by=[F.desc("n"), "auction"])
    timed(
        "window_topn_stream",
        lambda path: _run_stream(hot_top, path, os.path.join(checkpoints, "window_topn")),
    )
    first = sfs.deduplicate(stream_bids, by=["bidder"], keep="first")
    timed(
        "dedup_stream",
        lambda path: _run_stream(first, path, os.path.join(checkpoints, "dedup")),
    )
    # Two streams joined: each auction's latest bid (a changelog) with its first bidder.
    latest_bid = sfs.deduplicate(
        stream_bids.select("auction", "price", "dateTime"), by=["auction"], keep="last",
        order_by="dateTime",
    )  # fmt: skip
    first_bidder = sfs.deduplicate(
        stream_bids.select("auction", F.col("bidder").alias("first_bidder")), by=["auction"]
    )
    paired = sfs.join(latest_bid, first_bidder, "auction", left_op_col="op")
    timed(
        "join_stream",
        lambda path: _run_stream(paired, path, os.path.join(checkpoints, "join")),
    )

    # Over the sliceflow.json source: fused, on either session.
    renamed = source.select("auction", F.col("price").alias("p"), "dateTime")
    fused |= {"window_stream": windows, "dedup_stream": first}  # a watermark above from_json
    fused |= {
        "window_fused": sfs.window_agg(
            renamed,
            W.hop("dateTime", size="2 seconds", slide="500 milliseconds"),
            ["auction"],
            [W.count().alias("n"), W.sum("p").alias("total")],
        ),
        "dedup_fused_stream": sfs.deduplicate(source_stream, by=["bidder"], keep="first"),
        "window_fused_stream": sfs.window_agg(
            source_stream.withWatermark("dateTime", "200 milliseconds"),
            W.tumble("dateTime", "500 milliseconds"),
            ["auction"],
            [W.count().alias("n"), W.max("price").alias("top")],
        ),
    }
    timed("window_fused", fused["window_fused"].write.parquet)
    timed(
        "dedup_fused_stream",
        lambda path: _run_stream(
            fused["dedup_fused_stream"], path, os.path.join(checkpoints, "dedup_fused")
        ),
    )
    timed(
        "window_fused_stream",
        lambda path: _run_stream(
            fused["window_fused_stream"], path, os.path.join(checkpoints, "window_fused")
        ),
    )
    with open(os.path.join(out, "fused.json"), "w", encoding="utf-8") as f:
        json.dump({name: is_fused(df) for name, df in fused.items()}, f)
    return seconds


def metrics_errors(spark: SparkSession) -> dict[str, str | None]:
    """What making each metrics object on ``spark`` raises (None: it was made)."""
    errors: dict[str, str | None] = {}
    for cls in (
        sfs.WindowMetrics,
        sfs.ChangelogMetrics,
        sfs.TopNMetrics,
        sfs.DedupMetrics,
        sfs.JoinMetrics,
    ):
        try:
            cls(spark)
            errors[cls.__name__] = None
        except Exception as e:  # noqa: BLE001 - the message is the result
            errors[cls.__name__] = f"{type(e).__name__}: {e}"
    return errors


def main(data: str, out: str) -> None:
    start = time.perf_counter()
    builder = SparkSession.builder.remote("local[2]")
    # The server's own settings (read when remote("local[...]") starts it), then the session's.
    server = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    for key, value in {**server, **CONF}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    started = time.perf_counter() - start
    try:
        tree = os.path.join(out, "no_register_tree")
        fresh_process_job.write_tree(tree)
        spark.conf.set("spark.sql.session.timeZone", fresh_process_job.TIME_ZONE)
        no_register = fresh_process_job.run(spark, tree)
        spark.conf.set("spark.sql.session.timeZone", CONF["spark.sql.session.timeZone"])
        seconds = run_queries(spark, data, out)
        summary = {
            "session": f"{type(spark).__module__}.{type(spark).__name__}",
            "no_register": no_register,
            "start_seconds": round(started, 2),
            "seconds": seconds,
            "metrics": metrics_errors(spark),
        }
        with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
        print("summary=" + json.dumps(summary))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
