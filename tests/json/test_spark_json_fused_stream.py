"""The fused scan on a stream (``spark.sliceflow.fusion.streams.enabled=true``; off by default):
over ``readStream.format("sliceflow.json")``, a streaming window_agg (with its watermark) packs
its rows into buckets inside the stream's read, and so do a streaming changelog_agg (its
encoder) and a streaming topn over a stream without a watermark, and a streaming deduplicate
(keep first: its candidate rows; keep last: its changelog's packing) with or without one.
Each micro-batch's rows equal the unfused plan's (``spark.sliceflow.fusion.enabled=false``)
and Spark's own answer or a model's; a checkpoint written unfused restarts fused, and the
other way round; a fused deduplicate killed with SIGKILL mid-run restarts and writes each key
once; anything but column references (and, for window_agg, the watermark on its time column)
falls back."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from pyspark.sql import functions as F
from support.spark_helpers import spark_conf

from sliceflow import window as W
from sliceflow.spark import window_agg
from sliceflow.spark._runtime.metrics import STATE_COUNTERS
from sliceflow.spark._runtime.session_settings import FUSION_CONF, STREAM_FUSION_CONF
from sliceflow.spark.json.fused_scan import FUSED_SOURCE_PREFIX
from sliceflow.testing import BID_DDL, write_bids
from sliceflow.testing.spark import run_to_end, window_bounds

pytestmark = pytest.mark.spark


@pytest.fixture(autouse=True)
def stream_fusion(spark):
    """Streams are fused only with spark.sliceflow.fusion.streams.enabled=true."""
    with spark_conf(spark, STREAM_FUSION_CONF, "true"):
        yield


HOP = W.hop("dateTime", size="1 hour", slide="10 minutes")
AGGS = [W.count().alias("n"), W.sum("price").alias("s"), W.max("price").alias("m")]
DELAY = "10 minutes"


def fused(df) -> bool:
    return FUSED_SOURCE_PREFIX in df._jdf.queryExecution().analyzed().toString()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    """Four NDJSON files of bids in event-time order (25 minutes of event time each), their
    modification times in that order (the stream reads the oldest first)."""
    folder = str(tmp_path_factory.mktemp("bids-all"))
    paths = sorted(write_bids(folder, 12_000, files=4, events_per_second=2))
    base = time.time() - 1000
    for i, path in enumerate(paths):
        os.utime(path, (base + i, base + i))
    return paths


def stage(files: list[str], folder: str, n: int) -> str:
    """The first ``n`` files in ``folder`` (copies that keep their modification times)."""
    os.makedirs(folder, exist_ok=True)
    for path in files[:n]:
        shutil.copy2(path, folder)
    return folder


def stream(spark, folder: str, *, spark_reader: bool = False):
    reader = spark.readStream.schema(BID_DDL).option("maxFilesPerTrigger", 1)
    df = reader.json(folder) if spark_reader else reader.format("sliceflow.json").load(folder)
    return df.withWatermark("dateTime", DELAY)


def ours(df):
    return window_agg(df, HOP, ["auction"], AGGS, buckets=3)


def sparks(df):
    return (
        df.groupBy(F.window("dateTime", "1 hour", "10 minutes").alias("w"), "auction")
        .agg(F.count("*").alias("n"), F.sum("price").alias("s"), F.max("price").alias("m"))
        .select(*window_bounds(), "auction", "n", "s", "m")
    )


def batches(df, checkpoint: str) -> dict[int, list[tuple]]:
    """Each micro-batch's rows, sorted."""
    got: dict[int, list[tuple]] = {}

    def keep(batch_df, batch_id: int) -> None:
        got[batch_id] = sorted(tuple(r) for r in batch_df.collect())

    run_to_end(df, checkpoint, keep)
    return got


def fused_and_unfused(spark, build, tmp_path) -> dict[int, list[tuple]]:
    """Builds the query fused and with fusion off, runs both (at least four micro-batches)
    and asserts their micro-batches equal; returns the fused run's."""
    out = build()
    assert fused(out)
    with spark_conf(spark, FUSION_CONF, "false"):
        plain = build()
    assert not fused(plain)
    got = batches(out, str(tmp_path / "ck-fused"))
    assert len(got) >= 4
    assert got == batches(plain, str(tmp_path / "ck-plain"))
    return got


@pytest.fixture(scope="module")
def sparks_batches(spark, files, tmp_path_factory) -> dict[int, list[tuple]]:
    """Spark's own append-mode window over the four files, micro-batch by micro-batch."""
    tmp = tmp_path_factory.mktemp("spark-window")
    folder = stage(files, str(tmp / "in"), 4)
    return batches(sparks(stream(spark, folder, spark_reader=True)), str(tmp / "ck"))


