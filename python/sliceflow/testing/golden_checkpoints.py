"""Golden checkpoints: a small Spark checkpoint of each streaming operator, written by one
release and committed, that every later release must restart from with the same output as a
run from scratch (docs/state.md, "Compatibility").

A golden checkpoint is a folder (``tests/data/checkpoints/<operator>/``) holding

* ``source/part-NNNN.parquet``: the input, one file per micro-batch (the file source reads the
  oldest first: files get modification times ``1_000_000 + NNNN`` seconds);
* ``checkpoint/``: the query's checkpoint after the first :data:`FIRST_BATCHES` micro-batches,
  with the absolute paths Spark writes into it (the file source's log of the files it read,
  the state schema files' locations) replaced by the placeholders ``{SOURCE}`` and
  ``{CHECKPOINT}``, and without Hadoop's ``.crc`` side files (they would no longer match);
* ``emitted.parquet``: the rows those micro-batches emitted.

:func:`place` copies one to a scratch folder (Spark writes into a checkpoint) and puts the
paths back. ``tools/make_golden_checkpoints.py`` writes them; tests restart from them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

from sliceflow import window as W

__all__ = [
    "FIRST_BATCHES",
    "GOLDEN",
    "Golden",
    "place",
    "stream",
    "write_source",
]

#: Micro-batches the golden checkpoint has processed; the rest come after the restart.
FIRST_BATCHES = 2
SOURCE_PLACEHOLDER = "{SOURCE}"
CHECKPOINT_PLACEHOLDER = "{CHECKPOINT}"
_MTIME_BASE = 1_000_000


class Golden:
    """One operator's golden query: its input schema, micro-batches and query."""

    def __init__(
        self,
        name: str,
        schema: pa.Schema,
        batches: Callable[[], list[pa.Table]],
        query: Callable[[DataFrame], DataFrame],
        *,
        restart_in_fresh_run: bool = False,
    ) -> None:
        self.name = name
        self.schema = schema
        self.batches = batches
        self.query = query
        #: Whether the run from scratch it is compared with stops after the golden checkpoint's
        #: micro-batches and restarts too: a query whose results depend on the watermark of the
        #: micro-batch before (the late-row bound of dropDuplicatesWithinWatermark) sees the
        #: no-data micro-batch that ends the first run in both.
        self.restart_in_fresh_run = restart_in_fresh_run


S = 1_000_000  # microseconds per second

WINDOW_SCHEMA = pa.schema(
    [("k", pa.string()), ("t", pa.timestamp("us")), ("v", pa.int64()), ("f", pa.float64())]
)

#: Four micro-batches (key, time in seconds, v, f): times move forward about 30 s a batch,
#: with rows out of order, late rows (behind the 5 s watermark delay), null keys, times and
#: values.
WINDOW_ROWS: list[list[tuple[Any, ...]]] = [
    [
        ("a", 3.2, 7, 0.0),
        ("a", -6.4, 3, 0.0),
        ("b", 3.1, 9, None),
        ("c", 17.5, 6, 0.0),
        (None, 16.4, -5, 0.0),
        ("c", 10.1, -2, None),
        ("b", None, 1, 1.0),
        ("a", 8.3, -5, 2.5),
    ],
    [
        ("c", 32.5, 0, 2.5),
        ("a", 28.5, 2, None),
        ("b", 62.7, 3, 0.0),
        ("c", 47.0, -1, 2.5),
        ("a", 35.0, -3, None),
        ("c", 22.0, 6, 2.5),
        ("b", 33.5, 9, -1.5),
        (None, 57.5, -1, 2.5),
    ],
    [
        ("c", 68.2, None, 0.0),
        ("c", 73.8, 0, 0.0),
        (None, 89.9, -2, 0.0),
        ("b", 58.0, 4, -1.5),
        ("c", 84.0, 7, 0.0),
        ("a", 66.5, None, -1.5),
        ("a", 76.0, 7, -1.5),
        ("c", 51.5, 3, 2.5),
    ],
    [
        ("b", 92.5, 2, -1.5),
        (None, 116.5, -2, 0.0),
        ("c", 119.3, 1, 2.5),
        ("c", 104.2, 3, -1.5),
        ("c", 123.9, 6, 2.5),
        ("b", 87.9, -1, -1.5),
        ("a", 113.3, 9, -1.5),
        ("b", 106.2, -4, -1.5),
    ],
]


def _window_batches() -> list[pa.Table]:
    return [
        pa.Table.from_pylist(
            [
                {"k": k, "t": None if t is None else round(t * S), "v": v, "f": f}
                for k, t, v, f in rows
            ],
            WINDOW_SCHEMA,
        )
        for rows in WINDOW_ROWS
    ]


def _window_query(df: DataFrame) -> DataFrame:
    from sliceflow.spark import window_agg

    aggs = [W.count().alias("n"), W.sum("v").alias("s"), W.max("v").alias("hi"), W.avg("f")]
    return window_agg(
        df.withWatermark("t", "5 seconds"),
        W.hop("t", "20 seconds", "10 seconds"),
        ["k"],
        aggs,
        buckets=2,
    )


