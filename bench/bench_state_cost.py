"""What a micro-batch costs as the state grows: streaming operators whose state holds N keys,
fed micro-batches that touch a few thousand of them at random, against Spark's nearest operator
in the same run.

One PySpark ``local[2]`` session, RocksDB state store, ``spark.sql.shuffle.partitions`` = 2.
Per state size N (``--keys``, default 100,000 and 2,000,000): micro-batch 0 holds one row for
each of the N keys (it fills the state), then ``--batches`` micro-batches (default 6) of
``--touch`` rows (default 10,000) on keys drawn uniformly from the N. The input is parquet, one
file per micro-batch (``maxFilesPerTrigger`` 1, written once under ``--data-dir``), columns
``k`` BIGINT, ``v`` BIGINT, ``ts`` TIMESTAMP (micro-batch i's rows one minute after i-1's).
Every query writes to the ``noop`` sink with its own checkpoint and ``availableNow``; times are
the progress's ``triggerExecution``, the median over the micro-batches after the first two
(micro-batch 0 fills the state; micro-batch 1 is the first with a warm cache, and is where a
worker first meets the buckets it did not fill).

Operators (``--parts``), each as three queries: sliceflow's, Spark's nearest operator in update
mode, and the floor of any operator built on ``transformWithStateInPandas`` (the same rows
grouped into the same 8 buckets and handed to a processor that reads them and does nothing
else: no state, no output; ``bench_changelog.empty_query``):

* ``changelog`` -- ``changelog_agg(by k: count, sum(v), max(v))`` against
  ``groupBy("k").agg(count, sum, max)``;
* ``topn`` -- ``topn(3, by k, order_by v desc)`` against ``groupBy("k").agg(max(v))`` (Spark
  has no streaming Top-N; top-1 is its nearest);
* ``dedup`` -- ``deduplicate(by k, keep="last", order_by ts)`` against
  ``groupBy("k").agg(max_by(v, ts), max(ts))``.

Besides the times, the report gives sliceflow's state bytes written and read per micro-batch
(``state_bytes_written`` / ``state_bytes_read`` of the operator's metrics, sampled after each
micro-batch by a query listener) and Spark's rows updated per micro-batch
(``stateOperators[].numRowsUpdated``).

    python bench/bench_state_cost.py                       # 100k and 2M keys (~6 min)
    python bench/bench_state_cost.py --keys 10000000       # 10M keys
    python bench/bench_state_cost.py --quick               # smoke run, small sizes
    python bench/bench_state_cost.py --write-readme        # also update bench/README.md
    python bench/bench_state_cost.py --parts changelog --keys 10000000 \
        --conf spark.sliceflow.state.cacheBytes=4g --block state-cost-10m --write-readme
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import spark_runs  # noqa: E402
from spark_runs import median  # noqa: E402

CACHE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sliceflow-bench-state-cost")
SCHEMA = "k BIGINT, v BIGINT, ts TIMESTAMP"
PARTS = ("changelog", "topn", "dedup")
#: Micro-batches left out of each median: the fill, and the first after it.
UNTIMED = 2


def batch_table(i: int, keys: int, touch: int, seed: int) -> pa.Table:
    """Micro-batch ``i``: every key once (``i`` = 0), else ``touch`` keys drawn at random."""
    rng = np.random.default_rng(seed * 1_000_003 + i)
    k = np.arange(keys, dtype=np.int64) if i == 0 else rng.integers(0, keys, touch, np.int64)
    minute = 60_000_000
    ts = (i * minute + rng.integers(0, minute, len(k))).astype("datetime64[us]")
    return pa.table({"k": k, "v": rng.integers(0, 1_000, len(k), np.int64), "ts": ts})


def write_batches(root: str, batches: int, keys: int, touch: int, seed: int = 11) -> str:
    """The ``1 + batches`` micro-batch files (kept between runs); their folder."""
    folder = os.path.join(root, f"k{keys}-t{touch}-s{seed}", "files")
    os.makedirs(folder, exist_ok=True)
    names = [f"batch-{i:05d}.parquet" for i in range(batches + 1)]
    for i, name in enumerate(names):
        if not os.path.exists(os.path.join(folder, name)):
            spark_runs.write_batch_file(batch_table(i, keys, touch, seed), folder, name)
    spark_runs.stamp_in_order(folder, names)
    return folder


class MetricSamples:
    """The operator's counters after each micro-batch of a query (a StreamingQueryListener)."""

    def __init__(self, spark, read: Callable[[], dict[str, int]]) -> None:
        from pyspark.sql.streaming import StreamingQueryListener

        samples: dict[int, dict[str, int]] = {}
        lock = threading.Lock()

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                with lock:
                    samples[event.progress.batchId] = dict(read())

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass

        self.samples = samples
        self._listener = Listener()
        self._spark = spark
        spark.streams.addListener(self._listener)

    def stop(self, batches: int) -> None:
        """Waits (up to 30 s) for the progress events of ``batches`` micro-batches, which reach
        the listener after the query has ended, then removes it."""
        deadline = time.monotonic() + 30
        while len(self.samples) < batches and time.monotonic() < deadline:
            time.sleep(0.05)
        self._spark.streams.removeListener(self._listener)


