"""The rows of each bucket, shipped to its state: what a streaming operator's packing step sends
to its :class:`~sliceflow.spark._runtime.bucket_processor.BucketProcessor`.

A streaming operator hashes its grouping keys into buckets (``__bucket``); per input batch, its
packing step (``mapInArrow``) turns the rows into one row per bucket that holds the bucket's
rows as one Arrow IPC message (:func:`pack_by_bucket`), under the bucket's label
(``bucket_labels``) and the index of the input they came from (``__input``: 0 for a
one-input operator; a two-input operator, e.g. a join, packs each side with its own index and
unions the two packed streams before the stateful step). The processor gets them back as
``(input, batch)`` pairs with :func:`unpack`, each read with its input's schema, and hands its
output batches back to Spark with :func:`to_pandas`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from sliceflow._runtime.kernels import conform
from sliceflow._runtime.spark_hash import spark_hash

__all__ = [
    "PACKED_SCHEMA",
    "hash_buckets",
    "pack_by_bucket",
    "pack_keyed_rows",
    "pack_rows",
    "to_pandas",
    "unpack",
]


def to_pandas(batch: pa.RecordBatch) -> pd.DataFrame:
    """A kernel's output batch as a stateful processor yields it: Arrow-backed columns, so
    that integers with nulls stay integers and decimals stay exact."""
    return batch.to_pandas(types_mapper=pd.ArrowDtype)


#: What every streaming operator's stateful step receives: per bucket and input, its rows of one
#: input batch as one Arrow IPC message. transformWithStateInPandas hands its input over as pandas,
#: which cannot tell NaN from null in a float column nor keep a 64-bit integer column with
#: nulls exact; a bytes column goes through unchanged (and is far cheaper to convert than row
#: values).
PACKED_SCHEMA = pa.schema(
    [
        pa.field("__bucket", pa.int32(), nullable=False),
        pa.field("__input", pa.int8(), nullable=False),
        pa.field("__rows", pa.binary(), nullable=False),
    ]
)


def _payloads_by_bucket(
    buckets: np.ndarray, rows: pa.RecordBatch
) -> tuple[np.ndarray, list[bytes]]:
    """The distinct ``buckets`` (ascending) and, for each, its ``rows`` (in their order) as an
    Arrow IPC message."""
    order = np.argsort(buckets, kind="stable")  # a bucket's rows keep their arrival order
    ordered = rows.take(pa.array(order))
    sorted_buckets = buckets[order]
    starts = np.flatnonzero(np.r_[True, sorted_buckets[1:] != sorted_buckets[:-1]])
    ends = np.append(starts[1:], len(sorted_buckets))
    payloads = [
        ordered.slice(int(a), int(b - a)).serialize().to_pybytes()
        for a, b in zip(starts, ends, strict=True)
    ]
    return sorted_buckets[starts], payloads


def _packed(labels: np.ndarray, source: int, payloads: list[bytes]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array(labels, pa.int32()),
            pa.array(np.full(len(payloads), source, np.int8)),
            pa.array(payloads, pa.binary()),
        ],
        schema=PACKED_SCHEMA,
    )


def pack_by_bucket(
    buckets: np.ndarray, rows: pa.RecordBatch, labels: np.ndarray, source: int = 0
) -> pa.RecordBatch:
    """One row per bucket of ``rows`` (row i is in bucket ``buckets[i]``), as PACKED_SCHEMA: the
    bucket's label (``labels[bucket]``, see ``bucket_labels``), the input ``source`` the rows
    came from and its rows (in their order) as an IPC message. Every streaming operator ships
    its rows to the state this way."""
    ids, payloads = _payloads_by_bucket(buckets, rows)
    return _packed(labels[ids], source, payloads)


def pack_rows(
    batches: Iterator[pa.RecordBatch],
    labels: np.ndarray,
    schema: pa.Schema,
    *,
    wake_all: bool,
    source: int = 0,
) -> Iterator[pa.RecordBatch]:
    """A packing step: input batches (``__bucket``, then ``schema``'s columns) → for each, one
    row per bucket with its label (``labels[bucket]``, see ``bucket_labels``) and its rows (as
    ``schema``) as an IPC message (:func:`pack_by_bucket`), tagged with the input ``source``.
    With ``wake_all``, at the end an empty message for every bucket, so that every bucket runs
    in every micro-batch with data."""
    for batch in batches:
        if batch.num_rows == 0:
            continue
        rows = conform(batch.drop_columns([batch.schema.names[0]]), schema)
        buckets_of_rows = batch.column(0).to_numpy(zero_copy_only=False)
        yield pack_by_bucket(buckets_of_rows, rows, labels, source)
    if wake_all:
        yield _packed(labels, source, [b""] * len(labels))


def hash_buckets(batch: pa.RecordBatch, keys: Sequence[str], buckets: int) -> np.ndarray:
    """The bucket of each row of ``batch``: ``pmod(hash(keys...), buckets)`` as a Spark plan
    computes it (Spark's Murmur3 hash, :mod:`sliceflow._runtime.spark_hash`); 0 without keys."""
    if not keys:
        return np.zeros(batch.num_rows, dtype=np.int64)
    return np.mod(spark_hash(batch.select(list(keys))).astype(np.int64), buckets)


def pack_keyed_rows(
    batches: Iterator[pa.RecordBatch],
    keys: Sequence[str],
    labels: np.ndarray,
    schema: pa.Schema,
    *,
    wake_all: bool,
    source: int = 0,
) -> Iterator[pa.RecordBatch]:
    """:func:`pack_rows` of batches in ``schema`` whose bucket is the hash of their ``keys``
    columns (:func:`hash_buckets`, over ``len(labels)`` buckets), tagged with the input
    ``source``: the packing step a task runs where the rows are, in a ``mapInArrow`` or in a
    fused scan's read."""

    def keyed() -> Iterator[pa.RecordBatch]:
        for batch in batches:
            # The hash of the values as Spark typed them (conform may widen a type).
            bucket = pa.array(hash_buckets(batch, keys, len(labels)), pa.int64())
            yield batch.add_column(0, "__bucket", bucket)

    return pack_rows(keyed(), labels, schema, wake_all=wake_all, source=source)


def unpack(
    frame: pd.DataFrame, schemas: Sequence[pa.Schema], operator: str
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """The batches packed in the rows of ``frame``, in their order, each as ``(input, batch)``
    with the batch read as ``schemas[input]``; empty payloads (a bucket's wake-up call) give
    none."""
    # Spark hands the columns over by position (named _0, _1, ...): bucket, input, payload.
    if frame.shape[1] != len(PACKED_SCHEMA):
        raise ValueError(
            f"{operator}: expected {len(PACKED_SCHEMA)} columns, Spark passed {frame.shape[1]}"
        )
    for source, payload in zip(frame.iloc[:, 1], frame.iloc[:, 2], strict=True):
        if len(payload):
            if not 0 <= source < len(schemas):
                raise ValueError(
                    f"{operator}: rows of input {source}, but the operator has {len(schemas)}"
                )
            yield int(source), pa.ipc.read_record_batch(pa.py_buffer(payload), schemas[source])
