"""Plumbing shared by the benchmarks that run Spark, mostly the Structured Streaming ones
(bench_changelog.py, bench_window_stream.py): micro-batch files, the session, one query run to
its end and its progress, load sampling, small statistics, and printing / saving the report.

Imported by the scripts as ``import spark_runs`` (the scripts' folder is on the path,
as for ``readme_blocks``); pyspark and sliceflow are imported where used, so that ``--help``
needs neither.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from readme_blocks import write_block
from run_info import machine, run_header

#: The state store every streaming query of the benchmarks uses.
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

SECOND = 1_000_000  # µs
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR


def human(us: int) -> str:
    """A duration in µs as the window benchmarks label windows: "1 day", "4 h", "1 min"."""
    for unit, name in ((DAY, "day"), (HOUR, "h"), (MINUTE, "min"), (SECOND, "s")):
        if us % unit == 0:
            return f"{us // unit:,} {name}"
    return f"{us} µs"


# ---------------------------------------------------------------------------------------------
# micro-batch files


def batch_files(folder: str, n: int | None = None) -> list[str]:
    """The names of the first ``n`` (all if None) micro-batch files (``batch-*``) of
    ``folder``, in batch order."""
    return sorted(f for f in os.listdir(folder) if f.startswith("batch-"))[:n]


def write_batch_file(table: pa.Table, folder: str, name: str) -> None:
    """Writes ``table`` as the parquet file ``folder/name``, whole or not at all (through a
    temporary file that a reader ignores)."""
    tmp = os.path.join(folder, ".tmp-" + name)
    pq.write_table(table, tmp)
    os.replace(tmp, os.path.join(folder, name))


def stamp_in_order(folder: str, names: list[str]) -> None:
    """Sets the modification times of ``names`` one second apart in list order, recent ones:
    the file source reads the oldest file first, and ignores files much older than the newest
    it has seen (maxFileAge)."""
    base = int(time.time()) - 100_000
    for i, name in enumerate(names):
        os.utime(os.path.join(folder, name), (base + i, base + i))


def first_files(folder: str, n: int, view: str) -> str:
    """The folder ``view`` holding (hard links to) the first ``n`` micro-batch files of
    ``folder``: the input of a query that runs ``n`` micro-batches. Links share the files'
    modification times. Returns ``view``."""
    names = batch_files(folder, n)
    if os.path.isdir(view) and sorted(os.listdir(view)) == names:
        return view
    shutil.rmtree(view, ignore_errors=True)
    os.makedirs(view)
    for name in names:
        src, dst = os.path.join(folder, name), os.path.join(view, name)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    return view


# ---------------------------------------------------------------------------------------------
# the session and one query


def share_sliceflow_with_workers() -> None:
    """Python workers run this interpreter (unless PYSPARK_PYTHON says otherwise) and import
    sliceflow from wherever this process did (a dev build on PYTHONPATH too)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    import sliceflow

    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(sliceflow.__file__)))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if pkg_root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([pkg_root, *paths])


def conf_pairs(items: list[str] | None) -> dict[str, str]:
    """``--conf KEY=VALUE`` arguments as a dict."""
    pairs = {}
    for item in items or []:
        key, _, value = item.partition("=")
        pairs[key] = value
    return pairs


def streaming_session(
    app: str, shuffle_partitions: int, progress_updates: int, conf_items: list[str] | None
):
    """A ``local[2]`` session (``sliceflow.testing.spark.local_session``) with 4 GB for the
    driver, ``shuffle_partitions``, the RocksDB state store and the last ``progress_updates``
    progresses of a query kept; then every ``KEY=VALUE`` of ``conf_items`` (``--conf``)."""
    from sliceflow.testing.spark import local_session

    conf = {
        "spark.driver.memory": "4g",
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
        "spark.sql.streaming.numRecentProgressUpdates": str(progress_updates),
    }
    conf.update(conf_pairs(conf_items))
    return local_session("local[2]", app, conf)


def session_settings(spark) -> dict[str, Any]:
    """The settings every report states: shuffle partitions and Arrow batch rows."""
    return {
        k: spark.conf.get(k)
        for k in ("spark.sql.shuffle.partitions", "spark.sql.execution.arrow.maxRecordsPerBatch")
    }


def file_stream(spark, schema: str, folder: str):
    """The parquet files of ``folder`` as a stream, one file per micro-batch."""
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(folder)


@contextmanager
def scratch_checkpoint(root: str, prefix: str) -> Iterator[str]:
    """A new checkpoint folder under ``root``, removed afterwards."""
    checkpoint = tempfile.mkdtemp(prefix=prefix, dir=root)
    try:
        yield checkpoint
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)


