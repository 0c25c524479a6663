"""Spark's ``hash()`` of Arrow rows, computed outside the JVM (``cpp/hash/spark_hash.h``).

A streaming operator puts a key in bucket ``pmod(hash(keys), buckets)``; a task that runs in
a Python worker (a fused scan's read) must put it in the same bucket as a Spark plan would,
or a restart would find the key's state in another bucket. :func:`spark_hash` gives, per row,
the value ``F.hash(c1, ..., cn)`` gives over the batch's columns in order: Murmur3 x86_32 with
seed 42, chained over columns, struct fields and array elements, nulls leaving the hash as it
was. Types: BOOLEAN, BYTE, SHORT, INT, BIGINT, FLOAT, DOUBLE (-0.0 as 0, one NaN), DECIMAL,
STRING, BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ, and structs and arrays of them; a map column
is refused, naming it.

Cost: one pass over the key bytes in C++ (the GIL released), 4 bytes of output per row.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from sliceflow._core import hash as _hash
from sliceflow._runtime.arrow_c_data import buffer_sizes, c_array

__all__ = ["SPARK_SEED", "spark_hash", "spark_hash_int"]

#: The seed of Spark's ``hash()`` and of its hash partitioning.
SPARK_SEED = 42


def spark_hash(batch: pa.RecordBatch, seed: int = SPARK_SEED) -> npt.NDArray[np.int32]:
    """Spark's ``hash(c1, ..., cn)`` of each row of ``batch`` over all its columns, in order.

    Example:
        >>> import pyarrow as pa
        >>> spark_hash(pa.record_batch({"v": pa.array([0, None], pa.int32())})).tolist()
        [933211791, 42]
    """
    schema_capsule, array_capsule = c_array(batch)
    out = _hash.spark_hash(schema_capsule, array_capsule, buffer_sizes(batch), seed)
    return np.frombuffer(out, dtype="<i4").astype(np.int32, copy=False)


def spark_hash_int(values: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Spark's ``hash()`` of INT values, as int32.

    Example:
        >>> import numpy as np
        >>> int(spark_hash_int(np.array([0], dtype=np.int32))[0])
        933211791
    """
    column = pa.array(np.asarray(values, dtype=np.int32))
    return spark_hash(pa.RecordBatch.from_arrays([column], names=["v"]))
