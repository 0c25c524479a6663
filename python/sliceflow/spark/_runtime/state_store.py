"""What sliceflow's streaming operators need of Spark's state store."""

from __future__ import annotations

from typing import Any

__all__ = ["PROVIDER_CONF", "ROCKSDB_PROVIDER", "buckets_from_conf", "check_state_store"]

#: The state store provider transformWithState(InPandas) needs.
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"


def check_state_store(conf: Any, operator: str) -> None:
    """A clear error unless the session uses the RocksDB state store."""
    provider = conf.get(PROVIDER_CONF, None)
    if provider != ROCKSDB_PROVIDER:
        raise ValueError(
            f"a streaming {operator} keeps its state with transformWithStateInPandas, which "
            f"needs the RocksDB state store: set {PROVIDER_CONF} to {ROCKSDB_PROVIDER} "
            f"(it is {provider!r})"
        )


def buckets_from_conf(conf: Any, name: str) -> int | None:
    """The bucket count the Spark conf ``name`` sets (a positive integer), or None."""
    value = conf.get(name, None)
    if value is None:
        return None
    try:
        buckets = int(value)
    except ValueError:
        buckets = 0
    if buckets <= 0:
        raise ValueError(f"{name} must be a positive integer, not {value!r}")
    return buckets
