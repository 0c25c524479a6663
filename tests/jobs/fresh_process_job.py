"""A user's script in a fresh process: the ``sliceflow.json`` source before anything of
sliceflow ran, then two streaming operators, with Spark's default logging.

    python tests/jobs/fresh_process_job.py DATA OUT

1. Starts a ``local[2]`` session in the time zone ``America/New_York`` and reads DATA (written
   by :func:`write_tree`) with ``format("sliceflow.json")`` and with ``spark.read.json``;
   pyspark must find the source by itself (the ``pyspark_sliceflow`` module on the workers'
   path): ``sliceflow.spark.register`` is never called, and nothing of sliceflow is imported
   before. :func:`run` does the reads (tests/jobs/connect_job.py runs it on a Connect session).
2. Runs a streaming ``window_agg`` and a streaming ``changelog_agg`` to the memory sink and
   prints ``windows N`` and ``totals N``.

Writes OUT/summary.json: for each read, both sides' schema and rows (:func:`check` compares
them). tests/spark/test_fresh_process.py also reads what reached this process's stderr.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
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


def streaming_queries(spark: SparkSession, work: str) -> None:
    """A streaming ``window_agg`` and ``changelog_agg`` over 200 rows of 5 keys, each run to
    the end; prints each one's row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sliceflow import window as W
    from sliceflow.spark import changelog_agg, window_agg

    source = os.path.join(work, "rows")
    os.makedirs(source)
    table = pa.table(
        {
            "k": pa.array([i % 5 for i in range(200)], pa.int64()),
            "v": pa.array(range(200), pa.int64()),
            "ts": pa.array([i * 1_000_000 for i in range(200)], pa.timestamp("us", "UTC")),
        }
    )
    pq.write_table(table, os.path.join(source, "part-0.parquet"))
    rows = spark.readStream.schema("k BIGINT, v BIGINT, ts TIMESTAMP").parquet(source)
    windows = window_agg(
        rows.withWatermark("ts", "10 seconds"),
        W.tumble("ts", "1 minute"),
        by="k",
        aggs=[W.count().alias("n")],
    )
    totals = changelog_agg(rows, by="k", aggs=[W.sum("v").alias("total")])
    for name, df, mode in (("windows", windows, "append"), ("totals", totals, "update")):
        query = (
            df.writeStream.outputMode(mode)
            .format("memory")
            .queryName(name)
            .option("checkpointLocation", os.path.join(work, name))
            .start()
        )
        query.processAllAvailable()
        query.stop()
        print(name, spark.table(name).count(), flush=True)


def check(summary: dict[str, Any]) -> None:
    """Asserts that :func:`run`'s reads gave Spark's rows and Spark's error."""
    for name in ("inferred", "schema", "metadata"):
        ours, theirs = summary[name]
        assert ours == theirs, name
        assert ours["rows"], name
    ours, theirs = summary["missing"]
    # Spark's first line, the class and path, is the end of sliceflow's first line (which
    # Spark starts with PYTHON_DATA_SOURCE_ERROR); both are AnalysisExceptions.
    assert theirs.startswith("AnalysisException: [PATH_NOT_FOUND] Path does not exist: file:/")
    assert ours.startswith("AnalysisException: [PYTHON_DATA_SOURCE_ERROR] ")
    assert ours.endswith(theirs.removeprefix("AnalysisException: ").split(" SQLSTATE")[0])


def main(data: str, out: str) -> None:
    # Spark's Python workers run this interpreter, as the README's session sets it up.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master("local[2]")
    for key, value in {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": TIME_ZONE,
        "spark.sql.shuffle.partitions": "2",
        # streaming changelog_agg (transformWithStateInPandas) needs RocksDB
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
    }.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        write_tree(data)
        summary = run(spark, data)
        summary["session"] = f"{type(spark).__module__}.{type(spark).__name__}"
        with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
        streaming_queries(spark, out)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
