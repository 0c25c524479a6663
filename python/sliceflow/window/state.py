"""One bucket of a streaming window aggregation, one step at a time (no Spark here).

A step takes the bucket's state, the watermark and the rows that arrived since the last step,
and returns the windows that fired and the new state:

1. the rows are folded into (key, slice) partial rows by the local kernel, which leaves each
   row out of the windows that ended by the previous step's watermark (they were emitted then)
   and counts those (row, window) pairs;
2. the sweep merges them with the carried partial rows (both sorted by key bytes and slice)
   and fires the windows that end after the previous watermark and by the new one;
3. the partial rows that a window ending after the new watermark still needs are carried: a
   slice leaves the state once the watermark passes the end of its last window.

``sliceflow.spark.window.streaming`` runs this once per bucket and micro-batch under
transformWithStateInPandas; tests run it directly against the brute-force model. Between steps
the state is kept as the payload sections of sealed state values (docs/state.md): the
watermark (:func:`watermark_sections`) and the carried rows as Arrow IPC streams
(:func:`rows_sections`).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass

import pyarrow as pa

from sliceflow._core import window as window_kernel
from sliceflow._runtime.arrow_c_data import import_struct
from sliceflow._runtime.kernels import add_batch, add_stats, drain
from sliceflow.window.incremental import keep_changed
from sliceflow.window.phases import local_phase
from sliceflow.window.plan import WindowPlan

__all__ = [
    "BucketState",
    "advance",
    "fold",
    "from_sections",
    "read_table",
    "rows_sections",
    "sweep",
    "watermark_from",
    "watermark_sections",
    "write_table",
]


@dataclass
class BucketState:
    """What a bucket keeps between steps."""

    #: The watermark of the last step: windows ending by it have been emitted.
    watermark_ms: int
    #: Partial rows of the slices unfired windows need, sorted by (``__key``, ``__slice``).
    partials: pa.Table
    #: ``emit="incremental"``: per key and open CUMULATE cycle, its latest window.
    emitted: pa.Table | None = None


def write_table(table: pa.Table | None) -> bytes:
    """A table as an Arrow IPC stream (empty bytes for no rows)."""
    if table is None or table.num_rows == 0:
        return b""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _same_but_zone(a: pa.DataType, b: pa.DataType) -> bool:
    """Equal types, or timestamps that differ only in their zone (the session time zone that
    Spark hands to Arrow, which changes no value)."""
    if a == b:
        return True
    return bool(pa.types.is_timestamp(a) and pa.types.is_timestamp(b) and a.unit == b.unit)


def read_table(data: bytes, schema: pa.Schema) -> pa.Table:
    """The inverse of :func:`write_table`, as ``schema`` (its names; a timestamp's zone may
    differ); refuses a table of other types."""
    if not data:
        return schema.empty_table()
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    if table.schema.equals(schema):
        return table
    if len(table.schema) != len(schema) or not all(
        _same_but_zone(f.type, g.type) for f, g in zip(table.schema, schema, strict=True)
    ):
        raise ValueError(
            "window_agg: the stored state has another schema than the aggregation "
            f"(stored {table.schema}, expected {schema})"
        )
    columns = [c.cast(f.type) for c, f in zip(table.columns, schema, strict=True)]
    return pa.Table.from_arrays(columns, schema=schema)


def watermark_sections(watermark_ms: int) -> list[bytes]:
    """The payload of a bucket's watermark value: one section, 8 bytes little-endian."""
    return [watermark_ms.to_bytes(8, "little", signed=True)]


def watermark_from(sections: list[bytes]) -> int:
    """The inverse of :func:`watermark_sections`."""
    (data,) = sections
    if len(data) != 8:
        raise ValueError(f"window_agg state: the watermark is {len(data)} bytes, not 8 (damaged)")
    return int.from_bytes(data, "little", signed=True)


