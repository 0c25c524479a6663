"""The sliceflow.json source lists the files once when it infers: the read splits the files
inference listed, as spark.read.json's file index lists when the DataFrame is made."""

from __future__ import annotations

import pytest

import sliceflow.spark as sfs

pytestmark = pytest.mark.spark


def test_files_added_after_load_are_read_as_spark_reads_them(spark, tmp_path):
    sfs.register(spark)
    (tmp_path / "a.json").write_text('{"a": 1}\n{"a": 2}\n')
    ours = spark.read.format("sliceflow.json").load(str(tmp_path))
    theirs = spark.read.json(str(tmp_path))
    (tmp_path / "b.json").write_text('{"a": 3}\n')
    assert sorted(r.a for r in ours.collect()) == sorted(r.a for r in theirs.collect()) == [1, 2]
    # A new DataFrame lists again.
    again = spark.read.format("sliceflow.json").load(str(tmp_path))
    assert sorted(r.a for r in again.collect()) == [1, 2, 3]


def test_read_after_inference_splits_the_listed_files(spark, tmp_path):
    sfs.register(spark)
    for day in ("2026-01-01", "2026-01-02"):
        folder = tmp_path / f"day={day}"
        folder.mkdir()
        (folder / "part.json").write_text("".join(f'{{"n": {i}}}\n' for i in range(1000)))
    df = spark.read.format("sliceflow.json").option("maxPartitionBytes", "2000").load(str(tmp_path))
    assert df.rdd.getNumPartitions() > 2
    expected = spark.read.json(str(tmp_path))
    assert df.schema == expected.schema
    assert sorted(df.collect()) == sorted(expected.collect())
