"""Streaming window benchmarks: sliceflow's streaming ``window_agg`` against Spark's own
append-mode ``groupBy(window(...))`` on Structured Streaming.

One PySpark ``local[2]`` session, every query in the same run so that the ratios compare like
with like. Input: Nexmark bids (``sliceflow.testing.nexmark.bid_lines``; ``auction``,
``price`` and the bid time as ``ts``) in event-time order at ``--rate`` bids per minute of
event time, cut into one parquet file per micro-batch (increasing modification times, read with
``maxFilesPerTrigger`` 1) and streamed with ``withWatermark("ts", --delay)``, so every
micro-batch moves event time (and the watermark) forward by a minute or more and windows fire
during the run. Every query computes count(*), sum(price), max(price) by auction, has its own
checkpoint, uses the RocksDB state store, writes to the ``noop`` sink in append mode and runs
with ``trigger(availableNow=True)``:

* ``sf-hop1d``, ``sf-hop4h``, ``sf-tumble``, ``sf-cumulate`` -- ``sliceflow.spark.window_agg``
  with ``W.hop("ts", "1 day", "1 minute")``, ``W.hop("ts", "4 hours", "1 minute")``,
  ``W.tumble("ts", "1 minute")``, ``W.cumulate("ts", step="1 minute", max_size="1 day")``;
* ``spark-tumble``, ``spark-hop4h`` -- ``groupBy(F.window("ts", "1 minute"), "auction")`` and
  ``groupBy(F.window("ts", "4 hours", "1 minute"), "auction")``, ``.agg(...)``.

Per micro-batch times come from the queries' progress (``durationMs["triggerExecution"]``),
the first micro-batch of every query left out (start-up); the wall time covers the whole query
(start-up, every file, the final no-data micro-batch that fires what the last watermark
closes). State store numbers come from the progress's ``stateOperators``. Before timing, every
query runs on a small input into ``foreachBatch`` and what it emits in each micro-batch is
compared with ``sliceflow.testing.window_stream_reference`` (a brute-force model of Spark's
append mode).

    python bench/bench_window_stream.py                       # full size
    python bench/bench_window_stream.py --quick               # smoke run, small sizes
    python bench/bench_window_stream.py --queries sf-hop1d,spark-tumble --many ""
    python bench/bench_window_stream.py --repeat 2 --write-readme
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import spark_runs  # noqa: E402
from spark_runs import (  # noqa: E402
    DAY,
    HOUR,
    MINUTE,
    StreamRun,
    human,
    median,
    p90,
    pooled,
    verdict,
)

CACHE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "sliceflow-bench-window-stream")
SCHEMA = "auction BIGINT, price BIGINT, ts TIMESTAMP"
README_BLOCK = "window-stream"


@dataclass(frozen=True)
class Query:
    name: str
    engine: str  # sliceflow | spark
    kind: str  # tumble | hop | cumulate
    size: int  # µs (cumulate: max size)
    slide: int  # µs (cumulate: step)

    @property
    def window(self) -> str:
        if self.kind == "tumble":
            return f"tumble({human(self.size)})"
        if self.kind == "hop":
            return f"hop({human(self.size)}, {human(self.slide)})"
        return f"cumulate({human(self.slide)}, {human(self.size)})"

    @property
    def label(self) -> str:
        return f"{'sliceflow' if self.engine == 'sliceflow' else 'Spark'} {self.window}"


QUERIES = {
    q.name: q
    for q in (
        Query("sf-hop1d", "sliceflow", "hop", DAY, MINUTE),
        Query("sf-hop4h", "sliceflow", "hop", 4 * HOUR, MINUTE),
        Query("sf-cumulate", "sliceflow", "cumulate", DAY, MINUTE),
        Query("sf-tumble", "sliceflow", "tumble", MINUTE, MINUTE),
        Query("spark-tumble", "spark", "tumble", MINUTE, MINUTE),
        Query("spark-hop4h", "spark", "hop", 4 * HOUR, MINUTE),
    )
}
#: The issue's targets: (numerator, denominator, what, "le"/"ge", limit) on median micro-batch
#: times of the same run.
TARGETS = (
    ("sf-hop1d", "spark-tumble", "sliceflow hop(1 day, 1 min) / Spark tumble(1 min)", "le", 1.5),
    ("spark-hop4h", "sf-hop1d", "Spark hop(4 h, 1 min) / sliceflow hop(1 day, 1 min)", "ge", 3.0),
    ("sf-cumulate", "sf-tumble", "sliceflow cumulate(1 min, 1 day) / tumble(1 min)", "le", 1.5),
)
#: Other ratios shown (no target).
OTHER_RATIOS = (
    ("sf-tumble", "spark-tumble", "sliceflow tumble / Spark tumble (same window)"),
    ("spark-hop4h", "sf-hop4h", "Spark hop(4 h, 1 min) / sliceflow hop(4 h, 1 min) (same window)"),
    ("sf-hop1d", "sf-tumble", "sliceflow hop(1 day, 1 min) / sliceflow tumble(1 min)"),
)
#: Same-window pairs for the state store comparison (sliceflow, Spark).
SAME_WINDOW = (("sf-tumble", "spark-tumble"), ("sf-hop4h", "spark-hop4h"))
#: sliceflow's counters (``WindowMetrics``) shown in the state table, summed over a query.
SLICEFLOW_COUNTERS = ("windows_emitted", "rows_late", "bucket_runs")


# ---------------------------------------------------------------------------------------------
# workload


@dataclass(frozen=True)
class Workload:
    batches: int
    rows: int  # per micro-batch
    auctions: int

    @property
    def label(self) -> str:
        return f"{self.batches} x {self.rows:,}"

    @property
    def key(self) -> str:
        return f"{self.batches}x{self.rows}-a{self.auctions}"


def parse_workloads(text: str, auctions: int) -> list[Workload]:
    out = []
    for item in (x for x in text.split(",") if x.strip()):
        b, _, r = item.strip().lower().partition("x")
        out.append(Workload(int(b), int(r.replace("_", "")), auctions))
    return out


def write_workload(root: str, w: Workload, rate: int, seed: int = 42) -> str:
    """``w.batches`` parquet files of ``w.rows`` Nexmark bids each (``auction``, ``price``,
    ``ts``), one stream of bids in event-time order at ``rate`` bids per minute, cut in order;
    cached under ``root``; modification times one second apart in batch order (the file
    source takes the oldest first). Returns the folder."""
    from sliceflow import json as sj
    from sliceflow.testing.nexmark import BID_DDL, bid_lines

    eps = max(1, rate // 60)
    folder = os.path.join(root, f"bids-{w.key}-r{rate}-s{seed}")
    os.makedirs(folder, exist_ok=True)
    names = [f"batch-{i:05d}.parquet" for i in range(w.batches)]
    if not all(os.path.exists(os.path.join(folder, n)) for n in names):
        t0 = time.perf_counter()
        lines = bid_lines(w.batches * w.rows, seed=seed, auctions=w.auctions, events_per_second=eps)
        for name in names:
            chunk = [next(lines) for _ in range(w.rows)]
            batch = sj.decode(("\n".join(chunk) + "\n").encode(), BID_DDL)
            table = pa.table(
                {
                    "auction": batch.column("auction"),
                    "price": batch.column("price"),
                    "ts": batch.column("dateTime"),
                }
            )
            spark_runs.write_batch_file(table, folder, name)
        spark_runs.log(
            f"data: wrote {w.batches} files of {w.rows:,} bids ({w.auctions:,} auctions, "
            f"{rate:,} bids per minute of event time) to {folder} in "
            f"{time.perf_counter() - t0:.1f}s"
        )
    spark_runs.stamp_in_order(folder, names)
    return folder


def read_batches(folder: str, n: int) -> list[pa.Table]:
    return [pq.read_table(os.path.join(folder, name)) for name in spark_runs.batch_files(folder, n)]


def keys_seen(folder: str, n: int) -> list[int]:
    """Distinct auctions in the first 1, 2, .., ``n`` files: the keys a query has seen after
    each micro-batch."""
    seen: set[int] = set()
    out = []
    for t in read_batches(folder, n):
        seen.update(np.unique(t["auction"].to_numpy()).tolist())
        out.append(len(seen))
    return out


def event_span(folder: str, n: int) -> tuple[dt.datetime, dt.datetime]:
    ts = [t["ts"] for t in read_batches(folder, n)]
    return ts[0][0].as_py(), ts[-1][-1].as_py()


# ---------------------------------------------------------------------------------------------
# the queries


def sf_spec(q: Query):
    from sliceflow import window as W

    if q.kind == "tumble":
        return W.tumble("ts", dt.timedelta(microseconds=q.size))
    if q.kind == "hop":
        return W.hop("ts", dt.timedelta(microseconds=q.size), dt.timedelta(microseconds=q.slide))
    return W.cumulate(
        "ts", step=dt.timedelta(microseconds=q.slide), max_size=dt.timedelta(microseconds=q.size)
    )


def sf_aggs():
    from sliceflow import window as W

    return [W.count().alias("cnt"), W.sum("price").alias("s"), W.max("price").alias("m")]


def aggregate(src, q: Query, *, buckets: int | None = None, metrics: Any = None):
    """``q`` on the watermarked stream ``src``: window_start, window_end, auction, cnt, s, m
    (sliceflow also gives window_time)."""
    if q.engine == "sliceflow":
        from sliceflow.spark import window_agg

        extra: dict[str, Any] = {}
        if buckets:
            extra["buckets"] = buckets
        if metrics is not None:
            extra["metrics"] = metrics
        return window_agg(src, sf_spec(q), by=["auction"], aggs=sf_aggs(), **extra)
    return spark_runs.spark_window_agg(src, q.size, None if q.kind == "tumble" else q.slide)


def ref_window(q: Query):
    from sliceflow.testing.window_reference import RefWindow

    if q.kind == "tumble":
        return RefWindow("tumble", q.size)
    return RefWindow(q.kind, q.size, q.slide)


# ---------------------------------------------------------------------------------------------
# one streaming query


@dataclass
class Run(StreamRun):
    """One query: its micro-batches with data (the first included; counters: sliceflow's
    WindowMetrics), and apart from them the no-data ones."""

    query: str
    workload: Workload
    durations: list[dict[str, float]] = field(default_factory=list)  # durationMs, per data batch
    no_data_s: list[float] = field(default_factory=list)  # no-data micro-batches
    no_data_output: int = 0
    watermarks: list[str] = field(default_factory=list)

    @property
    def windows_emitted(self) -> int:
        return sum(self.output_rows) + self.no_data_output


def to_run(name: str, w: Workload, progresses: list[dict], wall: float) -> Run:
    run = Run(name, w, wall_s=wall)
    for p in progresses:
        secs = p["durationMs"].get("triggerExecution", 0) / 1000
        out = (p.get("sink") or {}).get("numOutputRows", 0)
        if p.get("numInputRows", 0) == 0:
            run.no_data_s.append(secs)
            run.no_data_output += max(0, out)
            continue
        store = run.add_batch(p, max(0, out))
        for op in p.get("stateOperators") or []:
            for name in ("allUpdatesTimeMs", "allRemovalsTimeMs"):
                store[name] = store.get(name, 0) + op.get(name, 0)
        run.durations.append(dict(p["durationMs"]))
        run.watermarks.append((p.get("eventTime") or {}).get("watermark", ""))
    return run


# ---------------------------------------------------------------------------------------------
# the check: every query on a small input, what each micro-batch emits against the model


def check_query(spark, q: Query, folder: str, batches: int, delay_us: int, root: str) -> str:
    from sliceflow.testing.window_reference import RefAgg
    from sliceflow.testing.window_stream_reference import stream_reference

    src = spark_runs.file_stream(spark, SCHEMA, folder).withWatermark(
        "ts", f"{delay_us // 1000} milliseconds"
    )
    frame = aggregate(src, q).select("window_start", "window_end", "auction", "cnt", "s", "m")
    got: dict[int, list[tuple]] = {}

    def collect(batch_df, batch_id):
        got.setdefault(batch_id, []).extend(tuple(r) for r in batch_df.collect())

    with spark_runs.scratch_checkpoint(root, f"check-{q.name}-") as checkpoint:
        progresses, wall = spark_runs.run_query(
            frame, lambda w: w.foreachBatch(collect), checkpoint
        )
    inputs = read_batches(folder, batches)
    ref = stream_reference(
        inputs,
        "ts",
        ref_window(q),
        ["auction"],
        [RefAgg("count", None, "cnt"), RefAgg("sum", "price", "s"), RefAgg("max", "price", "m")],
        delay_us=delay_us,
        initial_watermark_ms=0,
    )

    def rows_of(table: pa.Table) -> list[tuple]:
        cols = [table[c].to_pylist() for c in ("window_start", "window_end", "auction")]
        cols += [table[c].to_pylist() for c in ("cnt", "s", "m")]
        return sorted(
            (a.replace(tzinfo=None), b.replace(tzinfo=None), *rest)
            for a, b, *rest in zip(*cols, strict=True)
        )

    want = [rows_of(t) for t in ref.batches]
    have_ids = sorted(p["batchId"] for p in progresses)
    have = [
        sorted(
            (a.replace(tzinfo=None), b.replace(tzinfo=None), *rest)
            for a, b, *rest in got.get(i, [])
        )
        for i in have_ids
    ]
    # Spark runs the final no-data batch only if the watermark moved; the model always has it.
    if len(have) == len(want) - 1 and not want[-1]:
        want = want[:-1]
    if have != want:
        flat_have = sorted(r for b in have for r in b)
        flat_want = sorted(r for b in want for r in b)
        where = "in other micro-batches than the model" if flat_have == flat_want else ""
        raise AssertionError(
            f"{q.label}: output differs from the model {where}: micro-batches {len(have)} vs "
            f"{len(want)}, rows per batch {[len(b) for b in have]} vs {[len(b) for b in want]}"
        )
    return (
        f"{sum(len(b) for b in have)} windows in {len(have)} micro-batches equal the model "
        f"(rows per micro-batch {[len(b) for b in have]}; {wall:.1f}s)"
    )


# ---------------------------------------------------------------------------------------------
# where the time goes: sliceflow's Python side of a micro-batch, replayed in this process

#: The pieces timed by ``profile_steps``, in the order a micro-batch runs them.
STEP_PIECES = (
    ("pack", "pack"),  # the rows of each bucket as an IPC message (the mapInArrow step)
    ("unpack", "unpack"),  # the processor reads the messages back
    ("load", "state load"),  # the bucket's sealed state value opened, its partials from IPC
    ("fold", "fold"),  # local kernel: rows -> (key, slice) partials, sorted
    ("sweep", "sweep"),  # global kernel: merge with the carried partials, fire, carry
    ("save", "state save"),  # the carried partials to IPC, sealed as a state value
    ("to_pandas", "to pandas"),  # the fired windows as the pandas frame the processor yields
)


def profile_steps(
    q: Query, folder: str, n: int, buckets: int, delay_ms: int, arrow_batch: int
) -> tuple[dict[str, list[float]] | None, str]:
    """Replays what sliceflow's Python workers do for ``q`` on the first ``n`` files of
    ``folder``, in this process (one thread): per micro-batch, the packing step on Arrow
    batches of ``arrow_batch`` rows, then per bucket what ``WindowBucketProcessor`` does (unpack
    the IPC messages, load the state, ``sliceflow.window.state.advance``, save the state, the
    fired windows to pandas), each piece timed and summed over the buckets. Keys go to buckets
    by ``auction % buckets`` (Spark uses a hash; the spread is as even). Watermarks as Spark's:
    0, then the largest time of the earlier micro-batches minus the delay. Returns seconds per
    micro-batch for every piece of ``STEP_PIECES`` (the first micro-batch included), or None
    and why not (these are sliceflow internals: a version without them is skipped)."""
    try:
        from sliceflow._runtime.state_format import open_value, seal
        from sliceflow.spark._runtime.bucket_labels import bucket_labels
        from sliceflow.spark._runtime.bucket_rows import pack_rows, to_pandas
        from sliceflow.window.plan import build_plan
        from sliceflow.window.plan import identity as window_identity
        from sliceflow.window.state import advance, fold, from_sections, rows_sections
    except ImportError as e:
        return None, f"sliceflow internals not found ({e})"
    schema = pa.schema(
        [("ts", pa.timestamp("us", tz="UTC")), ("auction", pa.int64()), ("price", pa.int64())]
    )
    wp = build_plan(schema, sf_spec(q), ["auction"], sf_aggs())
    identity = window_identity(wp, "all", buckets)
    states: dict[int, bytes] = {}
    marks: dict[int, int] = {}
    times: dict[str, list[float]] = {name: [] for name, _ in STEP_PIECES}
    watermark_ms, max_ts = 0, None
    for table in read_batches(folder, n):
        spent = dict.fromkeys(times, 0.0)
        table = table.select(schema.names).cast(schema)
        bucket = pa.array((table["auction"].to_numpy() % buckets).astype(np.int32))
        with_bucket = table.add_column(0, "__bucket", bucket)
        t0 = time.perf_counter()
        packed = list(
            pack_rows(
                iter(with_bucket.to_batches(arrow_batch)),
                bucket_labels(buckets),
                schema,
                wake_all=True,
            )
        )
        spent["pack"] += time.perf_counter() - t0
        per_bucket: dict[int, list[bytes]] = {}
        for rb in packed:
            for b, payload in zip(
                rb.column("__bucket").to_pylist(), rb.column("__rows").to_pylist(), strict=True
            ):
                per_bucket.setdefault(b, []).append(payload)
        for b, payloads in sorted(per_bucket.items()):
            t0 = time.perf_counter()
            batches = [pa.ipc.read_record_batch(pa.py_buffer(p), schema) for p in payloads if p]
            t1 = time.perf_counter()
            state = (
                from_sections(open_value("window_agg", identity, states[b], 2), wp, marks[b])
                if b in states
                else None
            )
            t2 = time.perf_counter()
            floor = (state.watermark_ms if state else watermark_ms) * 1000
            fold(wp, batches, floor, {})
            t3 = time.perf_counter()
            out, state = advance(wp, "all", state, watermark_ms, batches, {})
            t4 = time.perf_counter()
            states[b] = seal("window_agg", identity, rows_sections(state))
            marks[b] = state.watermark_ms
            t5 = time.perf_counter()
            if out.num_rows:
                to_pandas(out)
            t6 = time.perf_counter()
            spent["unpack"] += t1 - t0
            spent["load"] += t2 - t1
            spent["fold"] += t3 - t2
            spent["sweep"] += max(0.0, (t4 - t3) - (t3 - t2))  # advance = fold + sweep
            spent["save"] += t5 - t4
            spent["to_pandas"] += t6 - t5
        for name in times:
            times[name].append(spent[name])
        batch_max = table["ts"].cast(pa.int64()).to_numpy().max() // 1000
        max_ts = batch_max if max_ts is None else max(max_ts, batch_max)
        watermark_ms = max(watermark_ms, int(max_ts) - delay_ms)
    return times, ""


# ---------------------------------------------------------------------------------------------
# the benchmark


def bench(args) -> tuple[str, dict[str, Any]]:
    spark_runs.share_sliceflow_with_workers()
    from sliceflow.spark.window.agg import WindowMetrics

    root = args.data_dir or CACHE
    os.makedirs(root, exist_ok=True)
    load_at_start = os.getloadavg()
    spark = spark_runs.streaming_session(
        "sliceflow-bench-window-stream", args.shuffle_partitions, 1000, args.conf
    )
    load = spark_runs.LoadSampler()
    settings = spark_runs.session_settings(spark)
    from sliceflow.spark.window.agg import default_buckets

    settings["buckets"] = args.buckets or default_buckets(spark)
    settings["load_at_start"] = load_at_start
    delay_us = args.delay_ms * 1000
    all_queries = list(dict.fromkeys(args.queries + args.many_queries))

    if not args.no_check and args.check_queries:
        w = Workload(3, args.check_rows, 20)
        folder = write_workload(os.path.join(root, "check"), w, rate=args.check_rows)
        for name in args.check_queries:
            note = check_query(spark, QUERIES[name], folder, w.batches, delay_us, root)
            spark_runs.log(f"  check {name}: ok, {note}")

    def timed_query(
        name: str, w: Workload, folder: str, buckets: int | None, batches: int | None = None
    ) -> Run:
        q = QUERIES[name]
        src = spark_runs.file_stream(spark, SCHEMA, folder).withWatermark(
            "ts", f"{args.delay_ms} milliseconds"
        )
        metrics = WindowMetrics(spark) if q.engine == "sliceflow" else None
        frame = aggregate(src, q, buckets=buckets, metrics=metrics)
        with spark_runs.scratch_checkpoint(root, f"ck-{name}-{w.key}-") as checkpoint:
            progresses, wall = spark_runs.run_query(frame, lambda wr: wr.format("noop"), checkpoint)
        run = to_run(name, w, progresses, wall)
        if metrics is not None:
            run.counters = metrics.value
        expected = batches or w.batches
        if len(run.trigger_s) != expected:
            spark_runs.log(
                f"WARNING {name}: {len(run.trigger_s)} micro-batches with data, expected {expected}"
            )
        return run

    def folder_of(w: Workload, n: int | None = None) -> str:
        """The workload's files, or a folder with the first ``n`` of them (hard links)."""
        folder = write_workload(root, w, args.rate)
        if n is None or n >= w.batches:
            return folder
        return spark_runs.first_files(folder, n, os.path.join(folder, f"first-{n}"))

    if args.warmup and args.workloads:
        # The JVM compiles its hot paths in the first full-size queries: one untimed query per
        # competitor first, so that the first timed query does not pay for it alone.
        w = args.workloads[0]
        n = min(args.warmup, w.batches)
        for name in all_queries:
            run = timed_query(name, w, folder_of(w, n), args.buckets, n)
            spark_runs.log(f"  warm-up {name}: {n} micro-batches, {run.wall_s:.1f}s")

    runs: dict[tuple[str, str], list[Run]] = {}  # (workload key, query) -> rounds
    failed: dict[tuple[str, str], str] = {}  # (workload key, query) -> why
    info: dict[str, dict[str, Any]] = {}
    plan: list[tuple[Workload, list[str], bool]] = [
        (w, args.queries, False) for w in args.workloads
    ]
    plan += [(w, args.many_queries, True) for w in args.many]
    for w, names, many in plan:
        folder = folder_of(w)
        seen = keys_seen(folder, w.batches)
        first, last = event_span(folder, w.batches)
        buckets = (args.many_buckets or args.buckets) if many else args.buckets
        info[w.key] = {
            "workload": w,
            "many": many,
            "buckets": buckets or settings["buckets"],
            "keys_seen": seen,
            "event_span_s": (last - first).total_seconds(),
        }
        for round_ in range(args.repeat):
            for name in names:
                if (
                    name == "spark-hop4h"
                    and args.spark_hop_max_rows
                    and (w.rows * w.batches > args.spark_hop_max_rows)
                ):
                    continue
                if (w.key, name) in failed:
                    continue
                try:
                    run = timed_query(name, w, folder, buckets)
                except Exception as e:  # noqa: BLE001 - report it, run the rest
                    if QUERIES[name].engine != "sliceflow":
                        raise
                    why = str(e).strip()
                    cause = [ln.strip() for ln in why.splitlines() if "Error" in ln]
                    failed[(w.key, name)] = (cause[-1] if cause else why.splitlines()[0])[:300]
                    spark_runs.log(f"FAILED {name} on {w.label}: {failed[(w.key, name)]}")
                    continue
                runs.setdefault((w.key, name), []).append(run)
                spark_runs.log(
                    f"  {w.label} ({w.auctions:,} auctions), round {round_ + 1}/{args.repeat}, "
                    f"{name}: median {median(run.timed):.3f}s per micro-batch, "
                    f"wall {run.wall_s:.1f}s, {run.windows_emitted:,} windows, "
                    f"state rows {run.state_rows[-1] if run.state_rows else 0:,}"
                )
    spark.stop()
    settings["load"] = load.stop()

    if not args.no_profile:
        arrow_batch = int(settings["spark.sql.execution.arrow.maxRecordsPerBatch"] or 10_000)
        profiled = [args.workloads[0]] if args.workloads else []
        for w in profiled + list(args.many):
            meta = info[w.key]
            for name in QUERIES:
                if QUERIES[name].engine != "sliceflow" or (w.key, name) not in runs:
                    continue
                t0 = time.perf_counter()
                times, why = profile_steps(
                    QUERIES[name],
                    folder_of(w),
                    w.batches,
                    meta["buckets"],
                    args.delay_ms,
                    arrow_batch,
                )
                if times is None:
                    spark_runs.log(f"  no profile: {why}")
                    break
                meta.setdefault("profile", {})[name] = times
                spark_runs.log(f"  profile {w.label}, {name}: {time.perf_counter() - t0:.1f}s")
    return report(args, runs, failed, info, settings)


