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