CHANGELOG_SCHEMA = pa.schema(
    [
        ("k", pa.int64()),
        ("s", pa.string()),
        ("v", pa.int64()),
        ("d", pa.decimal128(10, 2)),
        ("op", pa.string()),
    ]
)


#: Four micro-batches of a valid changelog (k, s, v, d, op): inserts, -U/+U pairs, deletes
#: (a key's last row deleted, then inserted again), a null key, null values.
CHANGELOG_ROWS: list[list[tuple[Any, ...]]] = [
    [
        (0, "x", None, None, "+I"),
        (3, None, 3, None, "+I"),
        (2, None, 5, None, "+I"),
        (4, "x", 5, None, "+I"),
        (4, "x", 5, None, "-U"),
        (4, "zz", 5, None, "+U"),
        (0, None, 0, None, "+I"),
        (None, "x", -2, "7.23", "+I"),
    ],
    [
        (0, "x", None, None, "-D"),
        (2, None, 5, None, "-D"),
        (2, "zz", 4, "3.02", "+I"),
        (None, "x", -2, "7.23", "-D"),
        (0, None, 0, None, "-U"),
        (0, None, 4, "5.20", "+U"),
        (1, "zz", 1, None, "+I"),
        (3, None, 2, "-0.18", "+I"),
    ],
    [
        (4, "zz", 5, None, "-U"),
        (4, "y", 2, "-9.09", "+U"),
        (1, "zz", 1, None, "-U"),
        (1, "zz", 4, None, "+U"),
        (3, None, 3, None, "-D"),
        (0, "zz", 3, None, "+I"),
        (1, "x", 7, None, "+I"),
        (None, None, -2, None, "+I"),
    ],
    [
        (1, "x", 7, None, "-U"),
        (1, "zz", -2, "-6.32", "+U"),
        (2, "zz", 4, "3.02", "-D"),
        (3, "y", 5, "4.11", "+I"),
        (0, "zz", 3, None, "-D"),
        (2, "y", 7, "0.29", "+I"),
        (4, "y", 2, "-9.09", "-D"),
        (0, "y", 7, None, "+I"),
    ],
]


def _changelog_batches() -> list[pa.Table]:
    return [
        pa.Table.from_pylist(
            [
                {"k": k, "s": s, "v": v, "d": None if d is None else Decimal(d), "op": op}
                for k, s, v, d, op in rows
            ],
            CHANGELOG_SCHEMA,
        )
        for rows in CHANGELOG_ROWS
    ]


def _changelog_query(df: DataFrame) -> DataFrame:
    from sliceflow.spark import changelog_agg

    aggs = [
        W.count().alias("n"),
        W.sum("v").alias("sv"),
        W.max("s").alias("hs"),
        W.avg("d").alias("ad"),
        W.count_distinct("v").alias("dv"),
        W.last_value("s").alias("ls"),
    ]
    return changelog_agg(df, ["k"], aggs, op_col="op", buckets=2)


def _dedup_query(df: DataFrame) -> DataFrame:
    from sliceflow.spark import deduplicate

    return deduplicate(df, ["k"], keep="last", order_by="v", op_col="op", buckets=2)


def _dedup_first_query(df: DataFrame) -> DataFrame:
    from sliceflow.spark import deduplicate

    # keep="first" in arrival order, no watermark: the keys-only state (an Arrow IPC batch of
    # the key columns in format 1 of the payload; docs/state.md).
    return deduplicate(df, ["k", "s"], keep="first", buckets=2)


def _dedup_first_watermark_query(df: DataFrame) -> DataFrame:
    from sliceflow.spark import deduplicate

    # keep="first" in arrival order on a watermarked stream: payload format 2 (per key its
    # bytes and expiry, and the watermark the bucket last ran at; docs/state.md).
    return deduplicate(df.withWatermark("t", "5 seconds"), ["k"], keep="first", buckets=2)


