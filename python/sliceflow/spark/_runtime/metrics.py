"""The kernels' counters of Spark queries, summed in a Spark accumulator.

:class:`WindowMetrics` (``window_agg``) and :class:`ChangelogMetrics` (``changelog_agg``): the
tasks add their kernels' ``stats()`` at the end of each partition (streaming: of each bucket
run); the driver reads :attr:`~WindowMetrics.value`. Spark Connect sessions have no
accumulators: making one there raises ``NotImplementedError`` with what to do instead.
"""

from __future__ import annotations

from typing import Any

from pyspark import AccumulatorParam
from pyspark.sql import SparkSession

from sliceflow._runtime.kernels import add_stats

__all__ = ["ChangelogMetrics", "TopNMetrics", "WindowMetrics", "is_connect_session"]


class _CounterParam(AccumulatorParam[dict[str, int]]):
    """Accumulates dicts of counter name → int by summing per name."""

    def zero(self, value: dict[str, int]) -> dict[str, int]:
        return {}

    def addInPlace(self, value1: dict[str, int], value2: dict[str, int]) -> dict[str, int]:
        add_stats(value1, value2)
        return value1


def is_connect_session(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect client session (``SparkSession.builder.remote``).

    Tells by the class's module, so that a classic-only installation (no grpcio) never imports
    pyspark's Connect client.
    """
    return type(spark).__module__.startswith("pyspark.sql.connect.")


def _connect_metrics_message(name: str) -> str:
    return (
        f"{name} adds the kernel's counters to a Spark accumulator, and a Spark Connect session "
        "has none (no SparkContext on the client): the operators run on Connect without "
        "metrics=. The counters are read on a classic SparkSession (SparkSession.builder"
        ".master(...), e.g. the same query on a sample in local mode); on Connect, Spark's own "
        "counts are in query.lastProgress (numInputRows, stateOperators) of a streaming query "
        "and in DataFrame.observe of a batch one"
    )


class WindowMetrics:
    """The kernel's counters, summed over every task of the ``window_agg`` jobs it is given to.

    A Spark accumulator: the local and global phases add their ``stats()`` at the end of each
    partition (``rows_in``, ``rows_null_time``, ``partials_out``, ``bundle_flushes``,
    ``partials_in``, ``slices``, ``windows_fired``, ``slices_merged``, ``slices_retracted``,
    ``partials_combined``). Read :attr:`value` on the driver after an action. A retried task
    adds its counters again, as with any Spark accumulator. Needs a classic SparkSession:
    making one with a Spark Connect session raises ``NotImplementedError`` (Connect clients
    have no accumulators; README, "Spark Connect").

    Example:
        >>> metrics = WindowMetrics(spark)  # doctest: +SKIP
        >>> window_agg(df, W.tumble("ts", "1 minute"), ["k"], [W.count()],
        ...            metrics=metrics).collect()  # doctest: +SKIP
        >>> metrics.value["rows_in"]  # doctest: +SKIP
        1000
    """

    def __init__(self, spark: SparkSession) -> None:
        if is_connect_session(spark):
            raise NotImplementedError(_connect_metrics_message(type(self).__name__))
        self._accumulator = spark.sparkContext.accumulator({}, _CounterParam())

    @property
    def accumulator(self) -> Any:
        """The Spark accumulator the operators' tasks add their counters to."""
        return self._accumulator

    @property
    def value(self) -> dict[str, int]:
        """The counters summed so far (a copy)."""
        return dict(self._accumulator.value)

    def __repr__(self) -> str:
        return f"WindowMetrics({self.value})"


#: The counters of a streaming operator's logged state (spark/_runtime/bucket_state.py), per
#: bucket call: ``state_bytes_read`` and ``state_bytes_written`` (sealed values read from and
#: written to Spark's state store: heads, log entries, bases), ``state_cache_hits`` (the
#: worker held the bucket's version), ``state_catch_ups`` (it held an earlier one and read
#: ``state_log_entries_read`` entries), ``state_cold_reads`` (base and log read),
#: ``state_log_appends``, ``state_compactions`` (a new base written) and ``state_clears``.
STATE_COUNTERS = (
    "state_bytes_read",
    "state_bytes_written",
    "state_cache_hits",
    "state_catch_ups",
    "state_log_entries_read",
    "state_cold_reads",
    "state_log_appends",
    "state_compactions",
    "state_clears",
)


class ChangelogMetrics(WindowMetrics):
    """The changelog kernel's counters, summed over every task of the queries it is given to.

    Encoder: ``rows_in``, ``retractions_in``, ``deltas_out``, ``fold_flushes``. Aggregator:
    ``deltas_in``, ``retractions_ignored``, ``state_reads``, ``state_writes`` (per key, as
    Flink counts them: once per bundle with mini-batch, once per row without), ``inserts``,
    ``update_befores``, ``update_afters``, ``deletes``, ``bundles``, ``keys_loaded``,
    ``state_bytes_loaded``, ``state_bytes_dumped`` (key states the kernel decoded and
    encoded), ``buckets_touched``. Streaming, the bucket state's layout (docs/state.md) adds
    :data:`STATE_COUNTERS`. In streaming the counters grow with every micro-batch; read
    :attr:`value` on the driver.

    Example:
        >>> metrics = ChangelogMetrics(spark)  # doctest: +SKIP
        >>> changelog_agg(df, ["k"], [W.count()], metrics=metrics).collect()  # doctest: +SKIP
        >>> metrics.value["state_writes"]  # doctest: +SKIP
        1000
    """

    def __repr__(self) -> str:
        return f"ChangelogMetrics({self.value})"


class TopNMetrics(WindowMetrics):
    """The Top-N kernel's counters, summed over every task of the ``topn`` queries it is given
    to: ``rows_in``, ``rows_out`` (of which ``inserts``, ``update_befores``,
    ``update_afters``, ``deletes``), ``rows_kept`` (retained rows written back), ``keys``,
    ``state_reads`` and ``state_writes`` (per key, once per bundle with mini-batch, once per
    row without), ``retractions_ignored``, ``buckets_touched``, ``state_bytes_loaded``,
    ``state_bytes_dumped``. Read :attr:`value` on the driver.

    Example:
        >>> metrics = TopNMetrics(spark)  # doctest: +SKIP
        >>> topn(df, 3, by=["k"], order_by=["v"], metrics=metrics).collect()  # doctest: +SKIP
        >>> metrics.value["rows_in"]  # doctest: +SKIP
        1000
    """

    def __repr__(self) -> str:
        return f"TopNMetrics({self.value})"
