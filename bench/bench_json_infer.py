"""JSON schema inference: ``spark.read.json(path)`` without a schema against the
``sliceflow.json`` data source without a schema, on the same Nexmark bids, in one run.

Spark reads the files twice when it infers (once to infer, once to read); the source infers
natively (``sliceflow.json.infer_schema``, on every core) and then reads. Both jobs write to
the ``noop`` sink, so every row is decoded. A second pair times inference alone:
``spark.read.json(path).schema`` against ``infer_schema(files)`` in this process.

Rounds are interleaved (every contender once per round); the table shows medians.

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

from bench_json import interleaved
from readme_blocks import write_block
from run_info import run_header

TARGET = 3.0  # source without a schema vs spark.read.json without one


def run(rows: int, repeats: int) -> tuple[str, dict[str, float]]:
    from sliceflow.json import infer_schema
    from sliceflow.testing.nexmark import write_bids
    from sliceflow.testing.spark import local_session

    spark = local_session("local[2]", "bench-json-infer", {"spark.driver.memory": "4g"})
    with tempfile.TemporaryDirectory() as folder:
        files = write_bids(folder, rows, files=2)
        size_mb = sum(os.path.getsize(f) for f in files) / 1e6

        def spark_read() -> None:
            spark.read.json(folder).write.format("noop").mode("overwrite").save()

        def source_read() -> None:
            df = spark.read.format("sliceflow.json").load(folder)
            df.write.format("noop").mode("overwrite").save()

        def spark_infer() -> None:
            _ = spark.read.json(folder).schema

        def native_infer() -> None:
            infer_schema(files)

        ours = spark.read.format("sliceflow.json").load(folder).schema
        assert ours == spark.read.json(folder).schema, "inferred schemas differ"
        times = interleaved(
            [
                ("spark.read.json (infer + read)", spark_read),
                ("sliceflow.json (infer + read)", source_read),
                ("spark.read.json(...).schema (infer only)", spark_infer),
                ("sliceflow.json.infer_schema (infer only)", native_infer),
            ],
            repeats,
        )
    spark.stop()
    medians = {label: statistics.median(v) for label, v in times.items()}
    labels = list(medians)
    lines = [
        f"{rows:,} bids, {size_mb:.0f} MB in 2 files, `local[2]`, median of {repeats} rounds",
        "",
        "| job | seconds | vs Spark |",
        "|---|---:|---:|",
    ]
    for pair in ((labels[0], labels[1]), (labels[2], labels[3])):
        base = medians[pair[0]]
        for label in pair:
            lines.append(f"| {label} | {medians[label]:.2f} | {base / medians[label]:.2f}x |")
    ratio = medians[labels[0]] / medians[labels[1]]
    lines.append("")
    lines.append(f"source with inference vs spark.read.json: {ratio:.2f}x (target >= {TARGET}x)")
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
