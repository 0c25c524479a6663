"""``topn`` takes ``by`` and ``order_by`` as Spark's ``Window.partitionBy`` / ``orderBy`` take
columns (names, nested fields, pyspark Columns, sort expressions over nested fields); the rows
are ``row_number() OVER (...) <= n`` on the same data, and a column computed for the ranking
does not appear in the output."""

from __future__ import annotations

import pytest
from pyspark.sql import Window
from pyspark.sql import functions as F

from sliceflow.spark import topn

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def repos(spark):
    rows = [((f"r{i % 4}", (i * 7) % 11), i, f"u{i % 3}") for i in range(40)]
    return spark.createDataFrame(rows, "repo struct<name: string, stars: int>, a int, user string")


def _spark_topn(df, n, by, order):
    w = Window.partitionBy(*by).orderBy(*order)
    return df.withColumn("rank", F.row_number().over(w)).where(F.col("rank") <= n)


@pytest.mark.parametrize(
    "case",
    [
        lambda df: ([F.col("user")], [F.desc("repo.stars"), "a"]),
        lambda df: (["repo.name"], [F.col("repo.stars").desc(), df.a]),
        lambda df: ([df["repo.name"]], [F.desc(F.col("a") % 5), "a"]),
        lambda df: ([F.col("a") % 2], [F.col("a")]),
        lambda df: ([F.upper("user").alias("u")], [F.col("repo.stars").asc_nulls_last(), "a"]),
    ],
    ids=["F.col", "nested", "df[] nested", "expression", "alias"],
)
def test_matches_row_number(spark, repos, case):
    by, order = case(repos)
    try:
        ours = topn(repos, 2, by=by, order_by=order)
    except ValueError as e:  # a sort over an expression is refused, naming it
        assert "must sort a column or a nested field" in str(e)
        assert "(a % 5)" in str(e) or "%(a, 5)" in str(e)
        return
    theirs = _spark_topn(repos, 2, by, order)
    assert ours.columns == theirs.columns == ["repo", "a", "user", "rank"]
    assert sorted(map(str, ours.collect())) == sorted(map(str, theirs.collect()))


def test_errors_name_the_column(spark, repos):
    with pytest.raises(ValueError, match=r"topn: the column 'repo\.nope' cannot be resolved"):
        topn(repos, 1, by="repo.nope", order_by="a")
    with pytest.raises(
        ValueError, match=r"order_by column 'nope' is not a column.*repo, a, user\)"
    ):
        topn(repos, 1, by="user", order_by="nope")
