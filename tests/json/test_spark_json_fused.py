"""The fused scan (sliceflow.spark.json.fused_scan): window_agg over a batch sliceflow.json read
runs its local phase inside the read. Fused, unfused (spark.sliceflow.fusion.enabled=false)
and Spark's own window() give the same rows; what is fused and what falls back is checked on
the plan (the scan's name, as explain() shows it)."""

from __future__ import annotations

import gzip
import json
import os

import pytest
from pyspark.sql import functions as F
from pyspark.sql.functions import udf
from pyspark.sql.types import LongType
from support.spark_helpers import assert_same_rows, unfused_plan

from sliceflow import window as W
from sliceflow.spark import window_agg
from sliceflow.spark.json.fused_scan import FUSED_SOURCE_PREFIX
from sliceflow.testing import BID_DDL, write_bids
from sliceflow.testing.spark import window_bounds

pytestmark = pytest.mark.spark

HOP = W.hop("dateTime", size="1 hour", slide="10 minutes")
AGGS = [W.count().alias("n"), W.sum("price").alias("s"), W.max("price").alias("m")]
EVENT_DDL = (
    "id STRING, type STRING, actor STRUCT<id: BIGINT, login: STRING>, "
    "repo STRUCT<id: BIGINT, name: STRING, owner: STRUCT<login: STRING>>, "
    "payload STRUCT<size: BIGINT, ref: STRING>, created_at TIMESTAMP"
)


def fused(df) -> bool:
    """Whether ``df``'s plan reads through a fused scan (what ``explain()`` shows)."""
    return FUSED_SOURCE_PREFIX in df._jdf.queryExecution().analyzed().toString()


def unfused(spark, build):
    return unfused_plan(spark, build, fused)


@pytest.fixture(scope="module")
def bids(tmp_path_factory) -> str:
    folder = str(tmp_path_factory.mktemp("bids"))
    write_bids(folder, 20_000, files=3, events_per_second=5)
    return folder


def spark_hop(df, by: list[str]):
    return (
        df.groupBy(F.window("dateTime", "1 hour", "10 minutes").alias("w"), *by)
        .agg(F.count("*").alias("n"), F.sum("price").alias("s"), F.max("price").alias("m"))
        .select(*window_bounds(), *by, "n", "s", "m")
    )


def test_window_agg_over_the_source_is_fused_and_equals_unfused_and_spark(spark, bids):
    df = spark.read.format("sliceflow.json").schema(BID_DDL).load(bids)

    def build():
        return window_agg(df, HOP, ["auction"], AGGS)

    out = build()
    assert fused(out)
    plan = out._jdf.queryExecution().analyzed().toString()
    assert f"{FUSED_SOURCE_PREFIX}window_agg." in plan
    assert_same_rows(out, unfused(spark, build))
    reference = spark_hop(spark.read.schema(BID_DDL).json(bids), ["auction"])
    assert_same_rows(out, reference)


@pytest.mark.parametrize(
    "shape",
    ["select", "alias", "renamed", "identity cast", "temp view", "column objects"],
)
def test_column_references_keep_the_scan_fused(spark, bids, shape):
    df = spark.read.format("sliceflow.json").schema(BID_DDL).load(bids)
    by = "auction"
    if shape == "select":
        df = df.select("dateTime", "auction", "price")
    elif shape == "alias":
        df = df.select(F.col("auction").alias("a"), "price", "dateTime")
        by = "a"
    elif shape == "renamed":
        df = df.withColumnRenamed("auction", "a").withColumnRenamed("price", "p2")
        df = df.withColumnRenamed("p2", "price")
        by = "a"
    elif shape == "identity cast":
        df = df.withColumn("dateTime", F.col("dateTime").cast("timestamp"))
    elif shape == "temp view":
        df.createOrReplaceTempView("fused_bids")
        df = spark.table("fused_bids")
    else:
        df = df.select(df.auction, df["price"], F.col("dateTime"))
    out = window_agg(df, HOP, [by], AGGS)
    assert fused(out), shape
    assert_same_rows(out, unfused(spark, lambda: window_agg(df, HOP, [by], AGGS)))


@pytest.mark.parametrize("shape", ["filter", "udf", "expression", "converting cast", "union"])
def test_anything_else_between_source_and_operator_falls_back(spark, bids, shape):
    df = spark.read.format("sliceflow.json").schema(BID_DDL).load(bids)
    by = "auction"
    if shape == "filter":
        df = df.where(F.col("price") > 1000)
    elif shape == "udf":
        plus = udf(lambda v: None if v is None else v + 1, LongType())
        df = df.withColumn("auction", plus("auction"))
    elif shape == "expression":
        df = df.withColumn("a", F.col("auction") % 7)
        by = "a"
    elif shape == "converting cast":
        df = df.withColumn("auction", F.col("auction").cast("string"))
    else:
        df = df.union(df)
    out = window_agg(df, HOP, [by], AGGS)
    assert not fused(out), shape
    assert_same_rows(out, spark_hop(df, [by]))