# ---------------------------------------------------------------------------------------------
# tables


def mb(x: float) -> str:
    """Bytes as MB: one decimal from 10 MB up, else three significant digits."""
    if math.isnan(x):
        return ""
    return f"{x / 1e6:,.1f}" if x >= 10e6 else f"{x / 1e6:.3g}"


def last_store(rs: list[Run], name: str) -> float:
    """A store metric after the last micro-batch with data (median over the rounds)."""
    vals = [r.store[-1].get(name, math.nan) for r in rs if r.store]
    return median(vals) if vals else math.nan


def per_batch_store(rs: list[Run], name: str) -> float:
    """A store metric per timed micro-batch (median)."""
    return median([b.get(name, 0) for r in rs for b in r.store[1:]])


def report(args, runs, failed, info, settings) -> tuple[str, dict[str, Any]]:
    shuffle = settings["spark.sql.shuffle.partitions"]
    out = [
        f"**Structured Streaming** `local[2]`: Nexmark bids (`sliceflow.testing.nexmark`) in "
        f"event-time order, {args.rate:,} bids per minute of event time, one parquet file per "
        f'micro-batch read with `maxFilesPerTrigger` 1, `withWatermark("ts", '
        f'"{args.delay_ms / 1000:g} seconds")`; count(*) + sum(price) + max(price) by '
        f"auction; `spark.sql.shuffle.partitions` = {shuffle}, RocksDB state store for every "
        f"query, `noop` sink, append mode, `availableNow`; one query per row, each with its "
        f"own checkpoint"
        + (
            f", after one untimed query per competitor ({args.warmup} micro-batches)"
            if args.warmup
            else ""
        )
        + (f", {args.repeat} rounds (every query of a workload in turn)" if args.repeat > 1 else "")
        + f". sliceflow: `window_agg(..., buckets={settings['buckets']})` "
        f"({'--buckets' if args.buckets else 'the default'})"
        + "".join(
            f", buckets={meta['buckets']} on {meta['workload'].label} "
            f"({meta['workload'].auctions:,} auctions; `--many-buckets`)"
            for meta in info.values()
            if meta["buckets"] != settings["buckets"]
        )
        + ". "
        "*median s* / *p90 s*: the progress's `triggerExecution` per micro-batch with data, "
        "the first micro-batch of every query left out (it includes start-up: planning, state "
        "store creation, Python workers) and pooled over the rounds; *addBatch*: the job alone; "
        "*wall s*: start() to the end of the query (start-up, every file and the final no-data "
        "micro-batch), median over the rounds; *windows*: rows emitted by the whole query.",
        "",
        "| micro-batches x bids | auctions | event time | query | timed batches | median s | "
        "p90 s | addBatch s | rows/s | wall s | windows | vs Spark tumble(1 min) |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    results: dict[str, Any] = {"settings": settings, "runs": []}
    for key, meta in info.items():
        w = meta["workload"]
        base_rs = runs.get((key, "spark-tumble"))
        base = median(pooled(base_rs)) if base_rs else math.nan
        for name in QUERIES:
            rs = runs.get((key, name))
            if not rs:
                continue
            ts = pooled(rs)
            rows_per = median([float(x) for r in rs for x in r.rows[1:]])
            vs = median(ts) / base if name != "spark-tumble" and base == base else math.nan
            out.append(
                f"| {w.label} | {w.auctions:,} | {meta['event_span_s'] / 60:,.0f} min | "
                f"{QUERIES[name].label} | {len(ts)} | {median(ts):.3f} | {p90(ts):.3f} | "
                f"{median(pooled(rs, 'timed_add')):.3f} | {rows_per / median(ts):,.0f} | "
                f"{median([r.wall_s for r in rs]):.1f} | {rs[-1].windows_emitted:,} | "
                f"{'' if math.isnan(vs) else f'{vs:.2f}x'} |"
            )
            for r in rs:
                numbers = r.numbers("no_data_s", "no_data_output", "durations", "watermarks")
                results["runs"].append({"workload": key, "query": name, **numbers})
    if failed:
        out.append("")
        for (key, name), why in failed.items():
            w = info[key]["workload"]
            out.append(
                f"FAILED: {QUERIES[name].label} on {w.label} bids ({w.auctions:,} auctions, "
                f"buckets={info[key]['buckets']}): {why}"
            )
        results["failed"] = {f"{k}:{n}": why for (k, n), why in failed.items()}
    skipped_hop = [
        meta["workload"].label
        for key, meta in info.items()
        if "spark-hop4h" in (args.many_queries if meta["many"] else args.queries)
        and (key, "spark-hop4h") not in runs
    ]
    if skipped_hop:
        out += [
            "",
            f"Spark hop(4 h, 1 min) not run on {', '.join(skipped_hop)} (more than "
            f"`--spark-hop-max-rows` {args.spark_hop_max_rows:,} bids).",
        ]
    load = settings.get("load") or []
    if load:
        out += ["", spark_runs.load_note(load, settings.get("load_at_start"))]

    # the targets, per workload
    lines = []
    verdicts: dict[str, list[str]] = {}
    for key, meta in info.items():
        m = {n: median(pooled(runs[(key, n)])) for n in QUERIES if (key, n) in runs}
        bits = []
        for a, b, what, how, limit in TARGETS:
            if a in m and b in m:
                r = m[a] / m[b]
                ok = r <= limit if how == "le" else r >= limit
                rr = spark_runs.round_by_round(runs[(key, a)], runs[(key, b)])
                bits.append(
                    f"{what} {r:.2f}x"
                    + (f", round by round {rr}" if rr else "")
                    + f" (target {'<=' if how == 'le' else '>='} {limit:g}x: {verdict(ok)})"
                )
                verdicts.setdefault(what, []).append(f"{meta['workload'].label}: {r:.2f}x")
                results.setdefault("ratios", {})[f"{key}:{a}/{b}"] = r
        for a, b, what in OTHER_RATIOS:
            if a in m and b in m:
                bits.append(f"{what} {m[a] / m[b]:.2f}x")
                results.setdefault("ratios", {})[f"{key}:{a}/{b}"] = m[a] / m[b]
        if bits:
            lines.append(
                f"{meta['workload'].label} bids, {meta['workload'].auctions:,} auctions: "
                + "; ".join(bits)
            )
    if lines:
        out += ["", "Ratios of median micro-batch times (same run):", ""]
        out += [f"* {line}." for line in lines]

    # the state store
    out += [
        "",
        "State store after the last micro-batch with data (RocksDB's numbers from the "
        "progress's `stateOperators`, summed over the state partitions; median over the "
        "rounds): *state rows* `numRowsTotal` (sliceflow keeps per bucket of keys its "
        "watermark and, in bucket layout 2, a base of the (key, slice) partials unfired windows "
        "still need, a head and a log entry per micro-batch since the base), *SST MB* "
        "`rocksdbSstFileSize` (the store's live files, old versions of overwritten values "
        "included until a compaction drops them), *memory MB* `memoryUsedBytes`; per timed "
        "micro-batch (median): *MB uploaded* `rocksdbBytesCopied` (the new files the commit "
        "copies into the checkpoint: what the micro-batch wrote), *puts* `rocksdbPutCount`, "
        "*commit s* `commitTimeMs`. sliceflow's "
        "counters (`WindowMetrics`, whole query): windows emitted, late rows, bucket runs "
        "(Python calls of the stateful processor).",
        "",
        "| micro-batches x bids | auctions | query | state rows | SST MB | memory MB "
        "| MB uploaded / batch | puts / batch | commit s | late rows | bucket runs |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, meta in info.items():
        w = meta["workload"]
        for name in QUERIES:
            rs = runs.get((key, name))
            if not rs:
                continue
            c = rs[-1].counters
            out.append(
                f"| {w.label} | {w.auctions:,} | {QUERIES[name].label} | "
                f"{median([float(r.state_rows[-1]) for r in rs]):,.0f} | "
                f"{mb(last_store(rs, 'rocksdbSstFileSize'))} | "
                f"{mb(last_store(rs, 'memoryUsedBytes'))} | "
                f"{mb(per_batch_store(rs, 'rocksdbBytesCopied'))} | "
                f"{per_batch_store(rs, 'rocksdbPutCount'):,.0f} | "
                f"{per_batch_store(rs, 'commitTimeMs') / 1000:.3f} | "
                f"{c.get('rows_late', '') if c else ''} | {c.get('bucket_runs', '') if c else ''} |"
            )
    same = []
    for key, meta in info.items():
        for a, b in SAME_WINDOW:
            if (key, a) in runs and (key, b) in runs:
                sst = last_store(runs[(key, a)], "rocksdbSstFileSize") / last_store(
                    runs[(key, b)], "rocksdbSstFileSize"
                )
                wr = per_batch_store(runs[(key, a)], "rocksdbBytesCopied") / per_batch_store(
                    runs[(key, b)], "rocksdbBytesCopied"
                )
                same.append(
                    f"{meta['workload'].label} ({meta['workload'].auctions:,} auctions), "
                    f"{QUERIES[a].window}: SST bytes sliceflow / Spark {sst:.2f}x, bytes "
                    f"uploaded per micro-batch {wr:.2f}x"
                )
                results.setdefault("state_ratios", {})[f"{key}:{a}/{b}"] = {
                    "sst": sst,
                    "written": wr,
                }
    if same:
        out += ["", "Same window, sliceflow against Spark: " + "; ".join(same) + "."]

    # growth: time and state per stretch of micro-batches
    grow = [(key, meta) for key, meta in info.items() if meta["workload"].batches >= 3]
    grow = [(k, m) for k, m in grow if m["many"]] or []
    if grow:
        out += [
            "",
            "As the state grows (the workloads with many auctions): median `triggerExecution` "
            "of each stretch of micro-batches, and `rocksdbSstFileSize` at its end (MB); keys = "
            "distinct auctions read by the end of the stretch:",
            "",
        ]
        for key, meta in grow:
            w = meta["workload"]
            names = [n for n in QUERIES if (key, n) in runs]
            if not names:
                continue
            stop = min(len(r.trigger_s) for n in names for r in runs[(key, n)])
            pieces = spark_runs.chunks(1, stop, 4)
            heads = spark_runs.stretch_heads(pieces)
            out += [
                f"| {w.label} bids | " + " | ".join(heads) + " | last / first |",
                "|---|" + "---:|" * (len(pieces) + 1),
                "| keys seen | "
                + " | ".join(f"{meta['keys_seen'][c.stop - 1]:,}" for c in pieces)
                + " | |",
            ]
            for n in names:
                rs = runs[(key, n)]
                meds = [median([r.trigger_s[i] for r in rs for i in c]) for c in pieces]
                ssts = [
                    median([r.store[c.stop - 1].get("rocksdbSstFileSize", 0) for r in rs])
                    for c in pieces
                ]
                out.append(
                    f"| {QUERIES[n].label} | "
                    + " | ".join(f"{t:.2f} s, {mb(s)} MB" for t, s in zip(meds, ssts, strict=True))
                    + f" | {meds[-1] / meds[0]:.2f}x |"
                )
            out.append("")
        if out[-1] == "":
            out.pop()
    # where the time goes
    timing = [(key, meta) for key, meta in info.items() if meta.get("profile")]
    if timing:
        out += [
            "",
            "Where the time of a micro-batch goes (median ms per timed micro-batch). From the "
            "progress: `triggerExecution` and its parts `queryPlanning`, `addBatch` (the job), "
            "`walCommit` + `commitOffsets` (the offset and commit logs); the state operator's "
            "`allUpdatesTimeMs` (sliceflow: the Python calls of `transformWithStateInPandas`; "
            "Spark: its state updates) and `commitTimeMs` (RocksDB commit, snapshot upload), "
            "both summed over the state partitions, which run in parallel. Then sliceflow's "
            "Python side replayed in this process on one core (`profile_steps`: the same "
            "packing step and per-bucket calls on the same files and buckets, keys spread by "
            "`auction % buckets`), summed over the buckets: what the kernel and its Arrow glue "
            "cost without Spark. *pack*: the rows of each bucket as an Arrow IPC message (the "
            "`mapInArrow` step), *unpack*: the processor reads them back, *state load* / *state "
            "save*: the bucket's carried (key, slice) partials from / to IPC in a sealed state "
            "value, *fold*: the local "
            "kernel (rows to partials, then sorted), *sweep*: the global kernel (merge with the "
            "carried partials, fire, carry), *to pandas*: the fired windows as the pandas frame "
            "the processor yields.",
            "",
            "| micro-batches x bids | auctions | query | triggerExecution | queryPlanning "
            "| addBatch | WAL + commit log | state updates | state commit "
            "| " + " | ".join(label for _, label in STEP_PIECES) + " | Python total "
            "| Python / triggerExecution |",
            "|---|---:|---|" + "---:|" * (8 + len(STEP_PIECES)),
        ]
        for key, meta in timing:
            w = meta["workload"]
            for name in QUERIES:
                rs = runs.get((key, name))
                if not rs:
                    continue

                def dur(part: str, rs=rs) -> float:
                    return median([d.get(part, 0) for r in rs for d in r.durations[1:]])

                def op(part: str, rs=rs) -> float:
                    return median([b.get(part, 0) for r in rs for b in r.store[1:]])

                cells = [
                    w.label,
                    f"{w.auctions:,}",
                    QUERIES[name].label,
                    f"{dur('triggerExecution'):,.0f}",
                    f"{dur('queryPlanning'):,.0f}",
                    f"{dur('addBatch'):,.0f}",
                    f"{dur('walCommit') + dur('commitOffsets'):,.0f}",
                    f"{op('allUpdatesTimeMs'):,.0f}",
                    f"{op('commitTimeMs'):,.0f}",
                ]
                prof = meta["profile"].get(name)
                if prof:
                    pieces = [1000 * median(prof[p][1:]) for p, _ in STEP_PIECES]
                    total = sum(pieces)
                    cells += [f"{x:,.1f}" for x in pieces]
                    cells += [f"{total:,.1f}", f"{total / dur('triggerExecution'):.0%}"]
                    results.setdefault("profile", {})[f"{key}:{name}"] = prof
                else:
                    cells += [""] * (len(STEP_PIECES) + 2)
                out.append("| " + " | ".join(cells) + " |")
    results["verdicts"] = verdicts
    return "\n".join(out), results


# ---------------------------------------------------------------------------------------------
# main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workloads",
        help="comma-separated MICRO-BATCHESxBIDS (default 10x100000,20x50000: the same 1M bids)",
    )
    parser.add_argument("--auctions", type=int, help="auctions in --workloads (default 1000)")
    parser.add_argument(
        "--queries",
        help=f"comma-separated, of {','.join(QUERIES)} (default: all) for --workloads",
    )
    parser.add_argument(
        "--many", help="workloads with many auctions (default 20x100000; '' for none)"
    )
    parser.add_argument("--many-auctions", type=int, help="auctions in --many (default 1000000)")
    parser.add_argument(
        "--many-queries",
        help="queries on --many (default sf-hop1d,sf-tumble,sf-cumulate,spark-tumble)",
    )
    parser.add_argument("--rate", type=int, help="bids per minute of event time (default 50000)")
    parser.add_argument(
        "--delay-ms", type=int, default=10_000, help="watermark delay (default 10000)"
    )
    parser.add_argument(
        "--spark-hop-max-rows",
        type=int,
        default=0,
        help="run Spark hop(4 h) only on workloads of at most this many bids (0: all)",
    )
    parser.add_argument("--shuffle-partitions", type=int, default=2, help="default 2")
    parser.add_argument("--buckets", type=int, help="window_agg's buckets (default: its own)")
    parser.add_argument(
        "--many-buckets",
        type=int,
        help="window_agg's buckets on --many (default 0: as --buckets)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds of every query")
    parser.add_argument(
        "--warmup",
        type=int,
        help="micro-batches of one untimed query per competitor first (default 2; 0: none)",
    )
    parser.add_argument("--conf", action="append", help="KEY=VALUE, a Spark setting (repeatable)")
    parser.add_argument("--no-check", action="store_true", help="skip the small correctness run")
    parser.add_argument(
        "--no-profile",
        action="store_true",
        help="skip the in-process replay of sliceflow's Python side (where the time goes)",
    )
    parser.add_argument(
        "--check-rows", type=int, default=300, help="bids per micro-batch of the check (3 batches)"
    )
    parser.add_argument(
        "--check-queries", help="queries checked against the model (default: every query run)"
    )
    spark_runs.add_output_args(parser, CACHE)
    args = parser.parse_args(argv)

    q = args.quick
    args.rate = args.rate or (2_000 if q else 50_000)
    args.auctions = args.auctions or (100 if q else 1_000)
    args.many_auctions = args.many_auctions or (20_000 if q else 1_000_000)
    args.workloads = parse_workloads(
        args.workloads if args.workloads is not None else ("3x2000" if q else "10x100000,20x50000"),
        args.auctions,
    )
    args.many = parse_workloads(
        args.many if args.many is not None else ("3x2000" if q else "20x100000"),
        args.many_auctions,
    )
    default = ",".join(n for n in QUERIES if not (q and n == "sf-hop4h"))
    args.queries = [x for x in (args.queries or default).split(",") if x]
    default_many = "sf-hop1d,spark-tumble" if q else "sf-hop1d,sf-tumble,sf-cumulate,spark-tumble"
    args.many_queries = [x for x in (args.many_queries or default_many).split(",") if x]
    if args.warmup is None:
        args.warmup = 0 if q else 2
    if args.many_buckets is None:
        args.many_buckets = 8 if q else 0
    if args.check_queries is None:
        args.check_queries = (
            "sf-hop1d" if q else ",".join(dict.fromkeys(args.queries + args.many_queries))
        )
    args.check_queries = [x for x in args.check_queries.split(",") if x]
    if q:
        args.check_rows = min(args.check_rows, 100)
    for name in args.queries + args.many_queries + args.check_queries:
        if name not in QUERIES:
            raise SystemExit(f"unknown query {name!r}; queries: {','.join(QUERIES)}")
    for w in args.workloads + args.many:
        if w.batches < 2:
            raise SystemExit("every workload needs >= 2 micro-batches (the first is start-up)")

    spark_runs.run_and_publish(
        "bench/bench_window_stream.py", argv, args, README_BLOCK, lambda: bench(args)
    )


if __name__ == "__main__":
    main()
