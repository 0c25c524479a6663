"""sliceflow in Spark's local-cluster mode: separate executor JVMs and Python workers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import JOBS
from support.spark_helpers import job_env

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


def test_local_cluster_from_json_and_data_source(tmp_path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    job = os.path.join(JOBS, "cluster_job.py")
    result = subprocess.run(
        [sys.executable, job, str(tmp_path / "bids")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = [line for line in result.stdout.splitlines() if line.startswith("rows=")]
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert summary == [summary[0]] and "diff=0 diff_source=0" in summary[0]


def _run_job(script: str, timeout: float) -> list[str]:
    """Runs ``tests/jobs/<script>`` with executors that import the same sliceflow as this process
    (a working tree run with PYTHONPATH=python too: executors start in other directories, so
    the path is absolute); returns its ``rows=`` summary lines."""
    env = job_env()
    job = os.path.join(JOBS, script)
    result = subprocess.run(
        [sys.executable, job], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return [line for line in result.stdout.splitlines() if line.startswith("rows=")]


def test_local_cluster_window_agg_matches_spark_window():
    summary = _run_job("window_cluster_job.py", timeout=600)
    assert len(summary) == 1 and " diff=0 " in summary[0], summary


def test_local_cluster_changelog_agg_matches_spark_and_model():
    summary = _run_job("changelog_cluster_job.py", timeout=900)
    assert len(summary) == 1 and " diff=0 " in summary[0], summary


def test_local_cluster_topn_and_deduplicate_match_spark():
    """Batch topn / deduplicate against Spark's row_number; streaming through the sliceflow.json
    stream source on the executors, each changelog applied ending as the batch answer."""
    summary = _run_job("topn_dedup_cluster_job.py", timeout=900)
    assert len(summary) == 1 and " diff=0 " in summary[0], summary
