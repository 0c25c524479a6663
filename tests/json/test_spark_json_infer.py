"""Schema inference of the sliceflow.json source against spark.read.json on the same files:
field order and types identical, option by option."""

from __future__ import annotations

import re

import pytest
from pyspark.sql.types import StructType
from support.json_corpus import corpus
from test_json_infer import repeats_a_name

import sliceflow.spark as sfs
from sliceflow.json import infer_schema

pytestmark = pytest.mark.spark

# Option sets Spark's inference reads (each compared on the whole corpus).
OPTION_SETS: list[dict[str, str]] = [
    {},
    {"primitivesAsString": "true"},
    {"prefersDecimal": "true"},
    {"dropFieldIfAllNull": "true"},
    {"inferTimestamp": "true"},
    {"inferTimestamp": "true", "timestampFormat": "yyyy-MM-dd HH:mm:ss"},
    {"allowNumericLeadingZeros": "true"},
    {"allowSingleQuotes": "false"},
    {"allowComments": "true", "allowUnquotedFieldNames": "true"},
    {"allowNonNumericNumbers": "false"},
    {"allowBackslashEscapingAnyCharacter": "true", "allowUnquotedControlChars": "true"},
    {"mode": "DROPMALFORMED"},
    {"columnNameOfCorruptRecord": "bad"},
]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("infer") / "corpus.json"
    with open(path, "wb") as f:
        for doc in corpus(6000, seed=16):
            if doc is None or repeats_a_name(doc):
                continue
            f.write(doc if isinstance(doc, bytes) else doc.encode("utf-8", "surrogatepass"))
            f.write(b"\n")
    return path


def _spark_schema(spark, path, options):
    return spark.read.options(**options).json(str(path)).schema


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(o) or "defaults")
def test_corpus_schema_equals_spark(spark, corpus_file, options):
    try:
        theirs = _spark_schema(spark, corpus_file, options).jsonValue()
    except Exception as e:  # Spark fails the query: so must inference, for the same reason
        error_class = re.search(r"\[[A-Z_]+\]", str(e))
        assert error_class is not None, str(e)
        with pytest.raises(ValueError, match=re.escape(error_class.group(0))):
            infer_schema(str(corpus_file), options=options, threads=2)
        return
    ours = StructType.fromJson(infer_schema(str(corpus_file), options=options, threads=2))
    assert ours.jsonValue() == theirs


def test_data_source_infers_without_schema(spark, tmp_path):
    path = tmp_path / "mixed.json"
    lines = ['{"n": 1, "s": "x", "t": "2024-01-01"}', '{"n": 2.5, "o": {"k": [1, 2]}}', "[1]"]
    path.write_text("\n".join(lines) + "\n")
    sfs.register(spark)
    ours = spark.read.format("sliceflow.json").option("inferTimestamp", "true")
    theirs = _spark_schema(spark, path, {"inferTimestamp": "true"})
    assert ours.load(str(path)).schema.jsonValue() == theirs.jsonValue()


def test_data_source_reads_rows_with_inferred_schema(spark, tmp_path):
    path = tmp_path / "bids.json"
    path.write_text('{"b": 1, "a": "x"}\n{"b": 2.5, "c": [1, 2]}\n\n{"a": null}\n')
    sfs.register(spark)
    ours = spark.read.format("sliceflow.json").load(str(path))
    theirs = spark.read.json(str(path))
    assert ours.schema == theirs.schema
    assert sorted(map(str, ours.collect())) == sorted(map(str, theirs.collect()))


def test_data_source_infers_partitioned_compressed_files(spark, tmp_path):
    """Inference lists the files as the read does: partition folders (their columns typed and
    appended as Spark appends them, a data column of the same name replaced) and gzip files."""
    import gzip

    root = tmp_path / "root"
    for day, rows in (("1", ['{"a": 1, "day": "x"}', '{"b": "s"}']), ("2", ['{"a": 2.5}'])):
        folder = root / f"day={day}" / "kind=bid"
        folder.mkdir(parents=True)
        (folder / "part.json.gz").write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))
    (root / "day=2" / "kind=bid" / "_hidden.json").write_text('{"zzz": 1}\n')
    sfs.register(spark)
    ours = spark.read.format("sliceflow.json").load(str(root))
    theirs = spark.read.json(str(root))
    assert ours.schema.jsonValue() == theirs.schema.jsonValue()
    assert sorted(map(str, ours.collect())) == sorted(map(str, theirs.collect()))


