"""The building blocks of a streaming state layout, measured on ``transformWithStateInPandas``:
what each candidate layout for the per-bucket state would pay per micro-batch.

Every streaming operator of sliceflow keeps one state value per bucket of keys and rewrites
it whole in each micro-batch that touches the bucket. The candidates for a layout whose cost
follows the keys a micro-batch touches need numbers this script measures, in one ``local[2]``
session with the RocksDB state store:

* ``calls``: the cost of one more grouping key per micro-batch (many more, smaller buckets):
  an empty processor over ``G`` grouping keys with one row each, the micro-batch's
  ``addBatch`` time against ``G``; the slope is the cost of a processor call.
* ``api``: the cost of one state call from Python inside a processor call, by kind:
  ``ValueState`` get / update of a small value, ``MapState`` getValue / updateValue / containsKey
  of one entry, ``ListState`` appendValue of one small value and a read of the list; and a
  ``ValueState`` get / update of a large value (``--value-mb``), per MB. Per-entry calls are
  what a layout with a map entry per key or per sub-bucket pays for each one it touches.
* ``affinity``: whether a bucket's call runs in the same Python worker process in consecutive
  micro-batches (what a worker-local cache of decoded state would hit), with
  ``--shuffle-partitions`` state partitions on 2 cores.

    PYTHONPATH=python python bench/bench_state_layout.py                  # ~3 min
    PYTHONPATH=python python bench/bench_state_layout.py --quick          # smoke run
    PYTHONPATH=python python bench/bench_state_layout.py --write-readme   # also bench/README.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import spark_runs  # noqa: E402
from spark_runs import median  # noqa: E402

CACHE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sliceflow-bench-state-layout")
README_BLOCK = "state-layout"
INPUT_SCHEMA = "g INT, batch INT"
PROBE_OUTPUT = "g INT, batch INT, pid INT, op STRING, calls INT, seconds DOUBLE"


def write_input(folder: str, batches: int, groups: int) -> str:
    """``batches`` parquet files of one row per grouping key ``0 .. groups-1``, tagged with
    the micro-batch's number."""
    os.makedirs(folder, exist_ok=True)
    names = []
    for b in range(batches):
        name = f"batch-{b:04d}.parquet"
        table = pa.table(
            {"g": pa.array(range(groups), pa.int32()), "batch": pa.array([b] * groups, pa.int32())}
        )
        spark_runs.write_batch_file(table, folder, name)
        names.append(name)
    spark_runs.stamp_in_order(folder, names)
    return folder


def empty_processor() -> Any:
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    class Empty(StatefulProcessor):
        def init(self, handle: Any) -> None:
            pass

        def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[Any]:
            for _ in rows:
                pass
            return iter([])

        def close(self) -> None:
            pass

    return Empty()


