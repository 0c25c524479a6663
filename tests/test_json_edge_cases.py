"""JSON edge cases: each matches Spark 4's from_json or fails with a clear error.

Large documents (time linear in size), invalid UTF-8, Jackson's StreamReadConstraints, odd
schemas and options, and bad input. The cases marked ``spark`` compare with a real
SparkSession (the session-scoped ``spark`` fixture); the others check the kernel alone, with
the Spark results they reproduce written next to them (probed with pyspark 4.3.0).
"""

from __future__ import annotations

import time

import pytest

from sliceflow import json as sj


def _best_time(job, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        job()
        best = min(best, time.perf_counter() - start)
    return best


def _long_array(numbers: int, quote: str) -> bytes:
    return ("{" + quote + "arr" + quote + ":[" + ",".join(["1234567"] * numbers) + "]}\n").encode()


@pytest.mark.parametrize("quote", ['"', "'"], ids=["double-quoted", "single-quoted"])
def test_a_long_array_read_as_string_takes_linear_time(quote):
    # Spark re-serialises an array given to a STRING field. This used to cost time quadratic
    # in the document (each number walked Jackson's input buffers from the document's start):
    # 4x the numbers took ~16x the time. Linear: ~4x (a generous 10x bound for noise).
    small, large = _long_array(200_000, quote), _long_array(800_000, quote)
    expected = "[" + ",".join(["1234567"] * 200_000) + "]"
    assert sj.decode(small, "arr STRING").column(0).to_pylist() == [expected]
    t_small = _best_time(lambda: sj.decode(small, "arr STRING"))
    t_large = _best_time(lambda: sj.decode(large, "arr STRING"))
    assert t_large < 10 * t_small + 0.1, (t_small, t_large)
    # ... and within a constant factor of reading the same document as an array of numbers.
    t_array = _best_time(lambda: sj.decode(large, "arr ARRAY<BIGINT>"))
    assert t_large < 20 * t_array + 0.1, (t_array, t_large)
