"""sliceflow in Spark's local-cluster mode: separate executor JVMs and Python workers.

The checks of tests/jobs/cluster_suite.py run in one subprocess on one local-cluster session
(started once for the module); each test here reads its check's line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import JOBS
from support.spark_helpers import job_env

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


@pytest.fixture(scope="module")
def suite() -> dict[str, str]:
    """Each check's line (``<name> ok=<bool> <summary>``) by name; the whole output on a
    failure to start or an exit other than a failed check's."""
    result = subprocess.run(
        [sys.executable, os.path.join(JOBS, "cluster_suite.py")],
        env=job_env(),
        capture_output=True,
        text=True,
        timeout=1500,
    )
    output = result.stdout[-6000:] + result.stderr[-6000:]
    assert result.returncode in (0, 1), output
    lines = {}
    for line in result.stdout.splitlines():
        name, _, rest = line.partition(" ok=")
        if rest:
            lines[name] = line
    lines["_output"] = output
    return lines


def _check(suite: dict[str, str], name: str) -> str:
    line = suite.get(name)
    assert line is not None, suite["_output"]
    assert f"{name} ok=True " in line, line + "\n" + suite["_output"]
    return line


def test_local_cluster_from_json_and_data_source(suite):
    line = _check(suite, "json")
    assert " diff=0 diff_source=0" in line and "rows=20000 " in line, line


def test_local_cluster_window_agg_matches_spark_window(suite):
    line = _check(suite, "window")
    assert " diff=0 " in line and " stream_diff=0" in line, line


def test_local_cluster_changelog_agg_matches_spark_and_model(suite):
    line = _check(suite, "changelog")
    assert " diff=0 " in line and " diff_stream=0 " in line, line


def test_local_cluster_topn_and_deduplicate_match_spark(suite):
    """Batch topn / deduplicate against Spark's row_number; streaming through the sliceflow.json
    stream source on the executors, each changelog applied ending as the batch answer."""
    line = _check(suite, "topn_dedup")
    assert " diff=0 " in line, line
