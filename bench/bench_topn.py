"""Top-N benchmarks: sliceflow's ``topn`` on Structured Streaming against the nearest thing
Spark has, and Nexmark q5 (hop(1 h, 1 min) counts + window Top-3) against ``window_agg`` alone.

One PySpark ``local[2]`` session, every query in the same run. Input: ``--batches``
micro-batches (default 20) of ``--rows`` bids (default 100,000: ``auction`` uniform over
``--keys`` keys (default 10,000), ``price``, a unique ``bid_id``, ``ts`` moving forward
``--minutes`` minutes per micro-batch), one parquet file per micro-batch, read with
``maxFilesPerTrigger=1``; each query has its own checkpoint, the ``noop`` sink and
``trigger(availableNow=True)``, the RocksDB state store:

* ``native`` -- Spark's streaming ``groupBy("auction").agg(max("price"))``, update mode;
* ``topn`` -- ``topn(bids, 10, by=["auction"], order_by=[F.desc("price"), "bid_id"])``, a
  changelog (append), mini-batch on; its counters (``TopNMetrics``) give state reads and
  writes per key per bundle;
* ``floor`` -- the changelog ``topn``'s plan shape with nothing of the ranking: the same
  packing step (each row's bucket, the rows packed per bucket), the shuffle into the same buckets,
  ``transformWithStateInPandas`` on the same state store, but a processor that reads and
  writes one 8-byte value per bucket call and emits nothing (:class:`FloorProcessor`);
* ``q5-window`` -- ``window_agg(bids.withWatermark("ts", "1 minute"), W.hop("ts", "1 hour",
  "1 minute"), by=["auction"], aggs=[W.count().alias("bids")])``, append;
* ``q5`` -- the same followed by ``topn(hot, 3, by=["window_start", "window_end"],
  order_by=[F.desc("bids"), "auction"])`` (window Top-N, no state of its own).
* ``topn-silent`` and ``echo`` (only when named in ``--parts``) -- the floor's plan with
  ``topn``'s processor, its output dropped, and with a processor that emits every input row:
  what the ranking and the output rows each cost over the floor;

Per micro-batch times are the queries' ``durationMs["triggerExecution"]``, the first
micro-batch left out (start-up). Each query first runs once untimed (warm-up); with
``--rounds`` every query runs that many times in turns, the order reversed every other round.

    python bench/bench_topn.py                 # the README table (~10 min on 2 cores)
    python bench/bench_topn.py --quick         # smoke run
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import spark_runs  # noqa: E402
from spark_runs import median, p90  # noqa: E402

CACHE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sliceflow-bench-topn")
SCHEMA = "auction BIGINT, price BIGINT, bid_id BIGINT, ts TIMESTAMP"
PARTS = ("native", "topn", "floor", "q5-window", "q5")
#: Parts that split ``topn``'s time over its floor, run only when named in ``--parts``.
DIAGNOSTIC_PARTS = ("topn-silent", "echo")
LABELS = {
    "native": "Spark groupBy(auction).agg(max(price)) (update)",
    "topn": "sliceflow topn(n=10) per auction, mini-batch (changelog, append)",
    "floor": "floor: topn's plan, a processor that only reads and writes 8 bytes per bucket",
    "topn-silent": "topn's plan and processor, its output dropped",
    "echo": "the floor emitting every input row (topn's output columns)",
    "q5-window": "sliceflow window_agg hop(1 h, 1 min) count per auction (append)",
    "q5": "Nexmark q5: the same window_agg + topn(3) per window (append)",
}


def batch_table(i: int, rows: int, keys: int, minutes: int) -> pa.Table:
    """Micro-batch ``i``: deterministic bids, times in [i, i+1) * ``minutes`` minutes."""
    rng = np.random.default_rng([11, keys, rows, i])
    start = np.datetime64("2026-01-01T00:00:00", "us") + np.timedelta64(i * minutes, "m")
    offsets = np.sort(rng.integers(0, minutes * 60_000_000, rows))
    return pa.table(
        {
            "auction": rng.integers(0, keys, rows, dtype=np.int64),
            "price": rng.integers(100, 10_000_000, rows, dtype=np.int64),
            "bid_id": np.arange(i * rows, (i + 1) * rows, dtype=np.int64),
            "ts": pa.array(start + offsets.astype("timedelta64[us]"), pa.timestamp("us")),
        }
    )


def write_batches(root: str, batches: int, rows: int, keys: int, minutes: int) -> str:
    """The first ``batches`` micro-batch files (cached under ``root``, kept between runs), in a
    folder of their own: a run with fewer micro-batches than an earlier one reads only its own
    files, in batch order. Returns that folder."""
    folder = os.path.join(root, f"bids-r{rows}-k{keys}-m{minutes}", "files")
    os.makedirs(folder, exist_ok=True)
    names = [f"batch-{i:05d}.parquet" for i in range(batches)]
    for i, name in enumerate(names):
        if not os.path.exists(os.path.join(folder, name)):
            spark_runs.write_batch_file(batch_table(i, rows, keys, minutes), folder, name)
    spark_runs.stamp_in_order(folder, names)
    view = os.path.join(os.path.dirname(folder), f"first-{batches}")
    return spark_runs.first_files(folder, batches, view)


def floor_query(bids: Any, part: str = "floor") -> Any:
    """The changelog ``topn``'s plan (``sliceflow.spark.topn``'s streaming branch, step for
    step) with another processor in place of the ranking one, by ``part``:

    * ``floor``: reads the bucket's rows, reads and writes one 8-byte counter, emits nothing
      (the cost of the plan around the ranking);
    * ``topn-silent``: ``topn``'s own processor (ranking, its state), its output dropped;
    * ``echo``: the floor, emitting every input row as ``+I`` at rank 1 (``topn``'s output
      schema, as many rows as came in: the cost of output rows alone).
    """
    import pyarrow as pa
    from pyspark.sql import functions as F

    from sliceflow._runtime.kernels import conform
    from sliceflow._runtime.spark_types import spark_struct
    from sliceflow.spark._runtime.bucket_labels import bucket_labels
    from sliceflow.spark._runtime.bucket_processor import (
        BucketCall,
        BucketProcessor,
        process_buckets,
    )
    from sliceflow.spark._runtime.bucket_rows import PACKED_SCHEMA, pack_by_bucket
    from sliceflow.spark._runtime.columns import input_schema
    from sliceflow.spark._runtime.session_settings import SessionSettings
    from sliceflow.spark._runtime.tasks import TaskContext
    from sliceflow.spark.topn.streaming import TopNBucketProcessor
    from sliceflow.topn import bucket_ids
    from sliceflow.topn.plan import DEFAULT_BUCKETS, OrderKey, TopNPlan, build_plan, identity

    class FloorProcessor(BucketProcessor):
        """Reads the bucket's rows (unpacked), reads and writes one 8-byte counter; with
        ``echo``, emits them."""

        operator = "topn"  # the sealed header of topn's values, under another state name
        state_names = ("sliceflow_topn_floor",)

        def __init__(self, tp: TopNPlan, task: TaskContext, echo: bool) -> None:
            super().__init__(identity(tp), tp.input_schema, task)
            self._tp = tp
            self._echo = echo

        def advance(self, call: BucketCall) -> Any:
            rows = 0
            for batch in call.batches:
                rows += batch.num_rows
                if self._echo and batch.num_rows:
                    yield pa.RecordBatch.from_arrays(
                        [
                            pa.repeat(pa.scalar("+I"), batch.num_rows),
                            *batch.select(self._tp.payload_schema.names).columns,
                            pa.repeat(pa.scalar(1, pa.int32()), batch.num_rows),
                        ],
                        schema=self._tp.output_schema,
                    )
            stored = self.load(self.state_names[0], 1)
            seen = 0 if stored is None else int.from_bytes(stored[0], "little")
            self.store(self.state_names[0], [(seen + rows).to_bytes(8, "little")])

    class SilentProcessor(TopNBucketProcessor):
        """``topn``'s processor with its output dropped."""

        def advance(self, call: BucketCall) -> Any:
            for _ in super().advance(call):
                pass
            return iter(())

    spark = bids.sparkSession
    settings = SessionSettings.read(spark)
    keys: list[OrderKey | str] = [OrderKey("price", descending=True), "bid_id"]
    schema = input_schema(bids, bids.columns, settings.time_zone, settings.large_var_types)
    tp = build_plan(schema, 10, ["auction"], keys, buckets=DEFAULT_BUCKETS)
    task = TaskContext(settings.memory_limits, None)
    labels = bucket_labels(DEFAULT_BUCKETS)

    def pack_fn(batches: Any) -> Any:
        task.start()
        for batch in batches:
            if batch.num_rows:
                rows = conform(batch, tp.input_schema)
                yield pack_by_bucket(bucket_ids(tp, rows, DEFAULT_BUCKETS), rows, labels)

    selected = bids.select(*[F.col(name) for name in tp.input_schema.names])  # every column
    packed = selected.mapInArrow(pack_fn, spark_struct(PACKED_SCHEMA))
    processor: BucketProcessor = (
        SilentProcessor(tp, task)
        if part == "topn-silent"
        else FloorProcessor(tp, task, echo=part == "echo")
    )
    return process_buckets(packed, processor, spark_struct(tp.output_schema))


