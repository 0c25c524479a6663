"""What sliceflow's streaming operators need of Spark's state store."""

from __future__ import annotations

from typing import Any

__all__ = ["PROVIDER_CONF", "ROCKSDB_PROVIDER", "check_state_store"]

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
