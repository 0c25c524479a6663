"""sliceflow.json.decode: API, types, options and bad input (no Spark needed)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceflow import json as sj

BID = "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, dateTime TIMESTAMP"


def rows(batch: pa.RecordBatch) -> list[dict]:
    return batch.to_pylist()


def test_decode_flat_rows_and_nulls():
    docs = pa.array(['{"auction": 7, "price": 120, "channel": "Google"}', None, "", "  "])
    out = sj.decode(docs, "auction BIGINT, price BIGINT, channel STRING")
    assert out.schema == pa.schema(
        [("auction", pa.int64()), ("price", pa.int64()), ("channel", pa.string())]
    )
    assert rows(out)[0] == {"auction": 7, "price": 120, "channel": "Google"}
    assert all(r == {"auction": None, "price": None, "channel": None} for r in rows(out)[1:])


def test_decode_to_struct_keeps_null_rows():
    out = sj.decode_to_struct(pa.array(['{"a": 1}', None, "", "{bad"]), "a INT")
    assert out.to_pylist() == [{"a": 1}, None, None, {"a": None}]


def test_schema_forms_agree():
    from pyspark.sql import types as T

    ddl = "a INT, b ARRAY<STRUCT<c: STRING>>, m MAP<STRING, DOUBLE>, d DECIMAL(10,2)"
    spark_type = T.StructType(
        [
            T.StructField("a", T.IntegerType()),
            T.StructField("b", T.ArrayType(T.StructType([T.StructField("c", T.StringType())]))),
            T.StructField("m", T.MapType(T.StringType(), T.DoubleType())),
            T.StructField("d", T.DecimalType(10, 2)),
        ]
    )
    arrow = sj.to_arrow_schema(ddl)
    assert sj.to_arrow_schema(spark_type) == arrow
    doc = pa.array(['{"a": 1, "b": [{"c": "x"}], "m": {"k": 2}, "d": 1.005}'])
    expected = [{"a": 1, "b": [{"c": "x"}], "m": [("k", 2.0)], "d": decimal.Decimal("1.01")}]
    for schema in (ddl, spark_type, arrow):
        assert rows(sj.decode(doc, schema)) == expected


@pytest.mark.parametrize("bad", ["a CHAR(3)", "a INT,, b INT", "a BLOB", "m MAP<INT, INT>", ""])
def test_bad_schema_is_a_clear_error(bad):
    with pytest.raises(sj.SchemaError):
        sj.to_arrow_schema(bad)


def test_integer_ranges_follow_jackson():
    out = sj.decode(
        pa.array(
            [
                '{"t": 200, "s": 40000, "i": 2147483648, "l": 9223372036854775808}',
                '{"t": -128, "s": -32768, "i": -2147483648, "l": -9223372036854775808}',
            ]
        ),
        "t TINYINT, s SMALLINT, i INT, l BIGINT",
    )
    # Jackson's getByteValue accepts up to 255 and wraps; the others overflow to null.
    assert rows(out) == [
        {"t": -56, "s": None, "i": None, "l": None},
        {"t": -128, "s": -32768, "i": -2147483648, "l": -9223372036854775808},
    ]


def test_doubles_non_numeric_and_overflow():
    out = sj.decode(
        pa.array(
            [
                '{"d": NaN}',
                '{"d": "-Infinity"}',
                '{"d": 1e400}',
                '{"d": "1.5"}',
                '{"d": -0}',
                '{"d": -0.0}',
            ]
        ),
        "d DOUBLE",
    )
    d = out.column(0).to_pylist()
    assert math.isnan(d[0]) and d[1] == -math.inf and d[2] == math.inf and d[3] is None
    assert d[4] == 0 and math.copysign(1, d[4]) == 1
    assert d[5] == 0 and math.copysign(1, d[5]) == -1


def test_string_field_given_other_json_is_rewritten_like_jackson():
    out = sj.decode(
        pa.array(['{"s": { "a" : [1, 2.50, "x\\u0001"] }}', '{"s": 1.50E3}', '{"s": true}']),
        "s STRING",
    )
    assert out.column(0).to_pylist() == ['{"a":[1,2.5,"x\\u0001"]}', "1500.0", "true"]


def test_corrupt_record_column_and_partial_results():
    schema = "a INT, b STRING, _corrupt_record STRING"
    docs = ['{"a": "x", "b": "kept"}', '{"a": 1', '{"a": 2, "b": "ok"}']
    out = rows(sj.decode(pa.array(docs), schema))
    assert out[0] == {"a": None, "b": "kept", "_corrupt_record": docs[0]}
    assert out[1] == {"a": None, "b": None, "_corrupt_record": docs[1]}
    assert out[2] == {"a": 2, "b": "ok", "_corrupt_record": None}
    renamed = rows(
        sj.decode(
            pa.array(docs[:1]), "a INT, bad STRING", options={"columnNameOfCorruptRecord": "bad"}
        )
    )
    assert renamed == [{"a": None, "bad": docs[0]}]


def test_failfast_names_record_and_reason():
    with pytest.raises(sj.MalformedRecordError, match=r"parsing: \{\"a\": \"x\"\}\.[\s\S]*Cause: "):
        sj.decode(pa.array(['{"a": 1}', '{"a": "x"}']), "a INT", options={"mode": "FAILFAST"})


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "DROPMALFORMED"},
        {"allowComments": "maybe"},
        {"multiLine": True},
        {"encoding": "UTF-16"},
    ],
)
def test_unsupported_options_are_refused(options):
    with pytest.raises(ValueError):
        sj.decode(pa.array(["{}"]), "a INT", options=options)


def test_lenient_syntax_options():
    doc = pa.array(["{a: 1, /* c */ 'b': 007}"])
    strict = rows(sj.decode(doc, "a INT, b INT"))
    lenient = rows(
        sj.decode(
            doc,
            "a INT, b INT",
            options={
                "allowUnquotedFieldNames": True,
                "allowComments": True,
                "allowNumericLeadingZeros": True,
            },
        )
    )
    assert strict == [{"a": None, "b": None}]
    assert lenient == [{"a": 1, "b": 7}]


def test_ndjson_bytes_skip_blank_lines_and_accept_crlf():
    out = sj.decode(b'{"a": 1}\r\n\r\n  \n{"a": 2}\r{"a": 3}', "a INT")
    assert out.column(0).to_pylist() == [1, 2, 3]


def test_timestamps_dates_and_ntz():
    out = sj.decode(
        pa.array(
            [
                '{"t": "2020-01-02T03:04:05.123456Z", "d": "2020-01-02", '
                '"n": "2020-01-02 03:04:05"}',
                '{"t": 1600000000}',
            ]
        ),
        "t TIMESTAMP, d DATE, n TIMESTAMP_NTZ",
    )
    first, second = rows(out)
    assert first["t"] == dt.datetime(2020, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone.utc)
    assert first["d"] == dt.date(2020, 1, 2)
    assert first["n"] == dt.datetime(2020, 1, 2, 3, 4, 5)
    assert second["t"] == dt.datetime.fromtimestamp(1600000000, dt.timezone.utc)


def test_time_zone_offset_applies_to_local_timestamps():
    out = sj.decode(pa.array(['{"t": "2020-01-02 03:00:00"}']), "t TIMESTAMP", time_zone="+02:00")
    assert rows(out)[0]["t"] == dt.datetime(2020, 1, 2, 1, 0, tzinfo=dt.timezone.utc)
    # Region zones follow their rules: 02:30 does not exist in Los Angeles on 2020-03-08
    # (daylight saving starts), and Spark moves it forward to 03:30 PDT = 10:30 UTC.
    la = sj.decode(
        pa.array(['{"t": "2020-03-08 02:30:00"}', '{"t": "2020-07-01 12:00:00"}']),
        "t TIMESTAMP",
        time_zone="America/Los_Angeles",
    )
    assert [r["t"] for r in rows(la)] == [
        dt.datetime(2020, 3, 8, 10, 30, tzinfo=dt.timezone.utc),
        dt.datetime(2020, 7, 1, 19, 0, tzinfo=dt.timezone.utc),
    ]
    with pytest.raises(ValueError, match="unknown time zone"):
        sj.decode(pa.array(["{}"]), "t TIMESTAMP", time_zone="Mars/Olympus")


def test_chunked_and_binary_input():
    chunked = pa.chunked_array([pa.array(['{"a": 1}']), pa.array(['{"a": 2}', None])])
    assert sj.decode(chunked, "a INT").column(0).to_pylist() == [1, 2, None]
    binary = pa.array([b'{"a": 3}'], pa.binary())
    assert sj.decode(binary, "a INT").column(0).to_pylist() == [3]
    with pytest.raises(TypeError):
        sj.decode(pa.array([1, 2]), "a INT")


def test_sliced_input_array():
    docs = pa.array(['{"a": 0}', '{"a": 1}', None, '{"a": 3}']).slice(1, 3)
    assert sj.decode(docs, "a INT").column(0).to_pylist() == [1, None, 3]


def test_read_ndjson_splits_cover_every_line_once(tmp_path):
    path = tmp_path / "x.json"
    lines = [json.dumps({"a": i, "s": "y" * (i % 13)}) for i in range(5000)]
    path.write_text("\n".join(lines) + "\n")
    whole = sj.read_ndjson(path, "a INT, s STRING")
    assert whole.column("a").to_pylist() == list(range(5000))
    small_blocks = sj.read_ndjson(path, "a INT, s STRING", block_size=100)
    assert small_blocks.equals(whole)
    size = path.stat().st_size
    for pieces in (2, 3, 7):
        bounds = [size * k // pieces for k in range(pieces + 1)]
        got = []
        for start, end in zip(bounds, bounds[1:], strict=False):
            for batch in sj.iter_ndjson(
                path, "a INT, s STRING", start=start, end=end, block_size=4096
            ):
                got.extend(batch.column(0).to_pylist())
        assert got == list(range(5000))


def test_iter_ndjson_memory_is_bounded_by_the_block(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "w") as f:
        for i in range(200_000):
            f.write(f'{{"a": {i}, "s": "{"z" * 20}"}}\n')
    largest = 0
    total = 0
    for batch in sj.iter_ndjson(path, "a INT, s STRING", block_size=1 << 16):
        largest = max(largest, batch.nbytes)
        total += batch.num_rows
    assert total == 200_000
    assert largest < 4 * (1 << 16)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=10,
)


@given(
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "i": st.integers(-(2**63), 2**63 - 1) | st.none(),
                "s": st.text(max_size=30) | st.none(),
                "b": st.booleans() | st.none(),
                "a": st.lists(st.integers(-(2**31), 2**31 - 1) | st.none(), max_size=5) | st.none(),
                "x": json_values,
            },
        ),
        max_size=20,
    )
)
def test_valid_documents_roundtrip(objects):
    docs = pa.array([json.dumps(o, ensure_ascii=bool(len(o) % 2)) for o in objects], pa.string())
    out = sj.decode(docs, "i BIGINT, s STRING, b BOOLEAN, a ARRAY<INT>")
    expected = [{k: o.get(k) for k in ("i", "s", "b", "a")} for o in objects]
    assert rows(out) == expected


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash(data):
    schema = "a INT, s STRING, d DOUBLE, m MAP<STRING, ARRAY<BIGINT>>, _corrupt_record STRING"
    out = sj.decode(pa.array([data], pa.binary()), schema)
    assert out.num_rows == 1
    out = sj.decode(data, schema)
    assert out.num_rows <= data.count(b"\n") + data.count(b"\r") + 1


# --- Spark/Jackson fidelity of the reference path. Expected values are Spark 4.3's answers
# (from_json, JDK 17) for the same documents.


def test_rewritten_floats_use_java17_double_to_string():
    docs = [
        '{"a":2e23}',
        '{"a":5e-324}',
        '{"a":2.4703282292062328e-324}',
        '{"a":6580380704900217686.3179914}',
        '{"a":1e400}',
        '{"a":[1.7976931348623159e308,{"x":-1e400}]}',
        '{"a":3.1415926E53589793238462643}',
        '{"a":-0}',
        '{"a":123456789012345678901234567890}',
        '{"a":1e22}',
        '{"a":0.001}',
        '{"a":1.0E-4}',
    ]
    assert sj.decode(pa.array(docs), "a STRING").column(0).to_pylist() == [
        "1.9999999999999998E23",
        "4.9E-324",
        "4.9E-324",
        "6.5803807049002179E18",
        '"Infinity"',
        '["Infinity",{"x":"-Infinity"}]',
        '"Infinity"',
        "0",
        "123456789012345678901234567890",
        "1.0E22",
        "0.001",
        "1.0E-4",
    ]


def test_integer_minus_zero_is_positive_zero_in_floating_fields():
    out = rows(
        sj.decode(pa.array(['{"d":-0,"f":-0,"c":[-0,-0.0]}']), "d DOUBLE, f FLOAT, c ARRAY<DOUBLE>")
    )
    assert out == [{"d": 0.0, "f": 0.0, "c": [0.0, -0.0]}]
    assert math.copysign(1, out[0]["d"]) == 1 and math.copysign(1, out[0]["c"][1]) == -1


def test_failing_duplicate_key_keeps_the_earlier_value():
    schema = "i INT, st STRUCT<a: INT, b: STRING>, m MAP<STRING, INT>, _corrupt_record STRING"
    docs = [
        '{"i":1,"i":"x"}',
        '{"i":1,"i":2,"i":{}}',
        '{"st":{"a":1,"a":"x"}}',
        '{"st":{"a":1,"b":"y"},"st":[]}',
        '{"i":1,"i":null}',
        '{"m":{"k":1,"k":2}}',
    ]
    assert rows(sj.decode(pa.array(docs), schema)) == [
        {"i": 1, "st": None, "m": None, "_corrupt_record": docs[0]},
        {"i": 2, "st": None, "m": None, "_corrupt_record": docs[1]},
        {"i": None, "st": {"a": 1, "b": None}, "m": None, "_corrupt_record": docs[2]},
        {"i": None, "st": {"a": 1, "b": "y"}, "m": None, "_corrupt_record": docs[3]},
        {"i": None, "st": None, "m": None, "_corrupt_record": None},
        {"i": None, "st": None, "m": [("k", 1), ("k", 2)], "_corrupt_record": None},
    ]


def test_invalid_utf8_is_replaced_like_javas_decoder():
    docs = [
        b'{"s":"a\xed\xa0b"}',  # ED A0 + non-continuation: one replacement for two bytes
        b'{"s":"a\xed\xa0\x80b"}',  # an encoded surrogate: one replacement
        b'{"s":"a\xe2(\xa1b"}',
        b'{"s":"a\xf0\x90\x80"}',
        b'{"s":"\xc0\xaf"}',
    ]
    out = sj.decode(pa.array(docs, pa.binary()), "s STRING").column(0).to_pylist()
    assert out == ["a\ufffdb", "a\ufffdb", "a\ufffd(\ufffdb", "a\ufffd", "\ufffd\ufffd"]


@pytest.mark.parametrize(
    ("schema", "doc", "expected"),
    [
        # Jackson's state after a syntax error decides how far Spark's recovery gets.
        ("x INT, k ARRAY<INT>, y INT", '{"x":1,"k":[0,tru,9],"y":2}', (1, None, 2)),
        ("x INT, k ARRAY<INT>, y INT", '{"x":1,"k":[0,007,9],"y":2}', (None, None, None)),
        ("x INT, k ARRAY<INT>, y INT", '{"x":1,"k":[0,1e,9],"y":2}', (1, None, 2)),
        ("x INT, k ARRAY<INT>, y INT", '{"x":1,"k":[0,+1,9],"y":2}', (1, None, 2)),
        ("x INT, k ARRAY<INT>, y INT", '{"x":1,"k":[0,-,9],"y":2}', (None, None, None)),
        ("x INT, k ARRAY<INT>, y INT", '{"x":1,"k":[0,"a",9],"y":2}', (1, None, 2)),
        (
            "x INT, k STRUCT<p: STRING, q: INT>, y INT",
            '{"x":1,"k":{"p":{"p":1,},"q":9},"y":2}',
            (1, {"p": None, "q": 9}, 2),
        ),
        (
            "x INT, k STRUCT<p: STRING, q: INT>, y INT",
            '{"x":1,"k":{"p":{"p" 1},"q":9},"y":2}',
            (1, {"p": None, "q": None}, None),
        ),
        (
            "x INT, k STRUCT<p: STRING, q: INT>, y INT",
            '{"x":1,"k":{"p":"\\q","q":9},"y":2}',
            (1, None, None),
        ),
        (
            "x INT, k STRUCT<p: STRING, q: INT>, y INT",
            '{"x":1,"k":{"q":007},"y":2}',
            (1, None, None),
        ),
        ("x INT, k STRING, y INT", '{"x":1,"k":"\\u12","y":2}', (1, None, 2)),
        ("x INT, k STRING, y INT", '{"x":1,"u":"\\u12","y":2}', (None, None, None)),
        (
            "x INT, k STRING, y INT",
            '{"x":1,"k":' + "[" * 1000 + "]" * 1000 + ',"y":2}',
            (1, None, 2),
        ),
        (
            "x INT, k STRING, y INT",
            '{"x":1,"k":' + "[" * 1001 + "]" * 1001 + ',"y":2}',
            (None, None, None),
        ),
    ],
)
def test_syntax_error_recovery_matches_spark(schema, doc, expected):
    out = rows(sj.decode(pa.array([doc]), schema + ", _corrupt_record STRING"))[0]
    assert (out["x"], out["k"], out["y"]) == expected
    assert out["_corrupt_record"] == doc


def test_number_errors_depend_on_jacksons_4000_char_buffer():
    # "1." reaching the end of Jackson's first 4000-character buffer is re-read by its slow
    # path, which leaves the input after the "x", so Spark's recovery reaches "bi".
    docs = ['{"s":"%s","arr":[0,1.x,9],"bi":2}' % ("a" * p) for p in (3980, 3981, 3982, 3983)]
    out = sj.decode(pa.array(docs), "arr ARRAY<INT>, bi BIGINT").column("bi").to_pylist()
    assert out == [None, 2, 2, None]


def test_jackson_length_limits():
    docs = [
        '{"d":1.%s,"i":1}' % ("0" * 999),
        '{"d":1.%s,"i":1}' % ("0" * 1000),  # 1001 digits
        '{"%s":1,"i":1}' % ("k" * 50000),
        '{"%s":1,"i":1}' % ("k" * 50001),  # a name of 50001 characters
    ]
    out = rows(sj.decode(pa.array(docs), "d DOUBLE, i INT, _corrupt_record STRING"))
    assert [(r["d"], r["i"], r["_corrupt_record"] is None) for r in out] == [
        (1.0, 1, True),
        (None, None, False),
        (None, 1, True),
        (None, None, False),
    ]


@pytest.mark.parametrize(
    ("char", "after_literal", "before_letter"),
    [
        ("é", (1, 2), (1, 2)),
        ("√", (None, None), (None, None)),
        ("中", (1, 2), (1, 2)),
        ("\u200b", (1, 2), (None, None)),  # identifier part (ignorable), not a start
        ("·", (None, None), (None, None)),
        ("\u0301", (1, 2), (None, None)),  # combining mark: part, not start
        ("€", (1, 2), (1, 2)),
    ],
)
def test_java_identifier_characters_move_jacksons_error_position(
    char, after_literal, before_letter
):
    # Jackson reads on over Java identifier characters after a bad token, so whether Spark's
    # recovery reaches "y" depends on Character.isJavaIdentifierPart/Start.
    docs = ['{"x":1,"k":[0,true' + char + ',9],"y":2}', '{"x":1,"k":[0,' + char + 'a,9],"y":2}']
    out = rows(sj.decode(pa.array(docs), "x INT, k ARRAY<INT>, y INT"))
    assert [(r["x"], r["y"]) for r in out] == [after_literal, before_letter]


def test_float_from_a_big_integer_is_rounded_once():
    # Beyond a long Jackson parses the integer's text as a float directly (not via double).
    docs = ['{"f":18446745173221179393}', '{"f":-18446745173221179393}']
    out = sj.decode(pa.array(docs), "f FLOAT").column(0).to_pylist()
    assert out == [1.8446746272732807e19, -1.8446746272732807e19]


def test_decimals_follow_java_big_decimal():
    docs = [
        '{"a":3.4429459743755495e+20,"b":"3.4429459743755495e+20"}',  # 39 digits: overflow
        '{"a":"\u0661\u0662\u0663","b":"\uff11\uff12.\uff15"}',  # any Unicode decimal digit
        '{"a":1e-2147483647,"b":"1e-2147483647"}',  # 10^2147483629 overflows BigInteger
        '{"a":0e-2147483647,"b":"0e-2147483648"}',  # the scale must fit an int
        '{"a":"1e-00000000000002","b":"1e-000000000002"}',
        '{"a":".5","b":"5."}',
        '{"a":1e-100000,"b":"-1e-100000"}',
    ]
    out = rows(sj.decode(pa.array(docs), "a DECIMAL(38,18), b DECIMAL(10,2)"))
    D = decimal.Decimal
    assert [(r["a"], r["b"]) for r in out] == [
        (None, None),
        (D("123.000000000000000000"), D("12.50")),
        (None, None),
        (D("0E-18"), None),
        (D("0.010000000000000000"), D("0.01")),
        (D("0.500000000000000000"), D("5.00")),
        (D("0E-18"), D("0.00")),
    ]


def test_invalid_patterns_follow_spark():
    # Spark refuses an unterminated quote value by value (null, bad record) ...
    out = sj.decode(
        pa.array(['{"t": "2020-01-02", "a": 1}', '{"a": 2}']),
        "t TIMESTAMP, a INT, _corrupt_record STRING",
        options={"timestampFormat": "yyyy-MM-dd'T"},
    )
    assert rows(out)[0]["t"] is None and rows(out)[0]["a"] == 1
    assert rows(out)[0]["_corrupt_record"] is not None
    assert rows(out)[1] == {"t": None, "a": 2, "_corrupt_record": None}
    # ... and fails the query for patterns the legacy parser would accept (Spark: on the
    # first string; sliceflow: at once, with the reason).
    with pytest.raises(ValueError):
        sj.decode(
            pa.array(['{"t": "Mon, 02 Jan 2020"}']),
            "t DATE",
            options={"dateFormat": "EEE, dd MMM yyyy"},
        )


def test_large_output_buffers_are_reused_without_mixing_batches():
    # Columns of a few MB go back to a buffer cache when Python releases them and are reused
    # by later batches: batches alive at the same time must keep their own values.
    def batch(seed: int, rows: int) -> tuple[bytes, list[tuple[int, str]]]:
        expected = [(seed * 1_000_000 + i, f"{seed}-{i}-" + "y" * (i % 50)) for i in range(rows)]
        text = "".join(json.dumps({"k": k, "s": s}) + "\n" for k, s in expected)
        return text.encode(), expected

    def rows_of(out: pa.RecordBatch) -> list[tuple[int, str]]:
        return list(zip(out.column("k").to_pylist(), out.column("s").to_pylist(), strict=True))

    schema = "k BIGINT, s STRING"
    inputs = [batch(seed, 150_000 + seed * 7_000) for seed in range(4)]
    first = sj.decode(inputs[0][0], schema)
    second = sj.decode(inputs[1][0], schema)
    del first
    third = sj.decode(inputs[2][0], schema)
    del second
    fourth = sj.decode(inputs[3][0], schema)
    again = sj.decode(inputs[2][0], schema)
    assert rows_of(third) == inputs[2][1]
    assert rows_of(fourth) == inputs[3][1]
    assert rows_of(again) == inputs[2][1]


@pytest.mark.parametrize("sep", ["\r", "\n", "\r\n"])
@pytest.mark.parametrize("block_size", [1, 7, 1 << 16])
def test_iter_ndjson_every_split_point_with_cr_lf_and_crlf(tmp_path, sep, block_size):
    """Three splits cut at every pair of bytes of a small file: each line read once. A split
    that ends inside a line reads that line's tail only up to its CR; reading on to the next
    LF (what a binary readline does) read the following lines twice."""
    docs = [(i, "p" * (i * 5 % 7)) for i in range(4)]
    text = sep.join(json.dumps({"a": a, "s": s}) for a, s in docs)
    path = tmp_path / "x.json"
    path.write_bytes(text.encode())
    size = len(text.encode())
    for first in range(size + 1):
        for second in range(first, size + 1):
            got = []
            for start, end in ((0, first), (first, second), (second, size)):
                for batch in sj.iter_ndjson(
                    path, "a INT, s STRING", start=start, end=end, block_size=block_size
                ):
                    got.extend(
                        zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True)
                    )
            assert got == docs, f"splits cut at bytes {first} and {second}"


@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.integers(0, 300),  # padding: lines shorter and longer than the block
            st.sampled_from(["\n", "\r\n", "\r", "\n\n"]),
        ),
        max_size=40,
    ),
    st.integers(1, 200),
    st.lists(st.floats(0, 1), max_size=4),
    st.booleans(),
)
def test_iter_ndjson_blocks_and_splits_keep_every_line_once(
    tmp_path_factory, docs, block_size, cuts, final_newline
):
    """Any block size and any split points: every document once, in file order, also when a
    line is longer than the block, lines end in CR, LF or CRLF, or the file has no final line
    break."""
    text = "".join(json.dumps({"a": a, "s": "p" * pad}) + sep for a, pad, sep in docs)
    if not final_newline:
        text = text.rstrip("\r\n")
    path = tmp_path_factory.mktemp("nd") / "x.json"
    path.write_bytes(text.encode())
    size = len(text.encode())
    bounds = sorted({0, size, *(int(c * size) for c in cuts)})
    got = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        for batch in sj.iter_ndjson(
            path, "a INT, s STRING", start=start, end=end, block_size=block_size
        ):
            got.extend(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True))
    assert got == [(a, "p" * pad) for a, pad, _ in docs]


@pytest.mark.parametrize("split_at", [None, 11, 22, 33])
def test_failfast_line_with_crlf_cut_at_a_block_or_split_edge(tmp_path, split_at):
    """A CRLF whose CR ends one block (or split) and whose LF starts the next is one line end:
    the failed line is named the same whatever the block size and split points (the CR and
    the LF were each counted once before)."""
    path = tmp_path / "crlf.json"
    path.write_bytes(b'{"a": 11}\r\n' * 5 + b'{"a": x}\r\n' + b'{"a": 1}\r\n')
    splits = [(0, None)] if split_at is None else [(0, split_at), (split_at, None)]
    for block_size in range(1, 40):
        with pytest.raises(sj.MalformedRecordError, match=r"line 6\.$"):
            for start, end in splits:
                for _ in sj.iter_ndjson(
                    path,
                    "a INT",
                    options={"mode": "FAILFAST"},
                    block_size=block_size,
                    start=start,
                    end=end,
                ):
                    pass
