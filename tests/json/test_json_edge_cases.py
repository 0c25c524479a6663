"""JSON edge cases: each matches Spark 4's from_json or fails with a clear error.

Large documents (time linear in size), invalid UTF-8, Jackson's StreamReadConstraints, odd
schemas and options, and bad input. The cases marked ``spark`` compare with a real
SparkSession (the session-scoped ``spark`` fixture); the others check the kernel alone, with
the Spark results they reproduce written next to them (probed with pyspark 4.3.0).
"""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from sliceflow import json as sj

# Jackson's StreamReadConstraints.maxStringLength (the default in the Jackson Spark ships).
MAX_STRING = 20_000_000


def _best_time(job, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        job()
        best = min(best, time.perf_counter() - start)
    return best


def _long_array(numbers: int, quote: str) -> bytes:
    return ("{" + quote + "arr" + quote + ":[" + ",".join(["1234567"] * numbers) + "]}\n").encode()


@pytest.mark.parametrize("quote", ['"', "'"], ids=["double-quoted", "single-quoted"])
def test_a_long_array_read_as_string_takes_linear_time(quote):
    # Spark re-serialises an array given to a STRING field. This used to cost time quadratic
    # in the document (each number walked Jackson's input buffers from the document's start):
    # 4x the numbers took ~16x the time. Linear: ~4x (a generous 10x bound for noise).
    small, large = _long_array(200_000, quote), _long_array(800_000, quote)
    expected = "[" + ",".join(["1234567"] * 200_000) + "]"
    assert sj.decode(small, "arr STRING").column(0).to_pylist() == [expected]
    t_small = _best_time(lambda: sj.decode(small, "arr STRING"))
    t_large = _best_time(lambda: sj.decode(large, "arr STRING"))
    assert t_large < 10 * t_small + 0.1, (t_small, t_large)
    # ... and within a constant factor of reading the same document as an array of numbers.
    t_array = _best_time(lambda: sj.decode(large, "arr ARRAY<BIGINT>"))
    assert t_large < 20 * t_array + 0.1, (t_array, t_large)


# ---------------------------------------------------------------------------------------------
# invalid UTF-8


def test_corrupt_record_of_invalid_utf8_is_valid_arrow():
    # Spark (from_json of CAST(binary AS STRING)) shows each malformed sequence as U+FFFD:
    # Row(a='\ufffd\ufffd', _corrupt_record=None), Row(a=None, _corrupt_record='{"a":\ufffd').
    schema = "a STRING, _corrupt_record STRING"
    lines = sj.decode(b'{"a":"\xff\xfe"}\n{"a":\xff\n', schema)
    binary = sj.decode(pa.array([b'{"a":"\xff\xfe"}', b'{"a":\xff'], pa.binary()), schema)
    for batch in (lines, binary):
        batch.validate(full=True)
        assert batch.to_pylist() == [
            {"a": "\ufffd\ufffd", "_corrupt_record": None},
            {"a": None, "_corrupt_record": '{"a":\ufffd'},
        ]
    # A partial row (a conversion error) keeps its text too, made valid the same way.
    partial = sj.decode(
        pa.array([b'{"a":"x","b":"\xe2\x82"}'], pa.binary()), "a INT, _corrupt_record STRING"
    )
    partial.validate(full=True)
    assert partial.to_pylist() == [{"a": None, "_corrupt_record": '{"a":"x","b":"\ufffd"}'}]


def test_corrupt_record_of_valid_text_is_unchanged():
    doc = '{"a": "\U0001f600 é", "b": 1'
    batch = sj.decode(pa.array([doc]), "a STRING, _corrupt_record STRING")
    assert batch.to_pylist() == [{"a": None, "_corrupt_record": doc}]


# ---------------------------------------------------------------------------------------------
# Jackson's StreamReadConstraints


def test_string_over_jacksons_limit_nulls_the_field():
    # Spark 4.3 (probed): {"a": <20,000,001 x>, "b": 1} as "a STRING, b INT, _corrupt_record
    # STRING" gives a=None, b=1 and the document in _corrupt_record; at exactly 20,000,000
    # characters the string is kept; a skipped field of that length is no error; FAILFAST
    # raises.
    schema = "a STRING, b INT, _corrupt_record STRING"
    over = '{"a":"' + "x" * (MAX_STRING + 1) + '","b":1}'
    at = '{"a":"' + "x" * MAX_STRING + '","b":1}'
    skipped = '{"z":"' + "x" * (MAX_STRING + 1) + '","b":1}'
    rows = sj.decode(pa.array([over, at, skipped]), schema)
    a, b, corrupt = (rows.column(i) for i in range(3))
    assert [v is None for v in (a[0].as_py(), a[2].as_py())] == [True, True]
    assert len(a[1].as_py()) == MAX_STRING
    assert b.to_pylist() == [1, 1, 1]
    assert corrupt[0].as_py() == over and corrupt[1].as_py() is None
    assert corrupt[2].as_py() is None
    with pytest.raises(sj.MalformedRecordError, match="String value length"):
        sj.decode(pa.array([over]), "a STRING", options={"mode": "FAILFAST"})


def test_number_and_nesting_limits_match_spark():
    # Spark 4.3 (probed): a number of more than 1000 digits makes the whole document malformed,
    # read or skipped; a float counts integer + fraction + exponent digits; a field nested
    # 1001 deep fails that field only.
    schema = "a STRING, b INT, _corrupt_record STRING"
    many = "1" * 1001
    docs = [
        '{"a":' + "1" * 1000 + ',"b":1}',
        '{"a":' + many + ',"b":1}',
        '{"z":' + many + ',"b":1}',
        '{"b":1,"a":1.' + "1" * 999 + "}",
        '{"b":1,"a":0.' + many + "}",
        '{"b":1,"a":' + "[" * 999 + "]" * 999 + "}",
        '{"b":1,"a":' + "[" * 1000 + "]" * 1000 + "}",
    ]
    rows = sj.decode(pa.array(docs), schema).to_pylist()
    assert rows[0] == {"a": "1" * 1000, "b": 1, "_corrupt_record": None}
    assert rows[1] == {"a": None, "b": None, "_corrupt_record": docs[1]}
    assert rows[2] == {"a": None, "b": None, "_corrupt_record": docs[2]}
    assert rows[3] == {"a": "1.1111111111111112", "b": 1, "_corrupt_record": None}
    assert rows[4] == {"a": None, "b": None, "_corrupt_record": docs[4]}
    assert rows[5]["a"] == "[" * 999 + "]" * 999 and rows[5]["b"] == 1
    assert rows[6] == {"a": None, "b": 1, "_corrupt_record": docs[6]}


# ---------------------------------------------------------------------------------------------
# schemas and options


def test_duplicate_field_names_keep_the_last_value_in_the_kernel():
    # Spark: from_json('{"a":1,"b":2}', "a INT, b INT, a STRING") = Row(a=None, b=2, a='1').
    batch = sj.decode(pa.array(['{"a":1, "b":2}']), "a INT, b INT, a STRING")
    assert batch.schema.names == ["a", "b", "a"]
    assert [c.to_pylist() for c in batch.columns] == [[None], [2], ["1"]]


@pytest.mark.spark
@pytest.mark.parametrize(
    "ddl", ["a INT, a INT", "a INT, b INT, a STRING", "s STRUCT<a: INT, a: INT>, a INT"]
)
def test_duplicate_field_names_match_spark(spark, ddl):
    from pyspark.sql import functions as F

    import sliceflow.spark as sfs

    docs = ['{"a":1, "b":2}', '{"a":"x"}', '{"s":{"a":3}, "a":4}', "{", None]
    df = spark.createDataFrame([(d,) for d in docs], "v STRING")
    ours = df.select(sfs.from_json("v", ddl).alias("j"))
    theirs = df.select(F.from_json("v", ddl).alias("j"))
    assert ours.schema == theirs.schema
    assert ours.collect() == theirs.collect()


def test_unknown_mode_reads_as_permissive(caplog):
    # Spark 4.3 logs "nonsense is not a valid parse mode. Using PERMISSIVE." and goes on.
    with caplog.at_level("WARNING", logger="sliceflow.json"):
        batch = sj.decode(pa.array(['{"a":1}', "{"]), "a INT", options={"mode": "nonsense"})
    assert batch.to_pylist() == [{"a": 1}, {"a": None}]
    assert "not a valid parse mode" in caplog.text


def test_dropmalformed_is_refused_with_sparks_error():
    with pytest.raises(sj.OptionError, match=r"PARSE_MODE_UNSUPPORTED.*DROPMALFORMED"):
        sj.decode(pa.array(["{}"]), "a INT", options={"mode": "DROPMALFORMED"})


@pytest.mark.parametrize(
    "ddl", ["a INT,", "a INT, ", "s STRUCT<a: INT,>", "a INT b", "a ARRAY<INT", "a INT,,b INT"]
)
def test_schema_syntax_errors_are_refused(ddl):
    # Spark: [PARSE_SYNTAX_ERROR] for each of these.
    with pytest.raises(sj.SchemaError, match=r"PARSE_SYNTAX_ERROR.*cannot parse schema"):
        sj.to_arrow_schema(ddl)


def test_unknown_type_is_refused():
    # Spark: [PARSE_SYNTAX_ERROR] Syntax error at or near 'FOO'.
    with pytest.raises(sj.SchemaError, match="FOO"):
        sj.to_arrow_schema("a FOO")


def test_unknown_option_is_ignored_as_spark_does():
    batch = sj.decode(pa.array(['{"a":1}']), "a INT", options={"fooBar": "x"})
    assert batch.to_pylist() == [{"a": 1}]


@pytest.mark.parametrize("name", ["allowComments", "allowSingleQuotes", "ALLOWcomments"])
def test_boolean_option_with_a_bad_value_is_refused(name):
    # Spark fails the task with java.lang.IllegalArgumentException: For input string: "maybe";
    # sliceflow refuses it when the decoder is made, naming the option and the value.
    with pytest.raises(sj.OptionError, match=rf"{name}.*maybe"):
        sj.decode(pa.array(["{}"]), "a INT", options={name: "maybe"})


# ---------------------------------------------------------------------------------------------
# FAILFAST


def test_failfast_message_has_sparks_error_class_and_the_record():
    docs = ['{"a": 1}'] * 5 + ['{"a": "x"}']
    with pytest.raises(sj.MalformedRecordError) as info:
        sj.decode(pa.array(docs), "a INT", options={"mode": "FAILFAST"})
    message = str(info.value)
    assert message.startswith(
        "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in "
        'record parsing: {"a": "x"}.\nParse Mode: FAILFAST. To process malformed records as '
        "null result, try setting the option 'mode' as 'PERMISSIVE'."
    )
    assert "Cause: Cannot parse the field name 'a'" in message


def test_failfast_message_of_invalid_utf8_and_long_records_is_valid_text():
    with pytest.raises(sj.MalformedRecordError, match='parsing: {"a":\ufffd.'):
        sj.decode(b'{"a":\xff\n', "a INT", options={"mode": "FAILFAST"})
    long = '{"a": "' + "\u00e9" * 2000 + '"'
    with pytest.raises(sj.MalformedRecordError, match=r"parsing: \{\"a\": \"é+\.\.\.\.\n"):
        sj.decode(pa.array([long]), "a STRING", options={"mode": "FAILFAST"})


def test_read_ndjson_failfast_names_the_file(tmp_path):
    path = tmp_path / "bids.json"
    path.write_text('{"a": 1}\n{"a": "x"}\n')
    with pytest.raises(sj.MalformedRecordError, match=r'parsing: \{"a": "x"\}[\s\S]*bids\.json'):
        sj.read_ndjson(path, "a INT", options={"mode": "FAILFAST"})


@pytest.mark.spark
def test_from_json_failfast_in_a_task_names_the_record(spark):
    import sliceflow.spark as sfs

    docs = ['{"a": 1}'] * 5 + ['{"a": "x"}']
    df = spark.createDataFrame([(d,) for d in docs], "v STRING").coalesce(1)
    with pytest.raises(Exception, match=r"MALFORMED_RECORD_IN_PARSING[\s\S]*\{\"a\": \"x\"\}"):
        df.select(sfs.from_json("v", "a INT", {"mode": "FAILFAST"})).collect()


@pytest.mark.spark
def test_data_source_failfast_names_the_file(spark, tmp_path):
    import sliceflow.spark as sfs

    path = tmp_path / "bad.json"
    path.write_text('{"a": 1}\n{"a": "x"}\n')
    sfs.register(spark)
    reader = spark.read.format("sliceflow.json").schema("a INT").option("mode", "FAILFAST")
    with pytest.raises(Exception, match=r"MALFORMED_RECORD_IN_PARSING[\s\S]*bad\.json"):
        reader.load(str(path)).collect()


# ---------------------------------------------------------------------------------------------
# bad input to from_json


@pytest.mark.spark
@pytest.mark.parametrize("column", ["n INT", "b BINARY"])
def test_non_string_column_gives_sparks_analysis_error(spark, column):
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    import sliceflow.spark as sfs

    name, dtype = column.split()
    value = 1 if dtype == "INT" else bytearray(b"{}")
    df = spark.createDataFrame([(value,)], column)
    with pytest.raises(AnalysisException) as theirs:
        df.select(F.from_json(name, "a INT"))
    # Raised when the plan is built (no job runs), with Spark's error class and the column.
    with pytest.raises(AnalysisException) as ours:
        df.select(sfs.from_json(name, "a INT"))
    assert ours.value.getCondition() == theirs.value.getCondition()
    assert ours.value.getCondition() == "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"
    assert f'however "{name}" has the type' in str(ours.value)


@pytest.mark.spark
def test_unknown_mode_and_option_match_spark(spark):
    from pyspark.sql import functions as F

    import sliceflow.spark as sfs

    df = spark.createDataFrame([('{"a":1}',), ("{",), ('{"a":"x"}',)], "v STRING")
    for options in ({"mode": "nonsense"}, {"fooBar": "x"}):
        ours = df.select(sfs.from_json("v", "a INT", options).alias("j")).collect()
        theirs = df.select(F.from_json("v", "a INT", options).alias("j")).collect()
        assert ours == theirs


@pytest.mark.spark
@pytest.mark.parametrize("ddl", ["a INT,", "a INT b", "a ARRAY<INT"])
def test_schema_syntax_errors_are_refused_like_spark(spark, ddl):
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    import sliceflow.spark as sfs

    df = spark.createDataFrame([("{}",)], "v STRING")
    with pytest.raises(AnalysisException, match="PARSE_SYNTAX_ERROR"):
        df.select(F.from_json("v", ddl))
    with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR"):
        sfs.from_json("v", ddl)


# ---------------------------------------------------------------------------------------------
# whole-document ARRAY and MAP schemas

ROOT_DOCS = [
    "[1,2]",
    '{"a":1}',
    '[{"a":1},{"a":2}]',
    '{"x":1,"y":"z"}',
    "1",
    '[1,"x"]',
    "[",
    "null",
    "",
    None,
    "[]",
    "{}",
    "[null]",
    '[{"a":"x"},{"a":2}]',
    '{"a":1} [2]',
]


def test_root_array_and_map_in_the_kernel():
    # Spark 4.3's from_json on the same documents (probed).
    expected = {
        "ARRAY<INT>": [
            [1, 2], None, None, None, None, None, None, None, None, None, [], None, [None]
        ],
        "MAP<STRING, INT>": [
            None, [("a", 1)], None, None, None, None, None, None, None, None, None, [], None
        ],
        "ARRAY<STRUCT<a: INT>>": [
            None, [{"a": 1}], [{"a": 1}, {"a": 2}], [{"a": None}], None, None, None, None,
            None, None, [], [{"a": None}], [None],
        ],
    }  # fmt: skip
    for ddl, values in expected.items():
        batch = sj.decode(pa.array(ROOT_DOCS[:13], pa.string()), ddl)
        batch.validate(full=True)
        assert batch.schema.names == ["value"]
        assert batch.column(0).to_pylist() == values, ddl
    lines = sj.decode(b"[1,2]\n{}\n[3]\n", "ARRAY<BIGINT>")
    assert lines.column(0).to_pylist() == [[1, 2], None, [3]]
    assert sj.decode(pa.array(["[1]"]), pa.list_(pa.int32())).column(0).to_pylist() == [[1]]


def test_root_array_failfast_raises():
    with pytest.raises(sj.MalformedRecordError, match=r'parsing: \{"a":1\}'):
        sj.decode(pa.array(["[1]", '{"a":1}']), "ARRAY<INT>", options={"mode": "FAILFAST"})
    ok = sj.decode(pa.array(["[1]", "null", None]), "ARRAY<INT>", options={"mode": "FAILFAST"})
    assert ok.column(0).to_pylist() == [[1], None, None]


def test_root_map_needs_string_keys():
    # Spark: [DATATYPE_MISMATCH.INVALID_JSON_MAP_KEY_TYPE].
    with pytest.raises(sj.SchemaError, match="STRING keys"):
        sj.decode(pa.array(["{}"]), "MAP<INT, INT>")


@pytest.mark.spark
@pytest.mark.parametrize(
    "schema",
    ["ARRAY<INT>", "MAP<STRING, INT>", "ARRAY<STRUCT<a: INT>>", "array<map<string, double>>"],
)
def test_root_array_and_map_match_spark(spark, schema):
    from pyspark.sql import functions as F

    import sliceflow.spark as sfs

    df = spark.createDataFrame([(d,) for d in ROOT_DOCS], "v STRING")
    ours = df.select(sfs.from_json("v", schema).alias("j"))
    theirs = df.select(F.from_json("v", schema).alias("j"))
    assert ours.schema == theirs.schema
    assert ours.collect() == theirs.collect()


@pytest.mark.spark
def test_root_array_type_objects_and_failfast_match_spark(spark):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    import sliceflow.spark as sfs

    schema = T.ArrayType(T.StructType([T.StructField("a", T.IntegerType())]))
    df = spark.createDataFrame([(d,) for d in ROOT_DOCS], "v STRING")
    ours = df.select(sfs.from_json("v", schema).alias("j"))
    assert ours.collect() == df.select(F.from_json("v", schema).alias("j")).collect()
    for doc, fails in (('{"a":1}', False), ("[1]", True)):
        one = spark.createDataFrame([(doc,)], "v STRING")
        options = {"mode": "FAILFAST"}
        if fails:
            with pytest.raises(Exception, match="MALFORMED_RECORD_IN_PARSING"):
                one.select(F.from_json("v", schema, options)).collect()
            with pytest.raises(Exception, match="MALFORMED_RECORD_IN_PARSING"):
                one.select(sfs.from_json("v", schema, options)).collect()
        else:
            assert (
                one.select(sfs.from_json("v", schema, options)).collect()
                == one.select(F.from_json("v", schema, options)).collect()
            )


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("prefersDecimal", "maybe", "must be true or false"),
        ("dropFieldIfAllNull", "1", "must be true or false"),
        ("multiLine", "1", "must be true or false"),
        ("samplingRatio", "x", "must be a number"),
    ],
)
def test_options_spark_parses_refuse_bad_values(name, value, error):
    # Spark 4.3 fails the query for each (IllegalArgumentException / NumberFormatException:
    # For input string: ...), though from_json does not use them.
    with pytest.raises(sj.OptionError, match=rf"{name}.*{error}.*{value}"):
        sj.decode(pa.array(["{}"]), "a INT", options={name: value})
    ok = {"prefersDecimal": "TRUE", "dropFieldIfAllNull": "false", "samplingRatio": "0.5"}
    assert sj.decode(pa.array(['{"a":1}']), "a INT", options=ok).to_pylist() == [{"a": 1}]
