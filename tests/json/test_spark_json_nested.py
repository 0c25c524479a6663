"""Nested GitHub-like events against Spark (``sliceflow.testing.github_event_lines``: structs,
arrays of structs, escapes and non-ASCII text, a field that is a number or a string, nulls,
missing fields and malformed lines): the schema ``spark.read.json`` infers, ``from_json`` with
that wide schema and with a nested DDL, and ``spark.read.json`` of the same lines, PERMISSIVE
with a corrupt-record column. The rows must be equal, in order."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.types import StructType
from support import differential, spark_reference

from sliceflow import json as sj
from sliceflow.json import infer_schema, schema_ddl
from sliceflow.testing import GITHUB_EVENTS_DDL, github_event_lines

pytestmark = pytest.mark.spark

# Type drift beyond the generator's: literals, zero and a negative zero given for STRING fields.
DRIFT = [
    '{"id": 0, "type": true, "public": false, "payload": {"push_id": -0}}',
    '{"id": -12, "type": false, "payload": {"push_id": 12345678901234, "size": "3"}}',
    '{"actor": null, "payload": {"commits": [null, {"sha": 5, "distinct": "yes"}]}}',
]
DOCS = list(github_event_lines(3000, seed=13, malformed=0.02)) + DRIFT
WIDE_CORRUPT = "_corrupt_record"
DDL_CORRUPT = "bad"


@pytest.fixture(scope="module")
def events_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("events") / "events.json"
    path.write_text("".join(line + "\n" for line in DOCS), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def wide(events_file):
    return infer_schema(str(events_file))


def _case(which: str, wide: dict) -> tuple[str, dict[str, str], str]:
    if which == "wide":
        return schema_ddl(wide), {}, WIDE_CORRUPT
    ddl = f"{GITHUB_EVENTS_DDL}, {DDL_CORRUPT} STRING"
    return ddl, {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": DDL_CORRUPT}, DDL_CORRUPT


def _assert_same(expected: pa.Table, actual: pa.Table, corrupt: str) -> None:
    expected = differential.as_python_sees_it(expected, corrupt)
    mism, notes = spark_reference.compare_tables(expected, actual, columns=expected.column_names)
    assert not mism and not notes, spark_reference.format_report(
        mism, notes, DOCS, total_rows=expected.num_rows
    )


def test_inferred_schema_equals_spark(spark, events_file, wide):
    theirs = spark.read.json(str(events_file)).schema.jsonValue()
    assert StructType.fromJson(wide).jsonValue() == theirs
    assert WIDE_CORRUPT in [f["name"] for f in wide["fields"]]


@pytest.mark.parametrize("which", ["wide", "ddl"])
def test_from_json_same_rows(spark, wide, which):
    ddl, options, corrupt = _case(which, wide)
    expected = spark_reference.cached_spark_from_json(lambda: spark, DOCS, ddl, options)
    actual = differential.sliceflow_table(DOCS, ddl, options)
    _assert_same(expected, actual, corrupt)


@pytest.mark.parametrize("which", ["wide", "ddl"])
def test_read_json_same_rows(spark, events_file, wide, which):
    ddl, options, corrupt = _case(which, wide)
    expected = spark.read.schema(ddl).options(**options).json(str(events_file)).toArrow()
    actual = sj.read_ndjson(events_file, ddl, options=options, block_size=1 << 18)
    assert expected.num_rows == actual.num_rows == len(DOCS)
    _assert_same(expected, actual, corrupt)
