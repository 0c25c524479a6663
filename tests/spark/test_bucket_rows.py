"""Bucket rows and the bucket processor with more than one input: each packed message carries
the index of the input its rows came from, and the processor reads each with that input's
schema, in arrival order -- the room a two-input operator (a join) is built in."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sliceflow.spark._runtime.bucket_labels import bucket_labels
from sliceflow.spark._runtime.bucket_rows import PACKED_SCHEMA, pack_by_bucket, pack_rows, unpack

LEFT = pa.schema([("k", pa.int64()), ("v", pa.string())])
RIGHT = pa.schema([("k", pa.int64()), ("w", pa.float64()), ("flag", pa.bool_())])


def _frame(*batches: pa.RecordBatch) -> pd.DataFrame:
    """The packed rows as Spark hands them to the processor: pandas, columns by position."""
    table = pa.Table.from_batches(batches, PACKED_SCHEMA)
    frame = table.to_pandas()
    frame.columns = [f"_{i}" for i in range(frame.shape[1])]
    return frame


def test_two_inputs_unpack_with_their_own_schemas_in_arrival_order() -> None:
    labels = bucket_labels(2)
    left = pa.record_batch({"k": [1, 2, 3], "v": ["a", "b", None]}, schema=LEFT)
    right = pa.record_batch(
        {"k": [3, 4], "w": [0.5, float("nan")], "flag": [True, None]}, schema=RIGHT
    )
    packed_left = pack_by_bucket(np.array([0, 1, 0]), left, labels, source=0)
    packed_right = pack_by_bucket(np.array([1, 1]), right, labels, source=1)
    assert packed_left.column("__input").to_pylist() == [0, 0]
    assert packed_right.column("__input").to_pylist() == [1]

    got = list(unpack(_frame(packed_left, packed_right), [LEFT, RIGHT], "join"))
    assert [source for source, _ in got] == [0, 0, 1]
    assert got[0][1].to_pylist() == [{"k": 1, "v": "a"}, {"k": 3, "v": None}]
    assert got[1][1].to_pylist() == [{"k": 2, "v": "b"}]
    assert got[2][1].schema == RIGHT
    assert got[2][1].column("k").to_pylist() == [3, 4]
    assert np.isnan(got[2][1].column("w").to_pylist()[1])  # NaN stays NaN, not null


def test_an_input_the_operator_does_not_have_is_refused_by_name() -> None:
    packed = pack_by_bucket(
        np.array([0]), pa.record_batch({"k": [1], "v": ["x"]}, schema=LEFT), bucket_labels(1), 2
    )
    with pytest.raises(ValueError, match=r"join: rows of input 2, but the operator has 2"):
        list(unpack(_frame(packed), [LEFT, RIGHT], "join"))


def test_wake_up_messages_carry_the_input_and_unpack_to_nothing() -> None:
    labels = bucket_labels(3)
    with_bucket = pa.record_batch({"__bucket": pa.array([2], pa.int32()), "k": [7], "v": ["z"]})
    packed = list(pack_rows(iter([with_bucket]), labels, LEFT, wake_all=True, source=1))
    assert [b.column("__input").to_pylist() for b in packed] == [[1], [1, 1, 1]]
    got = list(unpack(_frame(*packed), [LEFT, LEFT], "op"))
    assert [(source, batch.to_pylist()) for source, batch in got] == [(1, [{"k": 7, "v": "z"}])]


@pytest.mark.spark
def test_a_two_input_processor_sees_both_sides_of_a_bucket(spark, tmp_path) -> None:
    """A stream of two packed inputs (a union, as a join would build it) through one
    BucketProcessor: each bucket call sees both sides' rows, each as its own schema."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sliceflow._runtime.spark_types import spark_struct
    from sliceflow.spark._runtime.bucket_processor import (
        BucketCall,
        BucketProcessor,
        process_buckets,
    )
    from sliceflow.spark._runtime.tasks import TaskContext

    output = pa.schema([("input", pa.int32()), ("rows", pa.int64()), ("cols", pa.int32())])

    class Counting(BucketProcessor):
        operator = "two_input_test"
        state_names = ()

        def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
            for source, batch in call.inputs:
                yield pa.record_batch(
                    [
                        pa.array([source], pa.int32()),
                        pa.array([batch.num_rows], pa.int64()),
                        pa.array([batch.num_columns], pa.int32()),
                    ],
                    schema=output,
                )

    labels = bucket_labels(2)

    def packer(schema: pa.Schema, source: int):  # type: ignore[no-untyped-def]
        """The packing step of one input, tagged ``source``."""

        def pack(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return pack_rows(batches, labels, schema, wake_all=False, source=source)

        return pack

    folders = {}
    for name, rows in (("left", [(1, "a"), (2, "b"), (3, "c")]), ("right", [(3, 1.5, True)])):
        folder = tmp_path / name
        folder.mkdir()
        schema = LEFT if name == "left" else RIGHT
        table = pa.Table.from_pylist(
            [dict(zip(schema.names, r, strict=True)) for r in rows], schema
        )
        pq.write_table(table, str(folder / "part-0.parquet"))
        folders[name] = str(folder)
    left = spark.readStream.schema("k BIGINT, v STRING").parquet(folders["left"])
    right = spark.readStream.schema("k BIGINT, w DOUBLE, flag BOOLEAN").parquet(folders["right"])
    packed = [
        side.select((F.col("k") % 2).cast("int").alias("__bucket"), *side.columns).mapInArrow(
            packer(schema, source), spark_struct(PACKED_SCHEMA)
        )
        for source, (side, schema) in enumerate(((left, LEFT), (right, RIGHT)))
    ]
    processor = Counting([("test", "two inputs")], [LEFT, RIGHT], TaskContext())
    out = process_buckets(
        packed, processor, T.StructType.fromDDL("input INT, rows BIGINT, cols INT")
    )
    query = (
        out.writeStream.format("memory")
        .queryName("two_inputs")
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .outputMode("append")
        .start()
    )
    try:
        query.processAllAvailable()
        got = sorted(tuple(r) for r in spark.sql("SELECT * FROM two_inputs").collect())
    finally:
        query.stop()
    # left: keys 1, 3 in bucket 1, key 2 in bucket 0; right: key 3 in bucket 1.
    assert sorted((i, c) for i, _, c in got) == [(0, 2), (0, 2), (1, 3)]
    assert sum(n for i, n, _ in got if i == 0) == 3 and sum(n for i, n, _ in got if i == 1) == 1
