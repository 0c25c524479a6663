"""Deduplication benchmarks: sliceflow's ``deduplicate`` on Structured Streaming against the
nearest things Spark has.

One PySpark ``local[2]`` session, every query in the same run, in turns (``--rounds``). Input:
``--batches`` micro-batches (default 20) of ``--rows`` rows (default 100,000; ``id`` uniform
over ``--keys`` keys (default 10,000), ``ts`` TIMESTAMP rising by a minute per micro-batch,
``v`` BIGINT), one parquet file per micro-batch, read one file per trigger. Every query has its
own checkpoint, the RocksDB state store, the ``noop`` sink and ``trigger(availableNow=True)``:

* ``native-max`` -- ``groupBy("id").agg(max("ts"), max("v"))``, output mode update: Spark's
  nearest thing to "the latest row per key";
* ``last`` -- ``deduplicate(keep="last", order_by="ts")`` (a changelog, append);
* ``native-dropdup`` -- ``withWatermark("ts", "1 minute").dropDuplicatesWithinWatermark(["id"])``;
* ``first`` -- ``deduplicate(keep="first")`` on the same watermarked stream (append-only);
* ``floor`` -- the floor of ``first``: its plan (the same reduction and packing stage, the same
  shuffle into the same buckets, ``transformWithStateInPandas`` in event time with the same
  state store) with a processor that unpacks the rows ``first`` sees, reads and writes one
  8-byte value per bucket and emits nothing: Spark's Python stateful operator on this stream.

Per micro-batch times are the progresses' ``durationMs["triggerExecution"]``, the first
micro-batch of each query left out (warm-up); the table shows medians over all rounds. The
``deduplicate`` rows also show the kernel's state reads and writes per key and bundle
(``DedupMetrics``: each is counted once per key per bundle with mini-batch).

    python bench/bench_dedup.py                  # the issue's sizes (~6 min on 2 cores)
    python bench/bench_dedup.py --quick          # smoke run
    python bench/bench_dedup.py --write-readme   # also update bench/README.md
    python bench/bench_dedup.py --parts native-dropdup,first,floor   # some queries only

Beside the table, the log (stderr) and ``--json`` give each query's medians of the parts of a
micro-batch that tell the Python stateful operator from Spark's own: ``queryPlanning``,
``addBatch``, the state store's ``commitTimeMs`` and its RocksDB parts (flush, checkpoint, the
snapshot's upload and files copied), each summed over the state partitions.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import spark_runs  # noqa: E402
from spark_runs import StreamRun, median, verdict  # noqa: E402

CACHE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sliceflow-bench-dedup")
SCHEMA = "id BIGINT, ts TIMESTAMP, v BIGINT"
PARTS = ("native-max", "last", "native-dropdup", "first", "floor")
LABELS = {
    "native-max": "Spark groupBy(id).agg(max(ts), max(v)) (update)",
    "last": 'sliceflow deduplicate(keep="last", order_by="ts") (append, changelog)',
    "native-dropdup": "Spark dropDuplicatesWithinWatermark(id) (append)",
    "first": 'sliceflow deduplicate(keep="first") on the same watermark (append)',
    "floor": "floor: Spark's Python stateful operator on this stream (first's plan, no-op state)",
}
#: The issue's bounds: (part, baseline, most allowed ratio).
TARGETS = (("last", "native-max", 1.5), ("first", "native-dropdup", 1.2))
#: Ratios reported beside the targets: (part, baseline).
FLOORS = (("floor", "native-dropdup"),)


def write_batches(root: str, batches: int, rows: int, keys: int, seed: int = 11) -> str:
    folder = os.path.join(root, f"in-{batches}x{rows}-{keys}")
    if os.path.isdir(folder) and len(spark_runs.batch_files(folder)) == batches:
        return folder
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    names = []
    for i in range(batches):
        ts = (i * 60 + rng.uniform(0, 60, rows)) * 1_000_000
        table = pa.table(
            {
                "id": pa.array(rng.integers(0, keys, rows), pa.int64()),
                "ts": pa.array(ts.astype(np.int64), pa.timestamp("us", tz="UTC")),
                "v": pa.array(rng.integers(0, 1_000_000, rows), pa.int64()),
            }
        )
        name = f"part-{i:04d}.parquet"
        spark_runs.write_batch_file(table, folder, name)
        names.append(name)
    spark_runs.stamp_in_order(folder, names)
    return folder


def query(part: str, src, metrics: Any):
    from pyspark.sql import functions as F

    from sliceflow.spark import deduplicate

    if part == "native-max":
        return src.groupBy("id").agg(F.max("ts").alias("ts"), F.max("v").alias("v")), "update"
    if part == "last":
        return deduplicate(src, ["id"], keep="last", order_by="ts", metrics=metrics), "append"
    watermarked = src.withWatermark("ts", "1 minute")
    if part == "native-dropdup":
        return watermarked.dropDuplicatesWithinWatermark(["id"]), "append"
    if part == "floor":
        return floor_query(watermarked, 60_000), "append"
    return deduplicate(watermarked, ["id"], keep="first", metrics=metrics), "append"


def floor_query(watermarked, delay_ms: int):
    """``deduplicate(keep="first")``'s plan over ``watermarked`` (``ts`` the watermark column,
    ``delay_ms`` its delay; as many buckets as ``deduplicate`` takes) with
    :class:`NoopFloorProcessor` in place of its processor."""
    from sliceflow._runtime.spark_types import spark_struct
    from sliceflow.dedup.plan import build_plan
    from sliceflow.spark._runtime.bucket_processor import process_buckets
    from sliceflow.spark._runtime.recipe import OperatorCall
    from sliceflow.spark.dedup.first_seen import packed_first

    call = OperatorCall.begin("deduplicate", watermarked)
    buckets = call.buckets(None, "dedup")
    dp = build_plan(call.input_schema(watermarked.columns), ["id"], keep="first")
    task = call.task
    fusion = call.settings.fusion and call.settings.stream_fusion  # as deduplicate decides
    packed = packed_first(watermarked, dp, buckets, ("ts", delay_ms), task, fusion)
    identity = [("bench", "floor"), ("buckets", str(buckets))]
    processor = noop_floor_processor()(identity, dp.input_schema, task)
    return process_buckets(packed, processor, spark_struct(dp.payload_schema))


def noop_floor_processor():
    """The floor's processor class (built here: its module imports pyspark)."""
    from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor

    class NoopFloorProcessor(BucketProcessor):
        """Per call: unpacks the bucket's rows, reads its one value and writes back 8 bytes
        (the rows seen so far); emits nothing."""

        operator = "deduplicate"
        state_names = ("floor",)
        time_mode = "EventTime"

        def advance(self, call: BucketCall):
            seen = sum(b.num_rows for b in call.batches)
            stored = self.load("floor", 1)
            before = int.from_bytes(stored[0], "little") if stored is not None else 0
            self.store("floor", [(before + seen).to_bytes(8, "little")])
            return iter(())

    return NoopFloorProcessor


