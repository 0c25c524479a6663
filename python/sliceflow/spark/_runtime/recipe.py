"""The one recipe every sliceflow Spark operator follows, from the user's call to the plan.

Each entry point (``window_agg``, ``changelog_agg``, ``topn``, ``deduplicate``) starts with
:meth:`OperatorCall.begin` and then only says what is its own::

    call = OperatorCall.begin("changelog_agg", df, metrics)  # DataFrame check, session
    by = call.names(by)                                     # the user's names, Spark's rules
    schema = call.input_schema([*by, *args])                 # only these travel to Python
    plan = build_plan(schema, by, ..., ansi=call.settings.ansi)   # the operator's plan.py
    rows = call.select(plan.input_schema)
    if df.isStreaming:
        buckets = call.buckets(buckets, "changelog")         # argument, conf, default
        call.require_state_store()
        ...  # pack the rows per bucket (bucket_rows), process them (bucket_processor)

so the session settings are read once, on the driver, with one set of rules for names, the
bucket count (``spark.sliceflow.<family>.buckets``) and the state store; the plan is checked
against the input schema before any task runs; and :attr:`OperatorCall.task` carries the
memory limits and the metrics accumulator into the tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sliceflow._runtime.agg_plan import DEFAULT_BUCKETS
from sliceflow.spark._runtime.bucket_labels import check_buckets
from sliceflow.spark._runtime.columns import input_schema, quote, resolver
from sliceflow.spark._runtime.session_settings import SessionSettings
from sliceflow.spark._runtime.state_store import buckets_from_conf, check_state_store
from sliceflow.spark._runtime.tasks import TaskContext

__all__ = ["OperatorCall", "buckets_conf"]


def buckets_conf(family: str) -> str:
    """The Spark conf that sets the default bucket count of a family of streaming operators
    (``"window"``, ``"changelog"``, ``"topn"``, ``"dedup"``)."""
    return f"spark.sliceflow.{family}.buckets"


@dataclass(frozen=True)
class OperatorCall:
    """One call of a sliceflow Spark operator on a DataFrame: the session settings it runs
    under, its column resolver and its :class:`TaskContext`."""

    #: The operator's name, as errors and the state header name it (``"window_agg"``, ...).
    operator: str
    df: DataFrame
    settings: SessionSettings
    task: TaskContext
    resolve: Callable[[Any], Any]

    @classmethod
    def begin(cls, operator: str, df: Any, metrics: Any = None) -> OperatorCall:
        """The call of ``operator`` on ``df``: a ``TypeError`` unless ``df`` is a pyspark
        DataFrame; the session's settings read once; ``metrics`` (the operator's metrics
        object, or None) collects the kernels' counters."""
        if not isinstance(df, DataFrame):
            raise TypeError(f"{operator} takes a pyspark DataFrame, not {type(df).__name__}")
        settings = SessionSettings.read(df.sparkSession)
        accumulator = metrics.accumulator if metrics is not None else None
        return cls(
            operator,
            df,
            settings,
            TaskContext(settings.memory_limits, accumulator),
            resolver(df, settings.case_sensitive),
        )

    def names(self, columns: str | Sequence[str] | None) -> list[str]:
        """A column argument (one name, several, or None for none) as the DataFrame's names
        (Spark's case rules; a name that finds no column is kept for the plan to report)."""
        given = [columns] if isinstance(columns, str) else list(columns or [])
        return [self.resolve(name) for name in given]

    def input_schema(self, referenced: Sequence[Any], df: DataFrame | None = None) -> pa.Schema:
        """The Arrow schema in which Spark hands the ``referenced`` columns of ``df`` (default:
        the call's DataFrame) to Python, each once."""
        settings = self.settings
        frame = self.df if df is None else df
        return input_schema(
            frame, referenced, settings.time_zone, settings.large_var_types, self.operator
        )

    def select(self, schema: pa.Schema, df: DataFrame | None = None) -> DataFrame:
        """``df`` (default: the call's DataFrame) reduced to ``schema``'s columns, in order."""
        frame = self.df if df is None else df
        return frame.select(*[F.col(quote(name)) for name in schema.names])

    def buckets(self, given: int | None, family: str, default: int = DEFAULT_BUCKETS) -> int:
        """A streaming operator's bucket count: ``given``, else the conf
        :func:`buckets_conf` ``(family)``, else ``default``; checked (1 .. MAX_BUCKETS)."""
        if given is None:
            conf = buckets_from_conf(self.df.sparkSession.conf, buckets_conf(family))
            given = default if conf is None else conf
        return check_buckets(given)

    def require_state_store(self) -> None:
        """A clear error unless the session keeps state in RocksDB, which a streaming
        operator's ``transformWithStateInPandas`` needs."""
        check_state_store(self.df.sparkSession.conf, self.operator)
