"""The fused ``from_json`` (sliceflow.spark.json.from_json_lineage): an operator over the
fields of a ``sliceflow.spark.from_json`` column decodes the text and runs its local phase in
one Python step, so the decoded rows never enter the JVM. Fused, unfused
(spark.sliceflow.fusion.enabled=false) and Spark's own answer give the same rows, on a text
file's lines and on a Kafka-like BINARY value; what is fused and what falls back is checked on
the plan (the fused step's name, as explain() shows it)."""

from __future__ import annotations

import json
import os
import time

import pytest
from pyspark.sql import functions as F
from support.spark_helpers import assert_same_rows, spark_conf, unfused_plan

from sliceflow import window as W
from sliceflow.spark import changelog_agg, deduplicate, from_json, topn, window_agg
from sliceflow.spark._runtime.session_settings import STREAM_FUSION_CONF
from sliceflow.spark.json.from_json import UDF_PREFIX
from sliceflow.spark.json.from_json_lineage import FUSED_STEP_PREFIX
from sliceflow.testing import BID_DDL, write_bids
from sliceflow.testing.spark import window_bounds

pytestmark = pytest.mark.spark

HOP = W.hop("dateTime", size="1 hour", slide="10 minutes")
AGGS = [W.count().alias("n"), W.sum("price").alias("s"), W.max("price").alias("m")]
EVENT_DDL = "repo STRUCT<name: STRING, stars: BIGINT>, actor STRING, at TIMESTAMP"


def fused(df) -> bool:
    """Whether ``df`` decodes its from_json inside the operator's step: the plan has the
    fused step and no from_json UDF."""
    plan = df._jdf.queryExecution().analyzed().toString()
    return FUSED_STEP_PREFIX in plan and UDF_PREFIX not in plan


def unfused(spark, build):
    return unfused_plan(spark, build, fused)


@pytest.fixture(scope="module")
def bids(tmp_path_factory) -> str:
    folder = str(tmp_path_factory.mktemp("bids"))
    write_bids(folder, 6_000, files=2, events_per_second=5)
    return folder


def decoded(spark, bids: str, ddl: str = BID_DDL):
    text = spark.read.text(bids)
    return text.select(from_json("value", ddl).alias("bid")).select("bid.*")


def test_window_agg_over_from_json_is_fused_and_equals_unfused_and_spark(spark, bids):
    def build():
        return window_agg(decoded(spark, bids), HOP, ["auction"], AGGS)

    out = build()
    assert fused(out)
    assert "from_json_window_agg_local" in out._jdf.queryExecution().analyzed().toString()
    assert_same_rows(out, unfused(spark, build))
    theirs = spark.read.text(bids).select(F.from_json("value", BID_DDL).alias("b")).select("b.*")
    reference = (
        theirs.groupBy(F.window("dateTime", "1 hour", "10 minutes").alias("w"), "auction")
        .agg(F.count("*").alias("n"), F.sum("price").alias("s"), F.max("price").alias("m"))
        .select(*window_bounds(), "auction", "n", "s", "m")
    )
    assert_same_rows(out, reference)


def _events(folder) -> None:
    """Nested events with a malformed line, a null struct, a missing field and type drift."""
    lines = []
    for i in range(400):
        repo = None if i % 50 == 7 else {"name": f"r{i % 9}", "stars": i if i % 11 else "x"}
        event = {"repo": repo, "actor": f"u{i % 13}", "at": f"2026-11-28T10:{i % 60:02d}:00Z"}
        if i % 37 == 5:
            del event["actor"]
        lines.append(json.dumps(event))
    lines[100] = '{"repo": {"name": "r1"'
    (folder / "events.json").write_text("\n".join(lines) + "\n")


def test_nested_fields_passed_columns_and_a_binary_value(spark, tmp_path):
    """Kafka's shape: ``from_json(value cast to string)`` beside a passed-through column, nested
    field references and aliases; PERMISSIVE nulls for the malformed line and the bad type."""
    _events(tmp_path)
    raw = spark.read.text(str(tmp_path)).select(
        F.col("value").cast("binary").alias("value"), F.lit("topic-a").alias("topic")
    )

    def build(fn):
        ev = raw.select(fn(F.col("value").cast("string"), EVENT_DDL).alias("e"), "topic")
        picked = ev.select(
            F.col("e.repo.name").alias("repo"), F.col("e.actor").alias("actor"),
            F.col("e.repo.stars").alias("stars"), "e.at", "topic",
        )  # fmt: skip
        return changelog_agg(
            picked,
            ["repo", "topic"],
            [W.count().alias("n"), W.count_distinct("actor").alias("a"), W.max("stars").alias("m")],
        )

    out = build(from_json)
    assert fused(out)
    assert_same_rows(out, unfused(spark, lambda: build(from_json)))
    ev = raw.select(F.from_json(F.col("value").cast("string"), EVENT_DDL).alias("e"), "topic")
    reference = ev.groupBy(F.col("e.repo.name").alias("repo"), "topic").agg(
        F.count("*").alias("n"), F.count_distinct("e.actor").alias("a"),
        F.max("e.repo.stars").alias("m"),
    )  # fmt: skip
    assert_same_rows(out.select("repo", "topic", "n", "a", "m"), reference)


def test_topn_and_deduplicate_over_from_json_are_fused(spark, bids):
    def leaders():
        picked = decoded(spark, bids).select("auction", "price", "bidder", "dateTime")
        return topn(picked, 2, by=["auction"], order_by=[F.desc("price"), "bidder", "dateTime"])

    top = leaders()
    assert fused(top)
    assert_same_rows(top, unfused(spark, leaders))

    def kept():
        picked = decoded(spark, bids).select("auction", "bidder", "dateTime")
        return deduplicate(picked, "auction", keep="first", order_by="dateTime")

    first = kept()
    assert fused(first)
    assert_same_rows(first, unfused(spark, kept))