CASES: dict[str, tuple[list[str], dict[str, str]]] = {
    "top_level_arrays": (['[{"z": 1}, {"y": 2}]', "[]", '[{"q": 1}, "x"]', "7"], {}),
    "trailing_text_ignored": (['{"a": 1} tail', '{"b": 1}}'], {}),
    "names_differing_in_case_merge": (['{"s": {"a": 1}}', '{"s": {"A": 2}}'], {}),
    "empty_values": (['{"a": {}, "b": [], "c": null, "": 1, "d": [{}], "e": ""}'], {}),
    "big_numbers": (
        ['{"a": 12345678901234567890}', '{"a": 1}', '{"b": 1e400}', '{"c": -0}', '{"c": 1}'],
        {},
    ),
    "decimal_strings": (
        ['{"a": "1,234.5"}', '{"b": "0.001"}', '{"c": ".5"}'],
        {"prefersDecimal": "true"},
    ),
    "decimal_numbers": (
        ['{"a": 1.5}', '{"a": 12345678901234567890123}', '{"a": 1}'],
        {"prefersDecimal": "true"},
    ),
    "timestamps": (
        ['{"a": "2024"}', '{"b": "1"}', '{"c": " 2024-01-01 "}', '{"a": "2024-01-01T10:00:00Z"}'],
        {"inferTimestamp": "true"},
    ),
    "timestamps_merge_with_numbers": (
        ['{"a": "2024-01-01"}', '{"a": 1}'],
        {"inferTimestamp": "true"},
    ),
    "truncated_records": (
        ['{"a": 1', '{"b": 2}', "123abc", "{'c': 1}"],
        {"allowSingleQuotes": "false"},
    ),
    "bom_at_file_start": (['\ufeff{"a": 1}', '{"b": true}'], {}),
    "crlf_and_cr": (['{"a": 1}\r\n{"b": 2}\r{"c": 3}'], {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_edge_cases_equal_spark(spark, tmp_path, name):
    lines, options = CASES[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    ours = StructType.fromJson(infer_schema(str(path), options=options, threads=2))
    assert ours.jsonValue() == _spark_schema(spark, path, options).jsonValue()


def test_empty_file_infers_empty_schema(spark, tmp_path):
    path = tmp_path / "empty.json"
    path.write_bytes(b"\n  \n")
    assert infer_schema(str(path))["fields"] == []
    assert _spark_schema(spark, path, {}).fields == []


def test_multiline_documents(spark, tmp_path):
    folder = tmp_path / "multi"
    folder.mkdir()
    (folder / "a.json").write_text('{\n  "a": 1,\n  "b": [1.5]\n}\n')
    (folder / "b.json").write_text('[\n {"c": "x"},\n {"a": 2}\n]\n')
    files = sorted(str(p) for p in folder.iterdir())
    ours = StructType.fromJson(infer_schema(files, options={"multiLine": "true"}))
    assert ours == _spark_schema(spark, folder, {"multiLine": "true"})


def test_failfast_fails_as_spark_does(spark, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"a": 1}\n{"a"\n')
    with pytest.raises(ValueError, match="line 2"):
        infer_schema(str(path), options={"mode": "FAILFAST"})
    with pytest.raises(Exception, match="FAILFAST"):
        _spark_schema(spark, path, {"mode": "FAILFAST"})


def test_duplicate_names_fail_as_spark_does(spark, tmp_path):
    path = tmp_path / "dup.json"
    path.write_text('{"a": 1, "b": 1}\n{"A": 2, "B": "x"}\n')
    with pytest.raises(ValueError, match="COLUMN_ALREADY_EXISTS"):
        infer_schema(str(path))
    with pytest.raises(Exception, match="COLUMN_ALREADY_EXISTS"):
        _spark_schema(spark, path, {})
