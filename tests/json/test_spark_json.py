"""sliceflow.spark against Spark's own JSON readers, on local[2] Spark."""

from __future__ import annotations

import os
import time

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T
from support.spark_helpers import assert_same_rows

import sliceflow.spark as sfs
from sliceflow.testing import BID_DDL, bid_lines, write_bids

pytestmark = pytest.mark.spark


MIXED = [
    '{"auction": 1, "price": 10, "dateTime": "2026-11-23 10:00:00.123", "channel": "x"}',
    '{"auction": "nope", "price": 11}',
    '{"auction": 3, "price": 1e2}',
    "{'auction': 4, 'channel': 'single'}",
    '{"auction": 5, "dateTime": 1600000000, "url": {"k": [1, 2.5]}}',
    "not json",
    "",
    None,
    '[{"auction": 6}]',
    '{"auction": 7, "extra": "\\ud83d\\ude00 \\u00e9"}',
    '{"auction": 8',
]


def test_from_json_equals_spark_on_valid_and_bad_rows(spark):
    df = spark.createDataFrame([(d,) for d in MIXED], "value STRING")
    for ddl in (BID_DDL, BID_DDL + ", _corrupt_record STRING"):
        ours = df.select(sfs.from_json("value", ddl).alias("j"))
        theirs = df.select(F.from_json("value", ddl).alias("j"))
        assert ours.schema == theirs.schema
        assert ours.collect() == theirs.collect()


def test_from_json_accepts_struct_type_and_options(spark):
    schema = T.StructType([T.StructField("a", T.IntegerType()), T.StructField("d", T.DateType())])
    df = spark.createDataFrame([('{"a": 1, "d": "23/11/2026"}',), ("{a: 2}",)], "value STRING")
    options = {"dateFormat": "dd/MM/yyyy", "allowUnquotedFieldNames": "true"}
    ours = df.select(sfs.from_json(F.col("value"), schema, options).alias("j")).collect()
    theirs = df.select(F.from_json(F.col("value"), schema, options).alias("j")).collect()
    assert ours == theirs


def test_from_json_failfast_raises(spark):
    df = spark.createDataFrame([('{"a": "x"}',)], "value STRING")
    with pytest.raises(Exception, match="Malformed records"):
        df.select(sfs.from_json("value", "a INT", {"mode": "FAILFAST"})).collect()


def test_from_json_rejects_bad_options_on_the_driver(spark):
    with pytest.raises(ValueError, match="PERMISSIVE and FAILFAST"):
        sfs.from_json("value", "a INT", {"mode": "DROPMALFORMED"})


def test_nexmark_from_json_and_data_source_equal_spark(spark, tmp_path):
    folder = str(tmp_path / "bids")
    write_bids(folder, 20_000, files=3)
    text = spark.read.text(folder)
    ours = text.select(sfs.from_json("value", BID_DDL).alias("b")).select("b.*")
    theirs = text.select(F.from_json("value", BID_DDL).alias("b")).select("b.*")
    assert_same_rows(ours, theirs)

    # Small splits: lines that straddle split boundaries are read exactly once.
    source = spark.read.format("sliceflow.json").option("maxPartitionBytes", "100000")
    source = source.schema(BID_DDL).load(folder)
    assert source.rdd.getNumPartitions() > 3
    assert_same_rows(source, spark.read.schema(BID_DDL).json(folder))


def test_data_source_splits_files_with_cr_and_crlf_line_ends(spark, tmp_path):
    """Lines end in CR, CRLF or LF (Hadoop's line reader takes all three): with splits cut
    inside lines, every line is read once, as spark.read.json reads them."""
    source_folder = tmp_path / "lf"
    write_bids(str(source_folder), 6_000, files=1)
    lines = next(source_folder.glob("*.json")).read_bytes().splitlines()
    folder = tmp_path / "mixed"
    folder.mkdir()
    # Spaces in the first document move a line start to byte 100,000 exactly: the third split
    # starts there, after a CR, while the first ends inside a line. A reader that takes only LF
    # as a line end reads on from the first split's end through the third split's lines.
    cr_lines = lines[:2_000]
    starts = [0]
    for line in cr_lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    pad = 100_000 - max(x for x in starts if x <= 100_000)
    cr_lines[0] = cr_lines[0][:1] + b" " * pad + cr_lines[0][1:]
    cr_text = b"\r".join(cr_lines)
    assert cr_text[99_999:100_000] == b"\r" and cr_text[49_999:50_000] != b"\r"
    (folder / "cr.json").write_bytes(cr_text)
    (folder / "crlf.json").write_bytes(b"\r\n".join(lines[2_000:4_000]) + b"\r\n")
    (folder / "mixed.json").write_bytes(
        b"".join(line + (b"\r", b"\n", b"\r\n")[i % 3] for i, line in enumerate(lines[4_000:]))
    )
    reader = spark.read.format("sliceflow.json").option("maxPartitionBytes", "50000")
    ours = reader.schema(BID_DDL).load(str(folder))
    assert ours.rdd.getNumPartitions() > 6
    assert ours.count() == 6_000
    assert_same_rows(ours, spark.read.schema(BID_DDL).json(str(folder)))


def test_data_source_takes_session_settings_at_register(spark, tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"t": "2026-11-23 10:00:00"}\n')
    spark.conf.set("spark.sql.session.timeZone", "+02:00")
    try:
        sfs.register(spark)
        ours = spark.read.format("sliceflow.json").schema("t TIMESTAMP").load(str(path))
        theirs = spark.read.schema("t TIMESTAMP").json(str(path))
        assert ours.collect() == theirs.collect()
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        sfs.register(spark)


def test_data_source_needs_a_schema_and_a_path(spark, tmp_path):
    with pytest.raises(Exception, match="needs a schema"):
        spark.read.format("sliceflow.json").load(str(tmp_path)).collect()


def test_streaming_from_json(spark, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    lines = list(bid_lines(3000))
    for k in range(3):
        path = src / f"part-{k}.json"
        path.write_text("\n".join(lines[k * 1000 : (k + 1) * 1000]) + "\n")
        os.utime(path, (time.time() - 100 + k, time.time() - 100 + k))
    stream = spark.readStream.text(str(src))
    parsed = stream.select(sfs.from_json("value", BID_DDL).alias("b")).select("b.*")
    query = (
        parsed.writeStream.format("memory")
        .queryName("sliceflow_stream")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    ours = spark.table("sliceflow_stream")
    theirs = spark.read.text(str(src)).select(F.from_json("value", BID_DDL).alias("b"))
    assert_same_rows(ours, theirs.select("b.*"))