def _write_events(folder: str) -> None:
    """Nested GitHub-like events in two dt= folders, one gzipped, with a malformed line, an
    escaped and non-ASCII string, a null struct and a missing field."""
    rows = []
    for i in range(600):
        repo = None if i % 97 == 0 else {"id": i % 13, "name": f"org/r\u00e9po-{i % 13}",
                                          "owner": {"login": f"o\"{i % 3}\\"}}  # fmt: skip
        event = {
            "id": str(10**12 + i),
            "type": ["PushEvent", "WatchEvent", "IssuesEvent"][i % 3],
            "actor": {"id": i % 41, "login": f"user{i % 41}"},
            "repo": repo,
            "created_at": f"2026-11-{23 + i // 300} {i % 24:02d}:{i % 60:02d}:00",
        }
        if i % 5:
            event["payload"] = {"size": i % 9, "ref": "refs/heads/main"}
        rows.append(json.dumps(event, ensure_ascii=i % 2 == 0))
    rows.insert(17, '{"id": "broken", "repo": {"name": ')
    for day, part in (("2026-11-23", rows[:300]), ("2026-11-24", rows[300:])):
        path = os.path.join(folder, f"dt={day}")
        os.makedirs(path)
        text = ("\n".join(part) + "\n").encode()
        if day.endswith("24"):
            with gzip.open(os.path.join(path, "part-0.json.gz"), "wb") as f:
                f.write(text)
        else:
            with open(os.path.join(path, "part-0.json"), "wb") as f:
                f.write(text)


def test_nested_fields_partition_columns_and_gzip(spark, tmp_path):
    folder = str(tmp_path / "events")
    _write_events(folder)
    schema = EVENT_DDL + ", dt DATE"

    def frame(reader):
        return reader.schema(schema).load(folder)

    def ours():
        df = frame(spark.read.format("sliceflow.json"))
        return window_agg(
            df,
            W.tumble("created_at", "1 hour"),
            [F.col("repo.name"), F.col("repo.owner.login").alias("owner"), "dt"],
            [W.count().alias("n"), W.count_distinct("actor.login").alias("users"),
             W.max("payload.size").alias("top")],
        )  # fmt: skip

    out = ours()
    assert fused(out)
    assert_same_rows(out, unfused(spark, ours))
    theirs = (
        frame(spark.read.format("json"))
        .groupBy(F.window("created_at", "1 hour").alias("w"), F.col("repo.name"),
                 F.col("repo.owner.login").alias("owner"), "dt")
        .agg(F.count("*").alias("n"), F.count_distinct("actor.login").alias("users"),
             F.max("payload.size").alias("top"))
        .select(*window_bounds(), "name", "owner", "dt", "n", "users", "top")
    )  # fmt: skip
    assert_same_rows(out, theirs)


def test_failfast_names_the_file_and_line_through_the_fused_scan(spark, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    good = '{"auction": 1, "price": 5, "dateTime": "2026-11-23 00:00:00.000"}'
    (folder / "part-0.json").write_text(f"{good}\n{good}\n{{not json\n")
    df = spark.read.format("sliceflow.json").schema(BID_DDL).option("mode", "FAILFAST")
    out = window_agg(df.load(str(folder)), HOP, ["auction"], AGGS)
    assert fused(out)
    with pytest.raises(Exception) as caught:
        out.collect()
    text = str(caught.value)
    assert "FAILED_READ_FILE" in text and "part-0.json" in text and "line 3" in text, text


def test_changelog_agg_and_topn_over_the_source_are_fused(spark, bids):
    from sliceflow.spark import changelog_agg, topn

    df = spark.read.format("sliceflow.json").schema(BID_DDL).load(bids)

    def totals():
        return changelog_agg(df, ["auction"], [W.count().alias("n"), W.sum("price").alias("s")])

    out = totals()
    assert fused(out)
    assert_same_rows(out, unfused(spark, totals))
    spark_totals = df.groupBy("auction").agg(F.count("*").alias("n"), F.sum("price").alias("s"))
    assert_same_rows(out.select("auction", "n", "s"), spark_totals)

    def leaders():
        picked = df.select("auction", "price", "bidder", "dateTime")
        return topn(picked, 3, by=["auction"], order_by=[F.desc("price"), "bidder", "dateTime"])

    top = leaders()
    assert fused(top)
    assert_same_rows(top, unfused(spark, leaders))


@pytest.mark.parametrize(
    ("keep", "order_by"), [("first", None), ("first", "dateTime"), ("last", "price")]
)
def test_deduplicate_over_the_source_is_fused(spark, bids, keep, order_by):
    """The first-row (last-row) pre-filter runs inside the read: fused = unfused, and the kept
    rows are Spark's ``row_number() = 1`` by the order (arrival order: the file's line order,
    the rows of one file in one partition here)."""
    from pyspark.sql import Window

    from sliceflow.spark import deduplicate

    df = spark.read.format("sliceflow.json").schema(BID_DDL).load(bids)

    def kept():
        return deduplicate(df.select("auction", "bidder", "price", "dateTime"), "auction",
                           keep=keep, order_by=order_by)  # fmt: skip

    out = kept()
    assert fused(out)
    assert_same_rows(out, unfused(spark, kept))
    if order_by is not None:
        # Ties in the order leave the kept row free (Spark too): compare key and order value.
        order = F.col(order_by) if keep == "first" else F.col(order_by).desc()
        w = Window.partitionBy("auction").orderBy(order)
        spark_kept = (
            df.withColumn("rn", F.row_number().over(w)).filter("rn = 1").select("auction", order_by)
        )
        assert_same_rows(out.select("auction", order_by), spark_kept)
    else:
        assert out.count() == df.select("auction").distinct().count()


def test_the_kernel_counters_reach_the_driver_from_a_fused_read(spark, bids):
    from sliceflow.spark import WindowMetrics

    metrics = WindowMetrics(spark)
    df = spark.read.format("sliceflow.json").schema(BID_DDL).load(bids)
    out = window_agg(df, HOP, ["auction"], AGGS, metrics=metrics)
    assert fused(out)
    rows = out.count()
    assert metrics.value["rows_in"] == 20_000
    assert metrics.value["windows_fired"] == rows
