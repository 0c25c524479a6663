"""The simdjson fast path must give exactly what the reference (Spark-port) path gives.

``allowNonNumericNumbers=false`` switches the fast path off, so the same documents decoded with
and without it compare the two paths (NaN/Infinity tokens are avoided in the documents).
"""

from __future__ import annotations

import json
import math
import re

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from sliceflow import json as sj

SCHEMA = (
    "b BOOLEAN, t TINYINT, s SMALLINT, i INT, l BIGINT, f FLOAT, d DOUBLE, dc DECIMAL(12,3), "
    "str STRING, dt DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ, arr ARRAY<BIGINT>, "
    "st STRUCT<x: INT, y: STRING>, m MAP<STRING, DOUBLE>"
)
REFERENCE = {"allowNonNumericNumbers": "false"}


def both_paths(docs: list[str], time_zone: str = "UTC") -> tuple[pa.StructArray, pa.StructArray]:
    array = pa.array(docs, pa.string())
    fast = sj.decode_to_struct(array, SCHEMA, time_zone=time_zone)
    reference = sj.decode_to_struct(array, SCHEMA, options=REFERENCE, time_zone=time_zone)
    return fast, reference


def as_ints(array: pa.StructArray) -> list:
    """Rows with dates and timestamps as integers (Python's datetime cannot hold them all)."""
    columns = {}
    for field, column in zip(array.type, array.flatten(), strict=True):
        if pa.types.is_date32(field.type):
            column = column.cast(pa.int32())
        elif pa.types.is_timestamp(field.type):
            column = column.cast(pa.int64())
        columns[field.name] = column
    return pa.StructArray.from_arrays(list(columns.values()), list(columns)).to_pylist()


