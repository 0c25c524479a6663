"""The ``spark.sliceflow.memory.*`` settings: read on the driver, applied in each Python worker.

A query that runs sliceflow kernels reads the session's settings when it is built (a malformed
value fails there, naming the conf) and carries them in its UDF closure; the worker applies
them with :func:`apply_in_worker` before its first kernel call. A limit left unset takes the
worker's environment variable, else :data:`sliceflow.memory.SPARK_WORKER_DEFAULTS`: see
:mod:`sliceflow.memory`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession


def from_session(spark: Any = None) -> dict[str, str]:
    """The ``spark.sliceflow.memory.*`` settings that are set, by limit name, of ``spark``
    (default: the active session; none without one)."""
    spark = spark or SparkSession.getActiveSession()
    if spark is None:
        return {}
    return _limits(lambda conf: spark.conf.get(conf, None))


def from_task() -> dict[str, str]:
    """The ``spark.sliceflow.memory.*`` settings a Spark task sees (the ones set explicitly in
    its session, which Spark passes to tasks as local properties), by limit name; none outside
    a task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return {}
    return _limits(context.getLocalProperty)


def _limits(get: Callable[[str], Any]) -> dict[str, str]:
    """The limits whose conf ``get`` gives a value for, each checked (a malformed value fails
    naming the conf)."""
    from sliceflow import memory  # loads sliceflow._core only when a query is built

    settings: dict[str, str] = {}
    for name, (_, _, _, conf) in memory.LIMITS.items():
        value = get(conf)
        if value is not None and str(value).strip():
            memory.parse_limit(name, str(value), conf)
            settings[name] = str(value)
    return settings


def apply_in_worker(settings: dict[str, str]) -> None:
    """Sets this Python worker's limits: the settings read by :func:`from_session`, else the
    worker's environment variables (left as they are), else
    :data:`sliceflow.memory.SPARK_WORKER_DEFAULTS`."""
    from sliceflow import memory

    values: dict[str, int | str] = {
        name: value
        for name, value in memory.SPARK_WORKER_DEFAULTS.items()
        if name not in settings and os.environ.get(memory.LIMITS[name][2]) is None
    }
    values.update(settings)
    memory.apply(values, source={name: memory.LIMITS[name][3] for name in settings})
