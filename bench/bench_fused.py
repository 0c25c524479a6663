"""The fused scan against the unfused plan and Spark, in one run: NDJSON files -> a hop window
(``--query hop``, the default) or a deduplicate (``--query dedup``).

Jobs (PySpark ``local[2]``, session time zone UTC, rounds interleaved, medians; each job ends
in ``df.write.format("noop")``, so every window is computed and nothing written):

* ``Spark``: ``spark.read.schema(BID_DDL).json(path)`` + ``groupBy(window(dateTime, 1 h,
  1 min), auction).agg(count, sum(price), max(price))``;
* ``sliceflow, unfused``: the ``sliceflow.json`` source + ``window_agg`` with
  ``spark.sliceflow.fusion.enabled=false`` (the source's rows go into the JVM, then out to
  the local phase in ``mapInArrow``);
* ``sliceflow, fused``: the same code with fusion on (the default): the local phase runs in
  the source's read task, only partials enter the JVM;
* ``source alone (floor)``: the ``sliceflow.json`` source with the same schema into the noop
  sink: the cost of reading and decoding the files and moving every row into the JVM, which
  the fused plan no longer pays in full.

``--input text``: the same jobs over a text file's lines decoded by ``from_json`` (Spark's
``spark.read.text`` + ``from_json``, sliceflow's ``from_json``; fused, decoding and local
phase run in one Python step and the decoded rows never enter the JVM); the floor is
sliceflow's ``from_json`` alone into the noop sink.

``--query dedup``: the first bid of each auction by ``dateTime``
(``deduplicate(df, "auction", keep="first", order_by="dateTime")``) against Spark's
``row_number() over (partition by auction order by dateTime) = 1``.

Before timing, the three jobs must give the same rows (for dedup: the same (auction,
dateTime) pairs; ties in ``dateTime`` leave the kept row free, in Spark too).

    python bench/bench_fused.py                    # 2,000,000 bids in 4 files, 3 rounds
    python bench/bench_fused.py --rows 200000 --repeat 1      # smoke run
    python bench/bench_fused.py --query dedup      # the deduplicate jobs
    python bench/bench_fused.py --input text       # over read.text + from_json
    python bench/bench_fused.py --write-readme     # also update bench/README.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from typing import Any

from kernel_timing import interleaved, paired, spread
from readme_blocks import write_block
from run_info import run_header

SPARK = "Spark: read.json + window()"
SPARK_DEDUP = "Spark: read.json + row_number() = 1"
UNFUSED = "sliceflow, unfused (fusion.enabled=false)"
FUSED = "sliceflow, fused"
FLOOR = "sliceflow.json source alone, noop (floor)"
TEXT_FLOOR = "read.text + sliceflow from_json alone, noop (floor)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data-dir", help="keep the input here (written if missing)")
    parser.add_argument("--write-readme", action="store_true")
    parser.add_argument("--note")
    parser.add_argument("--query", choices=("hop", "dedup"), default="hop")
    parser.add_argument("--input", choices=("source", "text"), default="source")
    args = parser.parse_args(argv)
    command, header = run_header("bench/bench_fused.py", argv, args.note)

    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from sliceflow import window as W
    from sliceflow.spark import deduplicate, from_json, window_agg
    from sliceflow.testing import BID_DDL, write_bids
    from sliceflow.testing.spark import local_session

    folder = args.data_dir or tempfile.mkdtemp(prefix="sliceflow-bench-fused-")
    if not os.path.isdir(folder) or not os.listdir(folder):
        print(f"writing {args.rows:,} bids into {folder}", file=sys.stderr, flush=True)
        write_bids(folder, args.rows, files=args.files)
    spark = local_session(
        "local[2]", "sliceflow-bench-fused", {"spark.sql.session.timeZone": "UTC"}
    )
    hop = W.hop("dateTime", size="1 hour", slide="1 minute")
    aggs = [W.count().alias("n"), W.sum("price").alias("s"), W.max("price").alias("m")]

    text = args.input == "text"

    def read_ours() -> Any:
        if text:
            lines = spark.read.text(folder)
            return lines.select(from_json("value", BID_DDL).alias("b")).select("b.*")
        return spark.read.format("sliceflow.json").schema(BID_DDL).load(folder)

    def read_theirs() -> Any:
        if text:
            lines = spark.read.text(folder)
            return lines.select(F.from_json("value", BID_DDL).alias("b")).select("b.*")
        return spark.read.schema(BID_DDL).json(folder)

    def ours(fusion: bool) -> Any:
        spark.conf.set("spark.sliceflow.fusion.enabled", str(fusion).lower())
        df = read_ours()
        if args.query == "dedup":
            picked = df.select("auction", "bidder", "price", "dateTime")
            return deduplicate(picked, "auction", keep="first", order_by="dateTime")
        return window_agg(df, hop, ["auction"], aggs).select(
            "window_start", "window_end", "auction", "n", "s", "m"
        )

    def theirs() -> Any:
        if args.query == "dedup":
            first = Window.partitionBy("auction").orderBy("dateTime")
            return (
                read_theirs()
                .select("auction", "bidder", "price", "dateTime")
                .withColumn("rn", F.row_number().over(first))
                .filter("rn = 1")
                .drop("rn")
            )  # fmt: skip
        return (
            read_theirs()
            .groupBy(F.window("dateTime", "1 hour", "1 minute").alias("w"), "auction")
            .agg(F.count("*").alias("n"), F.sum("price").alias("s"), F.max("price").alias("m"))
            .select(F.col("w.start").alias("window_start"), F.col("w.end").alias("window_end"),
                    "auction", "n", "s", "m")
        )  # fmt: skip

    fused, unfused = ours(True), ours(False)
    operator = "deduplicate" if args.query == "dedup" else "window_agg"
    plan = fused._jdf.queryExecution().analyzed().toString()
    assert (f"from_json_{operator}" if text else f"sliceflow.json+{operator}") in plan
    reference = theirs()
    for label, df in ((FUSED, fused), (UNFUSED, unfused)):
        a, b = (d.select("auction", "dateTime") if args.query == "dedup" else d
                for d in (df, reference))  # fmt: skip
        diff = a.exceptAll(b).count() + b.exceptAll(a).count()
        print(f"{label}: {diff} rows differ from Spark's", file=sys.stderr, flush=True)
        if diff:
            raise SystemExit(f"{label} differs from Spark's window(): {diff} rows")

    def noop(df: Any) -> None:
        df.write.format("noop").mode("overwrite").save()

    source = read_ours()
    spark_job = SPARK if args.query == "hop" else SPARK_DEDUP
    if text:
        spark_job = spark_job.replace("read.json", "read.text + from_json")
    jobs = [
        (spark_job, lambda: noop(theirs())),
        (UNFUSED, lambda: noop(unfused)),
        (FUSED, lambda: noop(fused)),
        (TEXT_FLOOR if text else FLOOR, lambda: noop(source)),
    ]
    times = interleaved(jobs, args.repeat)
    spark.stop()
    rows = [
        "| job | median s | range s | fused is faster by (same rounds) |",
        "|---|---:|---:|---:|",
    ]
    for label, _ in jobs:
        faster = "" if label == FUSED else paired(times, label, FUSED)
        rows.append(
            f"| {label} | {statistics.median(times[label]):.2f} | {spread(times[label])} | "
            f"{faster} |"
        )
    job = (
        "deduplicate(auction, keep first by dateTime) against Spark's row_number() = 1"
        if args.query == "dedup"
        else "hop(1 h, 1 min) count, sum, max per auction"
    )
    if text:
        job = f"read.text + from_json -> {job}"
    block = (
        f"{args.rows:,} bids in {args.files} NDJSON files -> {job}; `local[2]`; "
        f"{args.repeat} interleaved rounds after a warm-up round.\n\n" + "\n".join(rows) + "\n"
    )
    print(header + "\n\n" + block)
    if args.write_readme:
        name = "fused" if args.query == "hop" else "fused_dedup"
        write_block(name + ("_text" if text else ""), block, header)
    print(command, file=sys.stderr)


if __name__ == "__main__":
    main()
