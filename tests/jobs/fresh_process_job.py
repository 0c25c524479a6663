"""The ``sliceflow.json`` source in a fresh process that never calls ``sliceflow.spark.register``.

python tests/jobs/json_no_register_job.py classic|connect DATA OUT

Starts a session (``local[2]``, or a Spark Connect one with ``builder.remote("local[2]")``) with
the session time zone ``America/New_York``, reads DATA (written by :func:`write_tree`) with
``format("sliceflow.json")`` and with ``spark.read.json``, and writes OUT/summary.json: for each
check, both sides' schema and rows, so that tests/json/test_spark_json_session.py compares them.
pyspark must find the source by itself (the ``pyspark_sliceflow`` module on the workers' path).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

#: The zone the session runs in: not UTC, so that a source that ignored it would differ.
TIME_ZONE = "America/New_York"
#: A user schema over write_tree's files (the partition column last, where Spark puts it).
SCHEMA = "id BIGINT, name STRING, ts TIMESTAMP, dt DATE"


def write_tree(root: str) -> None:
    """Two partition folders, a plain file, a .gz file and a name with a space in it; local
    times on the days New York's clocks change."""
    day1 = Path(root, "dt=2024-03-10")
    day2 = Path(root, "dt=2024-11-03")
    day1.mkdir(parents=True, exist_ok=True)
    day2.mkdir(parents=True, exist_ok=True)
    (day1 / "a.json").write_text(
        '{"id": 1, "ts": "2024-03-10T01:30:00", "name": "x"}\n'
        '{"id": 2, "ts": "2024-03-10T03:30:00"}\n',
        encoding="utf-8",
    )
    (day2 / "b c.json.gz").write_bytes(
        gzip.compress(b'{"id": 3, "name": "z", "ts": "2024-11-03T01:30:00"}\n')
    )


def table(df: DataFrame) -> dict[str, Any]:
    """A DataFrame's schema (simple string) and its rows, sorted, as JSON-able values."""
    rows = sorted(json.dumps(r.asDict(recursive=True), default=str) for r in df.collect())
    return {"schema": df.schema.simpleString(), "rows": rows}


def first_line(call: Any) -> str:
    try:
        call()
    except Exception as exc:  # the two sides raise different types: their names are compared
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return "no error"


def run(spark: SparkSession, data: str) -> dict[str, Any]:
    def ours() -> Any:  # a reader keeps what it was given: a new one for each read
        return spark.read.format("sliceflow.json")

    missing = os.path.join(data, "nope")
    meta = ["id", "dt", "_metadata.*"]
    return {
        "inferred": [table(ours().load(data)), table(spark.read.json(data))],
        "schema": [
            table(ours().schema(SCHEMA).load(data)),
            table(spark.read.schema(SCHEMA).json(data)),
        ],
        "metadata": [
            table(ours().option("includeMetadata", "true").load(data).select(*meta)),
            table(spark.read.json(data).select(*meta)),
        ],
        # .schema: a Connect DataFrame is analysed (and fails) when its schema is asked for.
        "missing": [
            first_line(lambda: spark.read.format("sliceflow.json").load(missing).schema),
            first_line(lambda: spark.read.json(missing).schema),
        ],
    }


def main(mode: str, data: str, out: str) -> None:
    builder = SparkSession.builder
    builder = builder.remote("local[2]") if mode == "connect" else builder.master("local[2]")
    for key, value in {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": TIME_ZONE,
    }.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        write_tree(data)
        summary = run(spark, data)
        summary["session"] = f"{type(spark).__module__}.{type(spark).__name__}"
        with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