def _topn_query(df: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    from sliceflow.spark import topn

    order = [F.desc("v"), F.col("s").asc_nulls_last(), "d"]
    return topn(df, 2, by=["k"], order_by=order, op_col="op", buckets=2, bundle_rows=3)


def _join_query(df: DataFrame) -> DataFrame:
    """Two changelogs from the one stream (a query reads its source once per micro-batch): the
    rows with their ``s`` and ``v`` on the left, with their ``d`` on the right, full join."""
    from pyspark.sql import functions as F

    from sliceflow.spark import join

    left = df.select("op", "k", "s", "v")
    right = df.where("k IS NULL OR k % 2 = 0").select(F.col("op").alias("rop"), "k", "d")
    return join(left, right, "k", "full", left_op_col="op", right_op_col="rop", buckets=2,
                bundle_rows=3)  # fmt: skip


#: The golden query of each streaming operator (and state payload version), by name.
GOLDEN = {
    "window_agg": Golden("window_agg", WINDOW_SCHEMA, _window_batches, _window_query),
    "changelog_agg": Golden(
        "changelog_agg", CHANGELOG_SCHEMA, _changelog_batches, _changelog_query
    ),
    "deduplicate": Golden("deduplicate", CHANGELOG_SCHEMA, _changelog_batches, _dedup_query),
    "deduplicate_first_v1": Golden(
        "deduplicate_first_v1", CHANGELOG_SCHEMA, _changelog_batches, _dedup_first_query
    ),
    "deduplicate_first": Golden(
        "deduplicate_first",
        WINDOW_SCHEMA,
        _window_batches,
        _dedup_first_watermark_query,
        restart_in_fresh_run=True,
    ),
    # Layout 1 (each retained row with its encoded key and sort key), then layout 2 (the
    # payload alone; spark/topn_streaming.py).
    "topn_v1": Golden("topn_v1", CHANGELOG_SCHEMA, _changelog_batches, _topn_query),
    "topn": Golden("topn", CHANGELOG_SCHEMA, _changelog_batches, _topn_query),
    # Bucket layout 2 (docs/state.md): each bucket's base, a log entry per later micro-batch and
    # the head; the checkpoints above are bucket layout 1 (one value per bucket).
    "window_agg_log": Golden("window_agg_log", WINDOW_SCHEMA, _window_batches, _window_query),
    "changelog_agg_log": Golden(
        "changelog_agg_log", CHANGELOG_SCHEMA, _changelog_batches, _changelog_query
    ),
    "deduplicate_log": Golden(
        "deduplicate_log", CHANGELOG_SCHEMA, _changelog_batches, _dedup_query
    ),
    "deduplicate_first_log": Golden(
        "deduplicate_first_log",
        WINDOW_SCHEMA,
        _window_batches,
        _dedup_first_watermark_query,
        restart_in_fresh_run=True,
    ),
    "topn_log": Golden("topn_log", CHANGELOG_SCHEMA, _changelog_batches, _topn_query),
    # Operator kind 5, bucket layout 2 from the start: both sides' live rows per bucket.
    "join": Golden("join", CHANGELOG_SCHEMA, _changelog_batches, _join_query),
}


def write_source(folder: str, batches: list[pa.Table], first: int = 0) -> None:
    """One parquet file per micro-batch, modification times increasing from ``first``."""
    os.makedirs(folder, exist_ok=True)
    for i, table in enumerate(batches, start=first):
        path = os.path.join(folder, f"part-{i:04d}.parquet")
        pq.write_table(table, path)
        os.utime(path, (_MTIME_BASE + i, _MTIME_BASE + i))


def stream(spark: SparkSession, golden: Golden, folder: str) -> DataFrame:
    """The golden query over the parquet files of ``folder``, one file per micro-batch."""
    schema = spark.createDataFrame(golden.schema.empty_table()).schema
    source = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(folder)
    return golden.query(source)


def _text_files(root: str) -> list[str]:
    """The files under ``root`` that Spark writes as text (logs, metadata, schema files)."""
    out = []
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                head = f.read(4096)
            if b"\0" not in head and not name.endswith((".zip", ".sst", ".changelog")):
                out.append(path)
    return out


def _replace_in_files(root: str, pairs: list[tuple[str, str]]) -> None:
    for path in _text_files(root):
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        new = text
        for old, replacement in pairs:
            new = new.replace(old, replacement)
        if new != text:
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(new)


def freeze(checkpoint: str, source: str, into: str) -> None:
    """Copies the checkpoint ``checkpoint`` (of a query that read ``source``) to ``into`` as a
    golden checkpoint: paths as placeholders, no ``.crc`` files."""
    shutil.copytree(checkpoint, into, ignore=shutil.ignore_patterns("*.crc"))
    _replace_in_files(
        into,
        [
            (os.path.abspath(checkpoint), CHECKPOINT_PLACEHOLDER),
            (os.path.abspath(source), SOURCE_PLACEHOLDER),
        ],
    )


def place(golden_dir: str, scratch: str) -> tuple[str, str]:
    """Copies the golden checkpoint in ``golden_dir`` into ``scratch`` (its ``src`` and ``ck``
    folders), with the paths put back; returns (source folder, checkpoint folder)."""
    source = os.path.join(scratch, "src")
    checkpoint = os.path.join(scratch, "ck")
    os.makedirs(source)
    names = sorted(os.listdir(os.path.join(golden_dir, "source")))
    for i, name in enumerate(names):
        path = os.path.join(source, name)
        shutil.copyfile(os.path.join(golden_dir, "source", name), path)
        os.utime(path, (_MTIME_BASE + i, _MTIME_BASE + i))
    shutil.copytree(os.path.join(golden_dir, "checkpoint"), checkpoint)
    _replace_in_files(
        checkpoint,
        [
            (CHECKPOINT_PLACEHOLDER, os.path.abspath(checkpoint)),
            (SOURCE_PLACEHOLDER, os.path.abspath(source)),
        ],
    )
    return source, checkpoint
