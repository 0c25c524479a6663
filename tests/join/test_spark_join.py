"""``sliceflow.spark.join`` on Spark: batch against Spark's own join of the materialized
inputs and the brute-force model; streaming (file sources, one file per side and micro-batch)
materialized after every micro-batch against the model and Spark's batch join of the inputs so
far; restart from a checkpoint; the errors."""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F
from support.join_data import random_changelog
from support.spark_helpers import collect_stream, stream_of, write_micro_batches

from sliceflow.spark import JoinMetrics, join
from sliceflow.testing.join_reference import JoinModel, materialize_changes
from sliceflow.testing.spark import run_to_end

pytestmark = pytest.mark.spark

LEFT = pa.schema([("op", pa.string()), ("k", pa.int64()), ("a", pa.string())])
RIGHT = pa.schema([("op", pa.string()), ("k", pa.int64()), ("b", pa.int64())])
HOWS = ["inner", "left", "right", "full"]


def changelog(rng: random.Random, n: int, keys: int, side: int) -> list[dict[str, Any]]:
    """One side's changelog: null keys, many rows per key."""
    col = "a" if side == 0 else "b"

    def fresh() -> dict[str, Any]:
        value = rng.choice(["p", "q", None]) if side == 0 else rng.choice([1, 2, 3, None])
        return {"k": rng.choice([None, *range(keys)]), col: value}

    return random_changelog(rng, n, fresh, ["k"], stray=0.03)


def rows_of(table_rows: list[Any]) -> Counter[Any]:
    return Counter(tuple(r) for r in table_rows)


def model_join(how: str, lefts: list[list[Any]], rights: list[list[Any]]) -> JoinModel:
    model = JoinModel(["k"], ["a"], ["b"], how=how, left_op_col="op", right_op_col="op")
    for lb, rb in zip(lefts, rights, strict=True):
        model.micro_batch(lb, rb)
    return model


@pytest.mark.parametrize("how", HOWS)
def test_batch_matches_model_and_spark(spark, how):
    rng = random.Random(how)
    left, right = changelog(rng, 120, 8, 0), changelog(rng, 120, 8, 1)
    ldf = spark.createDataFrame(pa.Table.from_pylist(left, schema=LEFT))
    rdf = spark.createDataFrame(pa.Table.from_pylist(right, schema=RIGHT))
    metrics = JoinMetrics(spark)
    got = join(ldf, rdf, "k", how, left_op_col="op", right_op_col="op", metrics=metrics)
    assert got.columns == ["k", "a", "b"]
    model = model_join(how, [left], [right])
    want = [tuple(r.values()) for r in model.materialized()]
    assert rows_of(got.collect()) == rows_of(want)
    assert metrics.value["left_rows_in"] == len(left)
    assert metrics.value["retractions_ignored"] == model.ignored
    # insert-only sides: exactly Spark's own join
    li = ldf.where("op IS NULL OR op = '+I'").drop("op")
    ri = rdf.where("op IS NULL OR op = '+I'").drop("op")
    assert rows_of(join(li, ri, ["k"], how).collect()) == rows_of(li.join(ri, "k", how).collect())


