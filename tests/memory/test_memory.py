"""sliceflow.memory: the limits of the process-wide caches, their sources (call, environment,
Spark conf) and what a worker process holds over a long run."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest
from support import ROOT

import sliceflow.memory as memory
from sliceflow import window as W
from sliceflow.json import DecodeSession, decode
from sliceflow.testing import BID_DDL, bid_lines

MIB = 1 << 20


@pytest.fixture(autouse=True)
def restore_limits():
    before = memory.limits()
    yield
    memory.set_limits(**before)


def test_defaults_of_a_process_and_of_a_spark_worker():
    assert memory.default_limits() == {
        "buffer_cache_bytes": 128 * MIB,
        "buffer_cache_blocks": 64,
        "huge_page_cache_bytes": 128 * MIB,
        "huge_page_cache_blocks": 64,
    }
    assert memory.SPARK_WORKER_DEFAULTS == {
        "buffer_cache_bytes": 32 * MIB,
        "buffer_cache_blocks": 64,
        "huge_page_cache_bytes": 32 * MIB,
        "huge_page_cache_blocks": 16,
    }


def test_set_limits_takes_ints_and_spark_byte_strings():
    got = memory.set_limits(buffer_cache_bytes="3m", huge_page_cache_bytes=5 << 20)
    assert got["buffer_cache_bytes"] == 3 * MIB
    assert got["huge_page_cache_bytes"] == 5 * MIB
    assert memory.limits() == got
    assert memory.set_limits(buffer_cache_bytes=" 1G ")["buffer_cache_bytes"] == 1 << 30
    assert memory.set_limits(huge_page_cache_blocks="7")["huge_page_cache_blocks"] == 7
    assert memory.set_limits(buffer_cache_bytes="12kb")["buffer_cache_bytes"] == 12 << 10


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"buffer_cache_bytes": "64x"}, "buffer_cache_bytes = '64x': not a byte size"),
        ({"buffer_cache_bytes": "1.5g"}, "fractional values are not supported"),
        ({"huge_page_cache_bytes": -1}, "huge_page_cache_bytes = -1: must be >= 0"),
        ({"huge_page_cache_blocks": 1000}, "at most 256 blocks"),
        ({"buffer_cache_blocks": "2m"}, "buffer_cache_blocks = '2m': not a count"),
    ],
)
def test_bad_limits_are_refused_with_their_name(kwargs, message):
    before = memory.limits()
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        memory.set_limits(**kwargs)
    assert memory.limits() == before


def test_bad_limit_type_is_refused():
    with pytest.raises(TypeError, match="buffer_cache_bytes takes an int or a string"):
        memory.set_limits(buffer_cache_bytes=1.5)  # type: ignore[arg-type]


def _decode_batches(n: int, rows: int = 10_000) -> None:
    lines = list(bid_lines(rows))
    for i in range(n):
        # Batches of a few sizes, so that the cache sees many buffer sizes.
        out = decode(pa.array(lines[: rows - 997 * (i % 5)]), BID_DDL)
        del out


def _window_run(tasks: int) -> None:
    import numpy as np

    from sliceflow.window.phases import local_phase
    from sliceflow.window.plan import build_plan

    schema = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.int64())])
    wp = build_plan(
        schema,
        W.tumble("ts", "1 minute"),
        ["k"],
        [W.count(), W.sum("v")],
        ansi=True,
        bundle_rows=200_000,
        bundle_bytes=64 << 20,
    )
    rng = np.random.default_rng(1)
    for _ in range(tasks):
        batches = (
            pa.record_batch(
                {
                    "k": pa.array(rng.integers(0, 100_000, 20_000, dtype=np.int64)),
                    "ts": pa.array(np.arange(20_000, dtype=np.int64) * 1000, pa.timestamp("us")),
                    "v": pa.array(rng.integers(0, 100, 20_000, dtype=np.int64)),
                }
            )
            for _ in range(12)
        )
        for out in local_phase(wp, batches):
            del out


def test_lowering_a_limit_trims_at_once_and_release_empties():
    memory.set_limits(buffer_cache_bytes="256m", huge_page_cache_bytes="256m")
    _decode_batches(6, rows=50_000)
    _window_run(1)
    held = memory.cached_bytes()
    assert held["buffer_cache"] > 4 * MIB, held
    assert held["huge_page_cache"] > 4 * MIB, held
    memory.set_limits(buffer_cache_bytes="4m", huge_page_cache_bytes="4m")
    held = memory.cached_bytes()
    assert 0 < held["buffer_cache"] <= 4 * MIB, held
    assert held["huge_page_cache"] <= 4 * MIB, held
    memory.set_limits(buffer_cache_blocks=1)
    assert memory.cached_blocks()["buffer_cache"] <= 1
    freed = memory.release()
    assert freed > 0
    assert memory.cached_bytes() == {"buffer_cache": 0, "huge_page_cache": 0}
    assert memory.release() == 0


def test_caches_hold_no_more_than_small_limits_over_a_long_run():
    memory.set_limits(buffer_cache_bytes="2m", huge_page_cache_bytes="6m")
    for _ in range(4):
        _decode_batches(10)
        _window_run(1)
        held = memory.cached_bytes()
        assert held["buffer_cache"] <= 2 * MIB, held
        assert held["huge_page_cache"] <= 6 * MIB, held
    assert memory.cached_bytes()["buffer_cache"] > 0  # the limit keeps, it does not turn off
    memory.release()
    assert memory.cached_bytes() == {"buffer_cache": 0, "huge_page_cache": 0}


def test_limit_zero_keeps_nothing():
    memory.set_limits(buffer_cache_bytes=0, huge_page_cache_blocks=0)
    session = DecodeSession(BID_DDL, {}, "UTC")
    lines = pa.array(list(bid_lines(20_000)))
    for _ in range(3):
        session.feed(lines)
        session.finish_struct()
    _window_run(1)
    assert memory.cached_bytes() == {"buffer_cache": 0, "huge_page_cache": 0}


# Where the sliceflow these tests import lives (the installed build in CI, the source tree
# with a developer build): the PYTHONPATH of the processes they start.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(memory.__file__)))


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": PACKAGE_ROOT, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_environment_variables_set_the_limits_when_the_module_loads():
    done = _python(
        "import sliceflow.memory as m; print(sorted(m.limits().items()))",
        {
            "SLICEFLOW_BUFFER_CACHE_BYTES": "5m",
            "SLICEFLOW_BUFFER_CACHE_BLOCKS": "3",
            "SLICEFLOW_HUGE_PAGE_CACHE_BYTES": "0",
        },
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(
        sorted(
            {
                "buffer_cache_bytes": 5 * MIB,
                "buffer_cache_blocks": 3,
                "huge_page_cache_bytes": 0,
                "huge_page_cache_blocks": memory.default_limits()["huge_page_cache_blocks"],
            }.items()
        )
    )


def test_a_malformed_environment_variable_fails_the_import_with_its_name():
    done = _python("import sliceflow.json", {"SLICEFLOW_HUGE_PAGE_CACHE_BYTES": "lots"})
    assert done.returncode != 0
    assert "SLICEFLOW_HUGE_PAGE_CACHE_BYTES = 'lots': not a byte size" in done.stderr


@pytest.mark.skipif(
    "libasan" in os.environ.get("LD_PRELOAD", ""),
    reason="under AddressSanitizer its shadow memory and quarantine count in the RSS",
)
def test_worker_rss_stays_within_the_documented_bound():
    """A fresh process runs from_json, the data source, large decodes and window_agg's two
    phases (bench/bench_memory.py --quick) with 4 MiB limits; docs/memory.md's bound for that
    workload: peak RSS above the process's baseline <= the caches' limits + 160 MiB (the
    working set of its largest step, the window local phase's bundle of 200,000 rows and the
    whole-file decode, with room for the allocator)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import bench_memory
    finally:
        sys.path.pop(0)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bids.ndjson")
        bench_memory.write_file(path, 100_000)
        config = {
            "tasks": 3,
            "batches": 10,
            "file_passes": 2,
            "window_tasks": 2,
            "window_batches": 30,
            "path": path,
            "limits": {"buffer_cache_bytes": "4m", "huge_page_cache_bytes": "4m"},
        }
        r = bench_memory.run_worker(config, env={"PYTHONPATH": PACKAGE_ROOT})
    peak = max(r["peak_kib"], r["sampled_peak_kib"]) * 1024
    growth = peak - r["baseline_kib"] * 1024
    assert r["held_max"]["buffer_cache"] <= 4 * MIB
    assert r["held_max"]["huge_page_cache"] <= 4 * MIB
    assert growth <= 8 * MIB + 160 * MIB, r
    assert r["held_after_release"] == {"buffer_cache": 0, "huge_page_cache": 0}


