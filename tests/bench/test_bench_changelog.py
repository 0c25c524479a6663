"""Microbenchmarks of the changelog kernel (pytest-benchmark), each checking what it computed.

    pytest tests/bench/test_bench_changelog.py --benchmark-enable  # timed (short rounds)
    pytest tests/bench/test_bench_changelog.py                     # each runs once, as a check

``sliceflow.changelog.aggregate`` (the in-process kernel on Arrow) on 200k bids over 10k
auctions: count(*) + sum(price) + max(price) by auction as a final table (batch) and as a
changelog of 10 micro-batches with mini-batch on (folded before the "shuffle") and off, each
checked against numpy; pyarrow's ``group_by`` on the same rows is the yardstick.
``bench/bench_changelog.py`` has the streaming runs in Spark.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from sliceflow import changelog as C
from sliceflow import window as W

N = 200_000
KEYS = 10_000
BATCHES = 10
BENCH = pytest.mark.benchmark(group="changelog-kernel-200k-bids")


@pytest.fixture(scope="module")
def bids() -> pa.Table:
    rng = np.random.default_rng(5)
    return pa.table(
        {
            "auction": rng.integers(0, KEYS, N, dtype=np.int64),
            "price": rng.integers(1, 1_000_000, N, dtype=np.int64),
        }
    )


def aggs():
    return [W.count().alias("cnt"), W.sum("price").alias("s"), W.max("price").alias("m")]


def check_final(result: pa.Table, bids: pa.Table, prefix_rows: int = N) -> None:
    keys = bids["auction"].to_numpy()[:prefix_rows]
    prices = bids["price"].to_numpy()[:prefix_rows]
    order = np.argsort(keys, kind="stable")
    k, p = keys[order], prices[order]
    first = np.flatnonzero(np.concatenate([[True], np.diff(k) != 0]))
    got = result.sort_by("auction")
    np.testing.assert_array_equal(got["auction"].to_numpy(), k[first])
    np.testing.assert_array_equal(got["cnt"].to_numpy(), np.diff(np.append(first, len(k))))
    np.testing.assert_array_equal(got["s"].to_numpy(), np.add.reduceat(p, first))
    np.testing.assert_array_equal(got["m"].to_numpy(), np.maximum.reduceat(p, first))


def materialized(changes: pa.Table) -> pa.Table:
    """The last +I/+U row per key (insert-only input never deletes)."""
    ops = changes["op"].to_numpy(zero_copy_only=False)
    keep = changes.filter(pa.array((ops == "+I") | (ops == "+U")))
    keys = keep["auction"].to_numpy()
    last = len(keys) - 1 - np.unique(keys[::-1], return_index=True)[1]
    return keep.take(pa.array(np.sort(last)))


@BENCH
def test_bench_changelog_final_table(benchmark, bids):
    result = benchmark(C.aggregate, bids, ["auction"], aggs(), emit="final")
    assert set(result["op"].to_pylist()) == {"+I"}
    check_final(result, bids)


@pytest.mark.parametrize("mini_batch", [True, False], ids=["mini_batch", "row_by_row"])
@BENCH
def test_bench_changelog_micro_batches(benchmark, bids, mini_batch):
    batches = [bids.slice(i * (N // BATCHES), N // BATCHES) for i in range(BATCHES)]
    stats: dict[str, int] = {}

    def run() -> pa.Table:
        stats.clear()
        return C.aggregate(batches, ["auction"], aggs(), mini_batch=mini_batch, stats=stats)

    result = benchmark(run)
    check_final(materialized(result), bids)
    if mini_batch:  # one state read and write per key per bundle, not per row
        assert stats["state_reads"] < N // 2
    else:
        assert stats["state_reads"] == N


@BENCH
def test_bench_pyarrow_group_by(benchmark, bids):
    """The yardstick: pyarrow's hash group_by (one thread) on the same rows."""

    def group_by() -> pa.Table:
        return bids.group_by("auction", use_threads=False).aggregate(
            [([], "count_all"), ("price", "sum"), ("price", "max")]
        )

    result = benchmark(group_by)
    renamed = result.rename_columns(
        {"count_all": "cnt", "price_sum": "s", "price_max": "m", "auction": "auction"}
    )
    check_final(renamed, bids)
