"""sliceflow on a Spark Connect session: every operator (``from_json``, the ``sliceflow.json``
data source with a schema, inferring one and streaming, ``window_agg``, ``changelog_agg``,
``topn`` (a changelog and a window Top-N), ``deduplicate``, ``from_changelog`` and ``join``,
batch and streaming) gives the classic session's rows; an operator over the
``sliceflow.json`` source, batch or stream, reads a fused scan on both sessions, and one over
``from_json``'s fields decodes in its fused step (the same rows as with fusion off); and the
metrics objects refuse a Connect session with a message that says where the counters are read.

The Connect session is started as a user starts one, ``SparkSession.builder.remote("local[2]")``
(a local Connect server in the client's process). That server makes its own SparkContext, which
cannot live beside this process's classic session, so tests/jobs/connect_job.py runs the queries
in a subprocess while this process runs the same :func:`connect_job.run_queries` on the
classic session; the parquet folders are then compared row for row (and schema for schema).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from jobs.connect_job import CONF, FUSED, NOT_FUSED, QUERIES, run_queries
from jobs.fresh_process_job import check
from support import JOBS
from support.spark_helpers import job_env

from sliceflow.testing import write_bids

pytestmark = [pytest.mark.spark, pytest.mark.connect]

#: The client packages Spark Connect needs (pyproject's `connect` extra).
for _module in ("grpc", "grpc_status", "google.rpc", "zstandard"):
    pytest.importorskip(_module, reason="Spark Connect needs the `connect` extra")


def _rows(path: str) -> tuple[pa.Schema, list[str]]:
    """A query's parquet output: its schema and its rows in a canonical order."""
    table = pq.read_table(path)
    rows = [json.dumps(r, default=str, sort_keys=True) for r in table.to_pylist()]
    return table.schema.remove_metadata(), sorted(rows)


def _job_env() -> dict[str, str]:
    # The Connect server's Python workers import the same sliceflow as this process;
    # SPARK_TESTING: pyspark's local Connect server then binds an ephemeral port and its client
    # asks the server for it (as PySpark's own Connect tests do): no clash with another server
    # on the default port 15002.
    return job_env(SPARK_TESTING="1")


def test_connect_session_gives_the_classic_rows(spark, tmp_path):
    data = str(tmp_path / "bids")
    write_bids(data, 2000, files=2)  # 2 s of event time, one file per micro-batch
    connect_out = str(tmp_path / "connect")
    classic_out = str(tmp_path / "classic")
    os.makedirs(connect_out)
    job = os.path.join(JOBS, "connect_job.py")
    log_path = tmp_path / "connect_job.log"
    start = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        # The Connect job runs while this process runs the classic queries.
        job_process = subprocess.Popen(
            [sys.executable, job, data, connect_out],
            env=_job_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            saved = {key: spark.conf.get(key, None) for key in CONF}
            for key, value in CONF.items():
                spark.conf.set(key, value)
            try:
                run_queries(spark, data, classic_out)
            finally:
                for key, value in saved.items():
                    if value is None:
                        spark.conf.unset(key)
                    else:
                        spark.conf.set(key, value)
            returncode = job_process.wait(timeout=600)
        finally:
            if job_process.poll() is None:
                job_process.kill()
                job_process.wait()
    seconds = time.perf_counter() - start
    output = log_path.read_text(encoding="utf-8", errors="replace")
    assert returncode == 0, output[-5000:]

    with open(os.path.join(connect_out, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    print(f"connect job {seconds:.1f} s: {summary}")
    assert summary["session"] == "pyspark.sql.connect.session.SparkSession"
    # Before register: the source found by pyspark itself, its reads and error Spark's.
    check(summary["no_register"])
    for query in QUERIES:
        connect_schema, connect_rows = _rows(os.path.join(connect_out, query))
        classic_schema, classic_rows = _rows(os.path.join(classic_out, query))
        assert connect_schema == classic_schema, query
        assert len(connect_rows) == len(classic_rows), query
        assert connect_rows == classic_rows, query
        assert connect_rows, f"{query} gave no rows"

    # The queries over the sliceflow.json source or from_json's fields are fused on both
    # sessions, and give the rows of the same query unfused.
    assert _rows(os.path.join(connect_out, "window_batch")) == _rows(
        os.path.join(connect_out, "window_unfused")
    )
    for out in (classic_out, connect_out):
        with open(os.path.join(out, "fused.json"), encoding="utf-8") as f:
            flags = json.load(f)
        assert flags == {**dict.fromkeys(FUSED, True), **dict.fromkeys(NOT_FUSED, False)}, out
    counts = {q: len(_rows(os.path.join(classic_out, q))[1]) for q in QUERIES}
    assert counts["from_json"] == counts["source"] == counts["source_stream"] == 2000
    assert counts["source_inferred"] == 2000
    # The changelog streams updated their keys across micro-batches.
    for query in ("changelog_stream", "topn_stream"):
        ops = {json.loads(r)["op"] for r in _rows(os.path.join(connect_out, query))[1]}
        assert {"+I", "-U", "+U"} <= ops, query
    assert counts["from_changelog"] == 2000  # c and r envelopes: one +I each
    # The stream join retracted a pair when an auction's latest bid changed.
    ops = {json.loads(r)["op"] for r in _rows(os.path.join(connect_out, "join_stream"))[1]}
    assert {"+I", "-D"} <= ops
    # Columns of the Connect session (F.col, df.x, df["x"]) and nested fields, named as
    # groupBy names them.
    names = _rows(os.path.join(connect_out, "columns_changelog"))[0].names
    assert names == ["op", "channel", "parity", "count(1)", "max(b.price)", "total"]

    # Accumulators do not exist on Connect: the metrics objects say so, and where to look.
    for name in ("WindowMetrics", "ChangelogMetrics", "TopNMetrics", "DedupMetrics", "JoinMetrics"):
        message = summary["metrics"][name]
        assert message.startswith(f"NotImplementedError: {name} "), message
        assert "Spark Connect" in message and "classic SparkSession" in message
        assert "lastProgress" in message and "observe" in message


def test_metrics_are_made_on_a_classic_session(spark):
    from jobs.connect_job import metrics_errors

    names = ("WindowMetrics", "ChangelogMetrics", "TopNMetrics", "DedupMetrics", "JoinMetrics")
    assert metrics_errors(spark) == dict.fromkeys(names)
