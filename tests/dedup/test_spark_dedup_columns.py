"""``deduplicate`` and ``from_changelog`` take their columns as Spark does (names, nested fields,
pyspark Columns), compared with Spark's ``row_number() = 1`` on the same data; their errors
name the user's column and value, never a column of sliceflow's own."""

from __future__ import annotations

import pytest
from pyspark.sql import Window
from pyspark.sql import functions as F

from sliceflow.spark import deduplicate, from_changelog

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def users(spark):
    rows = [((i % 5, f"e{i % 3}"), i, (i * 13) % 17) for i in range(30)]
    return spark.createDataFrame(rows, "user struct<id: int, email: string>, seq int, ts int")


@pytest.mark.parametrize(
    "case",
    [
        lambda df: (["user.id"], "ts"),
        lambda df: ([F.col("user.id"), df["user.email"]], F.col("ts")),
        lambda df: ([F.upper("user.email").alias("e")], df.seq),
        lambda df: ([F.col("seq") % 4], "user.id"),
    ],
    ids=["nested", "Columns", "function", "expression"],
)
@pytest.mark.parametrize("keep", ["first", "last"])
def test_matches_row_number(spark, users, case, keep):
    by, order = case(users)
    ours = deduplicate(users, by, keep=keep, order_by=order)
    key = F.col(order) if isinstance(order, str) else order
    # Ties go to the earlier row with "first", the later one with "last" (arrival: seq).
    if keep == "first":
        w = Window.partitionBy(*by).orderBy(key.asc(), F.col("seq").asc())
    else:
        w = Window.partitionBy(*by).orderBy(key.desc(), F.col("seq").desc())
    theirs = users.withColumn("_r", F.row_number().over(w)).where("_r = 1").drop("_r")
    assert ours.columns == theirs.columns == ["user", "seq", "ts"]
    assert sorted(map(str, ours.collect())) == sorted(map(str, theirs.collect()))


def test_an_expression_named_with_a_dot_is_refused_naming_it(spark, users):
    with pytest.raises(ValueError, match=r"'upper\(user\.email\)'.*\.alias"):
        deduplicate(users, [F.upper("user.email")])


def test_unknown_column_lists_no_internal_column(spark, users):
    # Without order_by, the arrival order travels in a column of sliceflow's own.
    with pytest.raises(ValueError) as e:
        deduplicate(users, ["nope"])
    assert "'nope' is not a column" in str(e.value) and "user, seq, ts" in str(e.value)
    assert "__" not in str(e.value)


def test_from_changelog_op_column_as_a_column_or_nested_field(spark):
    df = spark.createDataFrame(
        [(("INSERT",), 1, "a"), (("DELETE",), 1, "a")],
        "meta struct<kind: string>, id int, v string",
    )
    mapping = {"INSERT": "+I", "DELETE": "-D"}
    out = from_changelog(df, op_col="meta.kind", mapping=mapping)
    assert out.columns == ["op", "meta", "id", "v"]
    assert [r.op for r in out.collect()] == ["+I", "-D"]
    flat = df.select(F.col("meta.kind").alias("kind"), "id", "v")
    for op in (F.col("kind"), flat.kind, flat["KIND"]):
        out = from_changelog(flat, op_col=op, mapping=mapping)
        assert out.columns == ["op", "id", "v"]


def test_from_changelog_integer_op_column_errors_name_type_and_mapping(spark):
    df = spark.createDataFrame([(1, 5), (2, 6)], "kind int, v int")
    with pytest.raises(ValueError, match=r"op column 'kind' has type INT.*mapping=\{1: '\+I'"):
        from_changelog(df, op_col="kind")
    # Spark would compare 'c' with an INT and fail the query with CAST_INVALID_INPUT.
    with pytest.raises(
        ValueError, match=r"'kind' has type INT, but the mapping's key 'c' is a str"
    ):
        from_changelog(df, op_col="kind", mapping={"c": "+I", "d": "-D"})
    out = from_changelog(df, op_col="kind", mapping={1: "+I", 2: "-D"})
    assert [tuple(r) for r in out.collect()] == [("+I", 5), ("-D", 6)]
    with pytest.raises(ValueError, match=r"op column 'nope' is not a column.*kind, v"):
        from_changelog(df, op_col="nope")


def test_from_changelog_debezium_type_clash_names_the_field(spark):
    ddl = (
        "op string, before struct<id: int, tags: struct<a: int>>, "
        "after struct<id: int, tags: array<int>>"
    )
    df = spark.createDataFrame([], ddl)
    with pytest.raises(ValueError) as e:
        from_changelog(df, format="debezium")
    message = str(e.value)
    assert "before.tags is struct<a:int> but after.tags is array<int>" in message
    assert "__" not in message
    deep = spark.createDataFrame(
        [],
        "op string, before struct<x: array<struct<a: int>>>, "
        "after struct<x: array<struct<a: bigint>>>",
    )
    with pytest.raises(ValueError, match=r"before\.x\[\]\.a is INT but after\.x\[\]\.a is BIGINT"):
        from_changelog(deep, format="debezium")
    twice = spark.createDataFrame(
        [], "op string, before struct<a: int, a: int>, after struct<a: int, a: int>"
    )
    with pytest.raises(ValueError, match=r"after has the field\(s\) \['a'\] more than once"):
        from_changelog(twice, format="debezium")