@pytest.mark.parametrize("shape", ["filter", "two decodings", "expression", "computed beside"])
def test_anything_else_above_the_decoding_falls_back(spark, bids, shape):
    text = spark.read.text(bids)
    if shape == "filter":
        df = decoded(spark, bids).filter("price > 10")
    elif shape == "two decodings":
        both = text.select(from_json("value", BID_DDL).alias("a"),
                           from_json("value", "auction BIGINT").alias("b"))  # fmt: skip
        df = both.select("a.dateTime", "a.price", F.col("b.auction").alias("auction"))
    elif shape == "expression":
        df = decoded(spark, bids).withColumn("price", F.col("price") * 2)
    else:  # a column computed beside the decoding
        both = text.select(from_json("value", BID_DDL).alias("b"),
                           F.length("value").alias("size"))  # fmt: skip
        df = both.select("b.dateTime", F.col("size").alias("auction"), "b.price")
    out = window_agg(df, HOP, ["auction"], AGGS)
    assert not fused(out)
    assert_same_rows(out, unfused(spark, lambda: window_agg(df, HOP, ["auction"], AGGS)))


def test_failfast_through_the_fused_step_is_sparks_error(spark, tmp_path):
    good = '{"auction": 1, "price": 5, "dateTime": "2026-11-23 00:00:00.000"}'
    (tmp_path / "part-0.json").write_text(f"{good}\n{{not json\n")
    text = spark.read.text(str(tmp_path))
    df = text.select(from_json("value", BID_DDL, {"mode": "FAILFAST"}).alias("b")).select("b.*")
    out = window_agg(df, HOP, ["auction"], AGGS)
    assert fused(out)
    errors = []
    for query in (out, unfused(spark, lambda: window_agg(df, HOP, ["auction"], AGGS))):
        with pytest.raises(Exception) as caught:
            query.collect()
        errors.append(str(caught.value))
    for text in errors:
        assert "MALFORMED_RECORD_IN_PARSING" in text and "FAILFAST" in text, text


def _stream_folder(bids: str, tmp_path) -> str:
    """The bid files copied into a folder, oldest first by mtime (one per micro-batch)."""
    folder = tmp_path / "in"
    folder.mkdir()
    base = time.time() - 100
    for i, name in enumerate(sorted(os.listdir(bids))):
        target = folder / name
        target.write_bytes(open(os.path.join(bids, name), "rb").read())
        os.utime(target, (base + i, base + i))
    return str(folder)


def _fused_and_unfused(spark, build, tmp_path, measure):
    """The stream ``build()`` makes run to its end with stream fusion on ("true") and off
    ("false"): each run's rows per micro-batch and ``measure`` of each progress."""
    runs = {}
    for flag in ("true", "false"):
        with spark_conf(spark, STREAM_FUSION_CONF, flag):
            out = build()
        assert fused(out) == (flag == "true")
        got: dict[int, list[tuple]] = {}

        def keep(batch_df, batch_id: int, got=got) -> None:
            got[batch_id] = sorted(tuple(r) for r in batch_df.collect())

        writer = out.writeStream.outputMode("append").foreachBatch(keep)
        query = writer.option("checkpointLocation", str(tmp_path / f"ck-{flag}"))
        started = query.trigger(availableNow=True).start()
        started.awaitTermination()
        runs[flag] = (got, [measure(p) for p in started.recentProgress])
    return runs


def test_a_stream_of_text_files_is_fused_with_stream_fusion(spark, bids, tmp_path):
    """A text file stream + from_json + a streaming changelog_agg: fused only with
    spark.sliceflow.fusion.streams.enabled=true; each micro-batch equals the unfused plan's,
    and the source's numInputRows is the lines read either way."""
    folder = _stream_folder(bids, tmp_path)

    def build():
        text = spark.readStream.option("maxFilesPerTrigger", 1).text(folder)
        picked = text.select(from_json("value", BID_DDL).alias("b")).select("b.auction", "b.price")
        return changelog_agg(picked, ["auction"], [W.count().alias("n"), W.sum("price").alias("s")])

    assert not fused(build())  # streams: off by default
    runs = _fused_and_unfused(spark, build, tmp_path, lambda p: p["numInputRows"])
    assert len(runs["true"][0]) == 2 and runs["true"][0] == runs["false"][0]
    assert runs["true"][1] == runs["false"][1] and sum(runs["true"][1]) == 6_000


def test_a_watermarked_stream_keeps_its_watermark_through_the_fused_step(spark, bids, tmp_path):
    """A text file stream + from_json + withWatermark on a decoded field + a streaming
    window_agg: fused with stream fusion (the step carries the event time and the watermark
    is defined again on it), and each micro-batch's windows and watermark equal the unfused
    plan's."""
    folder = _stream_folder(bids, tmp_path)

    def build():
        text = spark.readStream.option("maxFilesPerTrigger", 1).text(folder)
        picked = (
            text.select(from_json("value", BID_DDL).alias("b"))
            .select("b.auction", "b.price", F.col("b.dateTime").alias("at"))
            .withWatermark("at", "10 seconds")
        )
        return window_agg(picked, W.tumble("at", "1 minute"), ["auction"], AGGS[:2])

    runs = _fused_and_unfused(spark, build, tmp_path, lambda p: p["eventTime"].get("watermark"))
    windows, marks = runs["true"]
    assert windows == runs["false"][0] and marks == runs["false"][1]
    assert sum(len(rows) for rows in windows.values()) > 0  # windows fired before the end
    assert len(set(marks)) > 1  # the watermark moved
