"""Bucket labels: Spark's hash of an INT, and the even spread over partitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceflow._runtime.spark_hash import spark_hash_int
from sliceflow.spark._runtime.bucket_labels import MAX_BUCKETS, bucket_labels, check_buckets

EDGE_INTS = [0, 1, 2, -1, 42, 2**31 - 1, -(2**31), 12345, -987654, 65535, 65536]


@pytest.mark.parametrize("buckets", [1, 2, 3, 7, 8, 64, 100, 1000, MAX_BUCKETS])
def test_labels_land_in_partition_bucket_mod_p(buckets: int) -> None:
    labels = bucket_labels(buckets)
    assert labels.dtype == np.int32 and len(labels) == buckets
    assert len(set(labels.tolist())) == buckets
    assert (labels >= 0).all()
    hashes = spark_hash_int(labels).astype(np.int64)
    ids = np.arange(buckets)
    bits = max(1, (buckets - 1).bit_length())
    for p in (1 << b for b in range(bits + 1)):
        # Spark's pmod(hash, p); Python's % is already non-negative.
        assert (hashes % p == ids % p).all(), p
    for p in (1 << b for b in range(bits, 21)):
        # As many partitions as buckets or more: every bucket has a partition to itself.
        assert len(set((hashes % p).tolist())) == buckets, p


def test_labels_are_stable() -> None:
    # The labels name state in checkpoints: they must never change between versions.
    assert bucket_labels(2).tolist() == [2, 0]
    assert bucket_labels(3).tolist() == [12, 6, 2]
    assert bucket_labels(8).tolist() == [12, 6, 5, 1, 25, 15, 2, 0]
    assert bucket_labels(64)[:8].tolist() == [38, 64, 57, 80, 37, 29, 32, 35]


@pytest.mark.parametrize("bad", [0, -1, MAX_BUCKETS + 1, 2.0, True, "8", None])
def test_check_buckets_refuses(bad: object) -> None:
    with pytest.raises(ValueError, match="buckets must be an int from 1 to 65,536"):
        check_buckets(bad)
    with pytest.raises(ValueError, match="buckets must be"):
        bucket_labels(bad)  # type: ignore[arg-type]


@pytest.mark.spark
def test_hash_equals_sparks(spark) -> None:
    from pyspark.sql import functions as F

    rng = np.random.default_rng(5)
    values = [*EDGE_INTS, *rng.integers(-(2**31), 2**31, 200).tolist()]
    df = spark.createDataFrame([(int(v),) for v in values], "v int")
    got = {r.v: r.h for r in df.select("v", F.hash("v").alias("h")).collect()}
    ours = spark_hash_int(np.array(values, dtype=np.int32)).tolist()
    assert [got[v] for v in values] == ours


@pytest.mark.spark
@pytest.mark.parametrize("partitions", [2, 3, 4, 8])
def test_groupby_spreads_buckets(spark, partitions: int) -> None:
    """The shuffle of ``groupBy(__bucket)`` (hash partitioning of the INT column) puts bucket i
    in partition i mod P for P a power of two; other P still get every partition used when
    there are enough buckets."""
    from pyspark.sql import functions as F

    buckets = 16
    rows = [(int(label), i) for i, label in enumerate(bucket_labels(buckets))]
    df = spark.createDataFrame(rows, "__bucket int, i int").repartition(partitions, "__bucket")
    placed = dict(df.select("i", F.spark_partition_id().alias("p")).collect())
    if partitions & (partitions - 1) == 0:
        assert placed == {i: i % partitions for i in range(buckets)}
    else:
        assert set(placed.values()) == set(range(partitions))


@given(st.integers(1, 4096))
def test_any_bucket_count_spreads_evenly(buckets: int) -> None:
    hashes = spark_hash_int(bucket_labels(buckets)).astype(np.int64)
    for p in (2, 4, 16):
        counts = np.bincount(hashes % p, minlength=p)
        assert counts.max() - counts.min() <= 1