def same(a, b) -> bool:
    """Deep equality with NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def assert_same(fast: pa.StructArray, reference: pa.StructArray, docs: list[str]) -> None:
    assert fast.is_valid().equals(reference.is_valid())
    if fast.equals(reference):
        return
    # Arrow's equality has NaN != NaN: compare row by row.
    for doc, a, b in zip(docs, as_ints(fast), as_ints(reference), strict=True):
        assert same(a, b), doc


def timestamps() -> st.SearchStrategy[str]:
    def fmt(parts):
        y, mo, d, h, mi, s, frac, sep, zulu = parts
        text = f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}"
        if frac:
            text += "." + frac
        return text + ("Z" if zulu else "")

    return st.tuples(
        st.integers(0, 10000),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 24),
        st.integers(0, 60),
        st.integers(0, 60),
        st.text("0123456789", max_size=10),
        st.sampled_from([" ", "T", "t", "  "]),
        st.booleans(),
    ).map(fmt)


numbers = st.one_of(
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["-0", "-0.0", "1e400", "1.5e-400", "255", "128", "32768", "007", "1E2"]),
)


@st.composite
def documents(draw) -> str:
    fields = {}
    for name in ("t", "s", "i", "l", "f", "d", "dc"):
        if draw(st.booleans()):
            fields[name] = json.dumps(draw(numbers)).strip('"') if draw(st.booleans()) else "null"
    for name in ("ts", "ntz", "dt"):
        if draw(st.booleans()):
            fields[name] = json.dumps(draw(timestamps() | st.text(max_size=12)))
    if draw(st.booleans()):
        fields["b"] = draw(st.sampled_from(["true", "false", "null", "1", '"true"']))
    if draw(st.booleans()):
        fields["str"] = json.dumps(draw(st.text(max_size=10) | st.integers() | st.booleans()))
    if draw(st.booleans()):
        fields["arr"] = json.dumps(
            draw(st.lists(st.integers(-(2**63), 2**63 - 1) | st.none(), max_size=4))
        )
    if draw(st.booleans()):
        fields["st"] = json.dumps({"x": draw(st.integers(-(2**31), 2**31 - 1)), "y": "q"})
    if draw(st.booleans()):
        fields["m"] = json.dumps(
            draw(
                st.dictionaries(
                    st.text(max_size=3),
                    st.floats(allow_nan=False, allow_infinity=False),
                    max_size=3,
                )
            )
        )
    if draw(st.booleans()):
        fields["unknown"] = json.dumps(draw(st.lists(st.integers(), max_size=3)))
    items = list(fields.items())
    draw(st.randoms()).shuffle(items)
    return "{" + ", ".join(f'"{k}": {v}' for k, v in items) + "}"


@given(st.lists(documents(), min_size=1, max_size=20), st.sampled_from(["UTC", "+05:30", "-08:00"]))
def test_fast_path_equals_reference_path(docs, time_zone):
    fast, reference = both_paths(docs, time_zone)
    assert_same(fast, reference, docs)


def test_canonical_timestamps_agree_with_spark_cast_rules():
    docs = [
        json.dumps({"ts": t})
        for t in [
            "2026-11-23 00:02:30.001",
            "2026-11-23T00:02:30",
            "2024-02-29 23:59:59.999999999",
            "2023-02-29 00:00:00",
            "0001-01-01 00:00:00",
            "9999-12-31 23:59:59.5Z",
            "2026-11-23 24:00:00",
            "2026-13-01 00:00:00",
            "2026-11-23 00:00:60",
        ]
    ]
    fast, reference = both_paths(docs)
    assert_same(fast, reference, docs)
    assert fast.field("ts").null_count == 4


def test_canonical_timestamp_shapes_agree_with_the_general_parser():
    """Near misses of "yyyy-MM-dd HH:mm:ss.SSS", each after a valid value of the same date
    (the fast path keeps the last date's day number), must be read as the general parser does."""
    near = [
        "2026-11-23 00:02:30.001",
        "2026-11-23 25:00:00.000",
        "2026-11-23 00:60:00.000",
        "2026-11-23 0:02:30.001",
        "2026-11-23 00:02:3.001",
        "2026-1-23 00:02:30.001",
        "2026-11-3 00:02:30.001",
        "202-11-23 00:02:30.001",
        "20260-11-23 00:02:30.001",
        "2026-13-23 00:02:30.001",
        "2026-00-23 00:02:30.001",
        "2026-11-00 00:02:30.001",
        "2026-11-31 00:02:30.001",
        "2023-02-29 00:00:00.000",
        "2024-02-29 00:00:00.000",
        "1900-02-29 00:00:00.000",
        "2000-02-29 00:00:00.000",
        "0999-12-31 23:59:59.999",
        "1000-01-01 00:00:00.000",
        "2026-11-23 00:02:30.001Z",
        "2026-11-23 00:02:30.001z",
        "2026-11-23 00:02:30.001+01:00",
        "2026-11-23 00:02:30.001 UTC",
        "2026-11-23 00:02:30.001GMT",
        "2026-11-23 00:02:30Z",
        "2026-11-23 00:02:30.",
        "2026-11-23 00:02:30.Z",
        "2026-11-23 00:02:30 ",
        " 2026-11-23 00:02:30",
        "2026-11-23t00:02:30",
        "2026-11-23_00:02:30",
        "2026/11/23 00:02:30",
        "2026-11-23 00-02-30",
        "2026-11-2a 00:02:30",
        "2026-1a-23 00:02:30",
        "2026-11-23 0a:02:30",
        "2026-11-23 00:02:3a",
        "2026-11-23 00:02:30.00a",
        "\u0662026-11-23 00:02:30",
    ]
    near += [f"2026-11-23 00:02:30.{'1234567890'[:n]}" for n in range(1, 11)]
    docs = []
    for t in near:
        date = t[:10] if t[:4].isdigit() else "2026-11-23"
        docs.append(json.dumps({"ts": f"{date} 12:00:00.000"}))
        docs.append(json.dumps({"ts": t}))
        docs.append(json.dumps({"ts": f"{date} 12:00:00.000"}))
    # Dates across the years the fast path reads, each a new day number.
    day = 0
    for year in range(1000, 10000, 37):
        for month in range(1, 13, 5):
            day = day % 28 + 1
            docs.append(json.dumps({"ts": f"{year:04d}-{month:02d}-{day:02d} 23:59:59.999"}))
    for time_zone in ("UTC", "+05:30", "-08:00"):
        fast, reference = both_paths(docs, time_zone)
        assert_same(fast, reference, docs)


def test_ndjson_stream_equals_one_document_per_row():
    """NDJSON buffers are split into lines by the decoder itself; rows must not change."""
    from support import json_corpus

    docs = [
        d
        for d in json_corpus.corpus(20_000, 11)
        if isinstance(d, str) and d.strip(" \t") and "\n" not in d and "\r" not in d
    ]
    # Blank lines and white space around documents are part of NDJSON files too.
    lines = []
    for k, doc in enumerate(docs):
        lines.append(doc if k % 7 else f"  {doc}\t")
        if k % 11 == 0:
            lines.append("   ")
    data = ("\n".join(lines) + "\n").encode()
    rows = [line for line in lines if line.strip(" \t")]
    for schema in (json_corpus.ddl_for("nexmark", "corrupt"), json_corpus.ddl_for("all_types")):
        from_bytes = sj.decode(data, schema)
        per_row = sj.decode(pa.array(rows), schema)
        assert from_bytes.num_rows == per_row.num_rows == len(rows)
        as_struct = [
            pa.StructArray.from_arrays(b.columns, b.schema.names) for b in (from_bytes, per_row)
        ]
        assert_same(as_struct[0], as_struct[1], rows)


def test_ndjson_stream_keeps_jacksons_length_limits():
    # simdjson accepts a 1001-digit number and a 50001-character name; Jackson refuses both.
    filler = ['{"a": 1, "s": "x"}'] * 2000
    odd = ['{"a": 2, "d": 0.' + "1" * 1001 + "}", '{"a": 3, "' + "k" * 50_001 + '": 1}']
    lines = filler + odd + filler
    data = ("\n".join(lines) + "\n").encode()
    schema = "a INT, s STRING, _corrupt_record STRING"
    from_bytes = sj.decode(data, schema)
    per_row = sj.decode(pa.array(lines), schema)
    assert from_bytes.equals(per_row)
    assert from_bytes.column("a")[2000].as_py() is None
    assert from_bytes.column("_corrupt_record")[2001].as_py() == odd[1]


def test_ndjson_stream_hands_odd_lines_to_the_line_reader():
    # Each case sits between streamed lines: a document that spans lines, documents that share
    # a line, scalars, text around a document and \r line breaks must give the rows of a
    # line-by-line read (lines end at \n, \r\n or \r, as Spark's text reader splits them).
    filler = ['{"a": 1, "s": "x"}', '  {"a": 2, "s": "y"}\t', "", " \t"] * 600
    cases = [
        ['{"a": 3,', ' "s": "z"}'],
        ['{"a": 4, "s": "w"} {"a": 5}'],
        ['{"a": 6}{"a": 7}'],
        ['{"a": 8, "s": "v"}  x'],
        ['x {"a": 9}'],
        ["17", " 18 ", '"s"', "[1, 2]"],
        ['{"a": 10, "s": "long ' + "u" * 40 + '"', "}"],
        ['{"a": 11}', "", '   {"a": 12, "s": "t"}  ', "\t"],
        ['{"a": 13}\r{"a": 14}', '{"a": 15, "s": "r"}\r'],
        ['{"a":\r16}', '\r\r{"a": 17}'],
    ]
    schema = "a INT, s STRING, _corrupt_record STRING"
    for case in cases:
        lines = filler + case + filler
        data = ("\n".join(lines) + "\n").encode()
        split = re.split("\r\n|\r|\n", data.decode())
        rows = [line for line in split if line.strip(" \t")]
        from_bytes = sj.decode(data, schema)
        per_row = sj.decode(pa.array(rows), schema)
        assert from_bytes.equals(per_row), case


FLAT = "b BOOLEAN, i INT, l BIGINT, d DOUBLE, str STRING, ts TIMESTAMP, _corrupt_record STRING"

# Tokens near the edges of what the fast path reads in one pass (an object of integers,
# literals and ASCII strings without escapes); the rest goes to the DOM parse, and either way
# the rows must be the reference path's.
NON_NUMERIC_STRINGS = frozenset(
    ["NaN", "+NaN", "-NaN", "INF", "+INF", "-INF", "Infinity", "+Infinity", "-Infinity"]
)
flat_values = st.one_of(
    st.integers(-(10**19), 10**19).map(str),
    st.sampled_from(
        ["-0", "0", "00", "-", "-01", "1.0", "1e2", "1E2", "2.", "999999999999999999"]
        + ["1000000000000000000", "-999999999999999999", "true", "false", "null", "tru"]
        + ["nulll", "True", "[]", "{}", '"x"', '"2026-11-23 00:02:30.001"', '""', '"\\n"']
        + ['"\\u00e9"', '"é"', '"\x7f"', '"a\tb"', '"\\""', "1x", '"unterminated']
    ),
    # The reference path runs with allowNonNumericNumbers=false, which also refuses these
    # strings in a DOUBLE field: with the default they are NaN and infinities, not compared here.
    st.text(max_size=8).filter(lambda t: t not in NON_NUMERIC_STRINGS).map(json.dumps),
)
flat_names = st.sampled_from(
    ["b", "i", "l", "d", "str", "ts", "_corrupt_record", "unknown", "I", "", "s\\u0074r"]
)
spaces = st.sampled_from(["", " ", "\t", "\r\n ", "  "])


@st.composite
def flat_documents(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 6))):
        ws = [draw(spaces) for _ in range(4)]
        parts.append(f'{ws[0]}"{draw(flat_names)}"{ws[1]}:{ws[2]}{draw(flat_values)}{ws[3]}')
    body = ",".join(parts)
    doc = draw(spaces) + "{" + body + draw(st.sampled_from(["}", "}", "}", ",}", "", "}x", "}}"]))
    return doc + draw(spaces)


