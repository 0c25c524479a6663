"""Streaming changelog ``topn``: each key's retained rows in Spark's state store, per bucket of
keys in bucket layout 2 (a base, a log of the keys each micro-batch touched, a head:
``spark/_runtime/bucket_state.py``, docs/state.md).

::

    rows (packed per bucket as they are: topn.bucket_ids, bucket_rows.pack_by_bucket)
      ─ groupBy(__bucket).transformWithStateInPandas(TopNBucketProcessor)
          per bucket and micro-batch: open the bucket's retained rows (Arrow; this worker's
          cached rows when they are the stored version), take out the rows of the keys the
          micro-batch touches (spark/_runtime/keyed_rows.py), encode them and the micro-batch's
          rows (topn.encode_retained, topn.encode_rows), rank them in bundles (the C++ kernel
          returns take-indices), emit the changes, put the touched keys' kept rows back and
          write them as one log entry (or a new base)

The base is a sealed state value (docs/state.md) whose one payload section is the retained rows
as one Arrow IPC stream (buffers zstd-compressed), under the plan identity of
``topn_plan.identity``; a log entry holds the touched keys' rows the same way
(``KeyedRows``). The rows' layout:

* **2** (written now): the payload columns alone (``TopNPlan.payload_schema``), the stream's
  schema metadata ``sliceflow.topn.layout = 2``; the encoded key, sort key and row identity are
  made again from them when the bucket is loaded (``topn.encode_retained``), which costs less
  than compressing, storing and decompressing them (they were 2/3 of the bytes);
* **1** (the first releases): the payload and those encoded columns (``TopNPlan.state_schema``),
  no metadata; compressed or not. Read into layout 2 by dropping the encoded columns.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T

from sliceflow.spark._runtime.bucket_processor import BucketCall, BucketProcessor, process_buckets
from sliceflow.spark._runtime.keyed_rows import KeyedRows
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.topn import Ranking, encode_rows
from sliceflow.topn.plan import TopNPlan, identity

__all__ = [
    "LAYOUT",
    "LAYOUT_KEY",
    "STATE_NAME",
    "TopNBucketProcessor",
    "dump_retained",
    "load_retained",
    "streaming",
]

#: The value state that holds a bucket's retained rows.
STATE_NAME = "sliceflow_topn_bucket"


#: The retained rows' IPC stream is written with zstd buffer compression (bench_topn: 149 MB of
#: layout-1 bucket values over 20 micro-batches became 41 MB for RocksDB to flush and
#: checkpoint). Any Arrow IPC reader reads it, and the uncompressed streams written before.
_WRITE_OPTIONS = pa.ipc.IpcWriteOptions(compression="zstd")

#: The schema metadata key that holds the stored rows' layout (absent: layout 1).
LAYOUT_KEY = b"sliceflow.topn.layout"
LAYOUT = 2


def dump_retained(retained: pa.Table) -> bytes:
    """Layout 2: the retained rows (``tp.payload_schema``) as one compressed IPC stream.

    Example:
        >>> import pyarrow as pa
        >>> from sliceflow.topn.plan import build_plan
        >>> tp = build_plan(pa.schema([("k", pa.int64()), ("v", pa.int64())]), 2, "k", ["v"])
        >>> stored = dump_retained(pa.table({"k": [1, 1], "v": [3, 4]}))
        >>> load_retained(stored, tp).to_pydict()
        {'k': [1, 1], 'v': [3, 4]}
    """
    schema = retained.schema.with_metadata({LAYOUT_KEY: str(LAYOUT).encode()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema, options=_WRITE_OPTIONS) as writer:
        writer.write_table(retained.replace_schema_metadata(schema.metadata))
    return bytes(sink.getvalue().to_pybytes())


def load_retained(payload: bytes, tp: TopNPlan) -> pa.RecordBatch:
    """The retained rows of a stored value (layout 1 or 2) as ``tp.payload_schema``;
    ValueError for another layout or other columns.

    Example (layout 1: the payload and its encoded columns):
        >>> import pyarrow as pa
        >>> from sliceflow.topn import encode_rows
        >>> from sliceflow.topn.plan import build_plan
        >>> tp = build_plan(pa.schema([("k", pa.int64()), ("v", pa.int64())]), 2, "k", ["v"])
        >>> _, rows = encode_rows(tp, pa.record_batch({"k": [1], "v": [3]}))
        >>> sink = pa.BufferOutputStream()
        >>> with pa.ipc.new_stream(sink, tp.state_schema) as w:
        ...     w.write_batch(rows.select(tp.state_schema.names))
        >>> load_retained(sink.getvalue().to_pybytes(), tp).to_pydict()
        {'k': [1], 'v': [3]}
    """
    table = pa.ipc.open_stream(pa.py_buffer(payload)).read_all()
    metadata = table.schema.metadata or {}
    layout = metadata.get(LAYOUT_KEY, b"1").decode()
    if layout == "1":
        expected = tp.state_schema
    elif layout == str(LAYOUT):
        expected = tp.payload_schema
    else:
        raise ValueError(
            f"topn: the stored rows have layout {layout}, which this release does not read "
            f"(it reads 1 and {LAYOUT}); a newer release wrote this checkpoint"
        )
    if not table.schema.remove_metadata().equals(expected):
        raise ValueError(
            f"topn: the stored rows (layout {layout}) have the columns {table.schema}, "
            f"expected {expected}"
        )
    rows = table.select(tp.payload_schema.names).replace_schema_metadata(None).combine_chunks()
    batches = rows.to_batches()
    return batches[0] if batches else pa.RecordBatch.from_pylist([], tp.payload_schema)


class TopNBucketProcessor(BucketProcessor):
    """One call per (micro-batch, bucket): the bucket's rows through the Top-N kernel, over the
    retained rows of the keys they touch."""

    operator = "topn"

    def __init__(self, tp: TopNPlan, task: TaskContext) -> None:
        super().__init__(identity(tp), tp.input_schema, task)
        self._tp = tp

    def setup(self) -> None:
        tp = self._tp

        def decode(data: bytes) -> pa.RecordBatch:
            return load_retained(data, tp)

        self._state = self.logged(
            STATE_NAME,
            lambda: KeyedRows(tp.payload_schema, tp.by, _encode_retained, decode),
            change_sections=3,
        )

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        tp = self._tp
        ranking = Ranking(tp)
        new = [encode_rows(tp, batch)[1] for batch in call.batches if batch.num_rows]
        if not new:
            return
        image = self._state.open(call.bucket, call.stats)
        taken = image.take(pa.concat_batches(new))
        out, kept = ranking.run_payload(taken if taken.num_rows else None, iter(new))
        yield from out.to_batches()
        image.put(_one_batch(kept, tp.payload_schema))
        self._state.commit(image, call.stats)
        call.stats.update(ranking.stats())
        call.stats["buckets_touched"] = 1


def _encode_retained(rows: pa.RecordBatch) -> bytes:
    return dump_retained(pa.Table.from_batches([rows]))


def _one_batch(table: pa.Table, schema: pa.Schema) -> pa.RecordBatch:
    batches = table.combine_chunks().to_batches()
    return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=schema)


def streaming(
    tp: TopNPlan, packed: DataFrame, output: T.StructType, task: TaskContext
) -> DataFrame:
    """The streaming plan of a changelog ``topn`` after its encoder: ``packed`` holds the rows
    packed per bucket."""
    return process_buckets(packed, TopNBucketProcessor(tp, task), output)