def test_streaming_window_agg_is_fused_and_equals_unfused_and_spark(
    spark, files, tmp_path, sparks_batches
):
    folder = stage(files, str(tmp_path / "in"), 4)
    out = ours(stream(spark, folder))
    assert fused(out)
    with spark_conf(spark, FUSION_CONF, "false"):
        plain = ours(stream(spark, folder))
    assert not fused(plain)
    got = batches(out, str(tmp_path / "ck-fused"))
    assert len(got) >= 4 and sum(map(len, got.values())) > 0
    assert got == batches(plain, str(tmp_path / "ck-plain"))
    assert got == sparks_batches


@pytest.mark.parametrize("first", ["unfused", "fused"])
def test_a_checkpoint_restarts_with_fusion_switched(spark, files, tmp_path, first, sparks_batches):
    folder = str(tmp_path / "in")
    checkpoint = str(tmp_path / "ck")
    got: dict[int, list[tuple]] = {}
    for run, switch in enumerate((first == "unfused", first == "fused")):
        stage(files, folder, 2 + 2 * run)  # two files, then all four
        with spark_conf(spark, FUSION_CONF, "false" if switch else "true"):
            df = ours(stream(spark, folder))
        assert fused(df) != switch
        got.update(batches(df, checkpoint))
    assert sorted(r for rows in got.values() for r in rows) == sorted(
        r for rows in sparks_batches.values() for r in rows
    )


def test_a_filter_before_the_operator_falls_back(spark, files, tmp_path):
    folder = stage(files, str(tmp_path / "in"), 2)
    df = stream(spark, folder).where(F.col("price") > 100)
    assert not fused(ours(df))


def test_streaming_changelog_agg_is_fused_and_equals_unfused_and_spark(spark, files, tmp_path):
    from sliceflow.spark import changelog_agg

    folder = stage(files, str(tmp_path / "in"), 4)

    def build():
        src = spark.readStream.schema(BID_DDL).option("maxFilesPerTrigger", 1)
        df = src.format("sliceflow.json").load(folder)
        return changelog_agg(df, ["auction"], [W.count().alias("n"), W.sum("price").alias("s")])

    got = fused_and_unfused(spark, build, tmp_path)
    final: dict[int, tuple] = {}
    for batch_id in sorted(got):
        for op, auction, n, s in got[batch_id]:
            if op in ("+I", "+U"):
                final[auction] = (auction, n, s)
            elif op == "-D":
                del final[auction]
    theirs = spark.read.schema(BID_DDL).json(folder).groupBy("auction")
    expected = theirs.agg(F.count("*"), F.sum("price")).collect()
    assert sorted(final.values()) == sorted(tuple(r) for r in expected)


def test_a_watermarked_stream_into_changelog_agg_is_not_fused(spark, files, tmp_path):
    # changelog_agg's rows carry no event time: fused, the watermark would be lost.
    from sliceflow.spark import changelog_agg

    folder = stage(files, str(tmp_path / "in"), 1)
    out = changelog_agg(stream(spark, folder), ["auction"], [W.count().alias("n")])
    assert out.isStreaming and not fused(out)


def test_streams_are_not_fused_by_default(spark, files, tmp_path):
    # Off by default: a fused stream's progress counts packed rows as numInputRows.
    folder = stage(files, str(tmp_path / "in"), 1)
    with spark_conf(spark, STREAM_FUSION_CONF, "false"):
        assert not fused(ours(stream(spark, folder)))
    assert fused(ours(stream(spark, folder)))


def test_streaming_deduplicate_first_is_fused_and_equals_unfused_and_spark(spark, files, tmp_path):
    # keep="first" in arrival order: each task keeps its candidate rows and packs them in the
    # read; the watermark (on dateTime) travels with the packed rows.
    from sliceflow.spark import DedupMetrics, deduplicate

    folder = stage(files, str(tmp_path / "in"), 4)
    counted = DedupMetrics(spark), DedupMetrics(spark)
    out = deduplicate(stream(spark, folder), ["bidder"], buckets=3, metrics=counted[0])
    assert fused(out)
    with spark_conf(spark, FUSION_CONF, "false"):
        plain = deduplicate(stream(spark, folder), ["bidder"], buckets=3, metrics=counted[1])
    assert not fused(plain)
    got = batches(out, str(tmp_path / "ck-fused"))
    assert len(got) >= 4 and sum(map(len, got.values())) > 0
    assert got == batches(plain, str(tmp_path / "ck-plain"))
    # the counters of the packing step (rows in, local duplicates) come from the fused read too;
    # the state layout's (cache hits, catch-ups) follow which worker ran which bucket
    kernel = [{k: v for k, v in c.value.items() if k not in STATE_COUNTERS} for c in counted]
    assert kernel[0] == kernel[1] and kernel[0]["rows_in"] == 12_000
    theirs = stream(spark, folder, spark_reader=True).dropDuplicatesWithinWatermark(["bidder"])
    assert got == batches(theirs, str(tmp_path / "ck-spark"))


