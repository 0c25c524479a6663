"""The ``sliceflow.json`` data source from Spark SQL: ``CREATE TEMPORARY VIEW ... USING
sliceflow.json OPTIONS (path '...')`` (docs/from-spark.md, "Spark SQL") gives the rows of
``spark.read.json`` on the same files, with an inferred schema, a schema in the statement, and
a JSON option."""

from __future__ import annotations

import os

import pytest
from support.spark_helpers import assert_same_rows

import sliceflow.spark as sfs
from sliceflow.testing import BID_DDL, write_bids

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def bids_path(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("sql-view") / "bids")
    write_bids(path, 500, files=2)
    return path


def sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def test_temporary_view_infers_the_schema_spark_read_json_infers(spark, bids_path):
    sfs.register(spark)
    spark.sql(
        "CREATE OR REPLACE TEMPORARY VIEW sf_bids_inferred USING sliceflow.json "
        f"OPTIONS (path {sql_string(bids_path)})"
    )
    assert_same_rows(spark.table("sf_bids_inferred"), spark.read.json(bids_path))
    # and SQL over the view: one aggregate, compared with the same query over Spark's reader
    spark.read.json(bids_path).createOrReplaceTempView("spark_bids_inferred")
    query = "SELECT auction, count(*) AS n, max(price) AS top FROM {} GROUP BY auction"
    assert_same_rows(
        spark.sql(query.format("sf_bids_inferred")),
        spark.sql(query.format("spark_bids_inferred")),
    )


def test_temporary_view_with_a_schema_and_an_option(spark, bids_path):
    sfs.register(spark)
    spark.sql(
        f"CREATE OR REPLACE TEMPORARY VIEW sf_bids_typed ({BID_DDL}) USING sliceflow.json "
        f"OPTIONS (path {sql_string(bids_path)})"
    )
    assert_same_rows(spark.table("sf_bids_typed"), spark.read.schema(BID_DDL).json(bids_path))

    spark.sql(
        "CREATE OR REPLACE TEMPORARY VIEW sf_bids_strings USING sliceflow.json "
        f"OPTIONS (path {sql_string(bids_path)}, primitivesAsString 'true')"
    )
    theirs = spark.read.option("primitivesAsString", "true").json(bids_path)
    assert {f.dataType.simpleString() for f in theirs.schema.fields} == {"string"}
    assert_same_rows(spark.table("sf_bids_strings"), theirs)


def test_temporary_view_of_one_file(spark, bids_path):
    sfs.register(spark)
    one = os.path.join(bids_path, sorted(os.listdir(bids_path))[0])
    spark.sql(
        "CREATE OR REPLACE TEMPORARY VIEW sf_bids_file USING sliceflow.json "
        f"OPTIONS (path {sql_string(one)})"
    )
    assert_same_rows(spark.table("sf_bids_file"), spark.read.json(one))