def _probe_workers(spark) -> list[dict[str, int]]:
    """The limits and cache contents of the Python workers that run the next tasks; each
    worker visited is put back to the default limits afterwards."""

    def probe(batches):
        import os

        import pyarrow as pa

        import sliceflow.memory as m

        for _ in batches:
            pass
        seen = {**m.limits(), "pid": os.getpid(), "held": m.cached_bytes()["buffer_cache"]}
        m.set_limits(**m.default_limits())
        yield pa.RecordBatch.from_pylist([seen])

    schema = (
        "buffer_cache_bytes long, buffer_cache_blocks long, huge_page_cache_bytes long, "
        "huge_page_cache_blocks long, pid long, held long"
    )
    # Workers are reused first in, first out: 16 one-row tasks visit every idle worker.
    rows = spark.range(0, 16, numPartitions=16).mapInArrow(probe, schema).collect()
    return [r.asDict() for r in rows]


@pytest.mark.spark
def test_spark_conf_reaches_the_python_workers(spark):
    from pyspark.sql import functions as F

    from sliceflow.spark import from_json, window_agg

    def run_with(conf, query):
        for key, value in conf.items():
            spark.conf.set(key, value)
        try:
            return query()
        finally:
            for key in conf:
                spark.conf.unset(key)

    lines = [(line,) for line in bid_lines(4000)]
    text = spark.createDataFrame(lines, ["value"]).repartition(4)
    decoded = run_with(
        {
            "spark.sliceflow.memory.bufferCacheBytes": "3m",
            "spark.sliceflow.memory.hugePageCacheBlocks": "5",
        },
        lambda: text.select(from_json("value", BID_DDL).alias("b")).select("b.*").collect(),
    )
    assert len(decoded) == 4000
    seen = _probe_workers(spark)
    honoured = [s for s in seen if s["buffer_cache_bytes"] == 3 * MIB]
    assert honoured, seen
    assert all(s["huge_page_cache_blocks"] == 5 for s in honoured), seen
    assert all(s["held"] <= 3 * MIB for s in honoured), seen

    bids = text.select(from_json("value", BID_DDL).alias("b")).select("b.*")
    windows = run_with(
        {"spark.sliceflow.memory.hugePageCacheBytes": "6m"},
        lambda: window_agg(bids, W.tumble("dateTime", "1 minute"), "auction", [W.count()]).agg(
            F.sum("count(1)")
        ),
    )
    assert windows.collect()[0][0] == 4000
    seen = _probe_workers(spark)
    honoured = [s for s in seen if s["huge_page_cache_bytes"] == 6 * MIB]
    assert honoured, seen
    # What the conf leaves unset takes the Spark worker defaults, not the process's.
    assert all(s["buffer_cache_bytes"] == 32 * MIB for s in honoured), seen


@pytest.mark.spark
def test_a_malformed_spark_conf_fails_on_the_driver_with_its_name(spark):
    from sliceflow.spark import from_json

    spark.conf.set("spark.sliceflow.memory.bufferCacheBytes", "lots")
    try:
        with pytest.raises(ValueError, match="spark.sliceflow.memory.bufferCacheBytes = 'lots'"):
            from_json("value", "a INT")
    finally:
        spark.conf.unset("spark.sliceflow.memory.bufferCacheBytes")
