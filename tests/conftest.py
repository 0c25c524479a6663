"""Shared fixtures and rules of the whole suite.

* tests/ is put on the path (and on PYTHONPATH, for the scripts of tests/jobs/ that tests run
  in subprocesses), so every test folder imports the shared helpers as ``support.<module>``.
* Every Spark JVM of the run starts with ``support.JVM_OPTIONS`` (``SPARK_SUBMIT_OPTS``): the
  client compiler and the serial collector, cheaper for many short queries.
* One SparkSession for the whole run (Spark start-up costs seconds). A test that uses it gets
  the ``spark`` marker here, so the fast tier (plain ``pytest``, which deselects ``spark``)
  cannot start Spark through a forgotten marker.
* The ``flink`` modules' jobs start in one background Flink process as the session starts
  (support/flink_session.py), beside the Spark tests.
* Per-test timeouts: 120 s by default (pyproject.toml), 900 s for the tiers that start Spark,
  Flink or a cluster (and for ``slow``), unless a test sets its own.
* Hypothesis budgets: the ``dev`` profile (few examples, for the inner loop) by default, ``ci``
  (more examples, a failure prints its reproduction blob) when the ``CI`` variable is set or
  scripts/test.sh runs the whole suite; ``HYPOTHESIS_PROFILE=<name>`` picks one. A test sets
  its own ``max_examples`` only where an example costs far more (a Spark job per example).
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from support import JVM_OPTIONS  # noqa: E402 - tests/ is on the path from here on

# Every Spark JVM the tests start, the session's and the jobs' (support.JVM_OPTIONS says why).
os.environ.setdefault("SPARK_SUBMIT_OPTS", JVM_OPTIONS)
if HERE not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH", ""), HERE) if p
    )

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

# deadline=None: the time of one example on a shared 2-core machine says nothing.
settings.register_profile("dev", max_examples=25, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

#: The test files that take minutes each (a wheel build and fresh environments, a Connect
#: server, local-cluster jobs, whole scripts in fresh sessions), in the order they run first:
#: pytest-xdist hands out files in collection order, so the long ones start at once on the
#: workers instead of ending the run alone (`--durations=30` in the CI log says which they are).
LONG_FILES = (
    "tests/package/test_wheel.py",  # 350 s alone (a fresh venv, packing, the cluster checks)
    "tests/spark/test_spark_connect.py",  # 161 s
    "tests/bench/test_bench_window_stream.py",  # 156 s
    "tests/package/test_readme.py",  # 136 s
)

#: The markers whose tests start Spark, Flink or a cluster, or are slow: the long timeout.
LONG_TIERS = ("spark", "cluster", "connect", "flink", "slow")
LONG_TIMEOUT = 900


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    root = os.path.dirname(HERE)

    def rank(item: pytest.Item) -> int:
        path = os.path.relpath(str(item.path), root).replace(os.sep, "/")
        return LONG_FILES.index(path) if path in LONG_FILES else len(LONG_FILES)

    items.sort(key=rank)  # stable: the order within a file, and of the other files, stays
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
        if item.get_closest_marker("timeout") is None and any(
            item.get_closest_marker(m) for m in LONG_TIERS
        ):
            item.add_marker(pytest.mark.timeout(LONG_TIMEOUT))


@pytest.fixture(scope="session", autouse=True)
def _flink_jobs_of_the_session(request: pytest.FixtureRequest, tmp_path_factory) -> None:
    """Starts the Flink jobs of every selected ``flink`` module in one background process
    (support/flink_session.py), as each worker starts: they run beside the Spark tests."""
    items = request.session.items
    modules = {getattr(i, "module", None) for i in items if i.get_closest_marker("flink")}
    modules.discard(None)
    if modules:
        from support import flink_session

        base = tmp_path_factory.getbasetemp()
        shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        flink_session.start(modules, str(shared))


@pytest.fixture(scope="session")
def spark():
    from sliceflow.testing.spark import local_session

    session = local_session(
        "local[2]",
        "sliceflow-tests",
        {
            # Two shuffle partitions for the tests' small inputs: each stateful streaming
            # partition opens and commits its RocksDB store every micro-batch
            # (test_spark_window_stream.py: 171 s with 4, 143 s with 2).
            "spark.sql.shuffle.partitions": "2",
            # No whole-stage code generation: the tests run many small queries, and compiling
            # each plan's Java costs more CPU than running it (test_spark_window.py,
            # test_spark_topn.py and test_spark_changelog_columns.py: 151 CPU-seconds with it,
            # 110 without; streaming files gain nothing). The jobs the tests start as processes
            # of their own (the local-cluster checks, Connect, the README, the demo) keep
            # Spark's default, so every operator is checked under generated code too.
            "spark.sql.codegen.wholeStage": "false",
            "spark.driver.memory": "2g",
            # streaming changelog_agg (transformWithStateInPandas) needs RocksDB
            "spark.sql.streaming.stateStore.providerClass": (
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
            ),
        },
    )
    yield session
    session.stop()