def queries(spark, operator: str) -> dict[str, Callable]:
    """``operator``'s three queries over the stream of ``k``, ``v``, ``ts``: sliceflow's (with
    its metrics), Spark's nearest (update mode) and the floor (``empty``)."""
    from pyspark.sql import functions as F

    from sliceflow import window as W
    from sliceflow.spark import (
        ChangelogMetrics,
        DedupMetrics,
        TopNMetrics,
        changelog_agg,
        deduplicate,
        topn,
    )

    def sliceflow(src):
        if operator == "changelog":
            metrics = ChangelogMetrics(spark)
            aggs = [W.count().alias("n"), W.sum("v").alias("total"), W.max("v").alias("top")]
            return changelog_agg(src, by=["k"], aggs=aggs, metrics=metrics), metrics
        if operator == "topn":
            metrics = TopNMetrics(spark)
            return topn(src, 3, by=["k"], order_by=[F.col("v").desc()], metrics=metrics), metrics
        metrics = DedupMetrics(spark)
        return deduplicate(src, ["k"], keep="last", order_by="ts", metrics=metrics), metrics

    def native(src):
        if operator == "changelog":
            aggs = [F.count("*").alias("n"), F.sum("v").alias("total"), F.max("v").alias("top")]
        elif operator == "topn":
            aggs = [F.max("v").alias("top")]
        else:
            aggs = [F.max_by("v", "ts").alias("v"), F.max("ts").alias("ts")]
        return src.groupBy("k").agg(*aggs), None

    def empty(src):
        from bench_changelog import empty_query

        renamed = src.withColumnRenamed("k", "auction").withColumnRenamed("v", "price")
        return empty_query(renamed, 8), None

    return {"sliceflow": sliceflow, "spark": native, "empty": empty}


#: What each operator is measured against.
NEAREST = {
    "changelog": "`groupBy(k).agg(count, sum, max)`",
    "topn": "`groupBy(k).agg(max(v))` (top-1: Spark has no streaming Top-N)",
    "dedup": "`groupBy(k).agg(max_by(v, ts), max(ts))` (the latest row by time)",
}
SLICEFLOW = {
    "changelog": "`changelog_agg(by k: count, sum(v), max(v))`",
    "topn": "`topn(3, by k, order_by v desc)`",
    "dedup": '`deduplicate(by k, keep="last", order_by ts)`',
}


MODES = {"sliceflow": "append", "spark": "update", "empty": "append"}


def run_one(spark, part: str, make: Callable, src, root: str) -> dict[str, Any]:
    frame, metrics = make(src)
    samples = MetricSamples(spark, lambda: metrics.value) if metrics is not None else None
    with spark_runs.scratch_checkpoint(root, f"ck-{part}-") as checkpoint:
        progresses, wall = spark_runs.run_query(
            frame, lambda w: w.format("noop"), checkpoint, MODES[part]
        )
    times = [p["durationMs"]["triggerExecution"] / 1000 for p in progresses]
    updated = [sum(op.get("numRowsUpdated", 0) for op in p["stateOperators"]) for p in progresses]
    out: dict[str, Any] = {"times": times, "rows_updated": updated, "wall": wall}
    if samples is not None:
        samples.stop(len(progresses))
        out["samples"] = {b: dict(v) for b, v in samples.samples.items()}
    return out


def per_batch(samples: dict[int, dict[str, int]], name: str) -> list[int]:
    """Counter ``name`` added by each micro-batch, in batch order."""
    out, before = [], 0
    for b in sorted(samples):
        now = samples[b].get(name, 0)
        out.append(now - before)
        before = now
    return out


