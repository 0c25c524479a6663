"""Microbenchmarks of the JSON kernel (pytest-benchmark), each checking what it decoded.

    pytest tests/bench/test_bench_kernel.py --benchmark-enable  # timed (short rounds)
    pytest tests/bench/test_bench_kernel.py                     # each runs once, as a check

20k Nexmark bids, decoded as NDJSON bytes and as a pyarrow string array by sliceflow, and by
``pyarrow.json.read_json`` (the competitor) from the same bytes. ``bench/bench_json.py`` has
the full-size, one-core comparison.
"""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
import pytest

from sliceflow import json as sj
from sliceflow.testing import BID_DDL, bid_lines

N = 20_000
EPOCH = dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc)
BENCH = pytest.mark.benchmark(group="json-kernel-20k-bids")


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return list(bid_lines(N))


@pytest.fixture(scope="module")
def ndjson(lines) -> bytes:
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def expected(lines) -> dict:
    """What a decoded batch must hold, worked out with the standard json module."""
    picks = [0, 1, 4_999, N - 1]
    rows = {}
    for i in picks:
        doc = json.loads(lines[i])
        doc["dateTime"] = dt.datetime.strptime(doc["dateTime"], "%Y-%m-%d %H:%M:%S.%f").replace(
            tzinfo=dt.timezone.utc
        )
        rows[i] = doc
    price_sum = sum(json.loads(line)["price"] for line in lines)
    return {"rows": rows, "price_sum": price_sum}


def check(batch: pa.RecordBatch | pa.Table, expected: dict) -> None:
    assert batch.num_rows == N
    assert batch.schema == sj.to_arrow_schema(BID_DDL)
    assert batch.column("price").null_count == 0
    assert pc.sum(batch.column("price")).as_py() == expected["price_sum"]
    for i, row in expected["rows"].items():
        assert batch.slice(i, 1).to_pylist()[0] == row, i
    # Bid i is stamped i milliseconds after the epoch.
    assert batch.column("dateTime")[N - 1].as_py() == EPOCH + dt.timedelta(milliseconds=N - 1)
    assert batch.column("channel")[2].as_py() == "Baidu"


@BENCH
def test_bench_sliceflow_decode_ndjson_bytes(benchmark, ndjson, expected):
    batch = benchmark(sj.decode, ndjson, BID_DDL)
    check(batch, expected)


@BENCH
def test_bench_sliceflow_decode_string_array(benchmark, lines, expected):
    docs = pa.array(lines, pa.string())
    batch = benchmark(sj.decode, docs, BID_DDL)
    check(batch, expected)


@BENCH
def test_bench_pyarrow_read_json(benchmark, ndjson, expected):
    read_options = pj.ReadOptions(use_threads=False)
    parse_options = pj.ParseOptions(explicit_schema=sj.to_arrow_schema(BID_DDL))

    def read() -> pa.Table:
        return pj.read_json(
            pa.BufferReader(ndjson), read_options=read_options, parse_options=parse_options
        )

    table = benchmark(read).combine_chunks()
    check(table, expected)
    assert table.equals(pa.Table.from_batches([sj.decode(ndjson, BID_DDL)]))