def make_query(part: str, bids: Any, metrics: Any) -> tuple[Any, str]:
    """The streaming DataFrame of ``part`` over ``bids`` and its output mode."""
    from pyspark.sql import functions as F

    from sliceflow import window as W
    from sliceflow.spark import topn, window_agg

    if part == "native":
        return bids.groupBy("auction").agg(F.max("price").alias("top")), "update"
    if part == "topn":
        order = [F.desc("price"), "bid_id"]
        return topn(bids, 10, by=["auction"], order_by=order, metrics=metrics), "append"
    if part in ("floor", "topn-silent", "echo"):
        return floor_query(bids, part), "append"
    hot = window_agg(
        bids.withWatermark("ts", "1 minute"),
        W.hop("ts", size="1 hour", slide="1 minute"),
        by=["auction"],
        aggs=[W.count().alias("bids")],
    )
    if part == "q5-window":
        return hot, "append"
    order = [F.desc("bids"), "auction"]
    return topn(hot, 3, by=["window_start", "window_end"], order_by=order), "append"


def run_part(spark, part: str, folder: str, root: str) -> dict[str, Any]:
    """One run of ``part`` over the files of ``folder``: per micro-batch numbers (the first
    micro-batch left out), to be merged over rounds by :func:`summarize`."""
    from sliceflow.spark import TopNMetrics

    metrics = TopNMetrics(spark) if part == "topn" else None
    frame, mode = make_query(part, spark_runs.file_stream(spark, SCHEMA, folder), metrics)
    with spark_runs.scratch_checkpoint(root, f"ck-{part}-") as checkpoint:
        progresses, _ = spark_runs.run_query(frame, lambda w: w.format("noop"), checkpoint, mode)
    progresses = [p for p in progresses if p.get("numInputRows", 0) > 0]
    return {
        "times": [p["durationMs"].get("triggerExecution", 0) / 1000 for p in progresses][1:],
        "out_rows": [float(p.get("sink", {}).get("numOutputRows", -1)) for p in progresses][1:],
        "breakdown": spark_runs.breakdown(progresses),
        "counters": metrics.value if metrics is not None else {},
    }