@pytest.mark.parametrize("watermarked", [False, True], ids=["no-watermark", "watermark"])
def test_streaming_deduplicate_last_is_fused_and_equals_unfused_and_the_model(
    spark, files, tmp_path, watermarked
):
    # keep="last" in arrival order is a changelog: its packing step runs in the read.
    import json

    from sliceflow.spark import deduplicate

    folder = stage(files, str(tmp_path / "in"), 4)

    def build():
        src = spark.readStream.schema(BID_DDL).option("maxFilesPerTrigger", 1)
        df = src.format("sliceflow.json").load(folder)
        df = df.withWatermark("dateTime", "1000 days") if watermarked else df
        return deduplicate(df, ["auction"], keep="last", buckets=3)

    got = fused_and_unfused(spark, build, tmp_path)
    names = build().columns
    final: dict[int, tuple] = {}
    for batch_id in sorted(got):
        for row in got[batch_id]:
            change = dict(zip(names, row, strict=True))
            if change["op"] in ("+I", "+U"):
                final[change["auction"]] = (change["auction"], change["bidder"], change["price"])
            elif change["op"] == "-D":
                del final[change["auction"]]
    last: dict[int, tuple] = {}  # the model: the last line of each auction, files in order
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                bid = json.loads(line)
                last[bid["auction"]] = (bid["auction"], bid["bidder"], bid["price"])
    assert final == last


def test_streaming_topn_is_fused_and_equals_unfused_and_spark(spark, files, tmp_path):
    # a changelog Top-N over a stream without a watermark: its packing runs in the read
    from collections import Counter

    from pyspark.sql import Window

    from sliceflow.spark import topn

    folder = stage(files, str(tmp_path / "in"), 4)
    order = [F.desc("price"), "auction", "bidder", "dateTime", "url"]  # a total order

    def build():
        src = spark.readStream.schema(BID_DDL).option("maxFilesPerTrigger", 1)
        df = src.format("sliceflow.json").load(folder)
        return topn(df, 3, by="channel", order_by=order, with_rank=False, buckets=3)

    got = fused_and_unfused(spark, build, tmp_path)
    names = [c for c in build().columns if c != "op"]
    live: Counter[tuple] = Counter()  # the changelog applied: each row's count
    for batch_id in sorted(got):
        for op, *row in got[batch_id]:
            live[tuple(row)] += 1 if op in ("+I", "+U") else -1
    assert set(live.values()) <= {0, 1}
    rank = F.row_number().over(Window.partitionBy("channel").orderBy(*order))
    bids = spark.read.schema(BID_DDL).json(folder)
    theirs = bids.withColumn("rn", rank).where("rn <= 3").select(*names).collect()
    assert sorted(r for r, n in live.items() if n) == sorted(tuple(r) for r in theirs)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_killed_fused_deduplicate_restarts_and_writes_each_key_once(spark, tmp_path):
    # tests/jobs/json_stream_job.py runs deduplicate(by="i") fused into the read, into a JSON
    # file sink, one file per micro-batch; it is killed mid-run and restarted here, fused.
    import sys
    from collections import Counter

    from support import JOBS
    from support.spark_helpers import kill_after_commits

    from sliceflow.spark import deduplicate

    src, sink, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()
    first: dict[int, tuple[str, int]] = {}  # the model: each key's first line, files in order
    base = int(time.time()) - 1000
    for k in range(8):  # each file brings new keys and repeats some of the earlier ones
        keys = [(300 * k + j) % 2000 for j in range(500)]
        path = src / f"part-{k:03d}.json"
        path.write_text("".join(f'{{"f":"{k:03d}","i":{i}}}\n' for i in keys))
        os.utime(path, (base + k, base + k))
        for i in keys:
            first.setdefault(i, (f"{k:03d}", i))
    job = os.path.join(JOBS, "json_stream_job.py")
    command = [sys.executable, job, str(src), str(sink), str(ck), "deduplicate"]
    committed = kill_after_commits(command, str(ck), 2)
    assert committed < 8, "every file was read before the kill: nothing to restart"

    schema = "f STRING, i INT"
    rows = spark.readStream.format("sliceflow.json").schema(schema)
    df = deduplicate(rows.option("maxFilesPerTrigger", 4).load(str(src)), "i")
    assert fused(df)
    writer = df.writeStream.format("json").option("checkpointLocation", str(ck))
    writer.trigger(availableNow=True).start(str(sink)).awaitTermination()

    got = Counter((r.f, r.i) for r in spark.read.schema(schema).json(str(sink)).collect())
    assert max(got.values()) == 1  # no key written twice across the kill
    assert set(got) == set(first.values())
