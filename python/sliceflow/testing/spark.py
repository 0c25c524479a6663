"""A local SparkSession set up the way sliceflow's examples, tests and benchmarks use it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F


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


def window_bounds(window: str = "w") -> list[Column]:
    """``window_start``, ``window_end`` and ``window_time`` (end - 1 µs) from the struct column
    that Spark's ``window()`` makes: Spark's answer in sliceflow's column layout.

    >>> df.groupBy(F.window("ts", "1 minute").alias("w"), "k").count().select(
    ...     *window_bounds("w"), "k", "count")  # doctest: +SKIP
    """
    return [
        F.col(f"{window}.start").alias("window_start"),
        F.col(f"{window}.end").alias("window_end"),
        (F.col(f"{window}.end") - F.expr("INTERVAL 1 MICROSECOND")).alias("window_time"),
    ]


def run_to_end(
    df: DataFrame,
    checkpoint: str,
    each: Callable[[DataFrame, int], None] | None = None,
    *,
    path: str | None = None,
) -> None:
    """Runs the streaming ``df`` in append mode over all input available now, then returns:
    into ``each(batch_df, batch_id)`` (``foreachBatch``) or, with ``path``, a parquet sink.

    >>> rows = {}
    >>> run_to_end(stream, "/tmp/ck", lambda b, i: rows.setdefault(i, b.collect()))
    ... # doctest: +SKIP
    """
    writer = df.writeStream.outputMode("append").option("checkpointLocation", checkpoint)
    if path is not None:
        writer = writer.format("parquet").option("path", path)
    elif each is not None:
        writer = writer.foreachBatch(each)
    else:
        raise ValueError("run_to_end needs `each` or `path`")
    writer.trigger(availableNow=True).start().awaitTermination()