@given(st.lists(flat_documents(), min_size=1, max_size=20))
def test_one_pass_reading_equals_reference_path(docs):
    array = pa.array(docs, pa.string())
    fast = sj.decode_to_struct(array, FLAT)
    reference = sj.decode_to_struct(array, FLAT, options=REFERENCE)
    assert_same(fast, reference, docs)
    # The same documents as NDJSON lines (the last one unpadded at the end of the buffer).
    lines = [d for d in docs if "\n" not in d and "\r" not in d and d.strip(" \t")]
    if lines:
        batch = sj.decode("\n".join(lines).encode(), FLAT)
        per_row = sj.decode_to_struct(pa.array(lines, pa.string()), FLAT, options=REFERENCE)
        assert_same(pa.StructArray.from_arrays(batch.columns, batch.schema.names), per_row, lines)


def test_one_pass_reading_stops_at_the_end_of_each_document():
    # Array elements sit back to back in one buffer: a number, string or key cut off at the
    # end of a document must not run on into the next one.
    docs = ['{"i": 12', "345}", '{"l": 1234567', "8}", '{"str": "ab', 'c"}', '{"st', 'r": 1}']
    docs += ['{"l": 12345678}', '{"l": -123456789012345678}', '{"l":1234567}', '{"l": 7']
    fast, reference = both_paths(docs)
    assert_same(fast, reference, docs)
    flat = pa.array(docs, pa.string())
    fast = sj.decode_to_struct(flat, FLAT)
    assert_same(fast, sj.decode_to_struct(flat, FLAT, options=REFERENCE), docs)
    assert fast.field("l").to_pylist()[8:11] == [12345678, -123456789012345678, 1234567]