def run_query(
    frame, sink: Callable, checkpoint: str, mode: str = "append"
) -> tuple[list[dict], float]:
    """Starts ``frame`` in output mode ``mode`` with ``sink(writer)`` and availableNow, waits
    for it; the progress of every micro-batch (as dicts, in batch order) and the wall time."""
    writer = (
        frame.writeStream.outputMode(mode)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
    )
    t0 = time.perf_counter()
    query = sink(writer).start()
    try:
        query.awaitTermination()
    finally:
        if query.isActive:
            query.stop()
    wall = time.perf_counter() - t0
    if query.exception() is not None:
        raise RuntimeError(f"query failed: {query.exception()}")
    progresses = [json.loads(p.json) for p in query.recentProgress]
    by_batch = {p["batchId"]: p for p in progresses}
    return [by_batch[b] for b in sorted(by_batch)], wall


def operator_metrics(progress: dict) -> tuple[int, dict[str, float]]:
    """numRowsTotal and the state store's numbers of one progress, summed over its stateful
    operators: the standard fields and every custom metric (RocksDB's get/put counts ...)."""
    rows_total = 0
    summed: dict[str, float] = {}
    for op in progress.get("stateOperators") or []:
        rows_total += op.get("numRowsTotal", 0)
        for name in (
            "numRowsUpdated",
            "numRowsRemoved",
            "allUpdatesTimeMs",
            "commitTimeMs",
            "memoryUsedBytes",
        ):
            summed[name] = summed.get(name, 0) + op.get(name, 0)
        for name, value in (op.get("customMetrics") or {}).items():
            if isinstance(value, (int, float)) and "." not in name:
                summed[name] = summed.get(name, 0) + value
    return rows_total, summed


#: Where a stateful query's micro-batch time goes, per query in the streaming benchmarks' logs:
#: (name, where, key).
BREAKDOWN = (
    ("planning", "durationMs", "queryPlanning"),
    ("addBatch", "durationMs", "addBatch"),
    # the stateful operator's own processing of the rows (for sliceflow: the bucket calls)
    ("updates", "store", "allUpdatesTimeMs"),
    ("commit", "store", "commitTimeMs"),
    # the parts of the RocksDB commit: memtable flush, local checkpoint, upload of the snapshot
    ("flush", "store", "rocksdbCommitFlushLatency"),
    ("checkpoint", "store", "rocksdbCommitCheckpointLatency"),
    ("fileSync", "store", "rocksdbCommitFileSyncLatencyMs"),
    ("filesCopied", "store", "rocksdbFilesCopied"),
)


def breakdown(progresses: list[dict]) -> dict[str, list[float]]:
    """Per micro-batch with data (the first left out): the numbers of :data:`BREAKDOWN` (ms;
    the state store's summed over its partitions)."""
    timed = [p for p in progresses if p["numInputRows"]][1:]
    out: dict[str, list[float]] = {name: [] for name, _, _ in BREAKDOWN}
    for p in timed:
        store = operator_metrics(p)[1]
        for name, where, key in BREAKDOWN:
            source = p["durationMs"] if where == "durationMs" else store
            out[name].append(float(source.get(key, 0)))
    return out


@dataclass(kw_only=True)
class StreamRun:
    """One streaming query's numbers, per micro-batch with data (the first, start-up,
    included) unless said otherwise. The scripts' ``Run`` adds what names the query."""

    trigger_s: list[float] = field(default_factory=list)
    add_batch_s: list[float] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    output_rows: list[int] = field(default_factory=list)
    state_rows: list[int] = field(default_factory=list)  # numRowsTotal after each batch
    store: list[dict[str, float]] = field(default_factory=list)  # operator_metrics, per batch
    counters: dict[str, Any] = field(default_factory=dict)  # sliceflow's own, whole query
    wall_s: float = 0.0

    @property
    def timed(self) -> list[float]:
        return self.trigger_s[1:]

    @property
    def timed_add(self) -> list[float]:
        return self.add_batch_s[1:]

    def numbers(self, *extra: str) -> dict[str, Any]:
        """What ``--json`` holds of the run: the fields above, then the attributes ``extra``."""
        names = [f.name for f in fields(StreamRun)]
        return {name: getattr(self, name) for name in (*names, *extra)}

    def add_batch(self, progress: dict, output_rows: int) -> dict[str, float]:
        """Appends the micro-batch of ``progress`` (``output_rows`` rows out); returns its
        state store numbers, which the caller may add to."""
        durations = progress["durationMs"]
        self.trigger_s.append(durations.get("triggerExecution", 0) / 1000)
        self.add_batch_s.append(durations.get("addBatch", 0) / 1000)
        self.rows.append(progress["numInputRows"])
        self.output_rows.append(output_rows)
        total, store = operator_metrics(progress)
        self.state_rows.append(total)
        self.store.append(store)
        return store


# ---------------------------------------------------------------------------------------------
# Spark's own window aggregation


