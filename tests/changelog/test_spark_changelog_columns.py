"""``changelog_agg`` takes ``by``, its aggregates' arguments and ``op_col`` as Spark's ``groupBy``
takes columns (names, nested fields, pyspark Columns); its output is ``groupBy(...).agg(...)``'s
on the same data, names included."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from sliceflow import window as W
from sliceflow.spark import changelog_agg

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def repos(spark):
    rows = [((f"r{i % 4}", i % 7), i, f"u{i % 3}") for i in range(30)] + [(None, 3, None)]
    return spark.createDataFrame(rows, "repo struct<name: string, stars: int>, a int, user string")


@pytest.mark.parametrize(
    "by",
    [
        lambda df: [F.col("user")],
        lambda df: [df.user, "repo.name"],
        lambda df: [df["repo.name"]],
        lambda df: [F.col("user").alias("u")],
        lambda df: [F.col("a") % 3],
    ],
    ids=["F.col", "df.attr and nested", "df[] nested", "alias", "expression"],
)
def test_matches_groupby(spark, repos, by):
    cols = by(repos)
    aggs = [W.count(), W.sum("repo.stars"), W.max(F.col("a") * 2), W.count_distinct(repos.user)]
    ours = changelog_agg(repos, by=cols, aggs=aggs)
    theirs = repos.groupBy(*cols).agg(
        F.count(F.lit(1)).alias("count(1)"),
        F.sum("repo.stars"),
        F.max(F.col("a") * 2),
        F.count_distinct(repos.user),
    )
    assert ours.columns == ["op", *theirs.columns]
    assert sorted(map(str, ours.drop("op").collect())) == sorted(map(str, theirs.collect()))


def test_op_column_as_a_nested_field(spark):
    df = spark.createDataFrame(
        [(("+I",), "k", 1), (("+I",), "k", 2), (("-U",), "k", 1)],
        "meta struct<op: string>, k string, v int",
    )
    out = changelog_agg(df, by="k", aggs=[W.sum("v")], op_col="meta.op")
    assert [tuple(r) for r in out.collect()] == [("+I", "k", 2)]


def test_errors_name_the_column(spark, repos):
    with pytest.raises(
        ValueError, match=r"changelog_agg: the column 'repo\.nope' cannot be resolved"
    ):
        changelog_agg(repos, by="repo.nope", aggs=[W.count()])
    with pytest.raises(ValueError, match=r"'user' is named 'user'|'repo\.name' is named 'name'"):
        changelog_agg(repos.withColumn("name", F.lit(1)), by=F.col("repo.name"), aggs=[])
    with pytest.raises(
        ValueError, match=r"grouping column 'nope' is not a column.*\(columns: repo, a, user\)"
    ):
        changelog_agg(repos, by="nope", aggs=[W.count()])