def run_part(spark, part: str, folder: str, root: str) -> tuple[StreamRun, dict[str, int]]:
    from sliceflow.spark import DedupMetrics

    metrics = DedupMetrics(spark) if part in ("last", "first") else None
    frame, mode = query(part, spark_runs.file_stream(spark, SCHEMA, folder), metrics)
    run = StreamRun()
    with spark_runs.scratch_checkpoint(root, f"ck-{part}-") as checkpoint:
        progresses, run.wall_s = spark_runs.run_query(
            frame, lambda w: w.format("noop"), checkpoint, mode
        )
    for p in progresses:
        if p["numInputRows"]:
            run.add_batch(p, p.get("sink", {}).get("numOutputRows", 0) or 0)
    run.counters["breakdown"] = spark_runs.breakdown(progresses)
    return run, (metrics.value if metrics is not None else {})


def bench(args) -> tuple[str, dict[str, Any]]:
    root = args.data_dir or CACHE
    os.makedirs(root, exist_ok=True)
    folder = write_batches(root, args.batches, args.rows, args.keys)
    spark_runs.share_sliceflow_with_workers()
    spark = spark_runs.streaming_session("bench-dedup", args.partitions, 1000, args.conf)
    parts = [p for p in PARTS if p in args.parts]
    times: dict[str, list[float]] = {p: [] for p in parts}
    split: dict[str, dict[str, list[float]]] = {p: {} for p in parts}
    counters: dict[str, dict[str, int]] = {}
    for r in range(args.rounds):
        for part in parts:
            spark_runs.log(f"round {r + 1}/{args.rounds}: {part}")
            run, values = run_part(spark, part, folder, root)
            times[part] += run.timed
            for name, xs in run.counters["breakdown"].items():
                split[part].setdefault(name, []).extend(xs)
            if values:
                counters[part] = values
    med = {p: median(times[p]) for p in parts}
    split_med = {p: {k: median(v) for k, v in split[p].items()} for p in parts}
    for part in parts:
        shown = ", ".join(f"{k} {v:,.0f}" for k, v in split_med[part].items())
        spark_runs.log(f"{part}: triggerExecution {med[part] * 1000:,.0f} ms, {shown} (medians)")
    lines = [
        f"`local[2]`, {args.batches} micro-batches of {args.rows:,} rows over {args.keys:,} "
        f"keys, {args.rounds} round(s) in turns, shuffle partitions {args.partitions}; "
        "median of `triggerExecution` per micro-batch (first micro-batch of each query left "
        "out).",
        "",
        "| query | per micro-batch | state reads / writes (whole query) |",
        "|---|---:|---:|",
    ]
    for part in parts:
        c = counters.get(part)
        per_key = "–"
        if c:
            # inserts + update_afters: how many keys changed; bundles: bundles run. With
            # mini-batch every touched key is read and written once per bundle.
            per_key = f"{c['state_reads']:,} / {c['state_writes']:,} over {c['rows_in']:,} rows"
        lines.append(f"| {LABELS[part]} | {med[part] * 1000:,.0f} ms | {per_key} |")
    lines.append("")
    results: dict[str, Any] = {"median_s": med, "counters": counters, "breakdown_ms": split_med}
    for part, base, bound in TARGETS:
        if part not in med or base not in med:
            continue
        ratio = med[part] / med[base]
        results[f"{part}/{base}"] = ratio
        lines.append(
            f"- {part} / {base}: **{ratio:.2f}x** (target <= {bound}x) {verdict(ratio <= bound)}"
        )
    for part, base in FLOORS:
        if part not in med or base not in med:
            continue
        ratio = med[part] / med[base]
        results[f"{part}/{base}"] = ratio
        lines.append(f"- {part} / {base}: **{ratio:.2f}x** ({LABELS[part]})")
    spark.stop()
    return "\n".join(lines), results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--conf", action="append", help="KEY=VALUE Spark conf (repeatable)")
    spark_runs.add_parts_arg(parser, PARTS)
    spark_runs.add_output_args(parser, CACHE)
    args = parser.parse_args(argv)
    spark_runs.check_parts(parser, args, PARTS)
    if args.quick:
        args.batches, args.rows, args.keys, args.rounds = 4, 5_000, 500, 1
    spark_runs.run_and_publish("bench/bench_dedup.py", argv, args, "dedup", lambda: bench(args))


if __name__ == "__main__":
    main()