def summarize(part: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The medians of ``part``'s micro-batches over all its ``runs`` (rounds)."""
    times = [t for r in runs for t in r["times"]]
    names = runs[0]["breakdown"].keys()
    return {
        "part": part,
        "median_s": median(times),
        "p90_s": p90(times),
        "out_rows": median([o for r in runs for o in r["out_rows"]]),
        "breakdown": {k: median([x for r in runs for x in r["breakdown"][k]]) for k in names},
        "rounds": [median(r["times"]) for r in runs],
        "counters": runs[-1]["counters"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--minutes", type=int, default=10, help="event time per micro-batch")
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--quick", action="store_true", help="4 micro-batches of 20,000 rows")
    ap.add_argument("--shuffle-partitions", type=int, default=4)
    ap.add_argument("--conf", action="append", help="KEY=VALUE Spark conf (repeatable)")
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run every part this many times, in turns (the order reversed every other round: "
        "a query run later in the session finds the JVM warmer); medians over all rounds",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.batches, args.rows = 4, 20_000
    parts = [p for p in args.parts.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS) - set(DIAGNOSTIC_PARTS))
    if unknown:
        ap.error(f"unknown parts {unknown}; known: {', '.join(PARTS + DIAGNOSTIC_PARTS)}")
    spark_runs.share_sliceflow_with_workers()
    os.makedirs(CACHE, exist_ok=True)
    folder = write_batches(CACHE, args.batches, args.rows, args.keys, args.minutes)
    warm = write_batches(CACHE, 3, args.rows, args.keys, args.minutes)
    spark = spark_runs.streaming_session("bench-topn", args.shuffle_partitions, 1000, args.conf)
    spark.sparkContext.setLogLevel("ERROR")
    load = spark_runs.LoadSampler()
    t0 = time.perf_counter()
    for part in parts:
        run_part(spark, part, warm, CACHE)  # warm-up, untimed
    runs: dict[str, list[dict[str, Any]]] = {part: [] for part in parts}
    for r in range(args.rounds):
        for part in parts if r % 2 == 0 else parts[::-1]:
            runs[part].append(run_part(spark, part, folder, CACHE))
            t = runs[part][-1]
            shown = ", ".join(f"{k} {median(v):,.0f}" for k, v in t["breakdown"].items())
            spark_runs.log(
                f"round {r + 1}: {part}: median {median(t['times']):.2f}s; {shown} "
                "(ms, medians per micro-batch)"
            )
    results = [summarize(part, runs[part]) for part in parts]
    samples = load.stop()
    by = {r["part"]: r for r in results}
    print(
        f"{args.batches} micro-batches of {args.rows:,} bids over {args.keys:,} auctions, "
        f"{args.minutes} min of event time each; local[2], {args.shuffle_partitions} shuffle "
        f"partitions; {args.rounds} round(s) in turns; {time.perf_counter() - t0:.0f}s in all. "
        f"{spark_runs.load_note(samples)}\n"
    )
    print("| query | median s / micro-batch | p90 s | state commit ms | rows out |")
    print("|---|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {LABELS[r['part']]} | {r['median_s']:.2f} | {r['p90_s']:.2f} "
            f"| {r['breakdown']['commit']:.0f} | {r['out_rows']:,.0f} |"
        )
    print()
    print(
        "Where a micro-batch's time goes (medians, ms; the state store's numbers summed over "
        "its partitions): "
        + "; ".join(
            f"{r['part']}: "
            + ", ".join(f"{k} {v:,.0f}" for k, v in r["breakdown"].items() if k != "filesCopied")
            for r in results
        )
        + "\n"
    )
    if "native" in by and "topn" in by:
        ratio = by["topn"]["median_s"] / by["native"]["median_s"]
        pairs = zip(by["topn"]["rounds"], by["native"]["rounds"], strict=True)
        per_round = " ".join(f"{t / n:.2f}" for t, n in pairs)
        print(f"topn / native groupBy: {ratio:.2f}x (target <= 1.5x); round by round {per_round}")
    if "floor" in by and "topn" in by:
        print(f"topn / its floor: {by['topn']['median_s'] / by['floor']['median_s']:.2f}x")
    if "floor" in by and "native" in by:
        ratio = by["floor"]["median_s"] / by["native"]["median_s"]
        print(f"floor / native groupBy: {ratio:.2f}x (the least topn's plan costs on this stream)")
    if "q5-window" in by and "q5" in by:
        ratio = by["q5"]["median_s"] / by["q5-window"]["median_s"]
        print(f"q5 (window_agg + topn) / window_agg alone: {ratio:.2f}x (target <= 1.2x)")
    if "topn" in by:
        c = by["topn"]["counters"]
        print(
            f"topn counters of its last run: rows_in {c.get('rows_in', 0):,}, "
            f"state_reads {c.get('state_reads', 0):,}, state_writes {c.get('state_writes', 0):,}"
            f", keys touched per bucket call summed = state_reads (one read and one write per "
            f"key per bundle); state bytes loaded {c.get('state_bytes_loaded', 0):,}, dumped "
            f"{c.get('state_bytes_dumped', 0):,}"
        )
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
