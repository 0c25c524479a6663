"""Errors of the ``sliceflow.json`` source, shaped as Spark's file source shapes its own.

A Python data source's error reaches the caller wrapped by Spark: raised while planning
(``schema()``, ``reader()``, ``partitions()``), it is an ``AnalysisException`` with the
condition ``PYTHON_DATA_SOURCE_ERROR``; raised in a read task, a ``PythonException``. Spark puts
the worker's Python traceback into that message unless the worker's ``SPARK_HIDE_TRACEBACK``
is set (``spark.sql.execution.pyspark.udf.hideTraceback.enabled`` sets it). The source's own
refusals of bad input (a path that does not exist, a malformed line in FAILFAST mode, a file
that cannot be read) start with Spark's error class and hold everything on one line, and
:func:`spark_shaped` sends them without the traceback: the caller reads
``[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source instance: FileNotFoundError:
[PATH_NOT_FOUND] Path does not exist: file:/tmp/nope.`` rather than a traceback into
sliceflow's code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from sliceflow._io.filesystems import split_scheme
from sliceflow.errors import SliceflowError

__all__ = ["in_spark_worker", "one_line", "read_uri", "spark_shaped"]


def in_spark_worker() -> bool:
    """Whether this process is one of Spark's Python workers (a planner, a read task or a
    streaming source runner): they all run ``pyspark.worker_util``, a driver does not."""
    return "pyspark.worker_util" in sys.modules


def one_line(exc: BaseException) -> str:
    """An exception's message on one line.

    >>> one_line(ValueError("a\\nParse Mode: FAILFAST."))
    'a Parse Mode: FAILFAST.'
    """
    return " ".join(str(exc).split("\n"))


def read_uri(path: str) -> str:
    """A file as Spark's ``FAILED_READ_FILE`` names it: ``file:///tmp/x.json`` for a local file.

    >>> read_uri("/tmp/x.json"), read_uri("s3a://b/k.json")
    ('file:///tmp/x.json', 's3a://b/k.json')
    """
    scheme, rest = split_scheme(path)
    if scheme in ("", "file"):
        local = rest if scheme == "" else "/" + rest.lstrip("/")
        return "file://" + os.path.abspath(local)
    return path


@contextmanager
def spark_shaped() -> Iterator[None]:
    """Around planner and task code: a refusal of the input (a sliceflow error, a file error,
    a message that starts with an error class such as ``[PATH_NOT_FOUND] ...``) leaves a Spark
    worker without its traceback; a bug (any other exception) keeps it. Spark's worker
    formats the error after it leaves this code and then exits, so the setting ends with the
    process; outside a Spark worker (sliceflow called in process) nothing changes."""
    try:
        yield
    except Exception as exc:
        if in_spark_worker() and (
            isinstance(exc, (SliceflowError, OSError)) or str(exc).startswith("[")
        ):
            os.environ["SPARK_HIDE_TRACEBACK"] = "1"
        raise
