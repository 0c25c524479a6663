"""sliceflow._runtime.spark_hash against Spark's own ``hash()``: every key type, nulls, the
edge values of each (-0.0, NaN, infinities, the extremes of each integer, decimals around 18
digits, strings of every tail length, non-ASCII), nested structs and arrays, several columns.

The Spark test builds the columns in pyarrow, hands them to Spark (``createDataFrame`` of an
Arrow table), and hashes Spark's own Arrow copy of them (``toArrow``) beside the
``F.hash(...)`` column Spark computed over the same rows."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sliceflow._runtime.spark_hash import spark_hash, spark_hash_int


def _batch(**columns: pa.Array) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))


def test_known_values() -> None:
    # Spark: SELECT hash(0), hash(4), hash(CAST(NULL AS INT)) -> 933211791, -397064898, 42.
    ints = pa.array([0, 4, None], pa.int32())
    assert spark_hash(_batch(v=ints)).tolist() == [933211791, -397064898, 42]
    assert spark_hash_int([0, 4]).tolist() == [933211791, -397064898]


def test_nulls_leave_the_hash_unchanged() -> None:
    a = pa.array([1, None, 3], pa.int64())
    b = pa.array([None, None, None], pa.string())
    assert spark_hash(_batch(a=a, b=b)).tolist() == spark_hash(_batch(a=a)).tolist()
    assert spark_hash(_batch(b=b)).tolist() == [42, 42, 42]
    assert spark_hash(_batch(b=b), seed=7).tolist() == [7, 7, 7]


def test_zero_and_nan_have_one_hash() -> None:
    for t in (pa.float32(), pa.float64()):
        h = spark_hash(_batch(x=pa.array([0.0, -0.0, math.nan, -math.nan], t))).tolist()
        assert h[0] == h[1] and h[2] == h[3] and h[0] != h[2], t


def test_a_struct_hashes_as_its_fields_chained() -> None:
    a = pa.array([1, None, 3], pa.int32())
    b = pa.array(["x", "yz", None])
    struct = pa.StructArray.from_arrays([a, b], names=["a", "b"])
    assert spark_hash(_batch(s=struct)).tolist() == spark_hash(_batch(a=a, b=b)).tolist()


def test_a_map_is_refused_naming_the_column() -> None:
    m = pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int32()))
    with pytest.raises(ValueError, match="tags"):
        spark_hash(_batch(tags=m))


def test_empty_batch() -> None:
    assert spark_hash(_batch(v=pa.array([], pa.int64()))).tolist() == []


@given(st.lists(st.binary(max_size=12), max_size=20))
def test_string_and_binary_hash_alike(values: list[bytes]) -> None:
    # Spark hashes STRING by its UTF-8 bytes and BINARY by its bytes: one function.
    text = [v.decode("latin-1") for v in values]
    as_binary = pa.array([t.encode("utf-8") for t in text], pa.binary())
    as_string = pa.array(text, pa.string())
    as_large = pa.array(text, pa.large_string())
    h = spark_hash(_batch(v=as_binary)).tolist()
    assert h == spark_hash(_batch(v=as_string)).tolist()
    assert h == spark_hash(_batch(v=as_large)).tolist()


# ---------------------------------------------------------------------------------------------
# Against Spark


def _columns(rng: random.Random, n: int) -> dict[str, pa.Array]:
    """``n`` rows of every hashable type, with nulls and each type's edge values."""

    def pick(edges: list, make) -> list:
        return [
            None if rng.random() < 0.1 else (rng.choice(edges) if rng.random() < 0.3 else make())
            for _ in range(n)
        ]

    def text() -> str:
        alphabet = "ab\u00e9\u4e2d\U0001f600 "
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(10)))

    i64 = [0, 1, -1, 2**63 - 1, -(2**63), 2**31, -(2**31) - 1]
    floats = [0.0, -0.0, math.nan, math.inf, -math.inf, 1.5, -2.25, 1e-40]
    small_dec = [decimal.Decimal(x) for x in ("0", "-0.01", "99999999.99", "-99999999.99")]
    big = [decimal.Decimal(x) for x in (
        "0", "1", "-1", "99999999999999999999999999999999.999999",
        "-99999999999999999999999999999999.999999", "0.000001", "-0.000001",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "-9223372036854775809", "127", "128", "-128", "-129", "255", "256")]  # fmt: skip
    day = dt.date(1970, 1, 1)
    ts = dt.datetime(1970, 1, 1)
    inner = pa.StructArray.from_arrays(
        [
            pa.array(pick([0, -1], lambda: rng.randrange(-1000, 1000)), pa.int32()),
            pa.array(pick([""], text), pa.string()),
        ],
        names=["i", "s"],
        mask=pa.array([rng.random() < 0.1 for _ in range(n)]),
    )
    return {
        "b": pa.array(pick([True, False], lambda: rng.random() < 0.5), pa.bool_()),
        "i8": pa.array(pick([0, 127, -128], lambda: rng.randrange(-128, 128)), pa.int8()),
        "i16": pa.array(
            pick([0, 32767, -32768], lambda: rng.randrange(-(2**15), 2**15)), pa.int16()
        ),  # fmt: skip
        "i32": pa.array(
            pick([0, 2**31 - 1, -(2**31)], lambda: rng.randrange(-(2**31), 2**31)), pa.int32()
        ),  # fmt: skip
        "i64": pa.array(pick(i64, lambda: rng.randrange(-(2**63), 2**63)), pa.int64()),
        "f32": pa.array(pick(floats, lambda: rng.uniform(-1e6, 1e6)), pa.float32()),
        "f64": pa.array(pick(floats, lambda: rng.uniform(-1e300, 1e300)), pa.float64()),
        "d10": pa.array(
            pick(small_dec, lambda: decimal.Decimal(rng.randrange(-(10**10), 10**10)).scaleb(-2)),
            pa.decimal128(10, 2),
        ),  # fmt: skip
        "d38": pa.array(
            pick(big, lambda: decimal.Decimal(rng.randrange(-(10**38) + 1, 10**38)).scaleb(-6)),
            pa.decimal128(38, 6),
        ),  # fmt: skip
        "s": pa.array(pick(["", "a", "ab", "abc", "abcd", "abcde"], text), pa.string()),
        "bin": pa.array(
            pick(
                [b"", b"\x80", b"\xff\xfe\xfd"],
                lambda: bytes(rng.randrange(256) for _ in range(rng.randrange(9))),
            ),
            pa.binary(),
        ),  # fmt: skip
        "d": pa.array(
            pick([day], lambda: day + dt.timedelta(days=rng.randrange(-40000, 40000))), pa.date32()
        ),  # fmt: skip
        "ts": pa.array(
            pick([ts], lambda: ts + dt.timedelta(microseconds=rng.randrange(-(10**15), 10**15))),
            pa.timestamp("us", tz="UTC"),
        ),  # fmt: skip
        "st": inner,
        "arr": pa.array(
            pick(
                [[], [None]],
                lambda: [rng.choice([None, 1, -5, 2**40]) for _ in range(rng.randrange(4))],
            ),
            pa.list_(pa.int64()),
        ),  # fmt: skip
        "arr_s": pa.array(
            pick([[]], lambda: [text() for _ in range(rng.randrange(3))]), pa.list_(pa.string())
        ),  # fmt: skip
    }


