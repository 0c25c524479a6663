"""Resident memory of a Python worker over a long decode / window run, by cache limits.

Each configuration runs in a fresh Python process that does what a Spark Python worker does
with sliceflow (from_json on Spark-sized Arrow batches of 10,000 strings, the sliceflow.json
data source's block reads, decodes of large buffers, the window_agg local phase with Spark's
default bundle and its global phase), many times over. The parent samples the process's
resident set (VmRSS in /proc/<pid>/status) every few milliseconds; the process reports its
baseline (after imports and data generation, before the first kernel call), each step's peak
above the RSS it started at (VmHWM, reset per step), what the caches held at most, and what
they hold after release(). Sizes are MiB. ``--spark ROWS`` first runs from_json and
window_agg as a local[2] Spark job per configuration, sampling every PySpark worker process.

    PYTHONPATH=python .venv/bin/python bench/bench_memory.py --spark 1000000
    PYTHONPATH=python .venv/bin/python bench/bench_memory.py --quick

``run_worker`` is also what tests/memory/test_memory.py runs (quick size, small limits).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

MIB = 1 << 20

#: Spark's Arrow batch (spark.sql.execution.arrow.maxRecordsPerBatch).
BATCH_ROWS = 10_000


def _status_kib(pid: int | str, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _reset_peak() -> None:
    """Resets VmHWM to the current RSS (Linux: clear_refs 5); no-op where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _window_batches(rounds: int, keys: int, seed: int) -> Any:
    """``rounds`` batches of BATCH_ROWS rows: key, event time (ms steps), value; made lazily."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    for i in range(rounds):
        base = i * BATCH_ROWS
        ts = np.arange(base, base + BATCH_ROWS, dtype=np.int64) * 6_000  # 6 ms per row
        yield pa.record_batch(
            {
                "k": pa.array(rng.integers(0, keys, BATCH_ROWS, dtype=np.int64)),
                "ts": pa.array(ts * 1000, pa.timestamp("us")),
                "v": pa.array(rng.integers(0, 1000, BATCH_ROWS, dtype=np.int64)),
            }
        )


def worker(config: dict[str, Any]) -> dict[str, Any]:
    """The workload, in this process; returns what it measured."""
    import pyarrow as pa

    import sliceflow.memory as memory
    from sliceflow import window as W
    from sliceflow.json import DecodeSession, decode, iter_ndjson
    from sliceflow.testing import BID_DDL, bid_lines
    from sliceflow.window.phases import global_phase, local_phase

    if config.get("limits") is not None:
        memory.set_limits(**config["limits"])
    schema = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us")), ("v", pa.int64())])
    from sliceflow.window.plan import DEFAULT_BUNDLE_BYTES, DEFAULT_BUNDLE_ROWS, build_plan

    wp = build_plan(
        schema,
        W.tumble("ts", "1 minute"),
        ["k"],
        [W.count(), W.sum("v"), W.max("v")],
        ansi=True,
        bundle_rows=DEFAULT_BUNDLE_ROWS,
        bundle_bytes=DEFAULT_BUNDLE_BYTES,
    )
    # A plan whose local phase writes its partial rows sorted by (key, slice): each flush is
    # then valid input of the global phase.
    sorted_wp = dataclasses.replace(wp, plan={**wp.plan, "sort_partials": True})
    batches = [pa.array(list(bid_lines(BATCH_ROWS, seed=s)), pa.string()) for s in range(4)]
    baseline = _status_kib("self", "VmRSS")
    held_max = {"buffer_cache": 0, "huge_page_cache": 0}

    def note() -> None:
        for name, n in memory.cached_bytes().items():
            held_max[name] = max(held_max[name], n)

    phases: dict[str, int] = {}
    peak = [baseline]

    def phase(name: str, run: Any) -> None:
        """Runs one workload; records its peak RSS above the RSS it started at (KiB)."""
        _reset_peak()
        start = _status_kib("self", "VmRSS")
        run()
        hwm = _status_kib("self", "VmHWM")
        phases[name] = max(0, hwm - start)
        peak[0] = max(peak[0], hwm)

    def from_json() -> None:
        # One decoder per task, one call per Arrow batch, as sliceflow.spark.from_json does.
        for task in range(config["tasks"]):
            session = DecodeSession(BID_DDL, {}, "UTC")
            for i in range(config["batches"]):
                session.feed(batches[(task + i) % len(batches)])
                out = session.finish_struct()
                del out
            note()

    def data_source() -> None:
        # The sliceflow.json data source: a split read in blocks of 8 MiB.
        for _ in range(config["file_passes"]):
            for out in iter_ndjson(config["path"], BID_DDL):
                del out
            note()

    def large_batches() -> None:
        # sliceflow.json.decode on large batches of several sizes (the file's first 1/4 .. all).
        with open(config["path"], "rb") as f:
            text = f.read()
        for _ in range(config["file_passes"]):
            for part in (4, 3, 2, 1):
                end = text.rfind(b"\n", 0, len(text) // part) + 1
                out = decode(memoryview(text)[:end], BID_DDL)
                del out
            note()

    def window_local() -> None:
        # The window_agg local phase with Spark's default bundle (200,000 rows / 64 MiB).
        for task in range(config["window_tasks"]):
            rows = _window_batches(config["window_batches"], 50_000, task)
            for out in local_phase(wp, rows):
                del out
            note()

    def window_global() -> None:
        # The global phase over partial rows in (key, slice) order, as the shuffle hands them.
        for task in range(config["window_tasks"]):
            for partials in local_phase(sorted_wp, _window_batches(20, 50_000, task)):
                slices = (
                    partials.slice(i, BATCH_ROWS) for i in range(0, partials.num_rows, BATCH_ROWS)
                )
                for out in global_phase(wp, slices):
                    del out
            note()

    t0 = time.perf_counter()
    phase("from_json", from_json)
    phase("data source", data_source)
    phase("large batches", large_batches)
    phase("window local", window_local)
    phase("window global", window_global)
    seconds = time.perf_counter() - t0
    end = memory.cached_bytes()
    rss_end = _status_kib("self", "VmRSS")
    released = memory.release()
    after_release = memory.cached_bytes()
    return {
        "limits": memory.limits(),
        "baseline_kib": baseline,
        "peak_kib": peak[0],
        "end_kib": rss_end,
        "held_end": end,
        "held_max": held_max,
        "released": released,
        "held_after_release": after_release,
        "seconds": seconds,
        "phase_growth_kib": phases,
    }


def write_file(path: str, rows: int) -> None:
    """An NDJSON file of ``rows`` bids."""
    from sliceflow.testing import bid_lines

    with open(path, "w") as f:
        for start in range(0, rows, 100_000):
            n = min(100_000, rows - start)
            f.write("\n".join(bid_lines(n, seed=start)) + "\n")


def run_worker(
    config: dict[str, Any], env: dict[str, str] | None = None, interval: float = 0.005
) -> dict[str, Any]:
    """Runs ``worker(config)`` in a fresh process, sampling its RSS; its results plus
    ``sampled_peak_kib``."""
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(config)],
        stdout=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        text=True,
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            try:
                peak = max(peak, _status_kib(proc.pid, "VmRSS"))
            except (OSError, KeyError, ValueError):
                pass
            time.sleep(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"worker failed with exit code {proc.returncode}")
    result = json.loads(out.strip().splitlines()[-1])
    result["sampled_peak_kib"] = peak
    return result


def configs() -> dict[str, dict[str, Any]]:
    """The limits each run sets, by row name (the defaults spelled out, so that the worker-like
    process and the Spark job run the same limits)."""
    from sliceflow.memory import SPARK_WORKER_DEFAULTS, default_limits

    return {
        "Spark worker defaults": dict(SPARK_WORKER_DEFAULTS),
        "process defaults": default_limits(),
        **_FIXED_CONFIGS,
    }


_FIXED_CONFIGS: dict[str, dict[str, Any]] = {
    "limits 0 (off)": {
        "buffer_cache_bytes": 0,
        "huge_page_cache_bytes": 0,
    },
    "limits 4 MiB": {"buffer_cache_bytes": "4m", "huge_page_cache_bytes": "4m"},
    "previous fixed limits (512 MiB / 128 MiB)": {
        "buffer_cache_bytes": "512m",
        "huge_page_cache_bytes": "128m",
        "huge_page_cache_blocks": 64,
    },
}


def _python_workers(root_pid: int) -> list[int]:
    """The pids of the PySpark daemon and its workers under ``root_pid`` (the JVM)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root_pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                with open(f"/proc/{child}/cmdline", "rb") as f:
                    if b"pyspark" in f.read():
                        found.append(child)
            except OSError:
                pass
    return found


