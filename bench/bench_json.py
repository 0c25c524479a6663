"""JSON decoding benchmarks: sliceflow against pyarrow, polars and Spark, in one run.

Two parts, each timed in the same process so that the ratios compare like with like:

* ``kernel`` -- NDJSON bytes -> Arrow on ONE core (this process pinned to one CPU, one thread
  in pyarrow and polars): ``sliceflow.json.decode`` vs ``pyarrow.json.read_json`` vs
  ``polars.read_ndjson``, all with the explicit Nexmark bid schema, and the floor of parsing:
  simdjson's own parsers reading the same bytes, building nothing (``parse_floor.py``).
  Then the nested rows (``bench_json_nested.py``): GitHub-events-like NDJSON with the wide
  inferred schema and a nested DDL, against the same contenders and floors.
* ``spark`` -- PySpark ``local[2]``: ``spark.read.text`` + Spark's ``from_json`` vs
  ``sliceflow.spark.from_json``, ``spark.read.json`` vs the ``sliceflow.json`` data source,
  plus floors: ``spark.read.text`` alone, an Arrow UDF that returns its input unchanged (the
  cost of moving the strings to Python and back), jobs that serve already-decoded rows (a
  decoder that takes no time) and the same after simdjson has parsed the text (a decoder as
  fast as simdjson's parse). Every job is forced to decode every row with
  ``df.write.format("noop")``.

Rounds are interleaved (every contender once per round) so that a noisy neighbour slows all of
them alike; the tables show medians.

    python bench/bench_json.py                    # both parts, full size
    python bench/bench_json.py --quick            # smoke run, small sizes
    python bench/bench_json.py --only kernel --rows 1000000
    python bench/bench_json.py --write-readme     # also update bench/README.md's results
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import parse_floor
import pyarrow as pa
from kernel_timing import (
    interleaved,
    one_core,
    paired,
    pin_to_one_cpu,
    ratio,
    spread,
    unpin,
)
from readme_blocks import write_block
from run_info import run_header

# polars sizes its thread pool when it is first imported: one thread, for the one-core kernel.
os.environ["POLARS_MAX_THREADS"] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))

KERNEL_TARGETS = {"MB/s": 1000.0, "vs pyarrow": 4.0, "vs polars": 2.5}
SPARK_TARGETS = {"from_json": 2.7, "data source": 2.5, "data source, gzip": 2.5}
GZ_SPARK = "spark.read.json(schema), .json.gz"
GZ_OURS = "sliceflow.json data source, .json.gz"
FJ_FLOOR = "read.text + Arrow UDF of decoded structs (floor)"
DS_FLOOR = "Python data source of decoded Arrow (floor)"
FJ_PARSE_FLOOR = "read.text + Arrow UDF: simdjson parse, then decoded structs (parse floor)"
DS_PARSE_FLOOR = "Python data source: read + simdjson parse, then decoded Arrow (parse floor)"
GZ_PARSE_FLOOR = "Python data source, .json.gz: read + inflate + simdjson parse (parse floor)"


# ---------------------------------------------------------------------------------------------
# helpers


# ---------------------------------------------------------------------------------------------
# kernel: one core


def bench_kernel(rows: int, repeats: int, cpu: int) -> tuple[str, dict[str, Any]]:
    import pyarrow.json as pj

    from sliceflow import json as sj
    from sliceflow.testing import BID_DDL, bid_lines

    with one_core(cpu):
        import polars as pl

        lines = list(bid_lines(rows))
        data = ("\n".join(lines) + "\n").encode()
        strings = pa.array(lines, pa.string())
        del lines
        mb = len(data) / 1e6
        arrow_schema = sj.to_arrow_schema(BID_DDL)
        # The same types as polars sees them (dateTime: Datetime("us", "UTC")).
        polars_schema = dict(pl.from_arrow(arrow_schema.empty_table()).schema)
        # polars parses "2026-11-23 00:00:00.000" itself into a timestamp, but slowly (it
        # guesses the format value by value); reading a string and converting it with an
        # explicit format gives the same column much faster: both are timed.
        polars_string_schema = {**polars_schema, "dateTime": pl.String}
        stamp = pl.col("dateTime").str.to_datetime(
            "%Y-%m-%d %H:%M:%S%.3f", time_unit="us", time_zone="UTC"
        )
        read_options = pj.ReadOptions(use_threads=False)
        parse_options = pj.ParseOptions(explicit_schema=arrow_schema)

        def sliceflow_bytes() -> Any:
            return sj.decode(data, BID_DDL)

        def sliceflow_array() -> Any:
            return sj.decode(strings, BID_DDL)

        def pyarrow_json() -> Any:
            return pj.read_json(
                pa.BufferReader(data), read_options=read_options, parse_options=parse_options
            )

        def polars_ndjson() -> Any:
            return pl.read_ndjson(io.BytesIO(data), schema=polars_schema)

        def polars_ndjson_to_datetime() -> Any:
            frame = pl.read_ndjson(io.BytesIO(data), schema=polars_string_schema)
            return frame.with_columns(stamp)

        # The floor: simdjson parsing the same bytes and building nothing (parse_floor.py).
        floor_lib = parse_floor.build()
        floor = parse_floor.ParseFloor(floor_lib) if floor_lib else None
        floor_info = {"version": floor.version, "kernel": floor.implementation} if floor else {}
        padded = bytearray(data) + bytearray(parse_floor.PADDING)

        def simdjson_dom() -> Any:
            assert floor is not None
            return floor.lines(padded, len(data), dom=True)

        def simdjson_ondemand() -> Any:
            assert floor is not None
            return floor.lines(padded, len(data))

        # Same rows from everyone, before anything is timed.
        expected = pa.Table.from_batches([sliceflow_bytes()])
        assert expected.num_rows == rows, (expected.num_rows, rows)
        assert pa.Table.from_batches([sliceflow_array()]).equals(expected)
        assert pyarrow_json().combine_chunks().equals(expected.combine_chunks())
        assert polars_ndjson().equals(pl.from_arrow(expected)), "polars disagrees"
        assert polars_ndjson_to_datetime().equals(pl.from_arrow(expected)), "polars disagrees"
        if floor is not None:
            assert simdjson_dom() == rows and simdjson_ondemand() == rows

        labels = {
            "sliceflow": "sliceflow.json.decode(NDJSON bytes)",
            "sliceflow_array": "sliceflow.json.decode(pa.string array)",
            "pyarrow": "pyarrow.json.read_json",
            "polars": "polars.read_ndjson(dateTime: Datetime)",
            "polars_str": "polars.read_ndjson(dateTime: String) + str.to_datetime(format)",
            "dom": "floor: simdjson DOM parse_many + walk, nothing built",
            "ondemand": "floor: simdjson On-Demand reading every value, nothing built",
        }
        jobs = [
            (labels["sliceflow"], sliceflow_bytes),
            (labels["sliceflow_array"], sliceflow_array),
            (labels["pyarrow"], pyarrow_json),
            (labels["polars"], polars_ndjson),
            (labels["polars_str"], polars_ndjson_to_datetime),
        ]
        if floor is not None:
            jobs += [(labels["dom"], simdjson_dom), (labels["ondemand"], simdjson_ondemand)]
        print(
            f"kernel: {rows:,} bids, {mb:.1f} MB, CPU {cpu}, polars threads "
            f"{pl.thread_pool_size()}, arrow threads {pa.cpu_count()}",
            file=sys.stderr,
        )
        times = interleaved(jobs, repeats)

    med = {label: statistics.median(samples) for label, samples in times.items()}
    t_pa = med[labels["pyarrow"]]
    # Against the faster way of getting the same table out of polars.
    polars_best = min((labels["polars"], labels["polars_str"]), key=med.__getitem__)
    t_pl = med[polars_best]
    out = [
        f"**Kernel**: NDJSON -> Arrow, flat bid schema, one core (pinned to CPU {cpu}; "
        f"`pa.set_cpu_count(1)`, `use_threads=False`, `POLARS_MAX_THREADS=1`); "
        f"{rows:,} bids = {mb:.1f} MB; median of {repeats} runs.",
        "",
        "Ratios are other decoder's time / this decoder's time (> 1: this one is faster); "
        "*vs polars* is against the faster of the two polars rows.",
        "",
        "| decoder | median s | min-max s | MB/s | vs pyarrow | vs polars |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, _ in jobs:
        t = med[label]
        out.append(
            f"| {label} | {t:.3f} | {spread(times[label])} | {mb / t:,.0f} | "
            f"{ratio(t_pa, t)} | {ratio(t_pl, t)} |"
        )
    t_sf = med[labels["sliceflow"]]
    checks = [
        ("MB/s", mb / t_sf, KERNEL_TARGETS["MB/s"], f"{mb / t_sf:,.0f} MB/s"),
        ("vs pyarrow", t_pa / t_sf, KERNEL_TARGETS["vs pyarrow"], f"{t_pa / t_sf:.2f}x"),
        ("vs polars", t_pl / t_sf, KERNEL_TARGETS["vs polars"], f"{t_pl / t_sf:.2f}x"),
    ]
    out.append("")
    out.append(
        "Targets (sliceflow, NDJSON bytes): "
        + "; ".join(
            f"{name} >= {target:g}{'' if name == 'MB/s' else 'x'}: {shown} "
            f"({'met' if value >= target else 'NOT met'})"
            for name, value, target, shown in checks
        )
        + "."
    )
    sf = labels["sliceflow"]
    out.append(
        f"Round by round (decoders back to back, so under the same background load): "
        f"vs pyarrow {paired(times, labels['pyarrow'], sf)}, vs polars "
        f"{paired(times, polars_best, sf)}; fastest run {mb / min(times[sf]):,.0f} MB/s."
    )
    if labels["dom"] in med:
        fastest = min((labels["dom"], labels["ondemand"]), key=med.__getitem__)
        out.append(
            f"The floor rows parse the same bytes with simdjson {floor_info['version']} and "
            f"build nothing (`bench/parse_floor.cpp`, compiled here with `-march=native`; "
            f"runtime kernel `{floor_info['kernel']}`): sliceflow's decode into Arrow takes "
            f"{t_sf / med[fastest]:.2f}x the time of the faster of them (round by round "
            f"{paired(times, sf, fastest)})."
        )
    else:
        out.append("The floor rows were left out: bench/parse_floor.cpp could not be built.")
    return "\n".join(out), {"median": med, "mb": mb}


def bench_long_array(numbers: int, repeats: int, cpu: int) -> str:
    """One document ``{"arr":[1234567, ...]}`` of ``numbers`` numbers, read as ``arr STRING``
    (Spark re-serialises the array) next to ``arr ARRAY<BIGINT>``, with double quotes (fast
    path) and single quotes (the Jackson-like reader). A row of its own: one large document
    must cost time linear in its size, not stall a task."""
    from sliceflow import json as sj

    body = ",".join(["1234567"] * numbers)
    double = ('{"arr":[' + body + "]}\n").encode()
    single = ("{'arr':[" + body + "]}\n").encode()
    del body
    mb = len(double) / 1e6
    old_mask = pin_to_one_cpu(cpu)
    try:
        jobs = [
            (f"{quote} quotes, arr {schema}", lambda d=data, s=f"arr {schema}": sj.decode(d, s))
            for quote, data in (("double", double), ("single", single))
            for schema in ("STRING", "ARRAY<BIGINT>")
        ]
        print(f"long array: one document, {numbers:,} numbers, {mb:.1f} MB", file=sys.stderr)
        times = interleaved(jobs, repeats)
    finally:
        unpin(old_mask)
    out = [
        f'**One long array** (one core): one document `{{"arr":[1234567, ...]}}` of '
        f"{numbers:,} numbers = {mb:.1f} MB; median of {repeats} runs.",
        "",
        "| document, schema | median s | min-max s | MB/s |",
        "|---|---:|---:|---:|",
    ]
    for label, _ in jobs:
        t = statistics.median(times[label])
        out.append(f"| {label} | {t:.3f} | {spread(times[label])} | {mb / t:,.0f} |")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# spark: local[2]


def register_decoded_source(
    spark, folder: str, cache: str, floor_lib: str | None, gz_folder: str | None = None
) -> None:
    """Registers ``bench_decoded_arrow``: a Python data source that serves the bids of ``folder``
    already decoded (one Arrow IPC file per NDJSON file, memory-mapped; written here with
    ``sliceflow.json.iter_ndjson``, batch by batch). What the sliceflow.json data source costs
    without the decoding: Spark's Python data source machinery and the Arrow -> JVM hand-over.
    With ``floor_lib`` (``parse_floor.build()``) also ``bench_parsed_arrow``: the same, after
    reading each NDJSON file block by block and parsing it with simdjson (building nothing),
    a block before each batch: the source with a decoder as fast as simdjson's parse. With
    ``gz_folder`` (where :func:`gzip_copies` writes) also ``bench_parsed_arrow_gz``: the same,
    reading the gzipped copies inflated by ``sliceflow._io.codecs.open_input`` (the source's
    own inflater)."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    import sliceflow.json as sj
    from sliceflow.testing import BID_DDL

    os.makedirs(cache, exist_ok=True)
    files = []
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".json")):
        out = os.path.join(cache, name + ".arrow")
        # The very batches the sliceflow.json source yields (same block size, same rows per
        # batch), so that the floor differs from it by the decoding alone.
        schema = sj.to_arrow_schema(BID_DDL)
        with pa.ipc.new_file(out, schema) as writer:
            for batch in sj.iter_ndjson(os.path.join(folder, name), BID_DDL):
                writer.write_batch(batch)
        files.append((out, os.path.join(folder, name)))

    class File(InputPartition):
        def __init__(self, arrow_path: str, json_path: str) -> None:
            self.arrow_path = arrow_path
            self.json_path = json_path

    class Reader(DataSourceReader):
        def __init__(self, parse: bool, gz: bool) -> None:
            self.parse = parse
            self.gz = gz

        def partitions(self) -> list[InputPartition]:
            return [File(a, j) for a, j in files]

        def read(self, partition):
            blocks = iter(())
            if self.parse:
                assert floor_lib is not None
                floor = parse_floor.ParseFloor(floor_lib)
                if self.gz:
                    from sliceflow._io.codecs import open_input

                    assert gz_folder is not None
                    gz = os.path.join(gz_folder, os.path.basename(partition.json_path) + ".gz")
                    blocks = floor.file_blocks(gz, opener=lambda p: open_input(p))
                else:
                    blocks = floor.file_blocks(partition.json_path)
            with pa.memory_map(partition.arrow_path) as source:
                reader = pa.ipc.open_file(source)
                for i in range(reader.num_record_batches):
                    next(blocks, None)
                    yield reader.get_batch(i)
            for _ in blocks:
                pass

    def source(source_name: str, parse: bool, gz: bool = False) -> type[DataSource]:
        class Source(DataSource):
            @classmethod
            def name(cls) -> str:
                return source_name

            def reader(self, schema) -> DataSourceReader:
                return Reader(parse, gz)

        return Source

    spark.dataSource.register(source("bench_decoded_arrow", parse=False))
    if floor_lib is not None:
        spark.dataSource.register(source("bench_parsed_arrow", parse=True))
        if gz_folder is not None:
            spark.dataSource.register(source("bench_parsed_arrow_gz", parse=True, gz=True))


