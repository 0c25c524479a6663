"""The fused scan on a stream: a streaming hop window over NDJSON files, fused, unfused and
Spark's own, in one run.

Micro-batches of Nexmark bids (one NDJSON file per micro-batch, ``maxFilesPerTrigger=1``,
``Trigger.AvailableNow``, a ``noop`` sink, the RocksDB state store, ``local[2]``), each query
with its own checkpoint and a watermark of 10 minutes on ``dateTime``:

* ``Spark``: ``spark.readStream.schema(BID_DDL).json(folder)`` + ``groupBy(window(dateTime,
  1 h, 1 min), auction).agg(count, sum(price), max(price))``, append mode;
* ``sliceflow, unfused``: ``readStream.format("sliceflow.json")`` + ``window_agg`` (the same
  hop and aggregates) with fusion off (the default for streams): the source's rows go into
  the JVM and out again to the packing step in ``mapInArrow``;
* ``sliceflow, fused``: the same code with ``spark.sliceflow.fusion.streams.enabled=true``
  (streams are not fused by default): the packing step runs in the stream's read task, only
  the packed rows enter the JVM;
* ``sliceflow.json stream alone (floor)``: the stream source into the noop sink.

Rounds are interleaved (each query once per round). The figure is the median
``triggerExecution`` of the micro-batches, the first of each run left out.

    python bench/bench_fused_stream.py                  # 6 micro-batches of 200,000 bids, 2 rounds
    python bench/bench_fused_stream.py --files 3 --rows 20000 --rounds 1    # smoke run
    python bench/bench_fused_stream.py --write-readme   # also update bench/README.md
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from readme_blocks import write_block  # noqa: E402
from run_info import run_header  # noqa: E402
from spark_runs import (  # noqa: E402
    median,
    run_query,
    scratch_checkpoint,
    share_sliceflow_with_workers,
    streaming_session,
)

SPARK = "Spark: readStream.json + window()"
UNFUSED = "sliceflow, unfused (the default for streams)"
FUSED = "sliceflow, fused (fusion.streams.enabled=true)"
FLOOR = "sliceflow.json stream alone, noop (floor)"
QUERIES = (SPARK, UNFUSED, FUSED, FLOOR)
TARGET = 3.0  # the fused micro-batch against Spark's


def write_input(folder: str, files: int, rows: int) -> None:
    """``files`` NDJSON files of ``rows`` bids each, in event-time order, oldest first."""
    from sliceflow.testing import write_bids

    paths = sorted(write_bids(folder, files * rows, files=files, events_per_second=200))
    base = time.time() - 10_000
    for i, path in enumerate(paths):
        os.utime(path, (base + i, base + i))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=6, help="micro-batches (one file each)")
    parser.add_argument("--rows", type=int, default=200_000, help="bids per micro-batch")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds")
    parser.add_argument("--data-dir", help="keep the input here (written if missing)")
    parser.add_argument("--note", help="a line for the header")
    parser.add_argument("--write-readme", action="store_true", help="update bench/README.md")
    args = parser.parse_args(argv)
    command, header = run_header("bench/bench_fused_stream.py", argv, args.note)
    share_sliceflow_with_workers()

    from pyspark.sql import functions as F

    from sliceflow import window as W
    from sliceflow.spark import window_agg
    from sliceflow.spark._runtime.session_settings import FUSION_CONF, STREAM_FUSION_CONF
    from sliceflow.testing import BID_DDL

    root = args.data_dir or tempfile.mkdtemp(prefix="sliceflow-bench-fused-stream-")
    folder = os.path.join(root, "bids")
    if not os.path.isdir(folder) or not os.listdir(folder):
        print(f"writing {args.files} x {args.rows:,} bids into {folder}", file=sys.stderr)
        write_input(folder, args.files, args.rows)
    spark = streaming_session("sliceflow-bench-fused-stream", 2, args.files + 2, None)
    hop = W.hop("dateTime", size="1 hour", slide="1 minute")
    aggs = [W.count().alias("n"), W.sum("price").alias("s"), W.max("price").alias("m")]

    def source(spark_reader: bool) -> Any:
        reader = spark.readStream.schema(BID_DDL).option("maxFilesPerTrigger", 1)
        df = reader.json(folder) if spark_reader else reader.format("sliceflow.json").load(folder)
        return df.withWatermark("dateTime", "10 minutes")

    def build(query: str) -> Any:
        if query == SPARK:
            df = source(True)
            return df.groupBy(F.window("dateTime", "1 hour", "1 minute"), "auction").agg(
                F.count("*").alias("n"), F.sum("price").alias("s"), F.max("price").alias("m")
            )
        if query == FLOOR:
            return (
                spark.readStream.schema(BID_DDL)
                .option("maxFilesPerTrigger", 1)
                .format("sliceflow.json")
                .load(folder)
            )
        spark.conf.set(FUSION_CONF, "true" if query == FUSED else "false")
        spark.conf.set(STREAM_FUSION_CONF, "true" if query == FUSED else "false")
        try:
            return window_agg(source(False), hop, ["auction"], aggs)
        finally:
            spark.conf.unset(FUSION_CONF)
            spark.conf.unset(STREAM_FUSION_CONF)

    times: dict[str, list[float]] = {q: [] for q in QUERIES}
    try:
        for r in range(args.rounds):
            order = QUERIES[r % len(QUERIES) :] + QUERIES[: r % len(QUERIES)]
            for query in order:
                with scratch_checkpoint(root, "ck-") as checkpoint:
                    progresses, wall = run_query(
                        build(query), lambda w: w.format("noop"), checkpoint
                    )
                batch_s = [p["durationMs"]["triggerExecution"] / 1000 for p in progresses[1:]]
                times[query].extend(batch_s)
                print(f"round {r + 1} {query}: {median(batch_s):.2f} s", file=sys.stderr)
    finally:
        spark.stop()

    lines = [
        f"{args.files} micro-batches of {args.rows:,} bids (one NDJSON file each), hop(1 h, "
        f"1 min) count/sum/max per auction, watermark 10 minutes, `local[2]`, 2 shuffle "
        f"partitions, RocksDB state store, noop sink, {args.rounds} interleaved rounds; median "
        "`triggerExecution` of the micro-batches after each run's first.",
        "",
        "| query | median s per micro-batch | Spark / query |",
        "|---|---:|---:|",
    ]
    spark_s = median(times[SPARK])
    for query in QUERIES:
        m = median(times[query])
        lines.append(f"| {query} | {m:.2f} | {spark_s / m:.2f}x |")
    fused_s, unfused_s = median(times[FUSED]), median(times[UNFUSED])
    lines += [
        "",
        f"Fused against Spark: {spark_s / fused_s:.2f}x (target >= {TARGET:g}x: "
        f"{'met' if spark_s / fused_s >= TARGET else 'NOT met'}); fused against unfused: "
        f"{unfused_s / fused_s:.2f}x; the stream alone (floor): {median(times[FLOOR]):.2f} s.",
    ]
    block = "\n".join(lines)
    print(header + "\n\n" + block)
    if args.write_readme:
        write_block("fused_stream", block, header)
    print(command, file=sys.stderr)


if __name__ == "__main__":
    main()