def bench(args) -> tuple[str, dict[str, Any]]:
    root = args.data_dir or CACHE
    os.makedirs(root, exist_ok=True)
    spark_runs.share_sliceflow_with_workers()
    start = os.getloadavg()
    load = spark_runs.LoadSampler()
    spark = spark_runs.streaming_session("bench-state-cost", 2, 200, args.conf)
    results: dict[str, Any] = {}
    tables = []
    for operator in args.parts:
        rows = []
        for keys in args.keys:
            folder = write_batches(root, args.batches, keys, args.touch)
            made = queries(spark, operator)
            for part in ("spark", "empty", "sliceflow"):
                src = spark_runs.file_stream(spark, SCHEMA, folder)
                got = run_one(spark, part, made[part], src, root)
                results[f"{operator}/{keys}/{part}"] = got
                spark_runs.log(
                    f"  {operator}, {keys:,} keys, {part}: fill {got['times'][0]:.2f}s, later "
                    f"{', '.join(f'{t:.2f}' for t in got['times'][1:])}s"
                )
            rows.append(summary(results, operator, keys))
        tables.append(table(args, operator, rows))
    spark.stop()
    results["load"] = load.stop()
    text = "\n\n".join(tables)
    return text + "\n\n" + spark_runs.load_note(results["load"], start), results


def summary(results: dict[str, Any], operator: str, keys: int) -> tuple:
    sf = results[f"{operator}/{keys}/sliceflow"]
    sp = results[f"{operator}/{keys}/spark"]
    floor = results[f"{operator}/{keys}/empty"]
    samples = sf["samples"]
    opens = "/".join(
        str(sum(per_batch(samples, n)[UNTIMED:]))
        for n in ("state_cache_hits", "state_catch_ups", "state_cold_reads")
    )
    return (
        keys,
        median(sp["times"][UNTIMED:]),
        median(floor["times"][UNTIMED:]),
        median(sf["times"][UNTIMED:]),
        max(sf["times"][UNTIMED:]),
        median(per_batch(samples, "state_bytes_written")[UNTIMED:]),
        median(per_batch(samples, "state_bytes_read")[UNTIMED:]),
        opens,
        median(sp["rows_updated"][UNTIMED:]),
    )


def table(args, operator: str, rows: list[tuple]) -> str:
    lines = [
        f"**{operator}**: {SLICEFLOW[operator]} against Spark's {NEAREST[operator]}, update "
        "mode, and the floor (an empty `transformWithStateInPandas` processor over the same "
        f"rows in 8 buckets). Micro-batch 0 fills the state with N keys, then "
        f"{args.batches} micro-batches of {args.touch:,} rows on random keys; medians over "
        f"micro-batches {UNTIMED}..{args.batches}.",
        "",
        "| keys in state | Spark s | floor s | sliceflow s | / Spark | / floor | sliceflow max s "
        "| state bytes written / micro-batch | state bytes read / micro-batch | bucket opens "
        "hit/catch-up/cold | Spark rows updated / micro-batch |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for keys, sp_t, fl_t, sf_t, sf_max, written, read, opens, updated in rows:
        lines.append(
            f"| {keys:,} | {sp_t:.2f} | {fl_t:.2f} | {sf_t:.2f} | {sf_t / sp_t:.2f}x | "
            f"{sf_t / fl_t:.2f}x | {sf_max:.2f} | {written:,.0f} | {read:,.0f} | {opens} | "
            f"{updated:,.0f} |"
        )
    if len(rows) > 1:
        base = rows[0][3]
        growth = ", ".join(f"{r[0]:,}: {r[3] / base:.2f}x" for r in rows[1:])
        lines += [
            "",
            f"sliceflow's later micro-batch against the one at {rows[0][0]:,} keys: {growth}.",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--keys",
        type=lambda s: [int(x) for x in s.split(",")],
        default=None,
        help="comma-separated state sizes (default 100000,2000000)",
    )
    parser.add_argument("--touch", type=int, default=10_000, help="rows per later micro-batch")
    parser.add_argument("--batches", type=int, default=6, help="micro-batches after the fill")
    parser.add_argument(
        "--parts",
        type=lambda s: s.split(","),
        default=list(PARTS),
        help=f"comma-separated operators, of {','.join(PARTS)}",
    )
    parser.add_argument("--conf", action="append", help="KEY=VALUE Spark conf (repeatable)")
    parser.add_argument(
        "--block", default="state-cost", help="the bench/README.md block --write-readme writes"
    )
    spark_runs.add_output_args(parser, CACHE)
    args = parser.parse_args(argv)
    if args.keys is None:
        args.keys = [10_000, 50_000] if args.quick else [100_000, 2_000_000]
    if args.quick:
        args.batches = min(args.batches, 4)
        args.touch = min(args.touch, 2_000)
    spark_runs.run_and_publish(
        "bench/bench_state_cost.py", argv, args, args.block, lambda: bench(args)
    )


if __name__ == "__main__":
    main()