def gzip_copies(folder: str, out: str) -> list[str]:
    """``folder``'s NDJSON files gzipped into ``out`` (``bids-0000.json.gz``, ...), written once
    and reused after (through a temporary name, so that a cut-off run leaves no half file)."""
    os.makedirs(out, exist_ok=True)
    written = []
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".json")):
        target = os.path.join(out, name + ".gz")
        if not os.path.exists(target):
            partial = os.path.join(out, "_" + name + ".gz.partial")
            with open(os.path.join(folder, name), "rb") as src:
                with pa.CompressedOutputStream(partial, "gzip") as dst:
                    while block := src.read(8 << 20):
                        dst.write(block)
            os.replace(partial, target)
        written.append(target)
    return written


def process_cpu_seconds() -> tuple[float, float]:
    """CPU seconds used so far by this process's descendants: its JVM and the Python processes
    under it (Spark's Python workers and their daemon), from /proc. Other people's processes
    on a shared machine are left out. A worker that ended and was reaped by the daemon is in
    the daemon's children's times, so over a job the differences are the job's CPU time."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, str, list[str]]] = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        stats[int(pid)] = (int(fields[1]), name, fields)
    ours = {os.getpid()}
    grew = True
    while grew:  # parents before children is not guaranteed: repeat until nothing is added
        grew = False
        for pid, (ppid, _, _) in stats.items():
            if ppid in ours and pid not in ours:
                ours.add(pid)
                grew = True
    jvm = python = 0.0
    for pid in ours - {os.getpid()}:
        _, name, fields = stats[pid]
        if "java" in name:
            jvm += (int(fields[11]) + int(fields[12])) / tick
        elif "python" in name or "pyspark" in name:
            python += sum(int(v) for v in fields[11:15]) / tick
    return jvm, python


def with_cpu_split(job: Callable[[], Any], samples: list[tuple[float, float]]) -> Callable[[], Any]:
    """``job``, appending the (JVM, Python) CPU seconds of each run to ``samples``."""

    def run() -> Any:
        jvm0, py0 = process_cpu_seconds()
        result = job()
        jvm1, py1 = process_cpu_seconds()
        samples.append((jvm1 - jvm0, py1 - py0))
        return result

    return run


def bench_spark(
    rows: int,
    files: int,
    repeats: int,
    data_dir: str | None,
    batch_rows: int | None,
    gzip: bool = True,
    conf_items: list[str] | None = None,
) -> tuple[str, dict[str, Any]]:
    from spark_runs import conf_pairs, share_sliceflow_with_workers

    share_sliceflow_with_workers()
    from pyspark import cloudpickle
    from pyspark.sql import functions as F

    import sliceflow.spark as sfs
    from sliceflow.json.schemas import resolve_schema
    from sliceflow.testing import BID_DDL, write_bids
    from sliceflow.testing.spark import local_session

    conf = {"spark.driver.memory": "2g"}
    if batch_rows:
        conf["spark.sql.execution.arrow.maxRecordsPerBatch"] = str(batch_rows)
    conf.update(conf_pairs(conf_items))
    spark = local_session("local[2]", "sliceflow-bench", conf)
    arrow_batch = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")

    with tempfile.TemporaryDirectory() as tmp:
        folder = data_dir or os.path.join(tmp, "bids")
        existing = os.path.isdir(folder) and any(n.endswith(".json") for n in os.listdir(folder))
        if existing:
            print(f"spark: reusing the bids in {folder}", file=sys.stderr)
        else:
            t0 = time.perf_counter()
            write_bids(folder, rows, files=files)
            print(
                f"spark: wrote {rows:,} bids in {files} files in {time.perf_counter() - t0:.1f}s",
                file=sys.stderr,
            )
        names = [n for n in os.listdir(folder) if n.endswith(".json")]
        mb = sum(os.path.getsize(os.path.join(folder, n)) for n in names) / 1e6

        def identity(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
            yield from batches

        identity.__name__ = "identity"
        identity_udf = F.arrow_udf(identity, "string")
        arrow_bid, spark_bid = resolve_schema(BID_DDL)

        # The parse floor's library; its module travels to the workers by value, as bench/ is
        # not on their path.
        floor_lib = parse_floor.build()
        cloudpickle.register_pickle_by_value(parse_floor)

        def decoded_rows(parse: bool) -> Any:
            """An Arrow UDF that decodes once, then answers every batch with a slice of those
            structs: sliceflow's from_json with a decoder that takes no time; with ``parse``,
            after simdjson has parsed the batch's text (the parse floor)."""

            def decoded(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
                import sliceflow.json as sj

                floor = parse_floor.ParseFloor(floor_lib) if parse and floor_lib else None
                structs = None
                for batch in batches:
                    if floor is not None:
                        floor.strings(batch)
                    if structs is None or len(structs) < len(batch):
                        structs = sj.decode_to_struct(batch, arrow_bid)
                    yield structs.slice(0, len(batch))

            decoded.__name__ = "parsed" if parse else "decoded"
            return F.arrow_udf(decoded, spark_bid)

        decoded_udf, parsed_udf = decoded_rows(parse=False), decoded_rows(parse=True)
        gz_folder = (data_dir.rstrip("/") + "-gz") if data_dir else os.path.join(tmp, "gz")
        register_decoded_source(
            spark, folder, os.path.join(tmp, "decoded"), floor_lib, gz_folder if gzip else None
        )

        text = spark.read.text(folder)
        frames = {
            "read.text only (floor)": text,
            "read.text + identity Arrow UDF (floor)": text.select(
                identity_udf("value").alias("value")
            ),
            "read.text + Arrow UDF of decoded structs (floor)": text.select(
                decoded_udf("value").alias("b")
            ).select("b.*"),
            "read.text + Spark from_json": text.select(
                F.from_json("value", BID_DDL).alias("b")
            ).select("b.*"),
            "read.text + sliceflow from_json": text.select(
                sfs.from_json("value", BID_DDL).alias("b")
            ).select("b.*"),
            "spark.read.json(schema)": spark.read.schema(BID_DDL).json(folder),
            "sliceflow.json data source": spark.read.format("sliceflow.json")
            .schema(BID_DDL)
            .load(folder),
            "Python data source of decoded Arrow (floor)": spark.read.format("bench_decoded_arrow")
            .schema(BID_DDL)
            .load(),
        }
        if floor_lib is not None:
            frames[FJ_PARSE_FLOOR] = text.select(parsed_udf("value").alias("b")).select("b.*")
            frames[DS_PARSE_FLOOR] = spark.read.format("bench_parsed_arrow").schema(BID_DDL).load()
        counts = {label: df.count() for label, df in frames.items()}
        n_rows = counts["read.text only (floor)"]
        assert all(c == n_rows for c in counts.values()), counts
        # A cheap check that the sliceflow jobs decode what Spark decodes.
        agg = [F.sum("price"), F.max("dateTime"), F.count("url"), F.sum(F.length("extra"))]
        want = frames["spark.read.json(schema)"].agg(*agg).collect()
        for label in ("read.text + sliceflow from_json", "sliceflow.json data source"):
            got = frames[label].agg(*agg).collect()
            assert got == want, (label, got, want)
        gzip_note = ""
        if gzip:
            # The same bids gzipped, one unsplittable file per partition for both readers.
            t0 = time.perf_counter()
            gz_files = gzip_copies(folder, gz_folder)
            gz_mb = sum(os.path.getsize(f) for f in gz_files) / 1e6
            print(f"spark: gzip copies ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
            spark_gz = spark.read.schema(BID_DDL).json(gz_folder)
            ours_gz = spark.read.format("sliceflow.json").schema(BID_DDL).load(gz_folder)
            try:
                same = ours_gz.count() == n_rows and ours_gz.agg(*agg).collect() == want
            except Exception as exc:  # a build whose source cannot read .json.gz at all
                same, reason = False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            else:
                reason = "its rows differ from spark.read.json's"
            if same:
                frames[GZ_SPARK] = spark_gz
                frames[GZ_OURS] = ours_gz
                if floor_lib is not None:
                    frames[GZ_PARSE_FLOOR] = (
                        spark.read.format("bench_parsed_arrow_gz").schema(BID_DDL).load()
                    )
                gzip_note = f"The `.json.gz` rows read the same bids gzipped ({gz_mb:.1f} MB)."
            else:
                gzip_note = (
                    "The `.json.gz` rows are left out: the sliceflow.json source of this build "
                    f"does not read gzip files as spark.read.json does ({reason})."
                )
                print("spark: " + gzip_note, file=sys.stderr)

        def noop(df):
            return lambda: df.write.format("noop").mode("overwrite").save()

        cpu: dict[str, list[tuple[float, float]]] = {label: [] for label in frames}
        jobs = [(label, with_cpu_split(noop(df), cpu[label])) for label, df in frames.items()]
        print(
            f"spark: {n_rows:,} bids, {mb:.1f} MB, {text.rdd.getNumPartitions()} text partitions, "
            f"arrow batch {arrow_batch} rows",
            file=sys.stderr,
        )
        times = interleaved(jobs, repeats)
        partitions = text.rdd.getNumPartitions()
    spark.stop()

    med = {label: statistics.median(samples) for label, samples in times.items()}
    pairs = {
        "read.text + sliceflow from_json": "read.text + Spark from_json",
        "sliceflow.json data source": "spark.read.json(schema)",
        GZ_OURS: GZ_SPARK,
    }
    out = [
        f"**PySpark** `local[2]`: {n_rows:,} bids = {mb:.1f} MB of NDJSON in {len(names)} files "
        f"({partitions} partitions), session time zone UTC, Arrow batches of {arrow_batch} rows; "
        f'each job `df.write.format("noop")`, one warm-up round, median of {repeats}.'
        + "".join(f" Session setting `{item}`." for item in conf_items or []),
        "",
        "| job | median s | min-max s | MB/s | vs Spark | JVM CPU s | Python CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, _ in jobs:
        t = med[label]
        vs = ratio(med[pairs[label]], t) if label in pairs else ""
        # The warm-up round is left out, as in the times.
        jvm = statistics.median(c[0] for c in cpu[label][-repeats:])
        py = statistics.median(c[1] for c in cpu[label][-repeats:])
        out.append(
            f"| {label} | {t:.2f} | {spread(times[label])} | {mb / t:,.0f} | {vs} "
            f"| {jvm:.2f} | {py:.2f} |"
        )
    fj = med["read.text + Spark from_json"] / med["read.text + sliceflow from_json"]
    ds = med["spark.read.json(schema)"] / med["sliceflow.json data source"]
    checks = [("from_json", fj, "Spark's"), ("data source", ds, "spark.read.json")]
    if GZ_OURS in med:
        checks.append(("data source, gzip", med[GZ_SPARK] / med[GZ_OURS], "spark.read.json"))
    out.append("")
    out.append(
        "Targets: "
        + "; ".join(
            f"{name} >= {SPARK_TARGETS[name]:g}x {other}: {value:.2f}x "
            f"({'met' if value >= SPARK_TARGETS[name] else 'NOT met'})"
            for name, value, other in checks
        )
        + "."
    )
    fj_floor = (
        med["read.text + Spark from_json"] / med["read.text + Arrow UDF of decoded structs (floor)"]
    )
    ds_floor = med["spark.read.json(schema)"] / med["Python data source of decoded Arrow (floor)"]
    out.append(
        "With a decoder that took no time (the floors of decoded data): "
        f"from_json {fj_floor:.2f}x, data source {ds_floor:.2f}x."
    )
    if FJ_PARSE_FLOOR in med:
        fj_parse = med["read.text + Spark from_json"] / med[FJ_PARSE_FLOOR]
        ds_parse = med["spark.read.json(schema)"] / med[DS_PARSE_FLOOR]
        gz_parse = (
            f", data source on .json.gz {med[GZ_SPARK] / med[GZ_PARSE_FLOOR]:.2f}x"
            if GZ_PARSE_FLOOR in med
            else ""
        )
        out.append(
            "With a decoder as fast as simdjson's parse that built nothing (the parse floors: "
            f"the same, after simdjson's DOM parser has read the very text): from_json "
            f"{fj_parse:.2f}x, data source {ds_parse:.2f}x{gz_parse}."
        )
    rounds = [
        ("from_json", "read.text + Spark from_json", "read.text + sliceflow from_json"),
        ("data source", "spark.read.json(schema)", "sliceflow.json data source"),
        ("from_json floor", "read.text + Spark from_json", FJ_FLOOR),
        ("data source floor", "spark.read.json(schema)", DS_FLOOR),
    ]
    if FJ_PARSE_FLOOR in med:
        rounds += [
            ("from_json parse floor", "read.text + Spark from_json", FJ_PARSE_FLOOR),
            ("data source parse floor", "spark.read.json(schema)", DS_PARSE_FLOOR),
        ]
    if GZ_OURS in med:
        rounds.insert(2, ("data source on .json.gz", GZ_SPARK, GZ_OURS))
    if GZ_PARSE_FLOOR in med:
        rounds.append(("data source on .json.gz parse floor", GZ_SPARK, GZ_PARSE_FLOOR))
    out.append(
        "Round by round (jobs back to back): "
        + ", ".join(f"{name} {paired(times, base, label)}" for name, base, label in rounds)
        + "."
    )
    out.append(
        "Each round's ratios: "
        + "; ".join(
            f"{name} "
            + " ".join(f"{b / t:.2f}" for b, t in zip(times[base], times[label], strict=True))
            for name, base, label in rounds[: 3 if GZ_OURS in med else 2]
        )
        + "."
    )
    if gzip_note:
        out.append(gzip_note)
    return "\n".join(out), {"median": med, "mb": mb}


# ---------------------------------------------------------------------------------------------
# README


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("kernel", "spark"), help="run one part only")
    parser.add_argument(
        "--rows", type=int, help="bids for each part run (default kernel 500000, spark 2000000)"
    )
    parser.add_argument(
        "--nested-rows",
        type=int,
        help="kernel part: GitHub-like events of the nested rows (default 100000; 0: none)",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats")
    parser.add_argument("--repeat", type=int, help="timed rounds (kernel: 7, spark: 3)")
    parser.add_argument("--files", type=int, default=4, help="NDJSON files for Spark")
    parser.add_argument("--cpu", type=int, default=0, help="the CPU the kernel part runs on")
    parser.add_argument("--data-dir", help="keep/reuse the Spark input here (default: temp)")
    parser.add_argument(
        "--arrow-batch", type=int, help="spark.sql.execution.arrow.maxRecordsPerBatch"
    )
    parser.add_argument(
        "--no-gzip", action="store_true", help="Spark part: leave out the .json.gz rows"
    )
    parser.add_argument(
        "--conf", action="append", help="Spark part: KEY=VALUE Spark conf (repeatable)"
    )
    parser.add_argument("--note", help="a line for the header, e.g. which sliceflow build ran")
    parser.add_argument("--write-readme", action="store_true", help="update bench/README.md")
    args = parser.parse_args(argv)

    parts = [args.only] if args.only else ["kernel", "spark"]
    _, header = run_header("bench/bench_json.py", argv, args.note)
    print(header + "\n")
    for part in parts:
        if part == "kernel":
            rows = args.rows or (20_000 if args.quick else 500_000)
            repeats = args.repeat or (3 if args.quick else 7)
            block, _ = bench_kernel(rows, repeats, args.cpu)
            numbers = 500_000 if args.quick else 6_000_000
            block += "\n\n" + bench_long_array(numbers, repeats, args.cpu)
            if args.nested_rows != 0:
                from bench_json_nested import bench_nested_kernel

                nested = args.nested_rows or (5_000 if args.quick else 100_000)
                nested_block, _ = bench_nested_kernel(nested, repeats, args.cpu)
                block += "\n\n" + nested_block
        else:
            rows = args.rows or (100_000 if args.quick else 2_000_000)
            repeats = args.repeat or (1 if args.quick else 3)
            block, _ = bench_spark(
                rows,
                args.files,
                repeats,
                args.data_dir,
                args.arrow_batch,
                not args.no_gzip,
                args.conf,
            )
        print(block + "\n", flush=True)
        if args.write_readme:
            write_block(part, block, header)


if __name__ == "__main__":
    main()
