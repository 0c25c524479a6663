"""Helpers the tests share (imported as ``support.<module>``: tests/conftest.py puts tests/ on
the path, and on PYTHONPATH for the scripts of tests/jobs/ that tests run as subprocesses)."""

from __future__ import annotations

import os

#: tests/, the repository's root, the scripts tests run as subprocesses, the committed data.
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
JOBS = os.path.join(TESTS, "jobs")
DATA = os.path.join(TESTS, "data")

#: The Java options of every Spark JVM the tests start (the session's, the jobs' and Connect's
#: through ``SPARK_SUBMIT_OPTS``, local-cluster executors' through
#: ``spark.executor.extraJavaOptions``): the client compiler only and the serial collector.
#: The tests run many short queries on small data, so a JVM spends more CPU compiling hot
#: code with C2 and running G1's threads than it gains from them. They change no result.
#: Measured on tests/window/test_spark_window_stream.py, tests/changelog/test_spark_changelog.py
#: and tests/state/test_state_moved_columns.py (2 workers): 492 CPU-seconds and 295 s with the
#: defaults, 376 and 234 s with the client compiler, 351 and 220 s with the serial collector too.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def script_env() -> dict[str, str]:
    """The environment of a script a test runs in its own process (a benchmark's smoke run):
    this one, with the sliceflow this process imports first on ``PYTHONPATH`` and Spark's
    Python workers on this interpreter."""
    import sys

    import sliceflow

    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(sliceflow.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [pkg_root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return env


def run_script(script: str, args: list[str], timeout: float) -> tuple[str, str]:
    """Runs ``script`` with ``args`` in its own process from the repository's root
    (:func:`script_env`); its stdout and stderr, after checking it succeeded (the tail of
    its stderr otherwise)."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, script, *args],
        cwd=ROOT,
        env=script_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout, proc.stderr