def _sample_workers(root_pid: int, done: threading.Event, found: dict[str, Any]) -> None:
    """Until ``done``: the largest RSS of one Python worker and of all together (KiB)."""
    while not done.is_set():
        total = 0
        for pid in _python_workers(root_pid):
            try:
                rss = _status_kib(pid, "VmRSS")
            except (OSError, KeyError, ValueError):
                continue
            found["seen"].add(pid)
            total += rss
            found["one"] = max(found["one"], rss)
        found["all"] = max(found["all"], total)
        time.sleep(0.02)


def spark_run(rows: int, path: str) -> None:
    """from_json over ``rows`` bids, then window_agg over them, in a local[2] Spark job per
    configuration; the peak RSS of any one Python worker, sampled from /proc."""
    from pyspark.sql import functions as F

    from sliceflow import window as W
    from sliceflow.memory import LIMITS, default_limits
    from sliceflow.spark import from_json, window_agg
    from sliceflow.testing import BID_DDL
    from sliceflow.testing.spark import local_session

    print(
        f"Spark local[2]: from_json over {rows:,} bids ({os.path.getsize(path) / MIB:.0f} MiB "
        "of NDJSON read as text, 10,000-row Arrow batches), then window_agg (tumble 10 s by "
        "bidder, count and max(price)) over them; every Python worker's RSS sampled each 20 ms"
    )
    print()
    print(
        "| limits | buffer / huge-page cache limit | Python workers seen | peak RSS of one "
        "worker | peak RSS of all workers | job s |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, limits in configs().items():
        conf = {"spark.sql.shuffle.partitions": "4", "spark.python.worker.reuse": "true"}
        for key, value in (limits or {}).items():
            conf[LIMITS[key][3]] = str(value)
        spark = local_session("local[2]", "bench-memory", conf)
        jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
        done = threading.Event()
        found: dict[str, Any] = {"one": 0, "all": 0, "seen": set()}
        sample = functools.partial(_sample_workers, jvm_pid, done, found)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.perf_counter()
        bids = spark.read.text(path).select(from_json("value", BID_DDL).alias("b")).select("b.*")
        out = window_agg(
            bids,
            W.tumble("dateTime", "10 seconds"),
            "bidder",
            [W.count().alias("n"), W.max("price").alias("top")],
        )
        total = out.agg(F.sum("n")).collect()[0][0]
        seconds = time.perf_counter() - t0
        done.set()
        sampler.join()
        assert total == rows, (total, rows)
        lim = {**{k: f"{v // MIB}m" for k, v in default_limits().items()}, **(limits or {})}
        spark.stop()
        print(
            f"| {name} | {lim['buffer_cache_bytes']} / {lim['huge_page_cache_bytes']} | "
            f"{len(found['seen'])} | {found['one'] / 1024:.0f} MiB | "
            f"{found['all'] / 1024:.0f} MiB | "
            f"{seconds:.1f} |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a short run (about 10 s)")
    parser.add_argument(
        "--spark",
        type=int,
        metavar="ROWS",
        help="also run a local[2] Spark job over ROWS bids per configuration",
    )
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    sizes = (
        {
            "tasks": 4,
            "batches": 10,
            "file_rows": 100_000,
            "file_passes": 2,
            "window_tasks": 2,
            "window_batches": 40,
        }
        if args.quick
        else {
            "tasks": 20,
            "batches": 25,
            "file_rows": 400_000,
            "file_passes": 3,
            "window_tasks": 6,
            "window_batches": 100,
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bids.ndjson")
        write_file(path, sizes.pop("file_rows"))
        if args.spark:
            spark_path = os.path.join(tmp, "spark.ndjson")
            write_file(spark_path, args.spark)
            spark_run(args.spark, spark_path)
            print()
        mb = os.path.getsize(path) / MIB
        print(
            f"worker: from_json {sizes['tasks']} tasks x {sizes['batches']} batches of "
            f"{BATCH_ROWS:,} bids; data source {sizes['file_passes']} passes over {mb:.0f} MiB "
            f"(8 MiB blocks); window_agg {sizes['window_tasks']} tasks x "
            f"{sizes['window_batches'] * BATCH_ROWS:,} rows (50,000 keys, tumble 1 min, "
            "bundle 200,000 rows / 64 MiB), local then global phase"
        )
        print()
        print(
            "| limits | buffer / huge-page cache limit | baseline RSS | peak RSS "
            "| peak - baseline | growth: from_json / data source / large batches / window local "
            "/ global "
            "| RSS at end | cache max (buffer / huge) | cache after release() | run s |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, limits in configs().items():
            r = run_worker({**sizes, "path": path, "limits": limits})
            lim = r["limits"]
            peak = max(r["peak_kib"], r["sampled_peak_kib"])
            growth = " / ".join(f"{v / 1024:.0f}" for v in r["phase_growth_kib"].values())
            print(
                f"| {name} | {lim['buffer_cache_bytes'] / MIB:.0f} / "
                f"{lim['huge_page_cache_bytes'] / MIB:.0f} | {r['baseline_kib'] / 1024:.0f} | "
                f"{peak / 1024:.0f} | {(peak - r['baseline_kib']) / 1024:.0f} | {growth} | "
                f"{r['end_kib'] / 1024:.0f} | {r['held_max']['buffer_cache'] / MIB:.1f} / "
                f"{r['held_max']['huge_page_cache'] / MIB:.1f} | "
                f"{sum(r['held_after_release'].values()) / MIB:.0f} | {r['seconds']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
