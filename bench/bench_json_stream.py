"""Streaming JSON input: the ``sliceflow.json`` stream source against Spark's file streams.

Micro-batches of Nexmark bids (NDJSON files, one file per micro-batch, ``maxFilesPerTrigger=1``,
``Trigger.AvailableNow``, a ``noop`` sink so that every row is decoded), read three ways in the
same ``local[2]`` session:

* ``sliceflow.json`` -- ``spark.readStream.format("sliceflow.json").schema(BID_DDL)``;
* ``text + from_json`` -- ``spark.readStream.text`` + ``sliceflow.spark.from_json``;
* ``readStream.json`` -- Spark's JSON file stream with the same schema.

Rounds are interleaved (each query once per round, the order turning each round) so that a
noisy neighbour slows all of them alike. The figure is the median ``triggerExecution`` time of
the micro-batches, the first one of each run (query start-up) left out.

    python bench/bench_json_stream.py                 # 10 micro-batches of 100,000 bids, 3 rounds
    python bench/bench_json_stream.py --quick         # smoke run
    python bench/bench_json_stream.py --write-readme  # also update bench/README.md's results
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

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

#: Targets of the streaming source's per-micro-batch time, as a share of each other query's.
TARGETS = {"text + from_json": 0.6, "readStream.json": 0.5}
QUERIES = ("sliceflow.json", "text + from_json", "readStream.json")


def write_stream(folder: str, files: int, per_file: int) -> int:
    """``files`` NDJSON files of ``per_file`` bids, modification times one second apart in
    stream order; their total size in bytes."""
    from sliceflow.testing import bid_lines

    os.makedirs(folder, exist_ok=True)
    lines = bid_lines(files * per_file)
    base = int(time.time()) - files
    size = 0
    for k in range(files):
        path = os.path.join(folder, f"bids-{k:04d}.json")
        with open(path, "w", encoding="utf-8") as f:
            for _ in range(per_file):
                f.write(next(lines))
                f.write("\n")
        os.utime(path, (base + k, base + k))
        size += os.path.getsize(path)
    return size


def stream(spark, name: str, folder: str):
    """The bids of ``folder`` as a stream of decoded rows, read the way ``name`` says."""
    from sliceflow.spark import from_json
    from sliceflow.testing import BID_DDL

    reader = spark.readStream.option("maxFilesPerTrigger", 1)
    if name == "sliceflow.json":
        return reader.format("sliceflow.json").schema(BID_DDL).load(folder)
    if name == "text + from_json":
        lines = reader.text(folder)
        return lines.select(from_json("value", BID_DDL).alias("b")).select("b.*")
    return reader.schema(BID_DDL).json(folder)


def run_round(
    spark, folder: str, work: str, order: list[str]
) -> dict[str, tuple[list[float], int]]:
    """Each query of ``order`` once: its micro-batch times (s, start-up batch left out) and rows."""
    out = {}
    for name in order:
        with scratch_checkpoint(work, "ck-") as checkpoint:
            progresses, _ = run_query(
                stream(spark, name, folder), lambda w: w.format("noop"), checkpoint
            )
        with_data = [p for p in progresses if p["numInputRows"] > 0]
        times = [p["durationMs"]["triggerExecution"] / 1000 for p in with_data[1:]]
        out[name] = (times, sum(p["numInputRows"] for p in with_data))
    return out


def bench(files: int, per_file: int, rounds: int) -> tuple[str, bool]:
    """Runs the rounds; the Markdown table and whether both targets are met."""
    share_sliceflow_with_workers()
    import sliceflow.spark

    spark = streaming_session("bench-json-stream", 2, 1000, None)
    sliceflow.spark.register(spark)
    times: dict[str, list[float]] = {name: [] for name in QUERIES}
    per_round: dict[str, list[float]] = {name: [] for name in QUERIES}
    with tempfile.TemporaryDirectory(prefix="bench-json-stream-") as work:
        folder = os.path.join(work, "bids")
        size = write_stream(folder, files, per_file)
        # Warm-up: each query once on the first file (JIT, Python workers, imports).
        warm = os.path.join(work, "warm")
        write_stream(warm, 2, min(per_file, 10_000))
        run_round(spark, warm, work, list(QUERIES))
        for r in range(rounds):
            order = list(QUERIES[r % 3 :] + QUERIES[: r % 3])
            result = run_round(spark, folder, work, order)
            for name, (ts, rows) in result.items():
                if rows != files * per_file:
                    raise SystemExit(f"{name} read {rows} rows, expected {files * per_file}")
                times[name].extend(ts)
                per_round[name].append(median(ts))
            line = ", ".join(f"{n} {median(result[n][0]) * 1000:.0f} ms" for n in QUERIES)
            print(f"round {r + 1}/{rounds}: {line}", file=sys.stderr, flush=True)
    spark.stop()

    ours = median(times["sliceflow.json"])
    lines = [
        f"{files} micro-batches of {per_file:,} bids ({size / files / 1e6:.1f} MB per file), "
        f"{rounds} interleaved rounds, local[2]; median micro-batch time (triggerExecution, "
        "start-up batch left out)",
        "",
        "| query | median ms / micro-batch | per-round medians (ms) | sliceflow.json / this |",
        "|---|---:|---|---:|",
    ]
    ok = True
    for name in QUERIES:
        med = median(times[name])
        rounds_ms = ", ".join(f"{t * 1000:.0f}" for t in per_round[name])
        ratio = ours / med
        target = TARGETS.get(name)
        mark = (
            ""
            if target is None
            else f" (target <= {target}x: {'met' if ratio <= target else 'NOT met'})"
        )
        ok = ok and (target is None or ratio <= target)
        lines.append(f"| {name} | {med * 1000:.0f} | {rounds_ms} | {ratio:.2f}x{mark} |")
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10, help="micro-batches (one file each)")
    parser.add_argument("--rows", type=int, default=100_000, help="bids per micro-batch")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--quick", action="store_true", help="3 micro-batches of 10,000, 1 round")
    parser.add_argument("--note", help="a line for the header")
    parser.add_argument("--write-readme", action="store_true", help="update bench/README.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.rows, args.rounds = 3, 10_000, 1
    _, header = run_header("bench/bench_json_stream.py", argv, args.note)
    print(header + "\n")
    block, ok = bench(args.files, args.rows, args.rounds)
    print(block + "\n", flush=True)
    if args.write_readme:
        write_block("json-stream", block, header)
    if not ok:
        print("a target is not met", file=sys.stderr)


if __name__ == "__main__":
    main()
