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

from sliceflow._runtime.spark_hash import spark_hash_int

__all__ = ["MAX_BUCKETS", "bucket_labels", "check_buckets"]

#: The most buckets a streaming operator takes (one Python call per bucket and micro-batch).
MAX_BUCKETS = 1 << 16


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
