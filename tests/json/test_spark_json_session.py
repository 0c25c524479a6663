"""The ``sliceflow.json`` source without ``sliceflow.spark.register``, against Spark's JSON source.

* pyspark finds the source by itself (``pyspark_sliceflow``) in a session of this process that
  ``register`` never saw (``spark.newSession()``), whose settings the read tasks follow (in a
  fresh process: tests/spark/test_fresh_process.py; on Connect: test_spark_connect.py).
* ``includeMetadata`` gives Spark's ``_metadata`` values; ``input_file_name()`` stays empty.
* A stream without a schema is refused as Spark refuses it, unless
  ``spark.sql.streaming.schemaInference`` was true when ``register`` ran.
* Errors: the missing path, FAILFAST, a partition column a user schema leaves out.
* PERMISSIVE partial results: sliceflow gives Spark's unpruned answer.
"""

from __future__ import annotations

import json

import pytest
from jobs.fresh_process_job import SCHEMA, TIME_ZONE, write_tree
from pyspark.errors import (
    AnalysisException,
    IllegalArgumentException,
    PythonException,
    StreamingQueryException,
)
from pyspark.sql import functions as F

import sliceflow.spark as sfs
from sliceflow.testing.spark import run_to_end

pytestmark = pytest.mark.spark


def _rows(df):
    return sorted(json.dumps(r.asDict(recursive=True), default=str) for r in df.collect())


def _same(ours, theirs):
    assert ours.schema.simpleString() == theirs.schema.simpleString()
    rows = _rows(ours)
    assert rows == _rows(theirs)
    assert rows
    return rows


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    write_tree(str(root))
    return str(root)


@pytest.fixture(scope="module")
def fresh(spark):
    """A session of this SparkContext that ``register`` never saw (the ``spark`` fixture's
    registration is its own session's), in another time zone and split size."""
    session = spark.newSession()
    session.conf.set("spark.sql.session.timeZone", TIME_ZONE)
    session.conf.set("spark.sql.files.maxPartitionBytes", "64")
    return session


def test_an_unregistered_session_reads_with_its_own_settings(fresh, tree):
    ours = fresh.read.format("sliceflow.json")
    # The session's time zone reaches the read tasks (a local property of the query).
    _same(ours.schema(SCHEMA).load(tree), fresh.read.schema(SCHEMA).json(tree))
    # Per-read options, as Spark's file source takes them.
    tokyo = {"timeZone": "Asia/Tokyo", "maxPartitionBytes": "32"}
    _same(
        fresh.read.format("sliceflow.json").schema(SCHEMA).options(**tokyo).load(tree),
        fresh.read.schema(SCHEMA).options(**tokyo).json(tree),
    )
    _same(fresh.read.format("sliceflow.json").load(tree), fresh.read.json(tree))
    # register() stays harmless: the registered source gives the same rows (in a session of
    # its own: the other tests use `fresh` unregistered).
    registered = fresh.newSession()
    registered.conf.set("spark.sql.session.timeZone", TIME_ZONE)
    sfs.register(registered)
    _same(
        registered.read.format("sliceflow.json").schema(SCHEMA).load(tree),
        registered.read.schema(SCHEMA).json(tree),
    )


def test_include_metadata_gives_sparks_metadata_column(fresh, tree, tmp_path):
    meta = ["id", "dt", "_metadata.*"]
    # The blocks are the splits: the planner sees the session's split size (64 bytes, so
    # a.json is two blocks) only through the option or register().
    ours = (
        fresh.read.format("sliceflow.json")
        .options(includeMetadata="true", maxPartitionBytes="64")
        .load(tree)
    )
    rows = _same(ours.select(*meta), fresh.read.json(tree).select(*meta))
    assert any("b%20c.json.gz" in r for r in rows) and any("dt=2024-03-10" in r for r in rows)
    # With a user schema: the schema ends with the column (as the inferred one does).
    schema = ours.schema
    with_schema = (
        fresh.read.format("sliceflow.json")
        .schema(schema)
        .options(includeMetadata="true", maxPartitionBytes="64")
        .load(tree)
    )
    _same(with_schema.select(*meta), fresh.read.json(tree).select(*meta))
    # A schema without it is refused when the source is made (the first action).
    without = fresh.read.format("sliceflow.json").schema(SCHEMA).option("includeMetadata", "true")
    with pytest.raises(AnalysisException, match=r"add `_metadata struct<file_path:string"):
        without.load(tree).collect()
    # The streaming source fills it too, as Spark's file stream source does.
    ours_path, theirs_path = str(tmp_path / "ours"), str(tmp_path / "theirs")
    stream = fresh.readStream.format("sliceflow.json").schema(schema)
    stream = stream.options(includeMetadata="true").load(tree)
    run_to_end(stream.select(*meta), str(tmp_path / "ck1"), path=ours_path)
    theirs = fresh.readStream.schema(ours.drop("_metadata").schema).json(tree)
    run_to_end(theirs.select(*meta), str(tmp_path / "ck2"), path=theirs_path)
    four = ["id", "dt", "file_path", "file_name", "file_size", "file_modification_time"]
    _same(
        fresh.read.parquet(ours_path).select(*four),
        fresh.read.parquet(theirs_path).select(*four),
    )
    # input_file_name() is filled by Spark's own file scans only.
    names = {r[0] for r in ours.select(F.input_file_name()).collect()}
    assert names == {""}


