"""Shared fixtures: one SparkSession for the whole run (Spark start-up costs seconds)."""

from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

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
