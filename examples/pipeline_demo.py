"""The sliceflow pipeline demo: a Nexmark bid stream through Structured Streaming on local Spark,
decoded and aggregated by sliceflow and, beside it, by Spark alone.

The stream is NDJSON files of bids arriving in a folder (one file, one micro-batch). The
sliceflow queries read it with the ``sliceflow.json`` stream source (decoded where it is read),
Spark's with ``spark.readStream.text`` and Spark's ``from_json``; each puts a 10-second watermark
on ``dateTime``; then, one query at a time (``trigger(availableNow=True)``):

* hop(1 hour, 1 minute) per auction, count and max(price): sliceflow's ``window_agg`` and Spark's
  ``groupBy(window(...))``, both in append mode; their rows are compared;
* cumulate(1 minute steps, 1 day) per auction: sliceflow's ``window_agg`` only (Spark has no
  CUMULATE window);
* a running count and max(price) per auction: sliceflow's ``changelog_agg`` (a ``+I/-U/+U``
  changelog, append mode) and Spark's ``groupBy().agg()`` in update mode; the changelog's last
  values are compared with Spark's.

It prints every micro-batch as it completes (rows in, rows out, duration), samples of
sliceflow's outputs, the checks, and a table of micro-batches and times per query.

    bash scripts/demo.sh                          # 200,000 bids in 10 files
    bash scripts/demo.sh 2000000                  # more bids (200,000 per micro-batch)
    bash scripts/demo.sh 500000 --files 20 --rate 50

or, with sliceflow importable, ``python examples/pipeline_demo.py [bids] [--files N]
[--rate BIDS_PER_SECOND]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sliceflow import window as W
from sliceflow.spark import changelog_agg, register, window_agg
from sliceflow.testing import BID_DDL, bid_lines
from sliceflow.testing.spark import local_session, window_bounds

#: The state store every stateful query here uses (transformWithStateInPandas requires it).
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
#: The event-time column of a bid and how late a bid may come.
TIME = "dateTime"
WATERMARK = "10 seconds"
#: Where the generated stream starts (bid_lines' default start).
STREAM_START = datetime(2026, 11, 23, tzinfo=timezone.utc)


@dataclass
class Batch:
    """One completed micro-batch of a query."""

    batch_id: int
    rows_in: int
    rows_out: int
    ms: int


@dataclass
class QueryRun:
    """A query's micro-batches, its wall time, and where its output rows were written."""

    label: str
    output: str
    batches: list[Batch] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def median_ms(self) -> float:
        """The median time per micro-batch, the first left out when there are others (it
        also pays for the query's start: state store, code generation, Python workers)."""
        timed = self.batches[1:] if len(self.batches) > 1 else self.batches
        return statistics.median(b.ms for b in timed) if timed else 0.0

    @property
    def rows_out(self) -> int:
        return sum(b.rows_out for b in self.batches)


@dataclass
class DemoResult:
    """What :func:`main` found: every query's run and the two comparisons with Spark."""

    runs: dict[str, QueryRun]
    hop_equal: bool
    changelog_equal: bool


# ---------------------------------------------------------------------------------------------
# the stream