def test_a_stream_without_schema_is_refused_unless_schema_inference(spark, fresh, tree, tmp_path):
    with pytest.raises(IllegalArgumentException) as theirs:
        fresh.readStream.json(tree)
    stream = fresh.readStream.format("sliceflow.json").load(tree)
    query = (
        stream.writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "refused"))
        .start()
    )
    with pytest.raises(StreamingQueryException) as ours:
        query.awaitTermination(300)
    message = str(ours.value)
    assert "[_LEGACY_ERROR_TEMP_2048] " + str(theirs.value).split(" SQLSTATE")[0] in message
    assert "Traceback" not in message

    # With spark.sql.streaming.schemaInference set before register(), both infer.
    spark.conf.set("spark.sql.streaming.schemaInference", "true")
    try:
        sfs.register(spark)
        ours_path, theirs_path = str(tmp_path / "ours"), str(tmp_path / "theirs")
        run_to_end(
            spark.readStream.format("sliceflow.json").load(tree),
            str(tmp_path / "ck1"),
            path=ours_path,
        )
        run_to_end(spark.readStream.json(tree), str(tmp_path / "ck2"), path=theirs_path)
        _same(spark.read.parquet(ours_path), spark.read.parquet(theirs_path))
    finally:
        spark.conf.unset("spark.sql.streaming.schemaInference")
        sfs.register(spark)


def test_errors_carry_sparks_class_on_one_line(fresh, tree, tmp_path):
    missing = str(tmp_path / "nope")
    # With a schema, Spark creates the Python data source at the first action.
    with pytest.raises(AnalysisException) as theirs:
        fresh.read.schema(SCHEMA).json(missing)
    df = fresh.read.format("sliceflow.json").schema(SCHEMA).load(missing)
    with pytest.raises(AnalysisException) as ours:
        df.collect()
    first = str(ours.value).splitlines()[0]
    # (raised where the planner lists the files: "Failed to generate ... read partitions")
    assert first.startswith("[PYTHON_DATA_SOURCE_ERROR] Failed to generate Python data source")
    assert first.endswith(str(theirs.value).split(" SQLSTATE")[0])

    # FAILFAST: Spark's FAILED_READ_FILE naming the file as Spark names it, then the
    # malformed record's class and its line.
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": 1}\n{"id":\n{"id": 3}\n', encoding="utf-8")
    with pytest.raises(Exception) as theirs:
        fresh.read.schema("id BIGINT").option("mode", "FAILFAST").json(str(bad)).collect()
    spark_first = next(
        line for line in str(theirs.value).splitlines() if "[FAILED_READ_FILE" in line
    )
    spark_file = spark_first.split("reading file ", 1)[1].split(". ", 1)[0].rstrip(".")
    reader = fresh.read.format("sliceflow.json").schema("id BIGINT").option("mode", "FAILFAST")
    with pytest.raises(PythonException) as ours:
        reader.load(str(bad)).collect()
    lines = str(ours.value).splitlines()
    assert lines[0] == "An exception was thrown from the Python worker:", lines
    line = lines[1]
    assert len(lines) == 2, lines  # no traceback
    assert "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file " + spark_file in line
    assert "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION]" in line and "line 2." in line

    # A partition column the schema leaves out: Spark appends it, sliceflow refuses (at the
    # first action, naming the column), one line.
    with pytest.raises(AnalysisException) as ours:
        fresh.read.format("sliceflow.json").schema("id BIGINT").load(tree).collect()
    lines = str(ours.value).splitlines()
    assert "`dt DATE` at the end of the schema" in lines[0] and "Traceback" not in lines[0]


def test_permissive_partial_results_are_sparks_unpruned_ones(fresh, tmp_path):
    """Spark parses only the columns a query needs and tests pushed filters while it parses:
    on `{"id": 11, "a": }`, `filter("id IS NULL").count()` stops at `id` (11: not counted),
    while reading every column meets the malformed value and gives the PERMISSIVE row, `id`
    null. sliceflow parses every column, always: Spark's answer without pruning. (`"x"` for an
    INT is a partial result in both: the other fields are kept.)"""
    path = tmp_path / "partial.json"
    lines = ['{"id": 11, "a": }', '{"a": "x", "id": 5}', '{"a": 1, "id": 6}', '{"a": 1 "id": 8}']
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    schema = "a INT, id BIGINT"
    theirs = fresh.read.schema(schema).json(str(path))
    ours = fresh.read.format("sliceflow.json").schema(schema).load(str(path))
    unpruned = sum(1 for r in theirs.collect() if r.id is None)
    pruned = theirs.filter("id IS NULL").count()
    assert (unpruned, pruned) == (2, 1)  # Spark's two answers
    assert ours.filter("id IS NULL").count() == unpruned
    _same(ours, theirs)
