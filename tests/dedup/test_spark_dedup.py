"""``sliceflow.spark.deduplicate`` and ``from_changelog`` in Spark (``local[2]``): batch against
Spark's ``row_number() = 1`` window query, streaming (file source, one file per micro-batch)
against the plain-Python model, the stream materialized equal to the batch result, restart from
a checkpoint into a file sink, a chain into ``changelog_agg``, CDC input
(Debezium with and without ``payload``, mapped op columns) and the errors a user meets."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import PySparkException, StreamingQueryException
from pyspark.sql import Row, Window
from pyspark.sql import functions as F
from support.spark_helpers import collect_stream, stream_of, write_micro_batches

from sliceflow import window as W
from sliceflow.spark import DedupMetrics, changelog_agg, deduplicate, from_changelog
from sliceflow.testing.dedup_reference import DedupModel, materialize_rows
from sliceflow.testing.spark import run_to_end

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("k", pa.int64()), ("t", pa.int64()), ("s", pa.string())])


def unique_rows(seed: int, n: int, keys: int = 20) -> list[dict[str, Any]]:
    """Rows whose order values are unique within a key (so Spark's row_number is defined)."""
    rng = random.Random(seed)
    ts = rng.sample(range(10 * n), n)
    return [
        {"k": rng.randrange(keys), "t": ts[i], "s": rng.choice(["a", "b", None])} for i in range(n)
    ]


def canon(rows: Sequence[dict[str, Any]]) -> list[str]:
    return sorted(repr(sorted(r.items())) for r in rows)


# ------------------------------------------------------------------------------------------
# Batch


@pytest.mark.parametrize("keep", ["first", "last"])
def test_batch_matches_spark_row_number(spark, keep):
    df = spark.createDataFrame(pa.Table.from_pylist(unique_rows(1, 400), schema=SCHEMA))
    order = F.col("t").asc() if keep == "first" else F.col("t").desc()
    want = (
        df.withColumn("rn", F.row_number().over(Window.partitionBy("k").orderBy(order)))
        .where("rn = 1")
        .drop("rn")
    )
    got = deduplicate(df, ["k"], keep=keep, order_by="t")
    assert got.columns == ["k", "t", "s"]
    assert canon([r.asDict() for r in got.collect()]) == canon([r.asDict() for r in want.collect()])


@pytest.mark.parametrize("keep", ["first", "last"])
def test_batch_arrival_order_is_the_row_order(spark, keep):
    rows = unique_rows(2, 300)
    df = spark.createDataFrame(pa.Table.from_pylist(rows, schema=SCHEMA)).repartition(3)
    seq = df.withColumn("seq", F.monotonically_increasing_id())
    order = F.col("seq").asc() if keep == "first" else F.col("seq").desc()
    want = (
        seq.withColumn("rn", F.row_number().over(Window.partitionBy("k").orderBy(order)))
        .where("rn = 1")
        .drop("rn", "seq")
    )
    got = deduplicate(df, ["k"], keep=keep)
    assert canon([r.asDict() for r in got.collect()]) == canon([r.asDict() for r in want.collect()])


def test_batch_errors_name_the_argument(spark):
    df = spark.createDataFrame([(1, 2)], "k INT, t INT").withColumn(
        "m", F.create_map(F.lit("a"), F.col("t"))
    )
    with pytest.raises(ValueError, match="keep must be 'first' or 'last', not 'any'"):
        deduplicate(df, ["k"], keep="any")
    with pytest.raises(ValueError, match="order_by column 'ts' is not a column"):
        deduplicate(df, ["k"], order_by="ts")
    with pytest.raises(ValueError, match="order_by column 'm' has type MAP"):
        deduplicate(df, ["k"], order_by="m")


# ------------------------------------------------------------------------------------------
# Streaming


@pytest.mark.parametrize(
    ("keep", "order_by", "mini_batch"),
    [("last", "t", True), ("first", "t", False), ("first", None, True), ("last", None, True)],
)
def test_streaming_matches_model_and_batch(spark, tmp_path, keep, order_by, mini_batch):
    rows = unique_rows(3, 300, keys=15)
    parts = [rows[i : i + 100] for i in range(0, 300, 100)]
    write_micro_batches(
        str(tmp_path / "src"), [pa.Table.from_pylist(p, schema=SCHEMA) for p in parts]
    )
    metrics = DedupMetrics(spark)
    out = deduplicate(
        stream_of(spark, str(tmp_path / "src"), SCHEMA), ["k"], keep=keep, order_by=order_by,
        mini_batch=mini_batch, buckets=1, metrics=metrics,
    )  # fmt: skip
    got = collect_stream(out, str(tmp_path / "ck"), row=Row.asDict)
    model = DedupModel(["k"], keep=keep, order_by=order_by, mini_batch=mini_batch)
    changes: list[tuple[str, dict[str, Any]]] = []
    for b, part in enumerate(parts):
        want = model.micro_batch(part)
        mine = [(r.pop("op", "+I"), r) for r in got.get(b, [])]
        # One bucket: the changes come in the model's order.
        assert mine == want, f"micro-batch {b}"
        changes += mine
    assert metrics.value["rows_in"] == 300
    if order_by is not None:  # nothing is late: the stream materializes to the batch result
        batch = deduplicate(spark.createDataFrame(pa.Table.from_pylist(rows, schema=SCHEMA)),
                            ["k"], keep=keep, order_by=order_by)  # fmt: skip
        assert canon(materialize_rows(changes)) == canon([r.asDict() for r in batch.collect()])


def _file_sink_run(spark, src: str, sink: str, checkpoint: str) -> None:
    out = deduplicate(stream_of(spark, src, SCHEMA), ["k"], keep="last", order_by="t", buckets=3)
    run_to_end(out, checkpoint, path=sink)


def test_restart_from_checkpoint_loses_and_doubles_nothing(spark, tmp_path):
    rows = unique_rows(4, 320)
    batches = [pa.Table.from_pylist(rows[i : i + 80], schema=SCHEMA) for i in range(0, 320, 80)]
    write_micro_batches(str(tmp_path / "all"), batches)
    _file_sink_run(spark, str(tmp_path / "all"), str(tmp_path / "sink1"), str(tmp_path / "ck1"))
    write_micro_batches(str(tmp_path / "src"), batches[:2])
    _file_sink_run(spark, str(tmp_path / "src"), str(tmp_path / "sink2"), str(tmp_path / "ck2"))
    write_micro_batches(str(tmp_path / "src"), batches[2:], first=2)
    _file_sink_run(spark, str(tmp_path / "src"), str(tmp_path / "sink2"), str(tmp_path / "ck2"))

    def sink(name: str) -> list[str]:
        return sorted(str(tuple(r)) for r in spark.read.parquet(str(tmp_path / name)).collect())

    assert sink("sink2") == sink("sink1")


def test_chains_into_changelog_agg(spark, tmp_path):
    rows = unique_rows(5, 200, keys=10)
    parts = [rows[i : i + 50] for i in range(0, 200, 50)]
    write_micro_batches(
        str(tmp_path / "src"), [pa.Table.from_pylist(p, schema=SCHEMA) for p in parts]
    )
    latest = deduplicate(stream_of(spark, str(tmp_path / "src"), SCHEMA), ["k"], keep="last",
                         order_by="t", buckets=2)  # fmt: skip
    per_s = changelog_agg(latest, ["s"], [W.count().alias("n")], op_col="op", buckets=2)
    got = collect_stream(per_s, str(tmp_path / "ck"), row=Row.asDict)
    table: dict[Any, int] = {}
    for b in sorted(got):
        for r in got[b]:
            if r["op"] in ("+I", "+U"):
                table[r["s"]] = r["n"]
            else:
                table.pop(r["s"])
    df = spark.createDataFrame(pa.Table.from_pylist(rows, schema=SCHEMA))
    final = deduplicate(df, ["k"], keep="last", order_by="t").groupBy("s").count().collect()
    assert table == {r["s"]: r["count"] for r in final}


# ------------------------------------------------------------------------------------------
# from_changelog

ROW = "id INT, name STRING"


def _debezium_rows() -> list[tuple]:
    return [
        ("c", None, (1, "a"), 10),
        ("r", None, (2, "b"), 11),
        ("u", (1, "a"), (1, "a2"), 12),
        ("d", (2, "b"), None, 13),
        (None, None, None, None),  # tombstone
    ]


@pytest.mark.parametrize("wrapped", [False, True])
def test_from_changelog_debezium(spark, wrapped):
    df = spark.createDataFrame(
        _debezium_rows(), f"op STRING, before STRUCT<{ROW}>, after STRUCT<{ROW}>, ts_ms BIGINT"
    )
    if wrapped:
        df = df.select(F.when(F.col("op").isNotNull(), F.struct("*")).alias("payload"))
    out = from_changelog(df, format="debezium")
    assert out.columns == ["op", "id", "name"]
    assert [tuple(r) for r in out.collect()] == [
        ("+I", 1, "a"),
        ("+I", 2, "b"),
        ("-U", 1, "a"),
        ("+U", 1, "a2"),
        ("-D", 2, "b"),
    ]


def test_from_changelog_debezium_feeds_deduplicate_and_changelog_agg(spark):
    df = spark.createDataFrame(
        _debezium_rows(), f"op STRING, before STRUCT<{ROW}>, after STRUCT<{ROW}>, ts_ms BIGINT"
    )
    changes = from_changelog(df, format="debezium")
    kept = deduplicate(changes, ["id"], keep="last", op_col="op")
    assert [tuple(r) for r in kept.collect()] == [(1, "a2")]
    counted = changelog_agg(changes, None, [W.count().alias("n")], op_col="op")
    assert [tuple(r) for r in counted.collect()] == [("+I", 1)]


def test_from_changelog_debezium_errors(spark):
    df = spark.createDataFrame([(1, (1, "a"))], f"x INT, after STRUCT<{ROW}>")
    with pytest.raises(ValueError, match=r"no 'op' and no 'before' field"):
        from_changelog(df, format="debezium")
    bad = spark.createDataFrame(
        [("t", None, (1, "a"))], f"op STRING, before STRUCT<{ROW}>, after STRUCT<{ROW}>"
    )
    with pytest.raises(PySparkException, match=r"op holds 't', which is not a Debezium change"):
        from_changelog(bad, format="debezium").collect()
    no_before = spark.createDataFrame(
        [("u", None, (1, "a"))], f"op STRING, before STRUCT<{ROW}>, after STRUCT<{ROW}>"
    )
    with pytest.raises(PySparkException, match=r"REPLICA IDENTITY.*The message: \{\"op\":\"u\""):
        from_changelog(no_before, format="debezium").collect()


@pytest.mark.parametrize("op", ["c", "r", "u"])
def test_from_changelog_debezium_null_after_fails_naming_op_and_message(spark, op):
    df = spark.createDataFrame(
        [(op, (1, "a"), None)], f"op STRING, before STRUCT<{ROW}>, after STRUCT<{ROW}>"
    )
    with pytest.raises(
        PySparkException,
        match=rf"an '{op}' message has a null after, so the row it writes is unknown\. "
        rf'The message: \{{"op":"{op}","before":\{{"id":1,"name":"a"\}}\}}',
    ):
        from_changelog(df, format="debezium").collect()


def test_from_changelog_debezium_refuses_before_and_after_of_other_types(spark):
    df = spark.createDataFrame(
        [("c", None, (1, "0456"))],
        "op STRING, before STRUCT<id: INT, name: INT>, after STRUCT<id: INT, name: STRING>",
    )
    with pytest.raises(
        ValueError, match=r"before\.name is INT but after\.name is STRING: a row's columns"
    ):
        from_changelog(df, format="debezium")
    nested = spark.createDataFrame(
        [("c", None, (1, [1]))],
        "op STRING, before STRUCT<id: INT, v: STRUCT<x: INT>>, "
        "after STRUCT<id: INT, v: ARRAY<INT>>",
    )
    with pytest.raises(ValueError, match=r"payload\.before\.v is struct<x:int> but"):
        from_changelog(nested.select(F.struct("*").alias("payload")), format="debezium")


def test_from_changelog_debezium_payload_without_op_names_what_it_lacks(spark):
    df = spark.createDataFrame(
        [((None, (1, "a")),)], f"payload STRUCT<before: STRUCT<{ROW}>, after: STRUCT<{ROW}>>"
    )
    with pytest.raises(ValueError, match=r"no 'payload\.op' field .*fields of 'payload'") as e:
        from_changelog(df, format="debezium")
    assert "before" not in str(e.value).split("field")[0]


def test_deduplicate_names_itself_for_a_column_it_cannot_take(spark):
    df = spark.sql("SELECT 1 AS id, INTERVAL '1' DAY AS d")
    with pytest.raises(ValueError, match=r"^deduplicate: column 'd': .*interval day") as e:
        deduplicate(df, ["id"], keep="last", order_by="d")
    assert "window_agg" not in str(e.value)


MAPPING = {"INSERT": "+I", "DELETE": "-D", "UPDATE_BEFORE": "-U", "UPDATE_AFTER": "+U"}


def test_from_changelog_mapping(spark):
    df = spark.createDataFrame(
        [(1, "INSERT", "a"), (1, "UPDATE_BEFORE", "a"), (1, "UPDATE_AFTER", "b")],
        "id INT, kind STRING, v STRING",
    )
    out = from_changelog(df, op_col="kind", mapping=MAPPING)
    assert out.columns == ["op", "id", "v"]
    assert [tuple(r) for r in out.collect()] == [("+I", 1, "a"), ("-U", 1, "a"), ("+U", 1, "b")]
    with pytest.raises(ValueError, match=r"mapping maps 'X' to 'insert'"):
        from_changelog(df, op_col="kind", mapping={"X": "insert"})
    with pytest.raises(ValueError, match=r"op column 'nope' is not a column"):
        from_changelog(df, op_col="nope", mapping=MAPPING)


def test_from_changelog_unmapped_value_fails_batch_and_stream(spark, tmp_path):
    schema = pa.schema([("id", pa.int64()), ("kind", pa.string())])
    t = pa.Table.from_pylist(
        [{"id": 1, "kind": "INSERT"}, {"id": 2, "kind": "UPSERT"}], schema=schema
    )
    df = spark.createDataFrame(t)
    message = r"op column 'kind' holds 'UPSERT', which the mapping does not map"
    with pytest.raises(PySparkException, match=message):
        from_changelog(df, op_col="kind", mapping=MAPPING).collect()
    write_micro_batches(str(tmp_path / "src"), [t])
    stream = from_changelog(stream_of(spark, str(tmp_path / "src"), schema), op_col="kind",
                            mapping=MAPPING)  # fmt: skip
    with pytest.raises(StreamingQueryException, match=message):
        collect_stream(stream, str(tmp_path / "ck"), row=Row.asDict)


def test_streaming_changelog_input_matches_model(spark, tmp_path):
    """A retracting stream (from_changelog of a mapped op column) through deduplicate: each
    micro-batch's changes are the model's, retractions of rows never inserted are counted."""
    schema = pa.schema([("k", pa.int64()), ("t", pa.int64()), ("kind", pa.string())])
    mapping = {"INSERT": "+I", "DELETE": "-D"}
    parts = [
        [{"k": 1, "t": 5, "kind": "INSERT"}, {"k": 1, "t": 3, "kind": "INSERT"},
         {"k": 2, "t": 9, "kind": "DELETE"}],
        [{"k": 1, "t": 3, "kind": "DELETE"}, {"k": 2, "t": 1, "kind": "INSERT"}],
        [{"k": 1, "t": 5, "kind": "DELETE"}],
    ]  # fmt: skip
    write_micro_batches(
        str(tmp_path / "src"), [pa.Table.from_pylist(p, schema=schema) for p in parts]
    )
    changes = from_changelog(stream_of(spark, str(tmp_path / "src"), schema), op_col="kind",
                             mapping=mapping)  # fmt: skip
    metrics = DedupMetrics(spark)
    out = deduplicate(changes, ["k"], keep="first", order_by="t", op_col="op", buckets=1,
                      metrics=metrics)  # fmt: skip
    got = collect_stream(out, str(tmp_path / "ck"), row=Row.asDict)
    model = DedupModel(["k"], keep="first", order_by="t", op_col="op")
    for b, part in enumerate(parts):
        rows = [{"op": mapping[r["kind"]], "k": r["k"], "t": r["t"]} for r in part]
        assert [(r.pop("op"), r) for r in got.get(b, [])] == model.micro_batch(rows)
    assert metrics.value["retractions_ignored"] == 1
