"""What a Spark task that runs a sliceflow kernel takes from the driver, and does with it.

An operator builds one :class:`TaskContext` on the driver (the session's memory limits and the
metrics accumulator, if the caller passed ``metrics=``) and carries it in its UDF closures and
stateful processors. In the worker, :meth:`TaskContext.start` applies the memory limits before
the first kernel call and :meth:`TaskContext.report` adds the kernels' counters to the
accumulator once per partition (or per bucket run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from sliceflow._runtime.state_log import COMPACT_SHARE
from sliceflow.spark._runtime.bucket_state import DEFAULT_CACHE_BYTES
from sliceflow.spark._runtime.memory_conf import apply_in_worker

__all__ = ["TaskContext"]


@dataclass(frozen=True)
class TaskContext:
    """The memory limits (``spark.sliceflow.memory.*`` settings, by limit name) and the metrics
    accumulator (None: no counters are collected) of one query."""

    memory_limits: dict[str, str] = field(default_factory=dict)
    accumulator: Any = None
    #: The bytes of decoded bucket states a worker keeps between micro-batches
    #: (``spark.sliceflow.state.cacheBytes``).
    state_cache_bytes: int = DEFAULT_CACHE_BYTES
    #: The share of a bucket's base its log may reach (``spark.sliceflow.state.logShare``).
    state_log_share: float = COMPACT_SHARE

    def start(self) -> None:
        """In the worker, before the first kernel call: applies the memory limits."""
        apply_in_worker(self.memory_limits)

    def report(self, stats: Mapping[str, int] | None) -> None:
        """Adds the counters ``stats`` to the accumulator (nothing without one, or no counters)."""
        if self.accumulator is not None and stats:
            self.accumulator.add(dict(stats))

    def run(
        self, phase: Callable[[dict[str, int] | None], Iterator[pa.RecordBatch]]
    ) -> Iterator[pa.RecordBatch]:
        """The batches of ``phase(stats)`` (a kernel phase over one partition): the limits
        applied first, its counters (``stats``: a dict, or None without an accumulator)
        reported at the end."""
        self.start()
        stats: dict[str, int] | None = {} if self.accumulator is not None else None
        yield from phase(stats)
        self.report(stats)
