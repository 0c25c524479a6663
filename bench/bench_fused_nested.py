"""The fused scan on nested real-world JSON, in one run: GitHub-events-like NDJSON (gzipped,
in ``dt=`` partition folders, a share of malformed lines) -> ``repo.name``, ``actor.login``,
``payload.size`` -> hop(1 h, 5 min) count, count_distinct(login), max(size) per repository.

Jobs (PySpark ``local[2]``, session time zone UTC, rounds interleaved, medians; each job ends
in ``df.write.format("noop")``):

* ``Spark``: ``spark.read.schema(GITHUB_EVENTS_DDL).json(path)`` + ``groupBy(window(...),
  repo.name).agg(count, count_distinct, max)``;
* ``sliceflow, unfused``: the ``sliceflow.json`` source with the same DDL + ``window_agg`` over
  the nested field references, ``spark.sliceflow.fusion.enabled=false``;
* ``sliceflow, fused``: the same code with fusion on (the default): the read decodes only the
  four fields the window reads and runs its local phase; only partials enter the JVM;
* the sources alone into the noop sink, 5-field nested DDL: ``spark.read.json`` and the
  ``sliceflow.json`` source (every declared field decoded and moved into the JVM);
* the result alone (a floor of any plan whose last phase runs in Python): the query's windows,
  computed before timing and kept as an Arrow IPC file, served by a Python data source into
  the noop sink: what moving the result from Python workers into the JVM costs, with no
  reading, decoding or aggregating;
* the fused plan's Spark steps alone (its floor without sliceflow's work): the fused job's
  partial rows, computed before timing by the same local phase in this process, served by a
  Python data source from an Arrow IPC file, then the fused job's own shuffle and sort, and a
  ``mapInArrow`` that reads its partials and hands back as many windows (taken from the kept
  result, in the share of its input) without computing them: the JVM's and the Python
  workers' part of the fused plan with no file read, no decoding and no aggregating.

The corpus is :func:`sliceflow.testing.write_github_events` (structs, arrays of structs,
escaped and non-ASCII text, type drift; ``--malformed`` of the lines broken, read PERMISSIVE:
a broken line is a row of nulls, which both windows drop for its null time). Before timing,
the fused and unfused windows must give Spark's rows, and both sources Spark's rows.

    python bench/bench_fused_nested.py                   # 200,000 events, 3 rounds
    python bench/bench_fused_nested.py --rows 20000 --repeat 1   # smoke run
    python bench/bench_fused_nested.py --write-readme    # also update bench/README.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from typing import Any

from kernel_timing import interleaved, paired, spread
from readme_blocks import write_block
from run_info import run_header

SPARK = "Spark: read.json + window()"
UNFUSED = "sliceflow, unfused (fusion.enabled=false)"
FUSED = "sliceflow, fused"
SPARK_SOURCE = "spark.read.json alone, noop"
SOURCE = "sliceflow.json source alone, noop"
RESULT = "the result alone from Python, noop (floor)"
PLUMBING = "the fused plan's Spark steps alone, noop (floor)"

#: The targets of the fused scan on nested events (the window, the source alone).
WINDOW_TARGET = 5.0
SOURCE_TARGET = 1.5


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=2, help="dt= folders (default 2)")
    parser.add_argument("--malformed", type=float, default=0.005)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data-dir", help="keep the input here (written if missing)")
    parser.add_argument("--write-readme", action="store_true")
    parser.add_argument("--note")
    args = parser.parse_args(argv)
    command, header = run_header("bench/bench_fused_nested.py", argv, args.note)

    from pyspark.sql import functions as F

    from sliceflow import window as W
    from sliceflow.spark import window_agg
    from sliceflow.testing.github_events import GITHUB_EVENTS_DDL, write_github_events
    from sliceflow.testing.spark import local_session

    folder = args.data_dir or tempfile.mkdtemp(prefix="sliceflow-bench-fused-nested-")
    if not os.path.isdir(folder) or not os.listdir(folder):
        print(f"writing {args.rows:,} events into {folder}", file=sys.stderr, flush=True)
        write_github_events(
            folder,
            args.rows,
            files=args.files,
            partitions=args.partitions,
            gzip_files=True,
            malformed=args.malformed,
        )
    spark = local_session(
        "local[2]", "sliceflow-bench-fused-nested", {"spark.sql.session.timeZone": "UTC"}
    )
    hop = W.hop("created_at", size="1 hour", slide="5 minutes")
    aggs = [
        W.count().alias("n"),
        W.count_distinct("login").alias("actors"),
        W.max("size").alias("biggest"),
    ]
    columns = ("window_start", "window_end", "repo", "n", "actors", "biggest")

    # The partition column at the end, where spark.read.json adds it.
    ddl = GITHUB_EVENTS_DDL + (", dt DATE" if args.partitions > 0 else "")

    def read_ours() -> Any:
        return spark.read.format("sliceflow.json").schema(ddl).load(folder)

    def read_theirs() -> Any:
        return spark.read.schema(ddl).json(folder)

    def picked(df: Any) -> Any:
        return df.select(
            F.col("repo.name").alias("repo"),
            F.col("actor.login").alias("login"),
            F.col("payload.size").alias("size"),
            "created_at",
        )

    def ours(fusion: bool) -> Any:
        spark.conf.set("spark.sliceflow.fusion.enabled", str(fusion).lower())
        return window_agg(picked(read_ours()), hop, ["repo"], aggs).select(*columns)

    def theirs() -> Any:
        return (
            picked(read_theirs())
            .groupBy(F.window("created_at", "1 hour", "5 minutes").alias("w"), "repo")
            .agg(F.count("*").alias("n"), F.count_distinct("login").alias("actors"),
                 F.max("size").alias("biggest"))
            .select(F.col("w.start").alias("window_start"), F.col("w.end").alias("window_end"),
                    "repo", "n", "actors", "biggest")
        )  # fmt: skip

    fused, unfused = ours(True), ours(False)
    assert "sliceflow.json+window_agg" in fused._jdf.queryExecution().analyzed().toString()
    assert "sliceflow.json+" not in unfused._jdf.queryExecution().analyzed().toString()
    checks = ((FUSED, fused, theirs()), (UNFUSED, unfused, theirs()),
              (SOURCE, read_ours(), read_theirs()))  # fmt: skip
    for label, a, b in checks:
        diff = a.exceptAll(b).count() + b.exceptAll(a).count()
        print(f"{label}: {diff} rows differ from Spark's", file=sys.stderr, flush=True)
        if diff:
            raise SystemExit(f"{label} differs from Spark's: {diff} rows")
    result_path = os.path.join(tempfile.mkdtemp(prefix="sliceflow-bench-result-"), "w.arrow")
    windows = _keep_table(fused.toArrow(), result_path)
    spark.dataSource.register(_arrow_file_source("bench_result", result_path, fused.schema, 2))
    partials_path = os.path.join(os.path.dirname(result_path), "partials.arrow")
    partial_schema, partial_rows = _keep_partials(folder, hop, aggs, partials_path)
    partials_source = _arrow_file_source("bench_partials", partials_path, partial_schema, 4)
    spark.dataSource.register(partials_source)

    def plumbing() -> Any:
        partials = spark.read.format("bench_partials").load()
        shuffled = partials.repartition("__key").sortWithinPartitions(
            F.xxhash64("__key"), "__key", "__slice"
        )
        share = _windows_in_share(result_path, partial_rows)
        return shuffled.mapInArrow(share, fused.schema)

    def noop(df: Any) -> None:
        df.write.format("noop").mode("overwrite").save()

    jobs = [
        (SPARK, lambda: noop(theirs())),
        (UNFUSED, lambda: noop(unfused)),
        (FUSED, lambda: noop(fused)),
        (SPARK_SOURCE, lambda: noop(read_theirs())),
        (SOURCE, lambda: noop(read_ours())),
        (RESULT, lambda: noop(spark.read.format("bench_result").load())),
        (PLUMBING, lambda: noop(plumbing())),
    ]
    times = interleaved(jobs, args.repeat)
    spark.stop()
    median = {label: statistics.median(times[label]) for label, _ in jobs}
    rows = [
        "| job | median s | range s | Spark's job / this one (same rounds) |",
        "|---|---:|---:|---:|",
    ]
    for label, _ in jobs:
        base = SPARK_SOURCE if label == SOURCE else SPARK
        floors = (SPARK, SPARK_SOURCE, RESULT, PLUMBING)
        faster = "" if label in floors else paired(times, base, label)
        rows.append(f"| {label} | {median[label]:.2f} | {spread(times[label])} | {faster} |")
    window_ratio = median[SPARK] / median[FUSED]
    source_ratio = median[SPARK_SOURCE] / median[SOURCE]

    def verdict(value: float, target: float) -> str:
        return f"{value:.2f}x (target >= {target}x: {'met' if value >= target else 'NOT met'})"

    block = (
        f"{args.rows:,} GitHub-like events in {args.files} gzipped NDJSON files under "
        f"{args.partitions} `dt=` folders, {args.malformed:.1%} malformed lines (PERMISSIVE) -> "
        "`repo.name`, `actor.login`, `payload.size` -> hop(1 h, 5 min) count, "
        f"count_distinct(login), max(size) per repository ({windows:,} windows); the sources "
        f"with the 5-field nested DDL and `dt`; `local[2]`; {args.repeat} interleaved rounds "
        "after a warm-up round.\n\n"
        + "\n".join(rows)
        + f"\n\nFused window against Spark: {verdict(window_ratio, WINDOW_TARGET)}; fused "
        f"against unfused: {median[UNFUSED] / median[FUSED]:.2f}x; the sliceflow.json source "
        f"alone against spark.read.json alone: {verdict(source_ratio, SOURCE_TARGET)}. The "
        f"result alone takes {median[RESULT]:.2f} s, the fused plan's Spark steps alone "
        f"{median[PLUMBING]:.2f} s ({median[PLUMBING] / median[FUSED]:.0%} of the fused job); "
        f"the {WINDOW_TARGET}x target leaves the fused job {median[SPARK] / WINDOW_TARGET:.2f} "
        "s.\n"
    )
    print(header + "\n\n" + block)
    if args.write_readme:
        write_block("fused_nested", block, header)
    print(command, file=sys.stderr)


def _keep_table(table: Any, path: str) -> int:
    """Writes ``table`` to an Arrow IPC file in batches of 10,000 rows (nullable columns, as a
    Python data source must declare them); its row count."""
    import pyarrow as pa

    table = table.cast(pa.schema([f.with_nullable(True) for f in table.schema]))
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=10_000)
    return int(table.num_rows)


def _keep_partials(folder: str, hop: Any, aggs: list[Any], path: str) -> tuple[Any, int]:
    """The fused job's partial rows, made in this process by the same decoding and local phase
    (one per file, as the fused read's tasks make them), kept at ``path``; their Spark schema
    and count."""
    import glob
    import gzip

    import pyarrow as pa

    from sliceflow._runtime.spark_types import spark_struct
    from sliceflow.aggregates import agg_specs
    from sliceflow.json import decode
    from sliceflow.testing.github_events import GITHUB_EVENTS_DDL
    from sliceflow.window.phases import local_phase
    from sliceflow.window.plan import build_plan

    parts = []
    plan = None
    for name in sorted(glob.glob(os.path.join(folder, "**", "*.json*"), recursive=True)):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(name, "rb") as f:
            events = decode(f.read(), GITHUB_EVENTS_DDL)
        rows = pa.table(
            {
                "repo": events.column("repo").field("name"),
                "login": events.column("actor").field("login"),
                "size": events.column("payload").field("size"),
                "created_at": events.column("created_at"),
            }
        )
        if plan is None:
            plan = build_plan(rows.schema, hop, ["repo"], agg_specs(aggs), ansi=False)
        parts.extend(local_phase(plan, rows.to_batches(max_chunksize=10_000)))
    assert plan is not None, f"no event files under {folder}"
    count = _keep_table(pa.Table.from_batches(parts, plan.partial_schema), path)
    return spark_struct(plan.partial_schema), count


def _arrow_file_source(name: str, path: str, schema: Any, partitions: int) -> Any:
    """A Python data source, ``name``, serving the Arrow IPC file at ``path``, its batches
    dealt over ``partitions`` read tasks."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
    from pyspark.sql.types import StructField, StructType

    nullable = StructType([StructField(f.name, f.dataType, True) for f in schema.fields])

    class FileReader(DataSourceReader):
        def partitions(self) -> list[InputPartition]:
            return [InputPartition(i) for i in range(partitions)]

        def read(self, partition: Any) -> Any:
            import pyarrow as pa

            with pa.memory_map(path) as source:
                reader = pa.ipc.open_file(source)
                for i in range(partition.value, reader.num_record_batches, partitions):
                    yield reader.get_batch(i)

    class FileSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return name

        def schema(self) -> StructType:
            return nullable

        def reader(self, schema: Any) -> DataSourceReader:
            return FileReader()

    return FileSource


def _windows_in_share(path: str, partial_rows: int) -> Any:
    """A ``mapInArrow`` function that reads every partial row of its task and hands back as many
    windows of the kept result (the file at ``path``) as its share of the ``partial_rows``."""

    def windows(batches: Any) -> Any:
        import pyarrow as pa

        with pa.memory_map(path) as source:
            result = pa.ipc.open_file(source).read_all()
        seen = sum(b.num_rows for b in batches)
        share = round(result.num_rows * seen / max(partial_rows, 1))
        yield from result.slice(0, share).to_batches(max_chunksize=65_536)

    return windows


if __name__ == "__main__":
    main()
