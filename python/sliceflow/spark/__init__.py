"""The PySpark wiring of sliceflow.

* :func:`from_json` -- a drop-in for ``pyspark.sql.functions.from_json`` that decodes with
  simdjson in the Python workers, batch and streaming alike.
* the ``sliceflow.json`` data source for NDJSON files (decoded where they are read, never sent
  JVM -> Python as text): pyspark finds it by itself (the ``pyspark_sliceflow`` module);
  :func:`register` registers it with the session's settings (see
  :class:`sliceflow.spark.json.source.JsonDataSource` for which settings need it).
* :func:`window_agg` -- Flink's sliced windows (TUMBLE / HOP / CUMULATE from
  :mod:`sliceflow.window`) on a DataFrame: a local phase before the shuffle, a global phase after
  it, both in the C++ kernel; :class:`WindowMetrics` collects the kernel's counters.
* :func:`changelog_agg` -- Flink SQL's group aggregation over a ``+I/-U/+U/-D`` changelog with
  mini-batch bundles, on batch and streaming DataFrames (state in Spark's state store, one
  entry per bucket of keys); :class:`ChangelogMetrics` collects its counters.
* :func:`deduplicate` -- one row per key (``ROW_NUMBER() = 1``), a changelog on streams;
  :func:`from_changelog` -- Debezium envelopes or op columns as ``+I/-U/+U/-D`` rows.
* :func:`join` -- Flink SQL's regular join of two changelogs (inner, left, right, full): on
  batch DataFrames the join of what they materialize to, on streams a changelog kept up to date
  with mini-batch bundles (both sides' live rows in the state store); :class:`JoinMetrics`.
* :func:`topn` -- Flink SQL's Top-N (``row_number() <= n`` per key): batch, window Top-N on a
  ``window_agg`` stream, and a changelog on any other stream; :class:`TopNMetrics`.
"""

from sliceflow.spark._runtime.metrics import ChangelogMetrics, TopNMetrics, WindowMetrics
from sliceflow.spark.cdc.from_changelog import from_changelog
from sliceflow.spark.changelog.agg import changelog_agg
from sliceflow.spark.dedup.query import DedupMetrics, deduplicate
from sliceflow.spark.join.query import JoinMetrics, join
from sliceflow.spark.json.from_json import from_json
from sliceflow.spark.json.source import JsonDataSource, register
from sliceflow.spark.topn.query import topn
from sliceflow.spark.window.agg import window_agg

__all__ = [
    "ChangelogMetrics",
    "JsonDataSource",
    "WindowMetrics",
    "from_json",
    "register",
    "changelog_agg",
    "window_agg",
    "DedupMetrics",
    "deduplicate",
    "from_changelog",
    "JoinMetrics",
    "join",
    "TopNMetrics",
    "topn",
]
