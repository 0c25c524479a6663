"""Microbenchmarks of the window kernel (pytest-benchmark), each checking what it computed.

    pytest tests/bench/test_bench_window.py --benchmark-enable  # timed (short rounds)
    pytest tests/bench/test_bench_window.py                     # each runs once, as a check

``sliceflow.window.aggregate`` (the in-process kernel on Arrow) on 200k bids spread over one
day, 100 auctions (~1.4 rows per auction and minute): count(*) + sum(price) + max(price) by
auction, tumble(1 min) and hop(10 min, 1 min), checked row by row against numpy; pyarrow's
``group_by`` on the same tumble is timed too as the yardstick. The streaming step
(``sliceflow.window.state.advance``) runs the same bids as 10 micro-batches, tumble(1 min)
against hop(1 day, 1 min), checked against the batch kernel. ``bench/bench_window.py`` and
``bench/bench_window_stream.py`` have the full-size runs.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from sliceflow import window as W

N = 200_000
KEYS = 100
MINUTE = 60_000_000  # µs
DAY = 24 * 60 * MINUTE
EPOCH = 1_795_392_000_000_000  # 2026-11-23 00:00 UTC, µs
BENCH = pytest.mark.benchmark(group="window-kernel-200k-bids")


@pytest.fixture(scope="module")
def bids() -> pa.Table:
    rng = np.random.default_rng(11)
    ts = np.sort(rng.integers(0, DAY, N, dtype=np.int64)) + EPOCH
    return pa.table(
        {
            "auction": rng.integers(0, KEYS, N, dtype=np.int64) + 1000,
            "price": rng.integers(100, 10_000_000, N, dtype=np.int64),
            "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        }
    )


def aggs():
    return [W.count().alias("cnt"), W.sum("price").alias("s"), W.max("price").alias("m")]


def expected(bids: pa.Table, size: int, slide: int) -> dict[str, np.ndarray]:
    """Every (auction, window start) with its count, sum and max, sorted by auction then start:
    each row exploded into the size/slide windows that hold it, grouped with numpy."""
    ts = bids["ts"].cast(pa.int64()).to_numpy()
    last = ts - ts % slide  # the latest window start <= ts
    per_row = size // slide
    starts = np.concatenate([last - j * slide for j in range(per_row)])
    keys = np.tile(bids["auction"].to_numpy(), per_row)
    prices = np.tile(bids["price"].to_numpy(), per_row)
    order = np.lexsort((starts, keys))
    keys, starts, prices = keys[order], starts[order], prices[order]
    first = np.flatnonzero(np.concatenate([[True], (np.diff(keys) != 0) | (np.diff(starts) != 0)]))
    return {
        "auction": keys[first],
        "start": starts[first],
        "cnt": np.diff(np.append(first, len(keys))),
        "s": np.add.reduceat(prices, first),
        "m": np.maximum.reduceat(prices, first),
    }


def check(result: pa.Table, bids: pa.Table, size: int, slide: int) -> None:
    want = expected(bids, size, slide)
    assert result.num_rows == len(want["auction"])
    for name in ("auction", "cnt", "s", "m"):
        assert result[name].null_count == 0, name
    start = result["window_start"].cast(pa.int64()).to_numpy()
    end = result["window_end"].cast(pa.int64()).to_numpy()
    assert (end - start == size).all()
    assert (result["window_time"].cast(pa.int64()).to_numpy() == end - 1).all()
    got = {name: result[name].to_numpy() for name in ("auction", "cnt", "s", "m")}
    order = np.lexsort((start, got["auction"]))
    np.testing.assert_array_equal(start[order], want["start"])
    for name, column in got.items():
        np.testing.assert_array_equal(column[order], want[name], err_msg=name)
    assert want["cnt"].sum() == N * (size // slide)


@BENCH
def test_bench_window_tumble_1min(benchmark, bids):
    result = benchmark(W.aggregate, bids, W.tumble("ts", "1 minute"), ["auction"], aggs())
    check(result, bids, MINUTE, MINUTE)


@BENCH
def test_bench_window_hop_10min_1min(benchmark, bids):
    spec = W.hop("ts", "10 minutes", "1 minute")
    result = benchmark(W.aggregate, bids, spec, ["auction"], aggs())
    check(result, bids, 10 * MINUTE, MINUTE)


@BENCH
def test_bench_pyarrow_group_by_tumble_1min(benchmark, bids):
    """The yardstick: pyarrow's hash group_by (one thread) on the same tumble."""
    ts = bids["ts"].cast(pa.int64()).to_numpy()
    start = ts - ts % MINUTE
    table = pa.table({"auction": bids["auction"], "start": start, "price": bids["price"]})

    def group_by() -> pa.Table:
        return table.group_by(["auction", "start"], use_threads=False).aggregate(
            [([], "count_all"), ("price", "sum"), ("price", "max")]
        )

    result = benchmark(group_by)
    assert result.num_rows == len(expected(bids, MINUTE, MINUTE)["cnt"])
    assert pc.sum(result["count_all"]).as_py() == N


def stream_steps(bids: pa.Table, spec: W.WindowSpec, parts: int = 10) -> pa.Table:
    """The bids as ``parts`` micro-batches in time order through the streaming step (one
    bucket), each run with the watermark the earlier ones set (delay 0), then a last step
    with a watermark past every window: everything the stream emitted."""
    from sliceflow.window.plan import build_plan
    from sliceflow.window.state import advance

    wp = build_plan(bids.schema, spec, ["auction"], aggs())
    state = None
    watermark_ms = 0
    out = []
    step = -(-bids.num_rows // parts)
    for i in range(parts):
        chunk = bids.slice(i * step, step)
        fired, state = advance(wp, "all", state, watermark_ms, chunk.to_batches())
        out.append(fired)
        watermark_ms = pc.max(chunk["ts"]).cast(pa.int64()).as_py() // 1000
    fired, state = advance(wp, "all", state, watermark_ms + 2 * DAY // 1000, [])
    assert state.partials.num_rows == 0
    return pa.concat_tables([*out, fired])


def same_as_batch(result: pa.Table, bids: pa.Table, spec: W.WindowSpec) -> None:
    order = [("auction", "ascending"), ("window_start", "ascending")]
    assert result.sort_by(order).equals(W.aggregate(bids, spec, ["auction"], aggs()).sort_by(order))


@pytest.mark.benchmark(group="window-stream-steps-200k-bids")
def test_bench_stream_steps_tumble_1min(benchmark, bids):
    spec = W.tumble("ts", "1 minute")
    result = benchmark(stream_steps, bids, spec)
    check(result, bids, MINUTE, MINUTE)


@pytest.mark.benchmark(group="window-stream-steps-200k-bids")
def test_bench_stream_steps_hop_1day_1min(benchmark, bids):
    """A day-long window sliding by a minute: each step carries up to 1,440 slices per key."""
    spec = W.hop("ts", "1 day", "1 minute")
    result = benchmark(stream_steps, bids, spec)
    same_as_batch(result, bids, spec)
