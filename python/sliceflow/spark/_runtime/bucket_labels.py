"""The values that name state buckets in ``groupBy(__bucket)``, chosen so that Spark's shuffle
spreads the buckets evenly over its partitions.

Spark sends the group ``v`` of ``groupBy(__bucket)`` (an INT column) to shuffle partition
``pmod(hash(v), P)``, ``hash`` being Murmur3 with seed 42 (``HashPartitioning``, the same
function as SQL's ``hash()``). Naming bucket ``i`` by the number ``i`` leaves the placement to
chance: ``hash(0)`` and ``hash(1)`` are both odd, so with two buckets and two partitions one
task would run both buckets and the other none. Bucket ``i`` is therefore named by the smallest
``v >= 0`` whose hash has ``i`` in its low ``k`` bits (``2**k >= buckets``). For every ``P`` that
is a power of two, ``pmod(hash(v), P)`` is the low bits of the hash, so bucket ``i`` lands in
partition ``i mod P``: an even spread, two buckets never share a partition when ``P >= buckets``,
and nothing depends on ``P``. A restart from a checkpoint (whose partition count may differ from
the session's) finds every bucket under the same name. Other ``P`` get a hash spread.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = ["MAX_BUCKETS", "bucket_labels", "check_buckets", "spark_hash_int"]

#: The most buckets a streaming operator takes (one Python call per bucket and micro-batch).
MAX_BUCKETS = 1 << 16

_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_SEED = np.uint32(42)


def _rotl(x: npt.NDArray[np.uint32], r: int) -> npt.NDArray[np.uint32]:
    # Annotated: numpy's stubs type `|` of two arrays as Any when checking for Python 3.10.
    rotated: npt.NDArray[np.uint32] = (x << np.uint32(r)) | (x >> np.uint32(32 - r))
    return rotated


def spark_hash_int(values: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Spark's ``hash()`` of INT values (Murmur3 x86_32, seed 42), as int32.

    Example:
        >>> int(spark_hash_int(np.array([0], dtype=np.int32))[0])
        933211791
    """
    with np.errstate(over="ignore"):
        # Annotated: numpy's stubs give uint32 arithmetic a wider (or no) type.
        k1: npt.NDArray[np.uint32] = np.asarray(values, dtype=np.int32).view(np.uint32) * _C1
        k1 = _rotl(k1, 15) * _C2
        h1: npt.NDArray[np.uint32] = _rotl(_SEED ^ k1, 13) * np.uint32(5) + np.uint32(0xE6546B64)
        h1 ^= np.uint32(4)  # the input's length in bytes
        h1 ^= h1 >> np.uint32(16)
        h1 *= np.uint32(0x85EBCA6B)
        h1 ^= h1 >> np.uint32(13)
        h1 *= np.uint32(0xC2B2AE35)
        h1 ^= h1 >> np.uint32(16)
    return h1.view(np.int32)


@lru_cache(maxsize=16)
def _labels(buckets: int) -> tuple[int, ...]:
    bits = max(1, (buckets - 1).bit_length())
    mask = (1 << bits) - 1
    found = np.full(buckets, -1, dtype=np.int64)
    missing = buckets
    chunk = 1 << 16
    start = 0
    while missing:
        values = np.arange(start, start + chunk, dtype=np.int64)
        low = spark_hash_int(values.astype(np.int32)).view(np.uint32) & np.uint32(mask)
        wanted = low < buckets
        # The first value of each residue in this chunk, for residues not found before.
        residues, first = np.unique(low[wanted], return_index=True)
        new = found[residues] < 0
        found[residues[new]] = values[wanted][first[new]]
        missing = int((found < 0).sum())
        start += chunk
    return tuple(int(v) for v in found)


def check_buckets(buckets: object) -> int:
    """``buckets`` if it is an int in 1 .. :data:`MAX_BUCKETS`; a ValueError naming it if not."""
    if not isinstance(buckets, int) or isinstance(buckets, bool) or not 1 <= buckets <= MAX_BUCKETS:
        raise ValueError(f"buckets must be an int from 1 to {MAX_BUCKETS:,}, not {buckets!r}")
    return buckets


def bucket_labels(buckets: int) -> np.ndarray:
    """The INT values naming buckets ``0 .. buckets-1`` in ``groupBy(__bucket)`` (module doc).

    Example:
        >>> labels = bucket_labels(2)
        >>> [int(h) % 2 for h in spark_hash_int(labels)]  # shuffle partitions of 2
        [0, 1]
    """
    return np.array(_labels(check_buckets(buckets)), dtype=np.int32)
