"""The one recipe every sliceflow Spark operator follows, from the user's call to the plan.

Each entry point (``window_agg``, ``changelog_agg``, ``topn``, ``deduplicate``) starts with
:meth:`OperatorCall.begin` and then only says what is its own::

    call = OperatorCall.begin("changelog_agg", df, metrics)  # DataFrame check, session
    by = call.names(by)                  # the user's columns as groupBy takes them: names
    aggs = call.aggregates(aggs)         # (nested fields too) or Columns; see below
    schema = call.input_schema([*by, *args])                 # only these travel to Python
    plan = build_plan(schema, by, ..., ansi=call.settings.ansi)   # the operator's plan.py
    rows = call.select(plan.input_schema)
    if df.isStreaming:
        buckets = call.buckets(buckets, "changelog")         # argument, conf, default
        call.require_state_store()
        ...  # pack the rows per bucket (bucket_rows), process them (bucket_processor)

A column argument is resolved once, here, as ``DataFrame.groupBy`` resolves it
(:func:`~sliceflow.spark._runtime.columns.resolve_columns`): a name of a column (Spark's case
rules), a nested field (``"repo.name"``) or a pyspark Column (``F.col("repo")``, ``df.repo``,
``F.col("a").alias("r")``, ``F.col("a") + 1``, classic or Connect). An expression that is not a
plain column becomes a column of :attr:`OperatorCall.frame` under the name Spark's ``groupBy``
gives it (``repo.name`` → ``name``), which the operator then reads like any other; an operator
whose output is the input's rows (``topn``, ``deduplicate``) leaves those columns out of its
output with :meth:`OperatorCall.without_added`.

So the session settings are read once, on the driver, with one set of rules for names, the
bucket count (``spark.sliceflow.<family>.buckets``) and the state store; the plan is checked
against the input schema before any task runs; and :attr:`OperatorCall.task` carries the
memory limits and the metrics accumulator into the tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sliceflow._runtime.agg_plan import DEFAULT_BUCKETS
from sliceflow.aggregates import AggSpec, agg_name
from sliceflow.spark._runtime.bucket_labels import check_buckets
from sliceflow.spark._runtime.columns import (
    input_schema,
    quote,
    resolve_columns,
    resolver,
    shown,
    with_columns,
)
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
    #: The expression columns the call's column arguments added (name → expression), in order.
    added: dict[str, Column] = field(default_factory=dict)

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
            TaskContext(
                settings.memory_limits,
                accumulator,
                settings.state_cache_bytes,
                settings.state_log_share,
            ),
            resolver(df, settings.case_sensitive),
        )

    def names(self, columns: Any) -> list[Any]:
        """A column argument (one column, several, or None for none) as names of columns of
        :attr:`frame` (module doc: names, nested fields and Columns, as ``groupBy`` takes
        them; a name that finds no column is kept for the plan to report)."""
        given = [columns] if isinstance(columns, (str, Column)) else list(columns or [])
        return self.columns(given)

    def column(self, column: Any) -> Any:
        """One column argument (a name or a Column) as the name of a column of :attr:`frame`."""
        return self.columns([column])[0]

    def columns(self, refs: Sequence[Any]) -> list[Any]:
        """Column arguments as names of columns of :attr:`frame`, resolved together (Spark
        analyses the expressions among them once)."""
        resolved = resolve_columns(
            self.df, refs, self.settings.case_sensitive, self.operator, self.added
        )
        self.added.update(resolved.added)
        return resolved.names

    def aggregates(self, aggs: Sequence[AggSpec]) -> list[AggSpec]:
        """The aggregates with their argument columns resolved (:meth:`columns`); one given a
        Column and no alias is named as Spark names it (``sum(F.col("a") + 1)``:
        ``sum((a + 1))``)."""
        refs = [a.col for a in aggs if a.col is not None]
        resolved = resolve_columns(
            self.df, refs, self.settings.case_sensitive, self.operator, self.added, in_output=False
        )
        self.added.update(resolved.added)
        out: list[AggSpec] = []
        k = 0
        for agg in aggs:
            if agg.col is None:
                out.append(agg)
                continue
            name = agg.name
            if not isinstance(agg.col, str) and agg.name == agg_name(agg.fn, shown(agg.col)):
                name = agg_name(agg.fn, resolved.texts.get(k, shown(agg.col)))
            out.append(AggSpec(agg.fn, resolved.names[k], name))
            k += 1
        return out

    @property
    def frame(self) -> DataFrame:
        """The call's DataFrame with the expression columns its column arguments added."""
        return with_columns(self.df, self.added)

    def with_added(self, df: DataFrame) -> DataFrame:
        """``df`` (a DataFrame of the call's columns, e.g. rebuilt) with the added columns."""
        return with_columns(df, self.added)

    def without_added(self, df: DataFrame) -> DataFrame:
        """An output of the input's columns without the columns the arguments added."""
        if not self.added:
            return df
        return df.select(*[F.col(quote(c)) for c in df.columns if c not in self.added])

    def input_schema(self, referenced: Sequence[Any], df: DataFrame | None = None) -> pa.Schema:
        """The Arrow schema in which Spark hands the ``referenced`` columns of ``df`` (default:
        :attr:`frame`) to Python, each once."""
        settings = self.settings
        frame = self.frame if df is None else df
        return input_schema(
            frame, referenced, settings.time_zone, settings.large_var_types, self.operator
        )

    def select(self, schema: pa.Schema, df: DataFrame | None = None) -> DataFrame:
        """``df`` (default: :attr:`frame`) reduced to ``schema``'s columns, in order."""
        frame = self.frame if df is None else df
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
