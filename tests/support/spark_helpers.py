"""Spark helpers the tests share: a conf set for one block, streaming queries over a folder
of parquet files (one file per micro-batch) run to the end of their input, and a streaming
job killed with SIGKILL mid-run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sliceflow.spark._runtime.session_settings import FUSION_CONF
from sliceflow.testing.spark import run_to_end


@contextmanager
def spark_conf(spark, key: str, value: str) -> Iterator[None]:
    old = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if old is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, old)


def unfused_plan(spark, build: Callable[[], Any], fused: Callable[[Any], bool]) -> Any:
    """``build()`` with ``spark.sliceflow.fusion.enabled=false``, checked by ``fused`` (the
    test's way to see a fused plan) to be unfused."""
    with spark_conf(spark, FUSION_CONF, "false"):
        out = build()
    assert not fused(out)
    return out


def write_micro_batches(folder: str, batches: Sequence[pa.Table], first: int = 0) -> None:
    """One parquet file per micro-batch, mtimes increasing (the file source takes the oldest
    first)."""
    os.makedirs(folder, exist_ok=True)
    for i, t in enumerate(batches, start=first):
        path = os.path.join(folder, f"part-{i:04d}.parquet")
        pq.write_table(t, path)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def stream_of(spark, folder: str, schema: pa.Schema):
    """The parquet files of ``folder`` as a stream, one file per micro-batch."""
    spark_schema = spark.createDataFrame(schema.empty_table()).schema
    return spark.readStream.schema(spark_schema).option("maxFilesPerTrigger", 1).parquet(folder)


def collect_stream(df, checkpoint: str, row: Callable[[Any], Any] = tuple) -> dict[int, list[Any]]:
    """Runs ``df`` to the end of its input; the rows of every micro-batch (each made by ``row``
    from a pyspark Row), by batch id."""
    got: dict[int, list[Any]] = {}

    def each(batch_df, batch_id: int) -> None:
        got[batch_id] = [row(r) for r in batch_df.collect()]

    run_to_end(df, checkpoint, each)
    return got


def collect_tables(df, checkpoint: str) -> dict[int, pa.Table]:
    """Runs ``df`` to the end of its input; each micro-batch's rows as Arrow, by batch id."""
    got: dict[int, pa.Table] = {}

    def each(batch_df, batch_id: int) -> None:
        got[batch_id] = batch_df.toArrow()

    run_to_end(df, checkpoint, each)
    return got


def kill_after_commits(command: list[str], checkpoint: str, commits: int) -> int:
    """Starts ``command`` (a streaming job writing ``checkpoint``; tests/ and this process's
    path on its PYTHONPATH), kills it and its JVM with SIGKILL once ``commits`` micro-batches
    are committed, and returns how many were committed then."""
    done = os.path.join(checkpoint, "commits")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    job = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while len(os.listdir(done) if os.path.exists(done) else []) < commits:
            assert job.poll() is None, f"the streaming job ended (exit {job.returncode}) unkilled"
            assert time.monotonic() < deadline, "the streaming job committed too few in 300 s"
            time.sleep(0.2)
    finally:
        os.killpg(job.pid, signal.SIGKILL)  # the job and its JVM, mid-run
        job.wait()
    return len([n for n in os.listdir(done) if n.isdigit()])


def assert_same_rows(left, right) -> None:
    """Two DataFrames hold the same schema and the same rows (as multisets)."""
    assert left.schema == right.schema
    assert left.count() == right.count()
    assert left.exceptAll(right).count() == 0
    assert right.exceptAll(left).count() == 0


def job_env(**extra: str) -> dict[str, str]:
    """The environment of a tests/jobs/ script run as a subprocess: Spark's Python workers run
    this interpreter and import the same sliceflow as this process (a working tree run with
    PYTHONPATH=python too: executors start in other directories, so the path is absolute)."""
    import sliceflow

    here = os.path.dirname(os.path.dirname(os.path.abspath(sliceflow.__file__)))
    path = [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(
        os.environ,
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        PYTHONPATH=os.pathsep.join(os.path.abspath(p) for p in path),
        **extra,
    )
