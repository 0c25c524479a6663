"""Join benchmarks: sliceflow's ``join`` on Structured Streaming, against Spark's own
stream-stream join where Spark has one, and against the floor of its plan where it has none.

One PySpark ``local[2]`` session, every query in the same run, in turns (``--rounds``). Every
query reads two file streams (parquet, one file per side and trigger), keeps its state in the
RocksDB state store, writes to the ``noop`` sink with ``trigger(availableNow=True)``.

**q8** (Nexmark q8-like, insert-only): ``--q8-batches`` micro-batches (default 20), each with
``--persons`` new persons (default 20,000; ``id``, ``name``, ``p_ts``) and ``--auctions``
auctions (default 100,000; ``seller``, ``aid``, ``price``, ``a_ts``), every auction's seller a
person of the same or the previous micro-batch and ``a_ts`` within 10 s after the seller's
``p_ts``; event time moves 10 s per micro-batch.

* ``q8-spark`` -- Spark's stream-stream join, which needs a watermark on both sides (30 s) and a
  time range: ``seller = id AND a_ts BETWEEN p_ts AND p_ts + INTERVAL 10 SECONDS``; its state
  drops rows the watermark has passed;
* ``q8-sliceflow`` -- ``join(persons, auctions, "id")`` (the auctions' ``seller`` named ``id``),
  Flink's regular join: no time bound, so its state keeps every row.

Both emit the same rows (checked: the sinks' row counts are compared).

**cdc** (two changelogs): ``--keys`` keys per side (default 1,000,000), the first micro-batch
inserts every key on both sides (``k``, ``a`` / ``b``), each of the ``--cdc-batches`` after it
(default 10) updates ``--changed`` of the keys on each side (default 1 %: a ``-U``/``+U``
pair per key). An inner join on ``k``, one output row per key.

* ``cdc-sliceflow`` -- ``join(left, right, "k", left_op_col="op", right_op_col="op")``;
* ``cdc-floor`` -- the floor of that query: its plan (the same packing of both sides, the
  same shuffle into the same buckets, ``transformWithStateInPandas`` with the same state store)
  with a processor that unpacks the rows, reads and writes one 8-byte value per bucket and
  emits nothing: Spark's Python stateful operator on these streams. Spark itself has no join
  of two changelogs.

**jitter** (mini-batch): ``--jitter-keys`` keys per side (default 20,000) inserted in the first
micro-batch, then ``--cdc-batches`` micro-batches in which each of ``--jitter-keys`` / 10 left
keys is updated ``--flips`` times (default 5) back and forth (seed 000's jittery input):
``jitter-mini-batch`` (``mini_batch=True``) against ``jitter-per-row`` (``mini_batch=False``),
the output rows and the kernel's state writes of the whole query.

Per micro-batch times are the progresses' ``durationMs["triggerExecution"]`` (medians over all
rounds), the first micro-batch of each query left out (the q8 warm-up; the cdc and jitter
loads). State: for every query the state store's ``memoryUsedBytes`` and RocksDB's SST files
(``rocksdbSstFileSize``) after the last micro-batch, summed over the state partitions; for
sliceflow also the bytes of state values it wrote over the whole query (``JoinMetrics``'
``state_bytes_written``).

    python bench/bench_join.py                  # the issue's sizes (~15 min on 2 cores)
    python bench/bench_join.py --quick          # smoke run
    python bench/bench_join.py --write-readme   # also update bench/README.md
    python bench/bench_join.py --parts q8-spark,q8-sliceflow   # some queries only
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import spark_runs  # noqa: E402
from spark_runs import StreamRun, median, verdict  # noqa: E402

CACHE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sliceflow-bench-join")
PERSONS = "id BIGINT, name STRING, p_ts TIMESTAMP"
AUCTIONS = "seller BIGINT, aid BIGINT, price BIGINT, a_ts TIMESTAMP"
LEFT = "op STRING, k BIGINT, a STRING"
RIGHT = "op STRING, k BIGINT, b BIGINT"
PARTS = (
    "q8-spark",
    "q8-sliceflow",
    "cdc-sliceflow",
    "cdc-floor",
    "jitter-mini-batch",
    "jitter-per-row",
)
LABELS = {
    "q8-spark": "Spark stream-stream join (watermarks 30 s, time range 10 s)",
    "q8-sliceflow": 'sliceflow join(persons, auctions, "id") (regular join, no time bound)',
    "cdc-sliceflow": 'sliceflow join(left, right, "k", op columns) (two changelogs)',
    "cdc-floor": "floor: Spark's Python stateful operator on these streams (join's plan, no-op)",
    "jitter-mini-batch": "sliceflow join, mini_batch=True",
    "jitter-per-row": "sliceflow join, mini_batch=False",
}
S = 1_000_000  # microseconds per second


# -- inputs ------------------------------------------------------------------------------------


def _stamp(folder: str, tables: Iterator[pa.Table], n: int) -> str:
    if os.path.isdir(folder) and len(spark_runs.batch_files(folder)) == n:
        return folder
    os.makedirs(folder, exist_ok=True)
    names = []
    for i, table in enumerate(tables):
        name = f"part-{i:04d}.parquet"
        spark_runs.write_batch_file(table, folder, name)
        names.append(name)
    spark_runs.stamp_in_order(folder, names)
    return folder


def write_q8(root: str, batches: int, persons: int, auctions: int) -> tuple[str, str]:
    base = os.path.join(root, f"q8-{batches}x{persons}x{auctions}")
    rng = np.random.default_rng(8)
    p_ts = [(b * 10 + rng.uniform(0, 10, persons)) * S for b in range(batches)]

    def person_tables() -> Iterator[pa.Table]:
        for b in range(batches):
            ids = np.arange(b * persons, (b + 1) * persons, dtype=np.int64)
            yield pa.table({
                "id": ids,
                "name": pa.array([f"person-{i}" for i in ids]),
                "p_ts": pa.array(p_ts[b].astype(np.int64), pa.timestamp("us", tz="UTC")),
            })  # fmt: skip

    def auction_tables() -> Iterator[pa.Table]:
        for b in range(batches):
            first = max(0, b - 1) * persons
            seller = rng.integers(first, (b + 1) * persons, auctions)
            ts = np.concatenate(p_ts)[seller] + rng.uniform(0, 10, auctions) * S
            yield pa.table({
                "seller": pa.array(seller, pa.int64()),
                "aid": pa.array(np.arange(b * auctions, (b + 1) * auctions), pa.int64()),
                "price": pa.array(rng.integers(1, 10_000, auctions), pa.int64()),
                "a_ts": pa.array(ts.astype(np.int64), pa.timestamp("us", tz="UTC")),
            })  # fmt: skip

    return (
        _stamp(base + "-persons", person_tables(), batches),
        _stamp(base + "-auctions", auction_tables(), batches),
    )


def write_cdc(
    root: str, name: str, keys: int, batches: int, changed: int, flips: int, right_changes: bool
) -> tuple[str, str]:
    """Both sides' changelogs: every key inserted, then per micro-batch ``changed`` keys of the
    left side (and of the right one with ``right_changes``) updated ``flips`` times each."""
    base = os.path.join(root, f"{name}-{keys}-{batches}x{changed}x{flips}")
    rng = np.random.default_rng(3)

    def side(s: int) -> Iterator[pa.Table]:
        value = np.zeros(keys, dtype=np.int64)
        k = np.arange(keys, dtype=np.int64)
        yield _side_table(s, np.full(keys, "+I"), k, value)
        for _ in range(batches):
            if s == 1 and not right_changes:
                yield _side_table(s, np.array([], dtype=str), k[:0], value[:0])
                continue
            picked = rng.choice(keys, changed, replace=False)
            # per key, its flips one after the other: -U old, +U new, -U new, +U newer, ...
            vals = np.empty((changed, flips + 1), dtype=np.int64)
            vals[:, 0] = value[picked]
            vals[:, 1:] = rng.integers(0, 1000, (changed, flips))
            value[picked] = vals[:, -1]
            pairs = np.stack([vals[:, :-1], vals[:, 1:]], axis=2).reshape(changed, 2 * flips)
            ops = np.tile(np.array(["-U", "+U"]), (changed, flips))
            ks = np.repeat(picked, 2 * flips)
            yield _side_table(s, ops.reshape(-1), ks, pairs.reshape(-1))

    return (
        _stamp(base + "-left", side(0), batches + 1),
        _stamp(base + "-right", side(1), batches + 1),
    )


def _side_table(side: int, ops: np.ndarray, k: np.ndarray, v: np.ndarray) -> pa.Table:
    values = pa.array(v.astype(str)) if side == 0 else pa.array(v, pa.int64())
    return pa.table({"op": pa.array(ops.astype(str)), "k": pa.array(k, pa.int64()),
                     ("a" if side == 0 else "b"): values})  # fmt: skip


# -- queries -----------------------------------------------------------------------------------


def query(spark, part: str, folders: tuple[str, str], metrics: Any):
    from pyspark.sql import functions as F

    from sliceflow.spark import join

    if part.startswith("q8"):
        persons = spark_runs.file_stream(spark, PERSONS, folders[0])
        auctions = spark_runs.file_stream(spark, AUCTIONS, folders[1])
        if part == "q8-spark":
            p = persons.withWatermark("p_ts", "30 seconds")
            a = auctions.withWatermark("a_ts", "30 seconds")
            cond = F.expr("seller = id AND a_ts BETWEEN p_ts AND p_ts + INTERVAL 10 SECONDS")
            return p.join(a, cond, "inner").drop("seller")
        return join(persons, auctions.withColumnRenamed("seller", "id"), "id", metrics=metrics)
    left = spark_runs.file_stream(spark, LEFT, folders[0])
    right = spark_runs.file_stream(spark, RIGHT, folders[1])
    if part == "cdc-floor":
        return floor_query(left, right)
    mini_batch = part != "jitter-per-row"
    return join(left, right, "k", left_op_col="op", right_op_col="op", mini_batch=mini_batch,
                metrics=metrics)  # fmt: skip


def floor_query(left, right):
    """``join``'s streaming plan over ``left`` and ``right`` (the cdc streams) with a no-op
    processor in place of its own."""
    from sliceflow._runtime.spark_types import spark_struct
    from sliceflow.join.plan import build_plan
    from sliceflow.spark._runtime.bucket_processor import process_buckets
    from sliceflow.spark._runtime.recipe import OperatorCall
    from sliceflow.spark.join.streaming import packed_inputs

    call = OperatorCall.begin("join", left)
    buckets = call.buckets(None, "join")
    jp = build_plan(
        call.input_schema(left.columns, left), call.input_schema(right.columns, right), "k",
        left_op_col="op", right_op_col="op",
    )  # fmt: skip
    fusion = call.settings.fusion and call.settings.stream_fusion
    packed = packed_inputs(jp, (left, right), buckets, fusion)
    identity = [("bench", "floor"), ("buckets", str(buckets))]
    processor = noop_floor_processor()(identity, [jp.left_schema, jp.right_schema], call.task)
    return process_buckets(packed, processor, spark_struct(jp.output_schema))


def noop_floor_processor():
    """The floor's processor class (built here: its module imports pyspark)."""
    from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor

    class NoopFloorProcessor(BucketProcessor):
        """Per call: unpacks the bucket's rows of both sides, reads its one value and writes
        back 8 bytes (the rows seen so far); emits nothing."""

        operator = "join"
        state_names = ("floor",)

        def advance(self, call: BucketCall):
            seen = sum(b.num_rows for _, b in call.inputs)
            stored = self.load("floor", 1)
            before = int.from_bytes(stored[0], "little") if stored is not None else 0
            self.store("floor", [(before + seen).to_bytes(8, "little")])
            return iter(())

    return NoopFloorProcessor