def probe_processor(entries: int, value_bytes: int) -> Any:
    """A processor whose call times the state API from Python (``entries`` calls of each
    per-entry kind, one large value of ``value_bytes``) and returns one row per kind."""
    import pandas as pd
    from pyspark.sql import types as T
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    blob = T.StructType([T.StructField("blob", T.BinaryType(), False)])
    key = T.StructType([T.StructField("k", T.IntegerType(), False)])

    class Probe(StatefulProcessor):
        def init(self, handle: Any) -> None:
            self.small = handle.getValueState("small", blob)
            self.large = handle.getValueState("large", blob)
            self.map = handle.getMapState("map", key, blob)
            self.list = handle.getListState("list", blob)

        def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[Any]:
            batch = -1
            for frame in rows:
                batch = max(batch, int(frame["batch"].max()))
            g = int(key[0])
            small = (b"x" * 64,)
            large = (os.urandom(16) * (value_bytes // 16),)
            out: list[tuple[str, int, float]] = []

            def timed(op: str, calls: int, fn: Any) -> None:
                t0 = time.perf_counter()
                fn()
                out.append((op, calls, time.perf_counter() - t0))

            def small_updates() -> None:
                for _ in range(entries):
                    self.small.update(small)

            def small_gets() -> None:
                for _ in range(entries):
                    self.small.get()

            base = batch * entries  # new map keys in every micro-batch: the map grows

            def map_updates() -> None:
                for i in range(entries):
                    self.map.updateValue((base + i,), small)

            def map_gets() -> None:
                for i in range(entries):
                    self.map.getValue((base + i,))

            def map_contains() -> None:
                for i in range(entries):
                    self.map.containsKey((base + i,))

            def list_appends() -> None:
                for _ in range(entries):
                    self.list.appendValue(small)

            def list_read() -> None:
                n = sum(1 for _ in self.list.get())
                assert n >= entries, n

            timed("value.update small", entries, small_updates)
            timed("value.get small", entries, small_gets)
            timed("map.updateValue", entries, map_updates)
            timed("map.getValue", entries, map_gets)
            timed("map.containsKey", entries, map_contains)
            timed("list.appendValue", entries, list_appends)
            timed("list.get (read all)", 1, list_read)
            self.list.clear()
            timed("value.update large", 1, lambda: self.large.update(large))
            timed("value.get large", 1, lambda: self.large.get())
            yield pd.DataFrame(
                {
                    "g": [g] * len(out),
                    "batch": [batch] * len(out),
                    "pid": [os.getpid()] * len(out),
                    "op": [o[0] for o in out],
                    "calls": [o[1] for o in out],
                    "seconds": [o[2] for o in out],
                }
            )

        def close(self) -> None:
            pass

    return Probe()


def run_calls(spark: Any, root: str, groups_list: list[int], batches: int) -> list[dict]:
    """The empty processor over each number of grouping keys: median addBatch per micro-batch
    (the first left out)."""
    from pyspark.sql import functions as F

    rows = []
    for groups in groups_list:
        folder = write_input(os.path.join(root, f"calls-{groups}"), batches, groups)
        df = spark_runs.file_stream(spark, INPUT_SCHEMA, folder)
        query = df.select(F.col("g").alias("g"), "batch").groupBy("g")
        query = query.transformWithStateInPandas(empty_processor(), "g INT", "Append", "None")
        with spark_runs.scratch_checkpoint(root, "ckpt-calls-") as ckpt:
            progresses, _ = spark_runs.run_query(query, lambda w: w.format("noop"), ckpt)
        timed = progresses[1:]
        add = median([p["durationMs"]["addBatch"] / 1000 for p in timed])
        total = median([p["durationMs"]["triggerExecution"] / 1000 for p in timed])
        rows.append({"groups": groups, "addBatch": add, "trigger": total})
        spark_runs.log(f"calls: {groups} grouping keys: addBatch {add:.3f} s")
    return rows


def run_probe(spark: Any, root: str, args: Any) -> list[tuple]:
    """The probe processor over ``--buckets`` grouping keys: every row it returned."""
    folder = write_input(os.path.join(root, f"probe-{args.buckets}"), args.batches, args.buckets)
    df = spark_runs.file_stream(spark, INPUT_SCHEMA, folder)
    value_bytes = int(args.value_mb * 1024 * 1024)
    query = df.groupBy("g").transformWithStateInPandas(
        probe_processor(args.entries, value_bytes), PROBE_OUTPUT, "Append", "None"
    )
    collected: list[tuple] = []

    def keep(batch_df: Any, batch_id: int) -> None:
        collected.extend(tuple(r) for r in batch_df.collect())

    with spark_runs.scratch_checkpoint(root, "ckpt-probe-") as ckpt:
        spark_runs.run_query(query, lambda w: w.foreachBatch(keep), ckpt)
    return collected


def report(args: Any, calls: list[dict], probe: list[tuple]) -> tuple[str, dict[str, Any]]:
    lines = []
    settings = (
        f"`local[2]`, RocksDB state store, `spark.sql.shuffle.partitions` = "
        f"{args.shuffle_partitions}, {args.batches} micro-batches per query (the first left "
        f"out of every median)"
    )
    lines.append(f"**Processor calls** ({settings}): an empty processor, one row per grouping key.")
    lines.append("")
    lines.append("| grouping keys per micro-batch | addBatch median s | micro-batch median s |")
    lines.append("|---:|---:|---:|")
    for r in calls:
        lines.append(f"| {r['groups']:,} | {r['addBatch']:.3f} | {r['trigger']:.3f} |")
    slope = None
    if len(calls) >= 2:
        lo, hi = calls[0], calls[-1]
        slope = (hi["addBatch"] - lo["addBatch"]) / (hi["groups"] - lo["groups"])
        lines.append("")
        lines.append(
            f"Cost of one more grouping key (processor call) per micro-batch: "
            f"{slope * 1e6:,.0f} µs ({lo['groups']:,} → {hi['groups']:,} keys)."
        )
    timed = [r for r in probe if r[1] >= 1]  # the first micro-batch is the warm-up
    per_op: dict[str, list[float]] = defaultdict(list)
    for _, _, _, op, n, seconds in timed:
        per_op[op].append(seconds / n)
    mb = args.value_mb
    lines.append("")
    lines.append(
        f"**State calls from Python** inside a processor call ({args.buckets} grouping keys, "
        f"{args.entries} calls of each per-entry kind per processor call; large value "
        f"{mb:g} MB):"
    )
    lines.append("")
    lines.append("| state call | median µs per call | per MB s |")
    lines.append("|---|---:|---:|")
    api = {}
    for op in sorted(per_op):
        m = median(per_op[op])
        api[op] = m
        per_mb = f"{m / mb:.3f}" if op.endswith("large") else ""
        lines.append(f"| {op} | {m * 1e6:,.0f} | {per_mb} |")
    by_bucket: dict[int, dict[int, int]] = defaultdict(dict)
    for g, batch, pid, *_ in probe:
        by_bucket[g][batch] = pid
    same = pairs = 0
    for batches in by_bucket.values():
        for b, pid in batches.items():
            if b - 1 in batches:
                pairs += 1
                same += batches[b - 1] == pid
    pids = {pid for _, _, pid, *_ in probe}
    hit = same / pairs if pairs else 0.0
    lines.append("")
    lines.append(
        f"**Worker affinity**: a bucket's call ran in the same Python worker as in the "
        f"micro-batch before in {same} of {pairs} cases ({hit:.0%}); {len(pids)} worker "
        f"processes served the {args.buckets} buckets."
    )
    return "\n".join(lines), {
        "calls": calls,
        "call_slope_s": slope,
        "api_median_s": api,
        "affinity": {"same": same, "pairs": pairs, "workers": len(pids)},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=6, help="micro-batches per query")
    parser.add_argument(
        "--groups", default="8,512,4096", help="grouping keys of the calls part (comma list)"
    )
    parser.add_argument("--buckets", type=int, default=8, help="grouping keys of the probe")
    parser.add_argument("--entries", type=int, default=200, help="per-entry calls per kind")
    parser.add_argument("--value-mb", type=float, default=4.0, help="the large value, MB")
    parser.add_argument("--shuffle-partitions", type=int, default=2, help="default 2")
    parser.add_argument("--conf", action="append", help="KEY=VALUE, a Spark setting")
    spark_runs.add_output_args(parser, CACHE)
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.groups, args.entries, args.value_mb = 3, "8,64", 20, 0.5
    root = args.data_dir or CACHE
    os.makedirs(root, exist_ok=True)
    spark_runs.share_sliceflow_with_workers()

    def bench() -> tuple[str, dict[str, Any]]:
        spark = spark_runs.streaming_session(
            "sliceflow-bench-state-layout", args.shuffle_partitions, args.batches + 2, args.conf
        )
        try:
            groups = [int(x) for x in args.groups.split(",") if x]
            calls = run_calls(spark, root, groups, args.batches)
            probe = run_probe(spark, root, args)
        finally:
            spark.stop()
        return report(args, calls, probe)

    spark_runs.run_and_publish(__file__, argv, args, README_BLOCK, bench)


if __name__ == "__main__":
    main()
