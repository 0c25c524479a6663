"""A local SparkSession set up the way sliceflow's examples, tests and benchmarks use it."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import SparkSession


def local_session(
    master: str = "local[2]", app: str = "sliceflow", conf: Mapping[str, str] | None = None
) -> SparkSession:
    """A quiet SparkSession: session time zone UTC, no UI or progress bars, ERROR logs, and
    sliceflow's ``sliceflow.json`` data source registered.

    >>> spark = local_session("local[2]", "demo", {"spark.driver.memory": "2g"})  # doctest: +SKIP
    """
    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    import sliceflow.spark

    sliceflow.spark.register(spark)
    return spark