def write_stream(folder: str, bids: int, files: int, rate: int) -> list[str]:
    """Writes ``bids`` Nexmark bids (``rate`` per second of event time) as ``files`` NDJSON
    files, with modification times one second apart in stream order: Spark's file source takes
    the oldest file first, so with ``maxFilesPerTrigger=1`` file k is micro-batch k."""
    os.makedirs(folder, exist_ok=True)
    lines = bid_lines(bids, events_per_second=rate, start=STREAM_START)
    per_file = -(-bids // files)
    base = int(time.time()) - files  # recent: the file source skips files older than maxFileAge
    names = []
    for k in range(files):
        name = os.path.join(folder, f"bids-{k:04d}.json")
        with open(name, "w", encoding="utf-8") as f:
            for _ in range(max(0, min(per_file, bids - k * per_file))):
                f.write(next(lines))
                f.write("\n")
        os.utime(name, (base + k, base + k))
        names.append(name)
    return names


def sliceflow_bids(spark: SparkSession, folder: str) -> DataFrame:
    """The bids of ``folder``, one file per micro-batch, through the ``sliceflow.json`` stream
    source: decoded in the Python worker that reads the file."""
    reader = spark.readStream.format("sliceflow.json").option("maxFilesPerTrigger", 1)
    return reader.schema(BID_DDL).load(folder)


def spark_bids(spark: SparkSession, folder: str) -> DataFrame:
    """The bids of ``folder``, one file per micro-batch, as Spark alone reads them: text lines
    decoded by Spark's ``from_json``."""
    lines = spark.readStream.option("maxFilesPerTrigger", 1).text(folder)
    return lines.select(F.from_json("value", BID_DDL).alias("b")).select("b.*")


def bid_stream(
    spark: SparkSession, folder: str, read: Callable[[SparkSession, str], DataFrame]
) -> DataFrame:
    """The bids of ``folder`` as a stream, read by ``read``, with the watermark on the event
    time."""
    return read(spark, folder).withWatermark(TIME, WATERMARK)


# ---------------------------------------------------------------------------------------------
# the queries


def aggs() -> list[W.AggSpec]:
    return [W.count().alias("bids"), W.max("price").alias("top")]


def sliceflow_hop(bids: DataFrame) -> DataFrame:
    return window_agg(bids, W.hop(TIME, size="1 hour", slide="1 minute"), ["auction"], aggs())


def spark_hop(bids: DataFrame) -> DataFrame:
    return (
        bids.groupBy(F.window(TIME, "1 hour", "1 minute"), "auction")
        .agg(F.count("*").alias("bids"), F.max("price").alias("top"))
        .select(*window_bounds("window")[:2], "auction", "bids", "top")  # start, end
    )


def sliceflow_cumulate(bids: DataFrame) -> DataFrame:
    return window_agg(
        bids, W.cumulate(TIME, step="1 minute", max_size="1 day"), ["auction"], aggs()
    )


def sliceflow_changelog(bids: DataFrame) -> DataFrame:
    return changelog_agg(bids, by=["auction"], aggs=aggs())


def spark_running(bids: DataFrame) -> DataFrame:
    return bids.groupBy("auction").agg(F.count("*").alias("bids"), F.max("price").alias("top"))


@dataclass(frozen=True)
class Query:
    """A streaming query of the demo: how its input is read, what it computes, its mode."""

    key: str
    label: str
    read: Callable[[SparkSession, str], DataFrame]
    build: Callable[[DataFrame], DataFrame]
    mode: str


QUERIES = (
    Query(
        "hop-sf", "hop(1 h, 1 min)  sliceflow window_agg", sliceflow_bids, sliceflow_hop, "append"
    ),
    Query("hop-spark", "hop(1 h, 1 min)  Spark window()", spark_bids, spark_hop, "append"),
    Query(
        "cumulate-sf",
        "cumulate(1 min, 1 day)  sliceflow window_agg",
        sliceflow_bids,
        sliceflow_cumulate,
        "append",
    ),
    Query(
        "changelog-sf",
        "per auction  sliceflow changelog_agg",
        sliceflow_bids,
        sliceflow_changelog,
        "append",
    ),
    Query(
        "changelog-spark",
        "per auction  Spark groupBy().agg()",
        spark_bids,
        spark_running,
        "update",
    ),
)
#: Pairs (sliceflow, Spark) whose times are compared.
PAIRS = {"hop-sf": "hop-spark", "changelog-sf": "changelog-spark"}
NO_CUMULATE = "cumulate(1 min, 1 day)  Spark: none (Spark has no CUMULATE window), skipped"


def run_query(
    spark: SparkSession, query: Query, folder: str, work: str, *, quiet: bool = False
) -> QueryRun:
    """Runs ``query`` over every file of ``folder`` (``availableNow``), printing each
    micro-batch as it completes unless ``quiet``. Output rows are appended to parquet under
    ``work``; a ``foreachBatch`` sink counts them (Spark's file sink reports no row count)."""
    run = QueryRun(query.label, os.path.join(work, "out", query.key))
    rows_out: dict[int, int] = {}

    def sink(batch: DataFrame, batch_id: int) -> None:
        batch.persist()
        try:
            rows_out[batch_id] = batch.count()
            if rows_out[batch_id]:
                batch.write.mode("append").parquet(run.output)
        finally:
            batch.unpersist()

    frame = query.build(bid_stream(spark, folder, query.read))
    start = time.perf_counter()
    stream = (
        frame.writeStream.outputMode(query.mode)
        .option("checkpointLocation", os.path.join(work, "checkpoints", query.key))
        .foreachBatch(sink)
        .trigger(availableNow=True)
        .start()
    )
    while True:
        active = stream.isActive  # read first: once inactive, the progress list is complete
        last = run.batches[-1].batch_id if run.batches else -1
        for p in stream.recentProgress:
            if p.batchId <= last:
                continue
            b = Batch(
                p.batchId,
                p.numInputRows,
                rows_out.get(p.batchId, 0),
                p.durationMs.get("triggerExecution", 0),
            )
            run.batches.append(b)
            if not quiet:
                print(
                    f"  batch {b.batch_id:>2}: {b.rows_in:>9,} rows in {b.rows_out:>9,} rows out "
                    f"{b.ms:>7,} ms",
                    flush=True,
                )
        if not active:
            break
        time.sleep(0.2)
    stream.awaitTermination()  # raises the query's error, if it failed
    run.seconds = time.perf_counter() - start
    return run


# ---------------------------------------------------------------------------------------------
# checks and report


def read_back(spark: SparkSession, run: QueryRun, columns: list[str]) -> DataFrame | None:
    """The rows a query wrote (None if it wrote none)."""
    if not os.path.isdir(run.output):
        return None
    return spark.read.parquet(run.output).select(*columns)


def rows_differing(a: DataFrame | None, b: DataFrame | None) -> int:
    """Rows of one side missing from the other (as multisets), both ways."""
    if a is None or b is None:
        return (a.count() if a is not None else 0) + (b.count() if b is not None else 0)
    return a.exceptAll(b).count() + b.exceptAll(a).count()


def last_values(df: DataFrame | None) -> DataFrame | None:
    """Per auction, the (bids, top) of its row with the most bids: the current value of a
    running count (it only grows), from Spark's updates or sliceflow's +I/+U rows."""
    if df is None:
        return None
    if "op" in df.columns:
        df = df.where(F.col("op").isin("+I", "+U"))
    last = F.max_by(F.struct("bids", "top"), "bids").alias("last")
    return df.groupBy("auction").agg(last).select("auction", "last.*")


def show_sample(title: str, df: DataFrame | None, order: list[str]) -> None:
    print(f"\n{title}:")
    if df is None:
        print("  (no rows)")
    else:
        df.orderBy(*order).show(6, truncate=False)


def report(runs: dict[str, QueryRun]) -> None:
    """The table: micro-batches, median time per micro-batch, wall time, rows out per query."""
    print(
        f"{'query':<46} {'micro-batches':>13} {'median ms':>10} {'total s':>8} {'rows out':>9} "
        f"{'Spark/sliceflow':>16}"
    )
    for key, run in runs.items():
        ratio = ""
        if key in PAIRS and PAIRS[key] in runs and run.median_ms:
            ratio = f"{runs[PAIRS[key]].median_ms / run.median_ms:.2f}x"
        print(
            f"{run.label:<46} {len(run.batches):>13} {run.median_ms:>10,.0f} "
            f"{run.seconds:>8.1f} {run.rows_out:>9,} {ratio:>16}"
        )
        if key == "cumulate-sf":
            print(f"{NO_CUMULATE}")
    print(
        "median ms: per micro-batch after the first, the progress' "
        "durationMs['triggerExecution']; "
        "Spark/sliceflow: ratio of the medians (> 1: sliceflow is faster)"
    )


def main(
    bids: int = 200_000,
    files: int = 10,
    rate: int = 20,
    *,
    spark: SparkSession | None = None,
    warm_up: bool = False,
) -> DemoResult:
    """Runs the demo on ``bids`` bids in ``files`` micro-batches, ``rate`` bids per second of
    event time; on ``spark`` if given (it must use the RocksDB state store), else on a new
    ``local[2]`` session, stopped at the end. ``warm_up`` first runs the two hop queries on a
    small stream, untimed (about a minute), so that JVM and Python worker start-up is not
    billed to the first query's wall time; the medians leave out each query's first
    micro-batch either way."""
    own = spark is None
    if spark is None:
        spark = local_session(
            "local[2]",
            "sliceflow-pipeline-demo",
            {
                "spark.sql.shuffle.partitions": "4",
                "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
            },
        )
    try:
        with tempfile.TemporaryDirectory(prefix="sliceflow-demo-") as work:
            return _demo(spark, work, bids, files, rate, warm_up)
    finally:
        if own:
            spark.stop()


#: Bids in the warm-up stream (two micro-batches).
WARM_UP_BIDS = 2_000


def _demo(
    spark: SparkSession, work: str, bids: int, files: int, rate: int, warm_up: bool
) -> DemoResult:
    folder = os.path.join(work, "bids")
    register(spark)
    t0 = time.perf_counter()
    names = write_stream(folder, bids, files, rate)
    size = sum(os.path.getsize(n) for n in names)
    print(
        f"Nexmark bid stream: {bids:,} bids in {files} NDJSON files ({size / 1e6:.1f} MB, "
        f"written in {time.perf_counter() - t0:.1f} s); {rate} bids per second of event time "
        f"from {STREAM_START:%Y-%m-%d %H:%M} UTC, {timedelta(seconds=bids // rate)} in all"
    )
    print(
        "sliceflow queries: readStream.format('sliceflow.json'); Spark's: readStream.text → "
        f"from_json; every query: withWatermark({TIME!r}, {WATERMARK!r}), "
        "one file per micro-batch, trigger(availableNow=True), RocksDB state store, local[2]"
    )
    if warm_up:
        t0 = time.perf_counter()
        warm = os.path.join(work, "warm-up")
        write_stream(os.path.join(warm, "bids"), WARM_UP_BIDS, 2, rate)
        for query in QUERIES[:2]:
            run_query(spark, query, os.path.join(warm, "bids"), warm, quiet=True)
        print(
            f"warm-up (both hop queries on {WARM_UP_BIDS:,} bids, untimed): "
            f"{time.perf_counter() - t0:.1f} s"
        )

    runs: dict[str, QueryRun] = {}
    for query in QUERIES:
        print(f"\n{query.label} ({query.mode} mode):")
        runs[query.key] = run_query(spark, query, folder, work)
        if query.key == "cumulate-sf":
            print(f"\n{NO_CUMULATE}")
    print("(a changelog has a -U and a +U row per changed auction; Spark's update mode one row)")

    window_cols = ["window_start", "window_end", "auction", "bids", "top"]
    hop_sf = read_back(spark, runs["hop-sf"], window_cols)
    hop_spark = read_back(spark, runs["hop-spark"], window_cols)
    cumulate_sf = read_back(spark, runs["cumulate-sf"], window_cols)
    changelog = read_back(spark, runs["changelog-sf"], ["op", "auction", "bids", "top"])
    running = read_back(spark, runs["changelog-spark"], ["auction", "bids", "top"])

    show_sample("sliceflow hop(1 hour, 1 minute), sample", hop_sf, ["auction", "window_start"])
    show_sample(
        "sliceflow cumulate(1 minute, 1 day), sample", cumulate_sf, ["auction", "window_end"]
    )
    show_sample("sliceflow changelog, sample", changelog, ["auction", "bids", "op"])

    hop_diff = rows_differing(hop_sf, hop_spark)
    hop_equal = hop_diff == 0
    print(
        f"\nhop results equal Spark's: {'yes' if hop_equal else 'no'} "
        f"({runs['hop-sf'].rows_out:,} windows from sliceflow, {runs['hop-spark'].rows_out:,} "
        f"from Spark, {hop_diff:,} rows differ)"
    )
    changelog_diff = rows_differing(last_values(changelog), last_values(running))
    changelog_equal = changelog_diff == 0
    print(
        "changelog's last values equal Spark's running aggregate: "
        f"{'yes' if changelog_equal else 'no'} ({changelog_diff:,} rows differ)\n"
    )
    report(runs)
    return DemoResult(runs, hop_equal, changelog_equal)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bids", nargs="?", type=int, default=200_000, help="bids in the stream")
    parser.add_argument("--files", type=int, default=10, help="files (= micro-batches)")
    parser.add_argument("--rate", type=int, default=20, help="bids per second of event time")
    parser.add_argument(
        "--warm-up",
        action="store_true",
        help="first run the two hop queries on a small stream, untimed (about a minute)",
    )
    args = parser.parse_args(argv)
    if args.bids < 1 or args.files < 1 or args.rate < 1:
        parser.error("bids, --files and --rate must be positive")
    return args


if __name__ == "__main__":
    args = parse_args()
    result = main(args.bids, args.files, args.rate, warm_up=args.warm_up)
    if not (result.hop_equal and result.changelog_equal):
        sys.exit("sliceflow's results differ from Spark's")
