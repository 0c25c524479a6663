"""The Spark session settings sliceflow's operators follow, read once when a query is built.

An operator (``window_agg``, ``changelog_agg``, ``from_json``, the ``sliceflow.json`` data
source) reads :class:`SessionSettings` on the driver and carries the values it needs in its UDF
closure: Python workers have no session to read them from.

* ``spark.sql.ansi.enabled`` -- overflow raises (``ansi``) or wraps / gives null;
* ``spark.sql.caseSensitive`` -- how a column name the user wrote finds its column;
* ``spark.sql.execution.arrow.useLargeVarTypes`` -- whether Spark hands STRING columns to
  Python as ``large_string``;
* ``spark.sql.session.timeZone`` -- the zone of TIMESTAMP values;
* ``spark.sliceflow.memory.*`` -- the kernels' memory limits
  (:mod:`sliceflow.spark._runtime.memory_conf`);
* ``spark.sliceflow.state.cacheBytes`` -- the decoded bucket states a Python worker keeps
  between micro-batches (:mod:`sliceflow.spark._runtime.bucket_state`; default 512 MiB);
* ``spark.sliceflow.state.logShare`` -- the share of a bucket's base its log of changes may
  reach before a micro-batch writes a new base instead (default 0.5; 0: always a new base);
* ``spark.sliceflow.fusion.enabled`` -- whether an operator over the ``sliceflow.json``
  source runs its local phase inside the source's read (the fused scan; default true);
* ``spark.sliceflow.fusion.streams.enabled`` -- whether it does so over a stream too (default
  false: a fused stream's progress counts the packed rows as its ``numInputRows``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from sliceflow._runtime.state_log import COMPACT_SHARE
from sliceflow.spark._runtime.bucket_state import CACHE_CONF, DEFAULT_CACHE_BYTES, LOG_SHARE_CONF
from sliceflow.spark._runtime.memory_conf import from_session

__all__ = ["FUSION_CONF", "STREAM_FUSION_CONF", "SessionSettings", "session_time_zone"]


def _flag(conf: Any, name: str, default: str) -> bool:
    return str(conf.get(name, default)).lower() == "true"


def session_time_zone(spark: Any = None) -> str:
    """Spark's session time zone (used for timestamps without an offset); ``UTC`` without an
    active session."""
    spark = spark or SparkSession.getActiveSession()
    if spark is None:
        return "UTC"
    return spark.conf.get("spark.sql.session.timeZone", "UTC") or "UTC"


#: Turns the fused scan off (``"false"``): operators then read the source's rows as any input.
FUSION_CONF = "spark.sliceflow.fusion.enabled"
#: Fuses streams too (``"true"``): their progress then counts packed rows, not input records.
STREAM_FUSION_CONF = "spark.sliceflow.fusion.streams.enabled"


@dataclass(frozen=True)
class SessionSettings:
    """The settings of one session, as :meth:`read` found them."""

    #: ``spark.sql.ansi.enabled`` (default true, as in Spark 4).
    ansi: bool = True
    #: ``spark.sql.caseSensitive`` (default false).
    case_sensitive: bool = False
    #: ``spark.sql.execution.arrow.useLargeVarTypes`` (default false).
    large_var_types: bool = False
    #: ``spark.sql.session.timeZone``.
    time_zone: str = "UTC"
    #: The ``spark.sliceflow.memory.*`` settings that are set, by limit name.
    memory_limits: dict[str, str] = field(default_factory=dict)
    #: ``spark.sliceflow.fusion.enabled`` (default true): an operator over the
    #: ``sliceflow.json`` source runs its local phase inside the source's read.
    fusion: bool = True
    #: ``spark.sliceflow.fusion.streams.enabled`` (default false): the fused scan on streams
    #: too. Off by default because Spark's progress then reports the rows the fused read
    #: hands over (a few packed rows per bucket and task) as the micro-batch's
    #: ``numInputRows`` and input rate, not the records read.
    stream_fusion: bool = False
    #: ``spark.sliceflow.state.cacheBytes`` (default 512 MiB; 0 keeps nothing).
    state_cache_bytes: int = DEFAULT_CACHE_BYTES
    #: ``spark.sliceflow.state.logShare`` (default 0.5).
    state_log_share: float = COMPACT_SHARE

    @classmethod
    def read(cls, spark: Any = None) -> SessionSettings:
        """The settings of ``spark`` (default: the active session; the defaults without one).
        A malformed memory setting fails here, naming its conf."""
        spark = spark or SparkSession.getActiveSession()
        if spark is None:
            return cls()
        conf = spark.conf
        return cls(
            ansi=_flag(conf, "spark.sql.ansi.enabled", "true"),
            case_sensitive=_flag(conf, "spark.sql.caseSensitive", "false"),
            large_var_types=_flag(conf, "spark.sql.execution.arrow.useLargeVarTypes", "false"),
            time_zone=session_time_zone(spark),
            memory_limits=from_session(spark),
            fusion=_flag(conf, FUSION_CONF, "true"),
            stream_fusion=_flag(conf, STREAM_FUSION_CONF, "false"),
            state_cache_bytes=_byte_size(conf, CACHE_CONF, DEFAULT_CACHE_BYTES),
            state_log_share=_share(conf, LOG_SHARE_CONF, COMPACT_SHARE),
        )


def _share(conf: Any, name: str, default: float) -> float:
    """A non-negative number conf, checked, naming it."""
    value = conf.get(name, None)
    if value is None or not str(value).strip():
        return default
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if not share >= 0 or share == float("inf"):
        raise ValueError(f"{name} must be a number >= 0 (0: always a new base), not {value!r}")
    return share


def _byte_size(conf: Any, name: str, default: int) -> int:
    """A byte size conf (an int or Spark's byte strings: ``"512m"``), checked, naming it."""
    value = conf.get(name, None)
    if value is None or not str(value).strip():
        return default
    from sliceflow._core import memory  # loads the core only when a query is built

    return int(memory.parse_byte_size(str(value), name))