@pytest.mark.spark
@pytest.mark.parametrize("seed", [1, 2])
def test_every_type_equals_sparks_hash(spark, seed: int) -> None:
    from pyspark.sql import functions as F

    columns = _columns(random.Random(seed), 400)
    df = spark.createDataFrame(pa.table(columns))
    names = list(columns)
    groups = [[name] for name in names] + [names, ["s", "i64"], ["st", "arr", "d38", "f64"]]
    hashes = [F.hash(*[F.col(c) for c in group]).alias(f"h{i}") for i, group in enumerate(groups)]
    table = df.select(*names, *hashes).toArrow()
    for i, group in enumerate(groups):
        batch = pa.RecordBatch.from_arrays(
            [table.column(c).combine_chunks() for c in group], names=group
        )
        theirs = table.column(f"h{i}").to_pylist()
        ours = spark_hash(batch).tolist()
        bad = [(r, table.slice(r, 1).select(group).to_pylist()) for r in range(len(ours))
               if ours[r] != theirs[r]]  # fmt: skip
        assert not bad, (group, bad[:3])


@pytest.mark.spark
@settings(max_examples=10, deadline=None)  # a Spark job per example
@given(st.lists(st.text(max_size=9), min_size=1, max_size=30))
def test_strings_equal_sparks_hash(spark, values: list[str]) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame(pa.table({"s": pa.array(values, pa.string())}))
    table = df.select("s", F.hash("s").alias("h")).toArrow()
    ours = spark_hash(pa.RecordBatch.from_arrays([table.column("s").combine_chunks()], ["s"]))
    assert ours.tolist() == table.column("h").to_pylist()


def test_labels_hash_with_the_kernel() -> None:
    # The bucket labels (spark/_runtime/bucket_labels.py) are made with this hash.
    from sliceflow.spark._runtime.bucket_labels import bucket_labels

    low = spark_hash_int(bucket_labels(8)).astype(np.int64) % 8
    assert low.tolist() == list(range(8))
