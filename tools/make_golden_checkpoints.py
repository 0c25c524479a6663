"""Writes the golden checkpoints under tests/data/checkpoints/ (one per streaming operator):
the query of ``sliceflow.testing.golden_checkpoints.GOLDEN`` run over its first micro-batches,
its checkpoint frozen with the input and the rows it emitted.

Run it once per release that changes the state format (docs/state.md, "Compatibility"), never
to make a failing compatibility test pass: a golden checkpoint of an older release is a promise
that this release reads it.

    PYTHONPATH=python .venv/bin/python tools/make_golden_checkpoints.py [operator ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq

from sliceflow.testing.golden_checkpoints import (
    FIRST_BATCHES,
    GOLDEN,
    freeze,
    stream,
    write_source,
)
from sliceflow.testing.spark import local_session, run_to_end

ROOT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "checkpoints"
)


def make(spark, name: str, into: str) -> None:
    golden = GOLDEN[name]
    batches = golden.batches()
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, "src")
        checkpoint = os.path.join(scratch, "ck")
        write_source(source, batches[:FIRST_BATCHES])
        emitted: list[pa.Table] = []
        run_to_end(
            stream(spark, golden, source), checkpoint, lambda df, _: emitted.append(df.toArrow())
        )
        shutil.rmtree(into, ignore_errors=True)
        write_source(os.path.join(into, "source"), batches)
        freeze(checkpoint, source, os.path.join(into, "checkpoint"))
        pq.write_table(pa.concat_tables(emitted), os.path.join(into, "emitted.parquet"))
    size = sum(
        os.path.getsize(os.path.join(folder, f))
        for folder, _, files in os.walk(into)
        for f in files
    )
    print(f"{name}: {into} ({size / 1024:.0f} KiB)")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("operators", nargs="*", help=f"of {sorted(GOLDEN)} (default: all)")
    args = parser.parse_args(argv)
    unknown = set(args.operators) - set(GOLDEN)
    if unknown:
        parser.error(f"unknown operator(s) {sorted(unknown)}: choose from {sorted(GOLDEN)}")
    spark = local_session(
        "local[2]",
        "golden-checkpoints",
        {
            # One state partition: the checkpoint stays small (a restart keeps this count).
            "spark.sql.shuffle.partitions": "1",
            "spark.sql.streaming.stateStore.providerClass": (
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
            ),
        },
    )
    try:
        for name in args.operators or sorted(GOLDEN):
            make(spark, name, os.path.normpath(os.path.join(ROOT, name)))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
