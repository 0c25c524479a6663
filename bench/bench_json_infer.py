"""JSON schema inference: ``spark.read.json(path)`` without a schema against the
``sliceflow.json`` data source without a schema, on the same Nexmark bids, in one run.

Spark reads the files twice when it infers (once to infer, once to read); the source infers
natively (``sliceflow.json.infer_schema``, on every core) and then reads. Both jobs write to
the ``noop`` sink, so every row is decoded. A second pair times inference alone:
``spark.read.json(path).schema`` against ``infer_schema(files)`` in this process.

More rows bound what the source can reach: the same read with the inferred schema given
(inference at no cost), the parse floor (simdjson parses every line on both CPUs, inferring
nothing, then that read: inference as fast as parsing; ``parse_floor.py``), and, on a 20-line
file, each contender's fixed cost per query next to
a Python data source that returns one row (the least any Python data source costs).

Rounds are interleaved (every contender once per round); the table shows medians, with the
CPU seconds of the benchmark's JVM and of its Python processes (Spark's workers and this one,
where ``infer_schema`` runs) during each job: steadier than wall time on a shared machine.

    python bench/bench_json_infer.py                 # 2M bids, 3 rounds
    python bench/bench_json_infer.py --quick         # smoke run
    python bench/bench_json_infer.py --write-readme  # also update bench/README.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import parse_floor
from bench_json import process_cpu_seconds
from kernel_timing import interleaved, paired
from readme_blocks import write_block
from run_info import run_header

TARGET = 3.0  # source without a schema vs spark.read.json without one
TINY_ROWS = 20  # the fixed cost's file
PARSE_FLOOR = "parse floor: simdjson parses every line (2 threads), then the read"


def _one_row_source() -> type:
    """A Python data source that returns one row: the fixed cost of any Python data source
    (made here, so that it travels to Spark's Python workers by value)."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class OneRowReader(DataSourceReader):
        def partitions(self) -> list[InputPartition]:
            return [InputPartition(0)]

        def read(self, partition: InputPartition) -> Iterator[tuple[int]]:
            yield (1,)

    class OneRow(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench_one_row"

        def schema(self) -> str:
            return "x BIGINT"

        def reader(self, schema: Any) -> DataSourceReader:
            return OneRowReader()

    return OneRow


def _with_cpu(job: Callable[[], Any], samples: list[tuple[float, float]]) -> Callable[[], Any]:
    """``job``, appending each run's (JVM, Python) CPU seconds to ``samples``: the JVM's and
    Spark's Python workers' (:func:`bench_json.process_cpu_seconds`) plus this process's."""

    def run() -> Any:
        jvm0, py0 = process_cpu_seconds()
        own0 = time.process_time()
        result = job()
        own1 = time.process_time()
        jvm1, py1 = process_cpu_seconds()
        samples.append((jvm1 - jvm0, py1 - py0 + own1 - own0))
        return result

    return run


def run(rows: int, repeats: int) -> tuple[str, dict[str, float]]:
    from sliceflow.json import infer_schema
    from sliceflow.testing.nexmark import write_bids
    from sliceflow.testing.spark import local_session

    spark = local_session("local[2]", "bench-json-infer", {"spark.driver.memory": "4g"})
    spark.dataSource.register(_one_row_source())
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as tiny:
        files = write_bids(folder, rows, files=2)
        write_bids(tiny, TINY_ROWS, files=1)
        size_mb = sum(os.path.getsize(f) for f in files) / 1e6

        def noop(df: Any) -> None:
            df.write.format("noop").mode("overwrite").save()

        ours = spark.read.format("sliceflow.json").load(folder).schema
        floor_lib = parse_floor.build()

        def parse_then_read() -> None:
            # The least inference can cost: simdjson parses every line of every file on both
            # CPUs (one file per thread, read block by block) and infers nothing; then the read.
            assert floor_lib is not None

            def parse_file(path: str) -> int:  # a parser per thread
                return sum(parse_floor.ParseFloor(floor_lib).file_blocks(path))

            with ThreadPoolExecutor(2) as pool:
                parsed = sum(pool.map(parse_file, files))
            assert parsed == rows, (parsed, rows)
            noop(spark.read.format("sliceflow.json").schema(ours).load(folder))

        assert ours == spark.read.json(folder).schema, "inferred schemas differ"
        tiny_schema = spark.read.json(tiny).schema
        jobs: list[tuple[str, Callable[[], Any]]] = [
            ("spark.read.json (infer + read)", lambda: noop(spark.read.json(folder))),
            (
                "sliceflow.json (infer + read)",
                lambda: noop(spark.read.format("sliceflow.json").load(folder)),
            ),
            (
                "sliceflow.json, schema given (the read alone)",
                lambda: noop(spark.read.format("sliceflow.json").schema(ours).load(folder)),
            ),
        ]
        if floor_lib is not None:
            jobs.append((PARSE_FLOOR, parse_then_read))
        jobs += [
            ("spark.read.json(...).schema (infer only)", lambda: spark.read.json(folder).schema),
            ("sliceflow.json.infer_schema (infer only)", lambda: infer_schema(files)),
            (f"{TINY_ROWS} lines: spark.read.json", lambda: noop(spark.read.json(tiny))),
            (
                f"{TINY_ROWS} lines: spark.read.json, schema given",
                lambda: noop(spark.read.schema(tiny_schema).json(tiny)),
            ),
            (
                f"{TINY_ROWS} lines: sliceflow.json",
                lambda: noop(spark.read.format("sliceflow.json").load(tiny)),
            ),
            (
                f"{TINY_ROWS} lines: sliceflow.json, schema given",
                lambda: noop(spark.read.format("sliceflow.json").schema(tiny_schema).load(tiny)),
            ),
            (
                "one-row Python data source",
                lambda: noop(spark.read.format("bench_one_row").load()),
            ),
        ]
        cpu: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in jobs}
        times = interleaved([(label, _with_cpu(job, cpu[label])) for label, job in jobs], repeats)
    spark.stop()
    medians = {label: statistics.median(v) for label, v in times.items()}
    labels = list(medians)
    lines = [
        f"{rows:,} bids, {size_mb:.0f} MB in 2 files, `local[2]`, median of {repeats} rounds",
        "",
        "| job | seconds | vs Spark | JVM CPU s | Python CPU s |",
        "|---|---:|---:|---:|---:|",
    ]
    read_jobs = 4 if PARSE_FLOOR in medians else 3
    for group in (labels[:read_jobs], labels[read_jobs : read_jobs + 2], labels[read_jobs + 2 :]):
        base = medians[group[0]]
        for label in group:
            # The warm-up round's sample is left out, as its time is.
            jvm = statistics.median(c[0] for c in cpu[label][-repeats:])
            python = statistics.median(c[1] for c in cpu[label][-repeats:])
            lines.append(
                f"| {label} | {medians[label]:.3f} | {base / medians[label]:.2f}x "
                f"| {jvm:.2f} | {python:.2f} |"
            )
    ratio = medians[labels[0]] / medians[labels[1]]
    floor = medians[labels[0]] / medians[labels[2]]
    lines.append("")
    lines.append(f"source with inference vs spark.read.json: {ratio:.2f}x (target >= {TARGET}x)")
    lines.append(
        f"With inference at no cost (the read with the schema given): {floor:.2f}x; "
        f"round by round: with inference {paired(times, labels[0], labels[1])}, "
        f"schema given {paired(times, labels[0], labels[2])}."
    )
    if PARSE_FLOOR in medians:
        lines.append(
            f"With inference as fast as simdjson's parse of every line, on both CPUs (the parse "
            f"floor): {medians[labels[0]] / medians[PARSE_FLOOR]:.2f}x; round by round "
            f"{paired(times, labels[0], PARSE_FLOOR)}."
        )
    return "\n".join(lines), medians


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20k rows, one round")
    parser.add_argument("--write-readme", action="store_true")
    parser.add_argument("--note", default=None, help="a line shown under the header")
    args = parser.parse_args(argv)
    rows, repeats = (20_000, 1) if args.quick else (args.rows, args.repeats)
    table, _ = run(rows, repeats)
    _, header = run_header("bench/bench_json_infer.py", argv, args.note)
    print(header)
    print()
    print(table)
    if args.write_readme:
        write_block("json-infer", table, header)


if __name__ == "__main__":
    sys.exit(main())
