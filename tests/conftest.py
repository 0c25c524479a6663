"""Shared fixtures and rules of the whole suite.

* tests/ is put on the path (and on PYTHONPATH, for the scripts of tests/jobs/ that tests run
  in subprocesses), so every test folder imports the shared helpers as ``support.<module>``.
* One SparkSession for the whole run (Spark start-up costs seconds).
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
