"""Shared fixtures and rules of the whole suite.

* tests/ is put on the path (and on PYTHONPATH, for the scripts of tests/jobs/ that tests run
  in subprocesses), so every test folder imports the shared helpers as ``support.<module>``.
* One SparkSession for the whole run (Spark start-up costs seconds). A test that uses it gets
  the ``spark`` marker here, so the fast tier (plain ``pytest``, which deselects ``spark``)
  cannot start Spark through a forgotten marker.
* Per-test timeouts: 120 s by default (pyproject.toml), 900 s for the tiers that start Spark,
  Flink or a cluster (and for ``slow``), unless a test sets its own.
"""

from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
if HERE not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH", ""), HERE) if p
    )

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

#: The markers whose tests start Spark, Flink or a cluster, or are slow: the long timeout.
LONG_TIERS = ("spark", "cluster", "connect", "flink", "slow")
LONG_TIMEOUT = 900


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
        if item.get_closest_marker("timeout") is None and any(
            item.get_closest_marker(m) for m in LONG_TIERS
        ):
            item.add_marker(pytest.mark.timeout(LONG_TIMEOUT))


@pytest.fixture(scope="session")
def spark():
    from sliceflow.testing.spark import local_session

    session = local_session(
        "local[2]",
        "sliceflow-tests",
        {
            "spark.sql.shuffle.partitions": "4",
            "spark.driver.memory": "2g",
            # streaming changelog_agg (transformWithStateInPandas) needs RocksDB
            "spark.sql.streaming.stateStore.providerClass": (
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
            ),
        },
    )
    yield session
    session.stop()
