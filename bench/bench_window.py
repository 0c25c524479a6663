"""Window aggregation benchmarks: sliceflow's sliced windows against Spark's ``window()``.

Three parts, each timed in one process so that the ratios compare like with like:

* ``spark`` -- PySpark ``local[2]`` on the dense workload (``--rows`` bids, default 1,000,000,
  spread uniformly over one day of event time, ``--keys`` auctions, default 100), count +
  sum(price) + max(price) by auction: ``sliceflow.spark.window_agg`` vs
  ``groupBy(F.window(ts, size, slide), "auction").agg(...)``. Both are timed by the same action,
  ``df.write.format("noop")`` on the result, and checked against each other first (row count and
  a checksum of every output row) and against what the input implies (every row lies in
  size/slide windows, so sum(count) and sum(sum) are known).
* ``kernel`` -- ``sliceflow.window.aggregate`` on Arrow arrays in this process, pinned to ONE
  CPU: tumble over 100k keys, and a size/slide sweep from 1 to 10,000 at a fixed slide.
* ``stats`` -- the kernel's counters at hop(1 day, 1 min) on the dense workload: slices merged
  and retracted per fired window, for invertible (count, sum) and non-invertible (max)
  aggregates.

Rounds are interleaved (every contender once per round, after one untimed round that also runs
the checks) so that a noisy neighbour slows all of them alike; the tables show medians.

    python bench/bench_window.py                       # all parts, full size
    python bench/bench_window.py --quick               # smoke run, small sizes
    python bench/bench_window.py --only spark --no-sliceflow   # Spark's window() alone
    python bench/bench_window.py --only kernel --kernel-rows 20000000
    python bench/bench_window.py --json /tmp/window.json --write-readme
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from readme_blocks import write_block

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import spark_runs  # noqa: E402
from kernel_timing import pin_to_one_cpu, unpin  # noqa: E402
from run_info import machine, run_header  # noqa: E402
from spark_runs import DAY, HOUR, MINUTE, SECOND, human  # noqa: E402

#: Event time starts here (the Nexmark generator's epoch), in µs since 1970.
EPOCH_US = int(dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc).timestamp()) * SECOND
CACHE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sliceflow-bench-window")

TARGETS = {
    "hop(1 day, 1 min) / tumble(1 min)": 2.0,  # at most
    "vs Spark at hop(1 h, 1 min)": 10.0,  # at least
    "slices merged + retracted per window": 3.0,  # at most
    "kernel rows/s": 20e6,  # at least
    "cost per row, size/slide 1 .. 10,000": 1.5,  # at most (max / min)
}


# ---------------------------------------------------------------------------------------------
# workload


def bids(rows: int, keys: int, span_us: int = DAY, seed: int = 7) -> pa.Table:
    """``rows`` bids in event-time order, uniform over ``span_us`` from EPOCH_US, ``keys``
    auctions (1000 ..), prices uniform in [100, 10,000,000). Deterministic in the arguments."""
    rng = np.random.default_rng(seed)
    ts = np.sort(rng.integers(0, span_us, rows, dtype=np.int64)) + EPOCH_US
    auction = rng.integers(0, keys, rows, dtype=np.int64) + 1000
    price = rng.integers(100, 10_000_000, rows, dtype=np.int64)
    return pa.table(
        {
            "auction": auction,
            "price": price,
            "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        }
    )


def bids_parquet(rows: int, keys: int, files: int, seed: int = 7) -> str:
    """The bids as ``files`` parquet files (consecutive stretches of time) in a folder cached
    under /tmp, so Spark reads a file rather than a Python list; returns the folder."""
    folder = os.path.join(CACHE, f"bids-r{rows}-k{keys}-f{files}-s{seed}")
    done = os.path.join(folder, "_DONE")
    if os.path.exists(done):
        print(f"data: reusing {folder}", file=sys.stderr)
        return folder
    t0 = time.perf_counter()
    os.makedirs(folder, exist_ok=True)
    table = bids(rows, keys, seed=seed)
    per_file = -(-rows // files)
    for k in range(files):
        pq.write_table(
            table.slice(k * per_file, per_file), os.path.join(folder, f"part-{k:04d}.parquet")
        )
    with open(done, "w") as f:
        f.write("ok\n")
    print(
        f"data: wrote {rows:,} bids to {folder} in {time.perf_counter() - t0:.1f}s", file=sys.stderr
    )
    return folder


# ---------------------------------------------------------------------------------------------
# the sliceflow API (sliceflow.window as W)


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # tumble | hop
    size: int  # µs
    slide: int  # µs

    @property
    def label(self) -> str:
        if self.kind == "tumble":
            return f"tumble({human(self.size)})"
        return f"hop({human(self.size)}, {human(self.slide)})"

    @property
    def per_row(self) -> int:
        return self.size // self.slide


SPARK_CASES = {
    "tumble1m": Case("tumble1m", "tumble", MINUTE, MINUTE),
    "hop10m": Case("hop10m", "hop", 10 * MINUTE, MINUTE),
    "hop1h": Case("hop1h", "hop", HOUR, MINUTE),
    "hop4h": Case("hop4h", "hop", 4 * HOUR, MINUTE),
    "hop1d": Case("hop1d", "hop", DAY, MINUTE),
}
#: Spark's window() is run for these by default (hop 4 h took 279 s in the issue; hop 1 day
#: would explode every row into 1,440 windows).
SPARK_DEFAULT = ("tumble1m", "hop10m", "hop1h")


def window_module():
    from sliceflow import window as W

    return W


def sf_spec(W, case: Case, time_col: str = "ts"):
    if case.kind == "tumble":
        return W.tumble(time_col, dt.timedelta(microseconds=case.size))
    return W.hop(
        time_col, dt.timedelta(microseconds=case.size), dt.timedelta(microseconds=case.slide)
    )


def sf_aggs(W, which: str = "count,sum,max"):
    out = []
    for fn in which.split(","):
        if fn == "count":
            out.append(W.count().alias("cnt"))
        elif fn == "sum":
            out.append(W.sum("price").alias("s"))
        elif fn == "max":
            out.append(W.max("price").alias("m"))
        else:
            raise ValueError(fn)
    return out


def sf_aggregate(W, table: pa.Table, case: Case, aggs: str = "count,sum,max", stats=None):
    spec = sf_spec(W, case)
    if stats is None:
        return W.aggregate(table, spec, ["auction"], sf_aggs(W, aggs))
    return W.aggregate(table, spec, ["auction"], sf_aggs(W, aggs), stats=stats)


# ---------------------------------------------------------------------------------------------
# timing helpers


def interleaved(
    jobs: list[tuple[str, Callable[[], Any]]],
    repeats: int,
    warmup: Callable[[str], None] | None = None,
) -> dict[str, list[float]]:
    """Runs every job once per round; first an untimed round that calls ``warmup(label)``
    (the checks) instead of the job. Returns seconds per job."""
    times: dict[str, list[float]] = {label: [] for label, _ in jobs}
    if warmup is not None:
        for label, _ in jobs:
            t0 = time.perf_counter()
            warmup(label)
            print(f"  check {label}: ok ({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    for round_ in range(repeats):
        for label, job in jobs:
            gc.collect()
            start = time.perf_counter()
            result = job()
            times[label].append(time.perf_counter() - start)
            del result
        print(
            f"  round {round_ + 1}/{repeats}: "
            + ", ".join(f"{label} {times[label][-1]:.3f}s" for label, _ in jobs),
            file=sys.stderr,
            flush=True,
        )
    return times


def med(samples: list[float]) -> float:
    return statistics.median(samples)


def spread(samples: list[float], digits: int = 2) -> str:
    return f"{min(samples):.{digits}f}-{max(samples):.{digits}f}"


def paired(num: list[float], den: list[float]) -> str:
    """num/den round by round (same round = same background load): median (min-max)."""
    ratios = [a / b for a, b in zip(num, den, strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


# ---------------------------------------------------------------------------------------------
# spark: local[2]


def expected_sums(table: pa.Table, case: Case) -> tuple[int, int]:
    """sum(count) and sum(sum(price)) over all output windows: with windows aligned to the
    epoch every row lies in exactly size/slide of them."""
    return table.num_rows * case.per_row, pc.sum(table["price"]).as_py() * case.per_row


def bench_spark(
    rows: int,
    keys: int,
    files: int,
    repeats: int,
    cases: list[str],
    spark_for: list[str],
    with_sliceflow: bool,
    shuffle_partitions: int | None,
) -> tuple[str, dict[str, Any]]:
    spark_runs.share_sliceflow_with_workers()
    from pyspark.sql import functions as F

    from sliceflow.testing.spark import local_session

    folder = bids_parquet(rows, keys, files)
    table = pq.read_table(folder)
    conf = {"spark.driver.memory": "4g"}
    if shuffle_partitions:
        conf["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
    spark = local_session("local[2]", "sliceflow-bench-window", conf)
    df = spark.read.parquet(folder)
    n_rows = df.count()
    assert n_rows == rows, (n_rows, rows)
    partitions = df.rdd.getNumPartitions()
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")
    aqe = spark.conf.get("spark.sql.adaptive.enabled")

    def spark_window(case: Case):
        return spark_runs.spark_window_agg(
            df, case.size, None if case.kind == "tumble" else case.slide
        )

    def sliceflow_window(case: Case):
        import sliceflow.spark as sfs

        W = window_module()
        return sfs.window_agg(df, sf_spec(W, case), ["auction"], sf_aggs(W))

    def checksum(frame) -> tuple:
        row = frame.agg(
            F.count("*"),
            F.sum("cnt"),
            F.sum("s"),
            F.sum("m"),
            F.sum(F.hash("window_start", "window_end", "auction", "cnt", "s", "m").cast("bigint")),
        ).collect()[0]
        return tuple(row)

    frames: dict[str, Any] = {}
    pairs: dict[str, tuple[str | None, str | None]] = {}  # case -> (sliceflow label, spark label)
    for name in cases:
        case = SPARK_CASES[name]
        sf_label = sp_label = None
        if with_sliceflow:
            sf_label = f"sliceflow {case.label}"
            frames[sf_label] = (case, sliceflow_window(case))
        if name in spark_for:
            sp_label = f"Spark window() {case.label}"
            frames[sp_label] = (case, spark_window(case))
        if sf_label or sp_label:
            pairs[name] = (sf_label, sp_label)
    cases = [name for name in cases if name in pairs]
    floor = "read parquet only (floor)"
    trip = "read parquet + identity mapInArrow (floor)"

    def identity(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from batches

    columns = df.select("auction", "price", "ts")
    frames = {
        floor: (None, columns),
        # The trip JVM -> Python -> JVM that window_agg's local phase makes with the input.
        trip: (None, columns.mapInArrow(identity, columns.schema)),
        **frames,
    }

    sums: dict[str, tuple] = {}
    output_rows: dict[str, int] = {}

    def check(label: str) -> None:
        case, frame = frames[label]
        if case is None:
            frame.write.format("noop").mode("overwrite").save()
            return
        got = checksum(frame)
        want_n, want_s = expected_sums(table, case)
        assert (got[1], got[2]) == (want_n, want_s), (label, got, want_n, want_s)
        sums[label] = got
        output_rows[label] = got[0]
        other = [lb for lb in pairs[case.name] if lb and lb != label and lb in sums]
        for lb in other:
            assert sums[lb] == got, f"{label} disagrees with {lb}: {got} != {sums[lb]}"

    def noop(frame):
        return lambda: frame.write.format("noop").mode("overwrite").save()

    jobs = [(label, noop(frame)) for label, (_, frame) in frames.items()]
    print(
        f"spark: {rows:,} bids, {keys} auctions, one day, {partitions} input partitions, "
        f"shuffle partitions {shuffle}, AQE {aqe}",
        file=sys.stderr,
    )
    times = interleaved(jobs, repeats, warmup=check)
    spark.stop()

    m = {label: med(samples) for label, samples in times.items()}
    out = [
        f"**PySpark** `local[2]`: {rows:,} bids uniform over one day of event time, {keys} "
        f"auctions, {files} parquet files ({partitions} input partitions), "
        f"`spark.sql.shuffle.partitions` = {shuffle}, AQE {aqe}; count(*) + sum(price) + "
        f'max(price) by auction; each job `df.write.format("noop")` on the result, one '
        f"untimed round (the checks), median of {repeats}.",
        "",
        f"The read alone (`{floor}`) takes {m[floor]:.2f} s (median, {spread(times[floor])}); "
        f"the read and the input's trip through an identity `mapInArrow` (`{trip}`) "
        f"{m[trip]:.2f} s ({spread(times[trip])}).",
        "",
        "| windows | windows/row | output rows | sliceflow s | min-max | Spark window() s | "
        "min-max | vs Spark | round by round |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    results: dict[str, Any] = {"floor": m[floor], "trip_floor": m[trip], "cases": {}}
    for name in cases:
        case = SPARK_CASES[name]
        sf_label, sp_label = pairs[name]
        n_out = output_rows.get(sf_label or "", output_rows.get(sp_label or "", 0))
        cells = [case.label, f"{case.per_row:,}", f"{n_out:,}"]
        entry: dict[str, Any] = {"output_rows": n_out, "windows_per_row": case.per_row}
        for label in (sf_label, sp_label):
            if label:
                cells += [f"{m[label]:.2f}", spread(times[label])]
            else:
                cells += ["", ""]
        if sf_label and sp_label:
            cells += [
                f"{m[sp_label] / m[sf_label]:.1f}x",
                paired(times[sp_label], times[sf_label]),
            ]
            entry["vs_spark"] = m[sp_label] / m[sf_label]
        else:
            cells += ["", ""]
        if sf_label:
            entry["sliceflow_s"] = times[sf_label]
        if sp_label:
            entry["spark_s"] = times[sp_label]
        results["cases"][name] = entry
        out.append("| " + " | ".join(cells) + " |")

    out.append("")
    lines = []
    if with_sliceflow and "hop1d" in cases and "tumble1m" in cases:
        a, b = times[pairs["hop1d"][0]], times[pairs["tumble1m"][0]]
        r = med(a) / med(b)
        lines.append(
            f"hop(1 day, 1 min) / tumble(1 min), sliceflow: {r:.2f}x, round by round "
            f"{paired(a, b)} (target <= 2x: {verdict(r <= 2.0)})"
        )
        results["hop1d_over_tumble1m"] = r
    if "vs_spark" in results["cases"].get("hop1h", {}):
        r = results["cases"]["hop1h"]["vs_spark"]
        bound = med(results["cases"]["hop1h"]["spark_s"]) / m[trip]
        lines.append(
            f"hop(1 h, 1 min) vs Spark window(): {r:.1f}x (target >= 10x: {verdict(r >= 10)}; "
            f"with a kernel and a shuffle that took no time, i.e. at the identity "
            f"`mapInArrow` floor: {bound:.1f}x)"
        )
    if lines:
        out.append("Targets: " + "; ".join(lines) + ".")
    return "\n".join(out), results


# ---------------------------------------------------------------------------------------------
# kernel: one core


@dataclass(frozen=True)
class KernelCase:
    label: str
    table: str  # which input
    case: Case
    group: str


def bench_kernel(
    rows: int, keys: int, sweep_rows: int, sweep_keys: int, repeats: int, cpu: int
) -> tuple[str, dict[str, Any]]:
    W = window_module()
    old_mask = pin_to_one_cpu(cpu)
    old_cpu_count = pa.cpu_count()
    pa.set_cpu_count(1)
    try:
        t0 = time.perf_counter()
        inputs = {
            "wide": bids(rows, keys),
            # The same keys, ten rows per key and minute: the bundle folds rows, as it does
            # when a time range holds many rows per key.
            "dense": bids(keys * 100, keys, span_us=10 * MINUTE),
            "sweep": bids(sweep_rows, sweep_keys),
        }
        print(f"kernel: generated the inputs in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        cases = [
            KernelCase("tumble(1 min)", "wide", Case("t1m", "tumble", MINUTE, MINUTE), "wide"),
            KernelCase("tumble(1 h)", "wide", Case("t1h", "tumble", HOUR, HOUR), "wide"),
            KernelCase(
                "tumble(1 min), dense", "dense", Case("t1m", "tumble", MINUTE, MINUTE), "dense"
            ),
        ]
        for ratio in (1, 10, 100, 1_000, 10_000):
            c = Case(f"s{ratio}", "tumble" if ratio == 1 else "hop", ratio * SECOND, SECOND)
            cases.append(KernelCase(c.label, "sweep", c, "sweep"))

        def job(kc: KernelCase) -> Callable[[], Any]:
            table = inputs[kc.table]
            return lambda: sf_aggregate(W, table, kc.case)

        def arrow_group_by(table: pa.Table, size: int) -> pa.Table:
            """The same tumbling groups by Arrow's hash aggregation (one thread): a yardstick
            for a kernel that also keeps slices, fires windows and orders its output."""
            ts = pc.cast(table["ts"], pa.int64()).to_numpy()
            start = ts - ts % size
            return (
                pa.table({"auction": table["auction"], "start": start, "price": table["price"]})
                .group_by(["auction", "start"], use_threads=False)
                .aggregate([("price", "count"), ("price", "sum"), ("price", "max")])
            )

        arrow_label = {kc.label: f"pyarrow group_by, {kc.label}" for kc in cases}
        tumbles = [kc for kc in cases if kc.case.kind == "tumble" and kc.table != "sweep"]

        out_rows: dict[str, int] = {}

        def check(label: str) -> None:
            if label.startswith("pyarrow "):
                return
            kc = next(k for k in cases if k.label == label)
            table = inputs[kc.table]
            got = sf_aggregate(W, table, kc.case)
            want_n, want_s = expected_sums(table, kc.case)
            assert pc.sum(got["cnt"]).as_py() == want_n, label
            assert pc.sum(got["s"]).as_py() == want_s, label
            out_rows[label] = got.num_rows
            if kc.case.kind == "tumble":
                # Against pyarrow's group_by on the same rows (one thread).
                ref = arrow_group_by(table, kc.case.size)
                assert ref.num_rows == got.num_rows, (label, ref.num_rows, got.num_rows)
                assert pc.max(ref["price_max"]).as_py() == pc.max(got["m"]).as_py()
                assert pc.sum(ref["price_max"]).as_py() == pc.sum(got["m"]).as_py()

        jobs = [(kc.label, job(kc)) for kc in cases]
        for kc in tumbles:
            table, size = inputs[kc.table], kc.case.size
            jobs.append((arrow_label[kc.label], lambda t=table, z=size: arrow_group_by(t, z)))
        times = interleaved(jobs, repeats, warmup=check)
    finally:
        pa.set_cpu_count(old_cpu_count)
        unpin(old_mask)

    m = {label: med(samples) for label, samples in times.items()}
    results: dict[str, Any] = {"cases": {}}
    out = [
        f"**Kernel**: `sliceflow.window.aggregate` on an in-memory Arrow table, one core (pinned "
        f"to CPU {cpu}, `pa.set_cpu_count(1)`); count(*) + sum(price) + max(price) by auction; "
        f"median of {repeats}, after an untimed round that checks sum(count) and sum(sum) "
        f"(and, for tumble, every count/sum/max group against `pyarrow` group_by).",
        "",
        f"* wide: {rows:,} rows uniform over one day, {keys:,} keys (about one row per key and "
        f"minute: every row makes its own partial row);",
        f"* dense: {keys * 100:,} rows uniform over ten minutes, {keys:,} keys (ten rows per key "
        f"and minute);",
        f"* sweep: {sweep_rows:,} rows uniform over one day, {sweep_keys:,} keys, slide 1 s, "
        f"size = size/slide seconds: every key has rows in nearly every 1 s slice "
        f"(~{sweep_rows / (sweep_keys * 86_400):.1f} rows per key and slice) and windows are "
        f"fired at every slide, so the number of output rows stays near keys x 86,400 "
        f"(plus keys x size/slide at the end of the day) while each row lies in size/slide "
        f"windows.",
        "",
        "| input | windows | size/slide | output rows | median s | min-max | M rows/s | ns/row "
        "| cost/row vs size/slide=1 | pyarrow group_by s | pyarrow / sliceflow |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    sizes = {"wide": rows, "dense": keys * 100, "sweep": sweep_rows}
    sweep_cases = [kc for kc in cases if kc.table == "sweep"]
    base = m[sweep_cases[0].label] / sweep_rows
    for kc in cases:
        n = sizes[kc.table]
        t = m[kc.label]
        rel = f"{(t / n) / base:.2f}x" if kc.table == "sweep" else ""
        arrow = m.get(arrow_label[kc.label])
        vs_arrow = f"| {arrow:.3f} | {arrow / t:.2f}x |" if arrow else "| | |"
        out.append(
            f"| {kc.table} | {kc.label} | {kc.case.per_row:,} | {out_rows[kc.label]:,} | "
            f"{t:.3f} | {spread(times[kc.label], 3)} | {n / t / 1e6:.1f} | {t / n * 1e9:.0f} "
            f"| {rel} {vs_arrow}"
        )
        results["cases"][kc.label] = {
            "input": kc.table,
            "rows": n,
            "output_rows": out_rows[kc.label],
            "seconds": times[kc.label],
        }
    tput = rows / m["tumble(1 min)"]
    tput_h = rows / m["tumble(1 h)"]
    tput_dense = keys * 100 / m["tumble(1 min), dense"]
    results["rows_per_s_tumble1m_dense"] = tput_dense
    sweep = [m[kc.label] for kc in cases if kc.table == "sweep"]
    flat = max(sweep) / min(sweep)
    results["rows_per_s_tumble1m"] = tput
    results["cost_spread"] = flat
    out.append("")
    out.append(
        f"Targets: tumble over {keys:,} keys >= 20M rows/s: {tput / 1e6:.1f}M rows/s at "
        f"tumble(1 min), {tput_h / 1e6:.1f}M at tumble(1 h) "
        f"({verdict(tput >= 20e6)} / {verdict(tput_h >= 20e6)}), "
        f"{tput_dense / 1e6:.1f}M on the dense input ({verdict(tput_dense >= 20e6)}); "
        f"cost per row within 1.5x "
        f"over size/slide 1 .. 10,000: max/min {flat:.2f}x ({verdict(flat <= 1.5)})."
    )
    return "\n".join(out), results


# ---------------------------------------------------------------------------------------------
# stats: how many slices each fired window touches


def bench_stats(rows: int, keys: int) -> tuple[str, dict[str, Any]]:
    W = window_module()
    table = bids(rows, keys)
    case = SPARK_CASES["hop1d"]
    out = [
        f"**Kernel counters** at {case.label} on the dense workload ({rows:,} rows over one day, "
        f"{keys} keys; `W.aggregate(..., stats=...)`). A full re-merge would touch "
        f"{case.per_row:,} slices per window. Per window = per fired window and per aggregate.",
        "",
        "| aggregates | windows fired | slices | merged | retracted | two-stacks combines | "
        "(merged + retracted) / window | the same / aggregate | + combines, / aggregate |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    results: dict[str, Any] = {}
    worst = 0.0
    for aggs in ("count,sum", "max", "count,sum,max"):
        stats: dict[str, Any] = {}
        got = sf_aggregate(W, table, case, aggs, stats=stats)
        n_aggs = len(aggs.split(","))
        fired = stats["windows_fired"]
        assert fired == got.num_rows, (fired, got.num_rows)
        per_window = (stats["slices_merged"] + stats["slices_retracted"]) / fired
        mr = per_window / n_aggs
        allw = mr + stats.get("partials_combined", 0) / fired / n_aggs
        worst = max(worst, mr)
        results[aggs] = dict(stats)
        out.append(
            f"| {aggs} | {fired:,} | {stats['slices']:,} | {stats['slices_merged']:,} | "
            f"{stats['slices_retracted']:,} | {stats.get('partials_combined', 0):,} | "
            f"{per_window:.2f} | {mr:.2f} | {allw:.2f} |"
        )
    out.append("")
    out.append(
        f"Target: slices merged + retracted per fired window (and aggregate) <= 3: worst "
        f"{worst:.2f} ({verdict(worst <= 3)})."
    )
    return "\n".join(out), results


# ---------------------------------------------------------------------------------------------
# README / main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", help="comma-separated parts: spark, kernel, stats (default: all three)"
    )
    parser.add_argument("--rows", type=int, help="bids in the dense workload (default 1000000)")
    parser.add_argument("--keys", type=int, default=100, help="auctions in the dense workload")
    parser.add_argument("--files", type=int, default=4, help="parquet files for Spark")
    parser.add_argument(
        "--cases",
        default="tumble1m,hop10m,hop1h,hop1d",
        help=f"Spark-part windows, of {','.join(SPARK_CASES)}",
    )
    parser.add_argument(
        "--spark-for",
        default=",".join(SPARK_DEFAULT),
        help="cases that also run Spark's window() (hop4h: ~5 min a run)",
    )
    parser.add_argument(
        "--no-sliceflow", action="store_true", help="Spark part: Spark's window() only"
    )
    parser.add_argument("--shuffle-partitions", type=int, help="spark.sql.shuffle.partitions")
    parser.add_argument("--kernel-rows", type=int, help="kernel wide input (default 4000000)")
    parser.add_argument("--kernel-keys", type=int, default=100_000, help="kernel wide input keys")
    parser.add_argument("--sweep-rows", type=int, help="kernel sweep input (default 4000000)")
    parser.add_argument("--sweep-keys", type=int, default=10, help="kernel sweep input keys")
    parser.add_argument("--cpu", type=int, default=0, help="the CPU the kernel part runs on")
    parser.add_argument("--quick", action="store_true", help="small sizes, one timed round")
    parser.add_argument("--repeat", type=int, help="timed rounds (default 3)")
    parser.add_argument("--json", help="also write the results (seconds per run) here")
    parser.add_argument("--note", help="a line for the header, e.g. which sliceflow build ran")
    parser.add_argument("--write-readme", action="store_true", help="update bench/README.md")
    args = parser.parse_args(argv)

    parts = args.only.split(",") if args.only else ["spark", "kernel", "stats"]
    repeats = args.repeat or (1 if args.quick else 3)
    rows = args.rows or (100_000 if args.quick else 1_000_000)
    command, header = run_header("bench/bench_window.py", argv, args.note)
    print(header + "\n")
    results: dict[str, Any] = {"command": command, "machine": machine()}
    for part in parts:
        if part == "spark":
            block, res = bench_spark(
                rows,
                args.keys,
                args.files,
                repeats,
                args.cases.split(","),
                [c for c in args.spark_for.split(",") if c],
                not args.no_sliceflow,
                args.shuffle_partitions,
            )
        elif part == "kernel":
            block, res = bench_kernel(
                args.kernel_rows or (1_000_000 if args.quick else 4_000_000),
                args.kernel_keys,
                args.sweep_rows or (1_000_000 if args.quick else 4_000_000),
                args.sweep_keys,
                repeats,
                args.cpu,
            )
        elif part == "stats":
            block, res = bench_stats(rows, args.keys)
        else:
            raise SystemExit(f"unknown part {part!r}")
        results[part] = res
        print(block + "\n", flush=True)
        if args.write_readme:
            write_block(f"window-{part}", block, header)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
        print(f"wrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