def test_non_numeric_strings_in_a_double_field_follow_allow_non_numeric_numbers():
    """With the default (allowNonNumericNumbers=true) both paths read "NaN" / "Infinity" in a
    DOUBLE field as Spark's from_json does; with false the record is malformed."""
    docs = ['{"d":"NaN"}', '{"d":"Infinity"}', '{"d":"-Infinity"}', '{"d":"+INF"}']
    array = pa.array(docs, pa.string())
    default = sj.decode_to_struct(array, FLAT).field("d").to_pylist()
    assert math.isnan(default[0]) and default[1:] == [math.inf, -math.inf, math.inf]
    refused = sj.decode_to_struct(array, FLAT, options=REFERENCE)
    assert refused.field("d").to_pylist() == [None] * 4
    assert refused.field("_corrupt_record").to_pylist() == docs


def test_nested_events_fast_path_equals_reference_path():
    """GitHub-like events (structs, arrays of structs, escapes, non-ASCII text, a field that is
    a number or a string, malformed lines) with the wide inferred schema and a nested DDL."""
    from pyspark.sql.types import StructType

    from sliceflow.json import infer_schema
    from sliceflow.testing import GITHUB_EVENTS_DDL, github_event_lines

    docs = list(github_event_lines(1500, seed=21, malformed=0.03))
    docs += ['{"id": 0, "type": true}', '{"id": -0, "type": false}', '{"id": 12345678901234}']
    wide = StructType.fromJson(infer_schema("\n".join(docs).encode()))
    assert "_corrupt_record" in wide.fieldNames()
    array = pa.array(docs, pa.string())
    for schema in (wide, GITHUB_EVENTS_DDL, GITHUB_EVENTS_DDL + ", _corrupt_record STRING"):
        fast = sj.decode_to_struct(array, schema)
        reference = sj.decode_to_struct(array, schema, options=REFERENCE)
        assert_same(fast, reference, docs)


NESTED_NAMES = ["", "a", "ab", "abc", "abcd", "abcde", "abcdefgh", "abcdefghi", "abcdefghijklmnopq"]
# Keys one byte away from a name (first, middle or last byte), shorter or longer by one.
NEAR_KEYS = ["b", "ac", "abd", "abce", "abcdf", "xbcde", "abcdefgx", "abcdXfghi"]
NEAR_KEYS += ["abcdefghXjklmnopq", "abcdefghijklmnopx", "abcdefghijklmnop", "abcdefghijklmnopqr"]


@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from(NESTED_NAMES + NEAR_KEYS), st.integers(-5, 5) | st.none()),
            max_size=8,
        ),
        min_size=1,
        max_size=12,
    )
)
def test_nested_field_names_of_every_length_match_as_the_reference_path_matches(records):
    """A nested struct's keys are matched against its field names by their length and bytes
    (one word for up to 4 bytes, the last 4 up to 8, the rest beyond): names of 0 to 17 bytes
    and keys that differ from them in one byte or in length, in any order, repeated or not."""
    schema = "s STRUCT<" + ", ".join(f"`{n}`: BIGINT" for n in NESTED_NAMES) + ">"
    docs = [
        '{"s": {' + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in record) + "}}"
        for record in records
    ]
    array = pa.array(docs, pa.string())
    fast = sj.decode_to_struct(array, schema)
    reference = sj.decode_to_struct(array, schema, options=REFERENCE)
    assert_same(fast, reference, docs)