def run_part(spark, part: str, folders: tuple[str, str], root: str) -> tuple[StreamRun, dict]:
    from sliceflow.spark import JoinMetrics

    metrics = JoinMetrics(spark) if "sliceflow" in part or "jitter" in part else None
    frame = query(spark, part, folders, metrics)
    run = StreamRun()
    with spark_runs.scratch_checkpoint(root, f"ck-{part}-") as checkpoint:
        progresses, run.wall_s = spark_runs.run_query(
            frame, lambda w: w.format("noop"), checkpoint, "append"
        )
    for p in progresses:
        if p["numInputRows"]:
            run.add_batch(p, p.get("sink", {}).get("numOutputRows", 0) or 0)
    return run, (metrics.value if metrics is not None else {})


def _mb(n: float) -> str:
    return f"{n / 2**20:,.1f} MB"


def bench(args) -> tuple[str, dict[str, Any]]:
    root = args.data_dir or CACHE
    os.makedirs(root, exist_ok=True)
    parts = [p for p in PARTS if p in args.parts]
    inputs: dict[str, tuple[str, str]] = {}
    if any(p.startswith("q8") for p in parts):
        q8 = write_q8(root, args.q8_batches, args.persons, args.auctions)
        inputs |= {"q8-spark": q8, "q8-sliceflow": q8}
    if any(p.startswith("cdc") for p in parts):
        changed = max(1, int(args.keys * args.changed))
        cdc = write_cdc(root, "cdc", args.keys, args.cdc_batches, changed, 1, True)
        inputs |= {"cdc-sliceflow": cdc, "cdc-floor": cdc}
    if any(p.startswith("jitter") for p in parts):
        jk = args.jitter_keys
        jitter = write_cdc(root, "jitter", jk, args.cdc_batches, jk // 10, args.flips, False)
        inputs |= {"jitter-mini-batch": jitter, "jitter-per-row": jitter}
    spark_runs.share_sliceflow_with_workers()
    spark = spark_runs.streaming_session("bench-join", args.partitions, 1000, args.conf)
    runs: dict[str, list[StreamRun]] = {p: [] for p in parts}
    counters: dict[str, dict[str, int]] = {}
    for r in range(args.rounds):
        for part in parts:
            spark_runs.log(f"round {r + 1}/{args.rounds}: {part}")
            run, values = run_part(spark, part, inputs[part], root)
            runs[part].append(run)
            if values:
                counters[part] = values
    med = {p: median([t for run in runs[p] for t in run.timed]) for p in parts}
    out_rows = {p: sum(runs[p][-1].output_rows) for p in parts}
    lines = [
        f"`local[2]`, {args.rounds} round(s) in turns, shuffle partitions {args.partitions}; "
        "median of `triggerExecution` per micro-batch, the first micro-batch of each query "
        f"left out. q8: {args.q8_batches} micro-batches of {args.persons:,} persons and "
        f"{args.auctions:,} auctions. cdc: {args.keys:,} keys per side, then "
        f"{args.cdc_batches} micro-batches changing {args.changed:.0%} of them per side. "
        f"jitter: {args.jitter_keys:,} keys, then {args.cdc_batches} micro-batches flipping a "
        f"tenth of the left keys {args.flips} times each.",
        "",
        "| query | per micro-batch | output rows | state memory / SST (last batch) "
        "| state bytes written | state reads / writes |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for part in parts:
        store = runs[part][-1].store[-1] if runs[part][-1].store else {}
        c = counters.get(part, {})
        written = _mb(c["state_bytes_written"]) if "state_bytes_written" in c else "–"
        rw = f"{c['state_reads']:,} / {c['state_writes']:,}" if "state_reads" in c else "–"
        lines.append(
            f"| {LABELS[part]} | {med[part] * 1000:,.0f} ms | {out_rows[part]:,} | "
            f"{_mb(store.get('memoryUsedBytes', 0))} / {_mb(store.get('rocksdbSstFileSize', 0))} "
            f"| {written} | {rw} |"
        )
    lines.append("")
    results: dict[str, Any] = {
        "median_s": med,
        "output_rows": out_rows,
        "counters": counters,
        "runs": {p: [run.numbers() for run in runs[p]] for p in parts},
    }
    if "q8-spark" in med and "q8-sliceflow" in med:
        ratio = med["q8-sliceflow"] / med["q8-spark"]
        same = out_rows["q8-spark"] == out_rows["q8-sliceflow"]
        results["q8-sliceflow/q8-spark"] = ratio
        lines.append(
            f"- q8: sliceflow / Spark per micro-batch: **{ratio:.2f}x** (target <= 1.5x) "
            f"{verdict(ratio <= 1.5)}; same output rows: {'yes' if same else 'NO'}"
        )
    if "cdc-sliceflow" in med and "cdc-floor" in med:
        ratio = med["cdc-sliceflow"] / med["cdc-floor"]
        results["cdc-sliceflow/cdc-floor"] = ratio
        lines.append(f"- cdc: sliceflow / floor per micro-batch: **{ratio:.2f}x**")
    if "jitter-mini-batch" in counters and "jitter-per-row" in counters:
        mb, pr = counters["jitter-mini-batch"], counters["jitter-per-row"]
        rows = out_rows["jitter-per-row"] / max(1, out_rows["jitter-mini-batch"])
        writes = pr["state_writes"] / max(1, mb["state_writes"])
        results["jitter_output_ratio"], results["jitter_write_ratio"] = rows, writes
        lines.append(
            f"- jitter: mini_batch=False / mini_batch=True: output rows **{rows:.1f}x**, state "
            f"writes **{writes:.1f}x** (target >= 2x) {verdict(rows >= 2 and writes >= 2)}"
        )
    spark.stop()
    return "\n".join(lines), results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--q8-batches", type=int, default=20)
    parser.add_argument("--persons", type=int, default=20_000)
    parser.add_argument("--auctions", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--cdc-batches", type=int, default=10)
    parser.add_argument("--jitter-keys", type=int, default=20_000)
    parser.add_argument("--flips", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--conf", action="append", help="KEY=VALUE Spark conf (repeatable)")
    spark_runs.add_parts_arg(parser, PARTS)
    spark_runs.add_output_args(parser, CACHE)
    args = parser.parse_args(argv)
    spark_runs.check_parts(parser, args, PARTS)
    if args.quick:
        args.q8_batches, args.persons, args.auctions = 4, 500, 2_000
        args.keys, args.cdc_batches, args.jitter_keys, args.rounds = 5_000, 3, 1_000, 1
    spark_runs.run_and_publish("bench/bench_join.py", argv, args, "join", lambda: bench(args))


if __name__ == "__main__":
    main()
