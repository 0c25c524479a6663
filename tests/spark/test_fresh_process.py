"""A user's script in a fresh process (tests/jobs/fresh_process_job.py), as a user runs it.

* pyspark finds the ``sliceflow.json`` source by itself (``pyspark_sliceflow``): without
  ``sliceflow.spark.register`` and before anything of sliceflow ran, its reads equal
  ``spark.read.json``'s and its missing-path error ends as Spark's (Connect:
  tests/spark/test_spark_connect.py).
* With Spark's default logging (WARN), a streaming ``window_agg`` and a streaming
  ``changelog_agg`` leave on stderr none of the state server's warnings for empty value states
  and none of the debugging lines PySpark's transformWithStateInPandas driver worker prints
  after it loads sliceflow's processor (its first line, printed before, stays: one per query).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from jobs.fresh_process_job import check
from support import JOBS
from support.spark_helpers import job_env

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def fresh_process(tmp_path_factory) -> dict:
    """The job's exit code, stdout, stderr and summary.json."""
    tmp = tmp_path_factory.mktemp("fresh-process")
    data, out = tmp / "data", tmp / "out"
    out.mkdir()
    done = subprocess.run(
        [sys.executable, os.path.join(JOBS, "fresh_process_job.py"), str(data), str(out)],
        env=job_env(),
        capture_output=True,
        text=True,
        timeout=800,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    with open(out / "summary.json", encoding="utf-8") as f:
        summary = json.load(f)
    return {"stdout": done.stdout, "stderr": done.stderr, "summary": summary}


def test_a_fresh_process_finds_the_source_without_register(fresh_process):
    summary = fresh_process["summary"]
    assert summary["session"] == "pyspark.sql.session.SparkSession"
    check(summary)


def test_streaming_operators_keep_the_console_quiet(fresh_process):
    out, err = fresh_process["stdout"], fresh_process["stderr"]
    assert "windows 15" in out and "totals 5" in out, out
    assert "doesn't contain a value" not in err, err[-3000:]
    marker = "TransformWithStateInPandas Python worker"
    worker = [line for line in err.splitlines() if marker in line]
    # one "Starting ..." line per query: printed before any sliceflow code runs in that process
    assert len(worker) <= 2, worker
    assert all(line.startswith("Starting ") for line in worker), worker
