"""Streaming JSON input: the ``sliceflow.json`` stream source against Spark's file streams.

Micro-batches of Nexmark bids (NDJSON files, one file per micro-batch, ``maxFilesPerTrigger=1``,
``Trigger.AvailableNow``, a ``noop`` sink so that every row is decoded), read three ways in the
same ``local[2]`` session:

* ``sliceflow.json`` -- ``spark.readStream.format("sliceflow.json").schema(BID_DDL)``;
* ``text + from_json`` -- ``spark.readStream.text`` + ``sliceflow.spark.from_json``;
* ``readStream.json`` -- Spark's JSON file stream with the same schema.

and two floors through the same trigger and sink, which only Spark's machinery costs:

* ``Python stream source, 1 row (floor)`` -- a Python streaming data source whose
  ``latestOffset`` advances by one per file and whose ``read`` yields one row: the fixed cost of
  a micro-batch of any Python streaming source (offset and commit logs, planning, the planner
  calls, a task and its Python worker);
* ``Python stream source of decoded Arrow (floor)`` -- the same bids already decoded (Arrow IPC,
  memory-mapped), cut into the splits the ``sliceflow.json`` source makes, handed to Spark as
  its ``read`` hands them: the source with a decoder that takes no time.

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
ROW_FLOOR = "Python stream source, 1 row (floor)"
ARROW_FLOOR = "Python stream source of decoded Arrow (floor)"
QUERIES = ("sliceflow.json", "text + from_json", "readStream.json", ROW_FLOOR, ARROW_FLOOR)


def register_floors(spark, folder: str, cache: str) -> None:
    """Registers the two floor sources (see the module docstring) over the files of
    ``folder``: ``bench_stream_one_row`` and ``bench_stream_decoded``. The decoded bids are
    written to ``cache`` (one Arrow IPC file per split of the sliceflow.json source)."""
    import pyarrow as pa
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

    import sliceflow.json as sj
    from sliceflow.spark.json.stream_source import split_ranges
    from sliceflow.testing import BID_DDL

    os.makedirs(cache, exist_ok=True)
    schema = sj.to_arrow_schema(BID_DDL)
    decoded: list[list[str]] = []  # per file, its splits' IPC files
    names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    for name in names:
        path = os.path.join(folder, name)
        pieces = []
        ranges = split_ranges([(path, os.path.getsize(path))], 2, 128 << 20)[0]
        for k, (start, end) in enumerate(ranges):
            out = os.path.join(cache, f"{name}.{k}.arrow")
            with pa.ipc.new_file(out, schema) as writer:
                for batch in sj.iter_ndjson(path, BID_DDL, start=start, end=end):
                    writer.write_batch(batch)
            pieces.append(out)
        decoded.append(pieces)
    one_row = pa.schema([("i", pa.int64())])

    class Piece(InputPartition):
        def __init__(self, value: object) -> None:
            self.value = value

    class Reader(DataSourceStreamReader, SupportsTriggerAvailableNow):
        """One micro-batch per file: offset n = n files read."""

        def __init__(self, arrow: bool) -> None:
            self.arrow = arrow

        def initialOffset(self) -> dict:
            return {"n": 0}

        def prepareForTriggerAvailableNow(self) -> None:
            pass

        def latestOffset(self, start: dict, limit) -> dict:
            return start if start["n"] >= len(decoded) else {"n": start["n"] + 1}

        def partitions(self, start: dict, end: dict) -> list:
            if not self.arrow:
                return [Piece(end["n"])]
            return [Piece(p) for n in range(start["n"], end["n"]) for p in decoded[n]]

        def read(self, partition):
            if not self.arrow:
                yield pa.RecordBatch.from_pydict({"i": [partition.value]}, schema=one_row)
                return
            with pa.memory_map(partition.value) as source:
                reader = pa.ipc.open_file(source)
                for i in range(reader.num_record_batches):
                    yield reader.get_batch(i)

        def commit(self, end: dict) -> None:
            pass

    class OneRow(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench_stream_one_row"

        def schema(self) -> str:
            return "i BIGINT"

        def streamReader(self, schema) -> DataSourceStreamReader:
            return Reader(arrow=False)

    class Decoded(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench_stream_decoded"

        def schema(self) -> str:
            return BID_DDL

        def streamReader(self, schema) -> DataSourceStreamReader:
            return Reader(arrow=True)

    spark.dataSource.register(OneRow)
    spark.dataSource.register(Decoded)


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
    if name == ROW_FLOOR:
        return spark.readStream.format("bench_stream_one_row").load()
    if name == ARROW_FLOOR:
        return spark.readStream.format("bench_stream_decoded").load()
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
        # Warm-up: each file query once on two small files (JIT, Python workers, imports).
        warm = os.path.join(work, "warm")
        write_stream(warm, 2, min(per_file, 10_000))
        register_floors(spark, folder, os.path.join(work, "decoded"))
        run_round(spark, warm, work, list(QUERIES[:4]))
        for r in range(rounds):
            k = r % len(QUERIES)
            order = list(QUERIES[k:] + QUERIES[:k])
            result = run_round(spark, folder, work, order)
            for name, (ts, rows) in result.items():
                expected = files if name == ROW_FLOOR else files * per_file
                if rows != expected:
                    raise SystemExit(f"{name} read {rows} rows, expected {expected}")
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
    # A target below a floor cannot be met by any Python streaming source: say so.
    lines.append("")
    for floor in (ROW_FLOOR, ARROW_FLOOR):
        shares = ", ".join(
            f"{median(times[floor]) / median(times[name]):.2f}x {name} (target <= {target}x)"
            for name, target in TARGETS.items()
        )
        lines.append(f"- {floor}: {shares}")
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