def spark_window_agg(df, size_us: int, slide_us: int | None = None):
    """Spark's ``groupBy(F.window("ts", ...), "auction")`` with count(*) as cnt, sum(price) as
    s, max(price) as m, in sliceflow's columns: window_start, window_end, auction, cnt, s, m.
    Tumbling windows of ``size_us`` µs, or hopping ones every ``slide_us`` µs."""
    from pyspark.sql import functions as F

    from sliceflow.testing.spark import window_bounds

    size = f"{size_us // SECOND} seconds"
    if slide_us is None:
        w = F.window("ts", size)
    else:
        w = F.window("ts", size, f"{slide_us // SECOND} seconds")
    return (
        df.groupBy(w.alias("window"), "auction")
        .agg(F.count("*").alias("cnt"), F.sum("price").alias("s"), F.max("price").alias("m"))
        .select(*window_bounds("window")[:2], "auction", "cnt", "s", "m")  # no window_time
    )


# ---------------------------------------------------------------------------------------------
# load and statistics


class LoadSampler:
    """Samples the 1-minute load average every 10 s in a daemon thread (the machine is
    shared: the report says how busy it was)."""

    def __init__(self) -> None:
        self.samples = [os.getloadavg()[0]]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(10):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> list[float]:
        self._done.set()
        self._thread.join()
        return self.samples


def load_note(load: list[float], start: tuple[float, float, float] | None = None) -> str:
    """The report's sentence on the load average samples ``load`` (and ``os.getloadavg()`` at
    the start, if given)."""
    return (
        f"Load average (1 min, every 10 s) during the run: median {median(load):.1f} "
        f"({min(load):.1f}-{max(load):.1f}) on {os.cpu_count()} CPUs"
        + (
            f"; at the start (`uptime`: 1, 5, 15 min) {start[0]:.2f}, {start[1]:.2f}, "
            f"{start[2]:.2f}"
            if start
            else ""
        )
        + "."
    )


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else math.nan


def p90(xs: list[float]) -> float:
    """Nearest-rank 90th percentile."""
    if not xs:
        return math.nan
    s = sorted(xs)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]


def chunks(first: int, stop: int, n: int) -> list[range]:
    """``range(first, stop)`` cut into ``n`` consecutive near-equal pieces (fewer if short)."""
    size = stop - first
    n = max(1, min(n, size))
    bounds = [first + size * i // n for i in range(n + 1)]
    return [range(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def stretch_heads(pieces: list[range]) -> list[str]:
    """Column heads for the stretches of micro-batches ``pieces`` (0-based indices)."""
    return [
        f"micro-batch {c.stop}" if len(c) == 1 else f"micro-batches {c.start + 1}-{c.stop}"
        for c in pieces
    ]


def pooled(rs: list[StreamRun], attr: str = "timed") -> list[float]:
    return [t for r in rs for t in getattr(r, attr)]


def round_by_round(rs_a: list[StreamRun], rs_b: list[StreamRun]) -> str:
    """median(a)/median(b) per round (a and b ran one after the other): median (min-max)."""
    ratios = [median(a.timed) / median(b.timed) for a, b in zip(rs_a, rs_b, strict=False)]
    if len(ratios) < 2:
        return ""
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


# ---------------------------------------------------------------------------------------------
# main


def add_parts_arg(parser, parts: Sequence[str]) -> None:
    """``--parts``: the comma-separated queries of ``parts`` to run (default all); check the
    parsed value with :func:`check_parts`."""
    parser.add_argument(
        "--parts",
        type=lambda text: text.split(","),
        default=list(parts),
        help=f"comma-separated queries to run (default all: {','.join(parts)})",
    )


def check_parts(parser, args, parts: Sequence[str]) -> None:
    """A parser error naming every ``--parts`` entry that is not one of ``parts``."""
    unknown = [p for p in args.parts if p not in parts]
    if unknown:
        parser.error(f"--parts: unknown {', '.join(unknown)} (known: {', '.join(parts)})")


def add_output_args(parser, cache: str) -> None:
    """The options every streaming benchmark ends with: data folder, --quick, where the
    results go."""
    parser.add_argument("--data-dir", help=f"input files and checkpoints (default {cache})")
    parser.add_argument("--quick", action="store_true", help="small sizes (CI smoke run)")
    parser.add_argument("--json", help="also write every micro-batch's numbers here")
    parser.add_argument("--note", help="a line for the header, e.g. which sliceflow build ran")
    parser.add_argument("--write-readme", action="store_true", help="update bench/README.md")


def run_and_publish(
    script: str,
    argv: list[str] | None,
    args,
    readme_block: str,
    bench: Callable[[], tuple[str, Mapping[str, Any]]],
) -> None:
    """Prints the run's header, runs ``bench()`` (the report's markdown and its numbers),
    prints the report, and writes it to bench/README.md (``--write-readme``) and the numbers
    to ``--json``."""
    command, header = run_header(script, argv, args.note)
    print(header + "\n")
    block, results = bench()
    results = {"command": command, "machine": machine(), **results}
    print(block + "\n", flush=True)
    if args.write_readme:
        write_block(readme_block, block, header)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, default=str)
        log(f"wrote {args.json}")


def log(text: str) -> None:
    """A line of progress on stderr (stdout has the report)."""
    print(text, file=sys.stderr, flush=True)
