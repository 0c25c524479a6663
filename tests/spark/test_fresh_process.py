"""What sliceflow's streaming operators leave on a user's console.

A job (tests/jobs/quiet_job.py) runs a streaming ``window_agg`` and a streaming
``changelog_agg`` in a session with Spark's default logging (WARN), as a user's script does;
its stderr must hold none of the state server's warnings for empty value states and none of
the debugging lines PySpark's transformWithStateInPandas driver worker prints after it loads
sliceflow's processor (its first line, printed before, stays: one per query).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import JOBS

pytestmark = pytest.mark.spark


def test_streaming_operators_keep_the_console_quiet(tmp_path):
    result = subprocess.run(
        [sys.executable, os.path.join(JOBS, "quiet_job.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "windows 15" in result.stdout and "totals 5" in result.stdout, result.stdout
    err = result.stderr
    assert "doesn't contain a value" not in err, err[-3000:]
    marker = "TransformWithStateInPandas Python worker"
    worker = [line for line in err.splitlines() if marker in line]
    # one "Starting ..." line per query: printed before any sliceflow code runs in that process
    assert len(worker) <= 2, worker
    assert all(line.startswith("Starting ") for line in worker), worker