def rows_sections(state: BucketState) -> list[bytes]:
    """The payload of a bucket's rows value: its partial rows and (``emit="incremental"``) its
    emitted windows as Arrow IPC streams (an empty section for none)."""
    return [write_table(state.partials), write_table(state.emitted)]


def from_sections(sections: list[bytes] | None, wp: WindowPlan, watermark_ms: int) -> BucketState:
    """The inverse of :func:`rows_sections` (None: a bucket without rows)."""
    if sections is None:
        return BucketState(watermark_ms, wp.partial_schema.empty_table())
    partials, emitted = sections
    return BucketState(
        watermark_ms,
        read_table(partials, wp.partial_schema),
        read_table(emitted, wp.output_schema) if emitted else None,
    )


def fold(
    wp: WindowPlan,
    batches: Iterable[pa.RecordBatch],
    floor_us: int,
    stats: MutableMapping[str, int],
) -> pa.Table:
    """Step 1: the rows of ``batches`` as partial rows sorted by (``__key``, ``__slice``),
    each row left out of the windows that end by ``floor_us`` (the previous watermark)."""
    partials = list(local_phase(wp, batches, stats, late_floor_us=floor_us))
    return pa.Table.from_batches(partials, schema=wp.partial_schema).sort_by(
        [("__key", "ascending"), ("__slice", "ascending")]
    )


def advance(
    wp: WindowPlan,
    emit: str,
    state: BucketState | None,
    watermark_ms: int,
    batches: Iterable[pa.RecordBatch],
    stats: MutableMapping[str, int] | None = None,
) -> tuple[pa.Table, BucketState]:
    """One step: ``batches`` (with ``wp.input_schema``) arrived, the watermark is
    ``watermark_ms``. Returns the windows to emit (``wp.output_schema``) and the new state.

    ``state`` None: the bucket's first step (nothing is late yet)."""
    counters: MutableMapping[str, int] = stats if stats is not None else {}
    if state is None:
        state = BucketState(watermark_ms, wp.partial_schema.empty_table())
    fresh = fold(wp, batches, state.watermark_ms * 1000, counters)
    return sweep(wp, emit, state, watermark_ms, fresh, counters)


def sweep(
    wp: WindowPlan,
    emit: str,
    state: BucketState,
    watermark_ms: int,
    fresh: pa.Table,
    stats: MutableMapping[str, int] | None = None,
) -> tuple[pa.Table, BucketState]:
    """Steps 2 and 3: the folded partial rows ``fresh`` (:func:`fold` with the state's
    watermark as the floor) merged with the state's, the windows that end after the state's
    watermark and by ``watermark_ms`` fired, the rest carried. A function of its arguments
    alone, so a step replayed from the same state and ``fresh`` gives the same new state."""
    counters: MutableMapping[str, int] = stats if stats is not None else {}
    watermark_ms = max(watermark_ms, state.watermark_ms)
    floor, limit = state.watermark_ms * 1000, watermark_ms * 1000
    kernel = window_kernel.GlobalAggregator(
        wp.plan, wp.partial_schema.__arrow_c_schema__(), wp.output_schema.__arrow_c_schema__()
    )
    kernel.set_bounds(floor, limit)
    for run, table in ((0, state.partials), (1, fresh)):
        for batch in table.to_batches():
            if batch.num_rows:
                add_batch(kernel, batch, run)
    kernel.finish()
    fired = list(drain(kernel.pull, wp.output_schema))
    carried_rows = pa.array(import_struct(pa.int64(), kernel.take_carry()))
    add_stats(counters, kernel.stats())
    partials = pa.concat_tables([state.partials, fresh]).take(carried_rows)

    out = pa.Table.from_batches(fired, schema=wp.output_schema)
    emitted = None
    if emit == "incremental":
        out, emitted = keep_changed(out, state.emitted, wp, limit)
    counters["windows_emitted"] = counters.get("windows_emitted", 0) + out.num_rows
    return out, BucketState(watermark_ms, partials, emitted)
