"""The streaming ``sliceflow.json`` source on real Spark queries: micro-batches in Spark's file
order with its options, the rows of the batch source, and exactly-once output across a query
killed with SIGKILL mid-run and restarted from its checkpoint."""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from support import JOBS
from support.spark_helpers import kill_after_commits

from sliceflow.spark import register

pytestmark = pytest.mark.spark

SCHEMA = "f STRING, i INT"


def write_files(folder: Path, count: int, lines: int, first: int = 0) -> list[tuple[str, int]]:
    """``count`` NDJSON files, one second apart in modification time; their (file, line) keys."""
    folder.mkdir(parents=True, exist_ok=True)
    base = int(time.time()) - 1000
    keys = []
    for k in range(first, first + count):
        path = folder / f"part-{k:03d}.json"
        path.write_text("".join(f'{{"f":"{k:03d}","i":{i}}}\n' for i in range(lines)))
        os.utime(path, (base + k, base + k))
        keys.extend((f"{k:03d}", i) for i in range(lines))
    return keys


def test_micro_batches_follow_the_file_source(spark, tmp_path):
    register(spark)
    src = tmp_path / "in"
    write_files(src, 3, 50)
    (src / "part-001.json").touch()  # now the newest: read last
    seen: list[tuple[int, list[str], int]] = []

    def record(batch, batch_id: int) -> None:
        rows = batch.collect()
        seen.append((batch_id, sorted({r.f for r in rows}), len(rows)))

    stream = spark.readStream.format("sliceflow.json").schema(SCHEMA)
    query = (
        stream.option("maxFilesPerTrigger", 1)
        .load(str(src))
        .writeStream.trigger(availableNow=True)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .foreachBatch(record)
        .start()
    )
    query.awaitTermination()
    assert seen == [(0, ["000"], 50), (1, ["002"], 50), (2, ["001"], 50)]
    # The rows are the batch source's on the same files.
    batch = spark.read.format("sliceflow.json").schema(SCHEMA).load(str(src))
    assert sum(n for _, _, n in seen) == batch.count() == 150


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_killed_query_restarts_and_writes_each_line_once(spark, tmp_path):
    register(spark)
    src, sink, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    expected = write_files(src, 30, 2000)
    job = os.path.join(JOBS, "json_stream_job.py")
    committed = kill_after_commits([sys.executable, job, str(src), str(sink), str(ck)], str(ck), 3)
    assert committed < 30, "every file was read before the kill: nothing to restart"

    stream = spark.readStream.format("sliceflow.json").schema(SCHEMA)
    rows = stream.option("maxFilesPerTrigger", 7).load(str(src))
    writer = rows.writeStream.format("json").option("checkpointLocation", str(ck))
    writer.trigger(availableNow=True).start(str(sink)).awaitTermination()

    got = Counter((r.f, r.i) for r in spark.read.schema(SCHEMA).json(str(sink)).collect())
    assert got == Counter(expected)  # every line, none twice
    assert max(got.values()) == 1


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_killed_changelog_agg_restarts_from_its_state_log(spark, tmp_path):
    """changelog_agg's state in bucket layout 2 (a base, a log entry per micro-batch, a head;
    the job keeps no bucket cache, so every call reads its log) cut by a SIGKILL mid-run: the
    restarted query's changelog, with the one written before the kill, materializes to the
    aggregation of every line, each counted once."""
    from sliceflow import window as W
    from sliceflow.spark import changelog_agg

    src, sink, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    write_files(src, 12, 500)
    job = os.path.join(JOBS, "json_stream_job.py")
    command = [sys.executable, job, str(src), str(sink), str(ck), "changelog"]
    committed = kill_after_commits(command, str(ck), 3)
    assert committed < 12, "every file was read before the kill: nothing to restart"

    stream = spark.readStream.format("sliceflow.json").schema(SCHEMA)
    rows = stream.option("maxFilesPerTrigger", 4).load(str(src))
    aggs = [W.count().alias("n"), W.max("f").alias("last")]
    writer = changelog_agg(rows, "i", aggs).writeStream.format("json")
    writer = writer.option("checkpointLocation", str(ck))
    writer.trigger(availableNow=True).start(str(sink)).awaitTermination()

    # The file sink keeps no order between its files: the changelog materialized as a multiset
    # (each +I / +U adds its row, each -U / -D takes one away), which a lost or doubled change
    # would leave with a row too many or a negative count.
    out = spark.read.schema("op STRING, i INT, n BIGINT, last STRING").json(str(sink))
    live: Counter[tuple] = Counter()
    for op, *row in out.collect():
        live[tuple(row)] += 1 if op in ("+I", "+U") else -1
    assert {r: c for r, c in live.items() if c} == {(i, 12, "011"): 1 for i in range(500)}
