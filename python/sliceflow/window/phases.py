"""The two phases of a window aggregation on Arrow batches, each one C++ kernel object.

* :func:`local_phase` -- input batches → partial rows, one per (key, slice) and bundle: the
  work before the shuffle (``window_agg``'s first ``mapInArrow``; a streaming bucket's fold of
  its new rows, with a late floor);
* :func:`global_phase` -- partial rows sorted by (``__key``, ``__slice``) → the windows: the
  work after the shuffle.

:func:`sliceflow.window.aggregate` runs both in this process; ``sliceflow.spark.window_agg``
runs them in Spark tasks. Python touches each batch once; the rows are the kernel's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping

import pyarrow as pa

from sliceflow._core import window as window_kernel
from sliceflow._runtime.kernels import (
    MAX_OUTPUT_ROWS,
    add_batch,
    add_stats,
    conform,
    drain,
    import_batch,
)
from sliceflow.window.plan import WindowPlan

__all__ = ["global_phase", "local_phase"]

#: Output rows per batch the global phase hands back.


def local_phase(
    wp: WindowPlan,
    batches: Iterable[pa.RecordBatch],
    stats: MutableMapping[str, int] | None = None,
    *,
    late_floor_us: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Input batches (``wp.input_schema``) → partial batches (the local phase, one partition).

    ``late_floor_us`` (streaming): a row is left out of the windows that end by it (they were
    emitted already), and counted as late."""
    agg = window_kernel.LocalAggregator(
        wp.plan, wp.local_schema.__arrow_c_schema__(), wp.partial_schema.__arrow_c_schema__()
    )
    if late_floor_us is not None:
        agg.set_late_floor(late_floor_us)
    columns = (wp.local_schema.names, wp.input_columns)
    for batch in batches:
        local = wp.local_batch(batch)
        if local.num_rows == 0:
            continue
        if add_batch(agg, local, columns=columns):
            yield from drain(agg.take, wp.partial_schema)
    capsule = agg.finish()
    if capsule is not None:
        yield import_batch(pa.struct(list(wp.partial_schema)), capsule)
    if stats is not None:
        add_stats(stats, agg.stats())


def global_phase(
    wp: WindowPlan,
    batches: Iterable[pa.RecordBatch],
    stats: MutableMapping[str, int] | None = None,
    max_output_rows: int = MAX_OUTPUT_ROWS,
) -> Iterator[pa.RecordBatch]:
    """Partial batches sorted by (``__key``, ``__slice``) → output batches (one partition)."""
    agg = window_kernel.GlobalAggregator(
        wp.plan,
        wp.partial_schema.__arrow_c_schema__(),
        wp.output_schema.__arrow_c_schema__(),
        max_output_rows,
    )
    for batch in batches:
        if batch.num_rows == 0:
            continue
        add_batch(agg, conform(batch, wp.partial_schema))
        yield from drain(agg.pull, wp.output_schema)
    agg.finish()
    yield from drain(agg.pull, wp.output_schema)
    if stats is not None:
        add_stats(stats, agg.stats())
