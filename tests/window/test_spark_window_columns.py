"""``window_agg`` takes its columns as Spark's ``groupBy`` does: names, nested fields and pyspark
Columns (``F.col``, ``df.x``, ``df["x"]``, aliases, expressions), for ``by``, the aggregates'
arguments and the time column; its output columns are named as ``groupBy(...).agg(...)`` names
them on the same data, and a column it cannot take is refused naming what the user wrote."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F

from sliceflow import window as W
from sliceflow.spark import window_agg

pytestmark = pytest.mark.spark

DDL = (
    "repo struct<name: string, stars: int>, event struct<ts: timestamp>, at timestamp, a int, "
    "user string"
)


@pytest.fixture(scope="module")
def events(spark):
    t0 = dt.datetime(2026, 1, 1, 0, 0, 0)
    rows = [
        (
            ("x" if i % 4 else "y", i % 3),
            (t0 + dt.timedelta(seconds=7 * i),),
            t0 + dt.timedelta(seconds=7 * i),
            i,
            f"u{i % 5}",
        )
        for i in range(40)
    ] + [(("y", None), (t0,), t0, None, None), (None, (t0,), t0, 5, "u1")]
    return spark.createDataFrame(rows, DDL)


def _spark_window(df, by, aggs):
    """Spark's own tumbling window of one minute on ``at``, as window_agg lays it out."""
    w = F.window("at", "1 minute")
    grouped = df.groupBy(w.alias("w"), *by).agg(*aggs)
    return grouped.select(
        F.col("w.start").alias("window_start"),
        F.col("w.end").alias("window_end"),
        *[F.col("`" + c.replace("`", "``") + "`") for c in grouped.columns if c != "w"],
    )


def _same(ours, theirs) -> None:
    assert ours.columns[:2] == ["window_start", "window_end"]
    assert ours.columns[3:] == theirs.columns[2:]
    got = sorted(map(str, ours.drop("window_time").collect()))
    want = sorted(map(str, theirs.collect()))
    assert got == want


@pytest.mark.parametrize(
    "by",
    [
        lambda df: [F.col("user")],
        lambda df: [df.user],
        lambda df: [df["user"]],
        lambda df: ["repo.name"],
        lambda df: [F.col("repo.name"), "user"],
        lambda df: [df["repo.name"]],
        lambda df: [F.col("user").alias("r")],
        lambda df: [F.col("a") + 1],
        lambda df: ["REPO.NAME"],
        lambda df: [F.upper("user"), F.col("repo.stars")],
    ],
    ids=[
        "F.col",
        "df.attr",
        "df[]",
        "nested",
        "F.col nested",
        "df[] nested",
        "alias",
        "expression",
        "nested other case",
        "function",
    ],
)
def test_by_as_groupby_takes_it(spark, events, by):
    cols = by(events)
    ours = window_agg(events, W.tumble("at", "1 minute"), by=cols, aggs=[W.count(), W.sum("a")])
    theirs = _spark_window(
        events,
        cols if isinstance(cols, list) else [cols],
        [F.count(F.lit(1)).alias("count(1)"), F.sum("a")],
    )
    _same(ours, theirs)


def test_aggregate_arguments_and_their_names(spark, events):
    aggs = [
        W.sum("repo.stars"),
        W.max(F.col("repo.stars")),
        W.min(events.a),
        W.sum(events.repo.stars).alias("total"),
        W.count(F.col("a") + 1),
        W.count_distinct("repo.name"),
        W.avg(F.col("repo.stars")).alias("mean"),
    ]
    ours = window_agg(events, W.tumble("at", "1 minute"), by="repo.name", aggs=aggs)
    theirs = _spark_window(
        events,
        ["repo.name"],
        [
            F.sum("repo.stars"),
            F.max(F.col("repo.stars")),
            F.min(events.a),
            F.sum(events.repo.stars).alias("total"),
            F.count(F.col("a") + 1),
            F.count_distinct(F.col("repo.name")),
            F.avg(F.col("repo.stars")).alias("mean"),
        ],
    )
    _same(ours, theirs)
    assert ours.columns[3:] == [
        "name",
        "sum(repo.stars)",
        "max(repo.stars)",
        "min(a)",
        "total",
        "count((a + 1))",
        "count(DISTINCT repo.name)",
        "mean",
    ]


def test_a_column_in_another_case_keeps_the_dataframes_name(spark, events):
    # Spark names groupBy(F.col("USER")) `USER`; sliceflow keeps the input's own spelling of a
    # top-level column (as it always has: a streaming query's checkpoint names its keys).
    ours = window_agg(events, W.tumble("at", "1 minute"), by=F.col("USER"), aggs=[W.count()])
    theirs = _spark_window(events, [F.col("USER")], [F.count(F.lit(1)).alias("count(1)")])
    assert ours.columns[3] == "user" and theirs.columns[2] == "USER"
    _same(ours, theirs.withColumnRenamed("USER", "user"))


@pytest.mark.parametrize(
    "time",
    [lambda df: "event.ts", lambda df: F.col("event.ts"), lambda df: df.at, lambda df: df["AT"]],
    ids=["nested", "F.col nested", "df.attr", "df[] other case"],
)
def test_time_column_as_a_nested_field_or_a_column(spark, events, time):
    ours = window_agg(events, W.tumble(time(events), "1 minute"), by=None, aggs=[W.count()])
    theirs = _spark_window(events, [], [F.count(F.lit(1)).alias("count(1)")])
    _same(ours, theirs)


def test_errors_name_the_column_as_written(spark, events):
    spec = W.tumble("at", "1 minute")
    with pytest.raises(ValueError, match=r"'repo\.nope' cannot be resolved.*FIELD_NOT_FOUND"):
        window_agg(events, spec, by="repo.nope", aggs=[W.count()])
    with pytest.raises(ValueError, match=r"'nope\.x' cannot be resolved.*columns: repo, event"):
        window_agg(events, spec, by=[F.col("nope.x")], aggs=[W.count()])
    # groupBy would name it `name`, like a column of the input: an alias tells them apart.
    with pytest.raises(ValueError, match=r"'repo\.name' is named 'name'.*\.alias"):
        window_agg(events.withColumn("name", F.lit(1)), spec, by="repo.name", aggs=[W.count()])
    with pytest.raises(ValueError, match=r"grouping column 'name' has type STRUCT"):
        window_agg(
            events.withColumn("n", F.struct("a")), spec, by=F.col("n").alias("name"), aggs=[]
        )
    with pytest.raises(ValueError, match=r"aggregate 'sum\(repo\.name\)'.*'name' has type STRING"):
        window_agg(events, spec, by=None, aggs=[W.sum("repo.name")])


def test_errors_never_show_internal_columns(spark, events):
    # A STRING time column is cast into a column of sliceflow's own; a mistake in another
    # argument lists the input's columns without it.
    df = events.withColumn("at", F.col("at").cast("string"))
    with pytest.raises(ValueError) as e:
        window_agg(df, W.tumble("at", "1 minute"), by="nope", aggs=[W.count()])
    assert "'nope' is not a column" in str(e.value)
    assert "__" not in str(e.value)