@pytest.mark.parametrize(
    ("how", "mini_batch", "ttl"),
    # a state_ttl longer than the run: the rows carry their arrival time, none leaves
    [("inner", True, None), ("right", True, None), ("left", False, None), ("full", True, "1 hour")],
)
def test_streaming_matches_model_and_batch_at_every_micro_batch(
    spark, tmp_path, how, mini_batch, ttl
):
    rng = random.Random(f"stream-{how}")
    left, right = changelog(rng, 150, 6, 0), changelog(rng, 150, 6, 1)
    lefts = [left[i * len(left) // 3 : (i + 1) * len(left) // 3] for i in range(3)]
    rights = [right[i * len(right) // 3 : (i + 1) * len(right) // 3] for i in range(3)]
    write_micro_batches(str(tmp_path / "l"), [pa.Table.from_pylist(b, schema=LEFT) for b in lefts])
    write_micro_batches(
        str(tmp_path / "r"), [pa.Table.from_pylist(b, schema=RIGHT) for b in rights]
    )
    metrics = JoinMetrics(spark)
    out = join(
        stream_of(spark, str(tmp_path / "l"), LEFT), stream_of(spark, str(tmp_path / "r"), RIGHT),
        "k", how, left_op_col="op", right_op_col="op", mini_batch=mini_batch, buckets=3,
        bundle_rows=17, state_ttl=ttl, metrics=metrics,
    )  # fmt: skip
    got = collect_stream(out, str(tmp_path / "ck"), row=Row.asDict)
    assert sorted(got) == [0, 1, 2]
    changes: list[tuple[str, dict[str, Any]]] = []
    model = JoinModel(["k"], ["a"], ["b"], how=how, left_op_col="op", right_op_col="op")
    for b in range(3):
        changes += [(r.pop("op"), r) for r in got[b]]
        model.micro_batch(lefts[b], rights[b])
        materialized = materialize_changes(changes)
        assert all(n >= 0 for n in materialized.values()), f"micro-batch {b}"
        assert materialized == materialize_changes([("+I", r) for r in model.materialized()])
        # Spark's batch join of the inputs so far
        ldf = spark.createDataFrame(pa.Table.from_pylist(sum(lefts[: b + 1], []), schema=LEFT))
        rdf = spark.createDataFrame(pa.Table.from_pylist(sum(rights[: b + 1], []), schema=RIGHT))
        batch = join(ldf, rdf, "k", how, left_op_col="op", right_op_col="op")
        assert materialized == materialize_changes([("+I", r.asDict()) for r in batch.collect()])
    assert metrics.value["left_rows_in"] == len(left)
    assert metrics.value["right_rows_in"] == len(right)
    assert metrics.value["retractions_ignored"] == model.ignored


def test_restart_from_checkpoint_keeps_both_sides(spark, tmp_path):
    """A query stopped after a micro-batch and restarted from its checkpoint joins the new rows
    with both sides' rows of before, as one uninterrupted run does."""
    rng = random.Random(7)
    left, right = changelog(rng, 120, 5, 0), changelog(rng, 120, 5, 1)
    lbs = [pa.Table.from_pylist(left[i * len(left) // 3 : (i + 1) * len(left) // 3], schema=LEFT)
           for i in range(3)]  # fmt: skip
    rbs = [pa.Table.from_pylist(right[i * len(right) // 3 : (i + 1) * len(right) // 3],
                                schema=RIGHT) for i in range(3)]  # fmt: skip

    def run(src: str, sink: str, ck: str) -> None:
        out = join(
            stream_of(spark, f"{src}/l", LEFT), stream_of(spark, f"{src}/r", RIGHT), "k", "full",
            left_op_col="op", right_op_col="op", buckets=2,
        )  # fmt: skip
        run_to_end(out, ck, path=sink)

    write_micro_batches(str(tmp_path / "all/l"), lbs)
    write_micro_batches(str(tmp_path / "all/r"), rbs)
    run(str(tmp_path / "all"), str(tmp_path / "sink1"), str(tmp_path / "ck1"))
    write_micro_batches(str(tmp_path / "src/l"), lbs[:1])
    write_micro_batches(str(tmp_path / "src/r"), rbs[:1])
    run(str(tmp_path / "src"), str(tmp_path / "sink2"), str(tmp_path / "ck2"))
    write_micro_batches(str(tmp_path / "src/l"), lbs[1:], first=1)
    write_micro_batches(str(tmp_path / "src/r"), rbs[1:], first=1)
    run(str(tmp_path / "src"), str(tmp_path / "sink2"), str(tmp_path / "ck2"))

    def materialized(sink: str) -> Counter[Any]:
        rows = spark.read.parquet(sink).collect()
        return materialize_changes([(r["op"], {k: r[k] for k in ("k", "a", "b")}) for r in rows])

    assert materialized(str(tmp_path / "sink1")) == materialized(str(tmp_path / "sink2"))
    model = model_join("full", [left], [right])
    assert materialized(str(tmp_path / "sink2")) == materialize_changes(
        [("+I", r) for r in model.materialized()]
    )


def test_errors_name_the_argument(spark, tmp_path):
    ldf = spark.createDataFrame([("+I", 1, "x")], "op STRING, k BIGINT, a STRING")
    rdf = spark.createDataFrame([(1, 2)], "K BIGINT, b BIGINT")
    with pytest.raises(ValueError, match="unknown how 'sideways'"):
        join(ldf, rdf, "k", "sideways")
    with pytest.raises(ValueError, match="not supported on changelogs"):
        join(ldf, rdf, "k", "left_anti")
    with pytest.raises(TypeError, match="on must name the join column"):
        join(ldf, rdf, ldf.k == rdf.K)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nope"):
        join(ldf, rdf, "nope")
    clash = spark.createDataFrame([(1, "y")], "k BIGINT, A STRING")
    with pytest.raises(ValueError, match="'a' of the left side and 'A' of the right side"):
        join(ldf, clash, "k")
    with pytest.raises(TypeError, match="pyspark DataFrame"):
        join(ldf, [1], "k")  # type: ignore[arg-type]
    write_micro_batches(str(tmp_path / "s"), [pa.Table.from_pylist([], schema=RIGHT)])
    stream = stream_of(spark, str(tmp_path / "s"), RIGHT).drop("op")
    with pytest.raises(ValueError, match="the right DataFrame is streaming and the left one"):
        join(ldf, stream, "k", left_op_col="op")
    bad = spark.createDataFrame([("+X", 1, "x")], "op STRING, k BIGINT, a STRING")
    with pytest.raises(Exception, match=r"\+X"):
        join(bad, rdf, "k", left_op_col="op").collect()
    # the right side's K is found by Spark's case rules and comes out as the left's k
    assert join(ldf, rdf, "k", left_op_col="op").collect() == [Row(k=1, a="x", b=2)]


ORDERS = pa.schema(
    [("kind", pa.string()), ("oid", pa.int64()), ("cid", pa.int64()), ("amount", pa.int64()),
     ("ts", pa.int64())]
)  # fmt: skip
CUSTOMERS = pa.schema([("kind", pa.string()), ("cid", pa.int64()), ("name", pa.string())])
KINDS = {"INSERT": "+I", "DELETE": "-D", "BEFORE": "-U", "AFTER": "+U"}


def _cdc(rng: random.Random) -> tuple[list[list[Any]], list[list[Any]]]:
    """Order versions (each a new ts; some deleted) and customers renamed and deleted, in three
    micro-batches."""
    orders: list[list[Any]] = [[], [], []]
    customers: list[list[Any]] = [[], [], []]
    live: dict[int, dict[str, Any]] = {}
    names = {c: f"c{c}" for c in range(5)}
    for c in range(4):
        customers[0].append({"kind": "INSERT", "cid": c, "name": names[c]})
    for b in range(3):
        for _ in range(40):
            oid = rng.randrange(15)
            if oid in live and rng.random() < 0.2:
                orders[b].append({**live.pop(oid), "kind": "DELETE"})
                continue
            row = {"oid": oid, "cid": rng.randrange(5), "amount": rng.randrange(100),
                   "ts": b * 100 + len(orders[b])}  # fmt: skip
            orders[b].append({**row, "kind": "INSERT"})
            live[oid] = row
        if b:
            c = rng.randrange(4)
            customers[b].append({"kind": "BEFORE", "cid": c, "name": names[c]})
            names[c] = f"{names[c]}'"
            customers[b].append({"kind": "AFTER", "cid": c, "name": names[c]})
    return orders, customers


def test_chain_from_changelog_dedup_join_changelog_agg_equals_batch(spark, tmp_path):
    """CDC in, totals per customer name out: from_changelog → deduplicate(keep="last") →
    join → changelog_agg, as a stream, materializes to the same table as the batch pipeline."""
    from sliceflow import window as W
    from sliceflow.spark import changelog_agg, deduplicate, from_changelog

    orders, customers = _cdc(random.Random(11))
    write_micro_batches(
        str(tmp_path / "o"), [pa.Table.from_pylist(b, schema=ORDERS) for b in orders]
    )
    write_micro_batches(
        str(tmp_path / "c"), [pa.Table.from_pylist(b, schema=CUSTOMERS) for b in customers]
    )

    def pipeline(o, c):
        latest = deduplicate(
            from_changelog(o, op_col="kind", mapping=KINDS), ["oid"], keep="last",
            order_by="ts", op_col="op", buckets=2,
        )  # fmt: skip
        cust = from_changelog(c, op_col="kind", mapping=KINDS)
        lop = "op" if o.isStreaming else None  # a batch deduplicate gives the kept rows
        joined = join(latest, cust, "cid", "left", left_op_col=lop, right_op_col="op", buckets=2)
        if not o.isStreaming:
            return joined.groupBy("name").agg(F.sum("amount").alias("total"))
        return changelog_agg(joined, ["name"], [W.sum("amount").alias("total")], op_col="op",
                             buckets=2)  # fmt: skip

    out = pipeline(stream_of(spark, str(tmp_path / "o"), ORDERS),
                   stream_of(spark, str(tmp_path / "c"), CUSTOMERS))  # fmt: skip
    got = collect_stream(out, str(tmp_path / "ck"), row=Row.asDict)
    table: dict[Any, Any] = {}
    for b in sorted(got):
        for r in got[b]:
            if r["op"] in ("+I", "+U"):
                table[r["name"]] = r["total"]
            else:
                table.pop(r["name"])
    o = spark.createDataFrame(pa.Table.from_pylist(sum(orders, []), schema=ORDERS))
    c = spark.createDataFrame(pa.Table.from_pylist(sum(customers, []), schema=CUSTOMERS))
    final = {r["name"]: r["total"] for r in pipeline(o, c).collect()}
    assert table == final and len(final) >= 3


def test_state_ttl_lets_rows_leave_after_the_duration(spark, tmp_path):
    """With ``state_ttl``, a row that arrived longer ago than the duration (by the
    micro-batches' processing time) has left the state when a match arrives: nothing is
    emitted for it, as in Flink; a row within the duration still joins; a restart keeps the
    arrival times."""
    import time

    left = [{"op": "+I", "k": 1, "a": "old"}, {"op": "+I", "k": 2, "a": "old"}]
    write_micro_batches(str(tmp_path / "l"), [pa.Table.from_pylist(left, schema=LEFT)])
    write_micro_batches(str(tmp_path / "r"), [pa.Table.from_pylist([], schema=RIGHT)])
    metrics = JoinMetrics(spark)

    def run() -> dict[int, list[Any]]:
        lsrc, rsrc = (
            stream_of(spark, str(tmp_path / "l"), LEFT),
            stream_of(spark, str(tmp_path / "r"), RIGHT),
        )
        out = join(
            lsrc, rsrc, "k", "left", left_op_col="op", right_op_col="op", buckets=2,
            state_ttl="3 seconds", metrics=metrics,
        )  # fmt: skip
        return collect_stream(out, str(tmp_path / "ck"), row=lambda r: tuple(r))

    first = run()
    assert sorted(first[0]) == [("+I", 1, "old", None), ("+I", 2, "old", None)]
    time.sleep(4)
    later = [
        [{"op": "+I", "k": 3, "a": "new"}],
        [{"op": "+I", "k": 1, "b": 10}, {"op": "+I", "k": 2, "b": 20}],
    ]
    write_micro_batches(str(tmp_path / "l"), [pa.Table.from_pylist(later[0], schema=LEFT)], 1)
    write_micro_batches(str(tmp_path / "r"), [pa.Table.from_pylist(later[1], schema=RIGHT)], 1)
    then = run()
    # k=1's and k=2's left rows left the state: their padded rows stay (nothing is emitted for
    # the expiry) and the right rows find no match; k=3 arrived now
    assert sorted(r for rows in then.values() for r in rows) == [("+I", 3, "new", None)]
    assert metrics.value["rows_expired"] == 2


def test_fused_stream_join_equals_the_unfused_one(spark, tmp_path):
    """Over two ``sliceflow.json`` streams (``spark.sliceflow.fusion.streams.enabled``), each
    side's packing runs inside its read, and the changes are the unfused plan's."""
    import json

    from support.spark_helpers import spark_conf

    from sliceflow.spark._runtime.session_settings import FUSION_CONF, STREAM_FUSION_CONF
    from sliceflow.spark.json.fused_scan import FUSED_SOURCE_PREFIX

    rng = random.Random(5)
    for side in (0, 1):
        folder = tmp_path / ("l" if side == 0 else "r")
        folder.mkdir()
        rows = changelog(rng, 90, 6, side)
        for i in range(3):
            path = folder / f"part-{i}.json"
            part = rows[i * len(rows) // 3 : (i + 1) * len(rows) // 3]
            path.write_text("".join(json.dumps(r) + "\n" for r in part))
            os.utime(path, (1_000_000 + i, 1_000_000 + i))

    def run(name: str) -> tuple[bool, Counter[Any]]:
        def src(side: str, ddl: str):
            reader = spark.readStream.schema(ddl).option("maxFilesPerTrigger", 1)
            return reader.format("sliceflow.json").load(str(tmp_path / side))

        out = join(
            src("l", "op STRING, k BIGINT, a STRING"), src("r", "op STRING, k BIGINT, b BIGINT"),
            "k", "full", left_op_col="op", right_op_col="op", buckets=2,
        )  # fmt: skip
        fused = FUSED_SOURCE_PREFIX in out._jdf.queryExecution().analyzed().toString()
        got = collect_stream(out, str(tmp_path / f"ck-{name}"), row=Row.asDict)
        changes = [(r.pop("op"), r) for b in sorted(got) for r in got[b]]
        return fused, materialize_changes(changes)

    with spark_conf(spark, STREAM_FUSION_CONF, "true"):
        fused, with_fusion = run("fused")
        with spark_conf(spark, FUSION_CONF, "false"):
            unfused, without = run("unfused")
    assert fused and not unfused
    assert with_fusion == without and with_fusion
