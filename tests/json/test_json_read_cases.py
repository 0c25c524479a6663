"""spark.read.json's record rules, case by case, against Spark itself.

Each case is a small file read by ``spark.read.schema(s).options(...).json(path)`` and by
``sliceflow.json.read_ndjson`` (what the data source runs per split): the same rows, or an
error from both. The generated-corpus comparison is tests/json/test_json_read_differential.py.
"""

from __future__ import annotations

import pytest

from sliceflow import json as sj
from sliceflow.errors import MalformedRecordError, OptionError

SCHEMA = "a STRING, b BIGINT, _corrupt_record STRING"

CASES = [
    # name, file bytes, options
    (
        "source_text",
        b'{"a": 1e5, "b": 1}\n{"a": {"p": 1,  "q":[1, 2 ]}}\n{"a": 1.50}\n'
        b'{"a": -Infinity}\n{"a": true}\n{"a": [1,"x" ,null]}\n{"a": NaN}\n{"a":  -0 }\n',
        {},
    ),
    (
        "reserialised_with_encoding",
        b'{"a": 1e5}\n{"a": {"p": 1,  "q":[1, 2 ]}}\n{"a": NaN}\n',
        {"encoding": "UTF-8"},
    ),
    (
        "bom",
        b'\xef\xbb\xbf{"a": "x", "b": 1}\n\xef\xbb\xbf{"a": 5}\n\xef\xbb\xbf\n'
        b'\xef\xbb\xbf \n{"a": "z"}\n',
        {},
    ),
    ("blank_and_line_ends", b'\n\n  \n\t\n{"a": "x"}\r\n{"a": "y"}\r{"a": "z"}\n\r\n', {}),
    (
        "top_level_arrays",
        b'[{"a": "x"}, {"a": "y"}]\n[]\n[1, 2]\n[{"a": "q"}, 3]\n"s"\n5\n'
        b'null\n[{"a": "x", "b": "bad"}, {"a": "y"}]\n[null, {"a": "n"}]\n',
        {},
    ),
    (
        "dropmalformed",
        b'{"a": "x"}\n{"a": "y", "b": "z"}\n{bad\n[{"a": "q"}, 3]\n'
        b'[{"a": "x", "b": "bad"}, {"a": "y"}]\n',
        {"mode": "DROPMALFORMED"},
    ),
    ("line_sep", b'{"a": "x"};{"a": "y\n"};\n{"a": 1};;  ;', {"lineSep": ";"}),
    ("line_sep_long", b'{"a": "x"}||{"a": 2}||', {"lineSep": "||"}),
    ("line_sep_lf_keeps_cr", b'{"a": "x"}\r{"a": 2}\n{"a": 3}\r\n', {"lineSep": "\n"}),
    (
        "utf16le",
        '{"a": "x\u00e9", "b": 1}\n{"a": {"p": 1, "q": 2}}\n'.encode("utf-16-le"),
        {"encoding": "UTF-16LE", "lineSep": "\n"},
    ),
    (
        "utf16be",
        '{"a": "x"};{"a": {"p":  1}};'.encode("utf-16-be"),
        {"charset": "UTF-16BE", "lineSep": ";"},
    ),
    ("latin1", '{"a": "\u00e9"}\n'.encode("latin-1"), {"encoding": "ISO-8859-1", "lineSep": "\n"}),
    (
        "multiline_object",
        b'{"a": {"p": 1,  "q":[1, 2 ]},\n "b": 2}\n{"a": "ignored"}',
        {"multiLine": "true"},
    ),
    ("multiline_array", b'\n [{"a": {"p":  1}}, {"a": "y", "b": 2}]  ', {"multiLine": "true"}),
    ("multiline_bad_element", b'[{"a": 1}, 5]', {"multiLine": "true"}),
    ("multiline_bom", b'\xef\xbb\xbf{"a": "x"}', {"multiLine": "true"}),
    ("multiline_empty", b"  \n ", {"multiLine": "true"}),
    (
        "multiline_utf16",
        '{"a": {"p": 1,  "q": 2}}'.encode("utf-16"),
        {"encoding": "UTF-16", "multiLine": "true"},
    ),
    (
        "multiline_utf32_no_bom",
        '{"a": "y", "b": 3}'.encode("utf-32-be"),
        {"encoding": "UTF-32", "multiLine": "true"},
    ),
    # (the corrupt record column is left out: Spark fills it with the raw bytes read as UTF-8,
    # a known difference)
    (
        "multiline_utf16le_bom_fails",
        '\ufeff{"a": 1}'.encode("utf-16-le"),
        {"encoding": "UTF-16LE", "multiLine": "true", "columnNameOfCorruptRecord": "_other"},
    ),
    (
        "lone_surrogate_name",
        b'{"x\\ude00y": 1, "b": 2}\n{"b": 3, "\\ud800": 1}\n{"b": 4, "x\\ud83d\\ude00": 1}\n',
        {},
    ),
    (
        "inference_only_options",
        b'{"a": 1, "b": 2}\n',
        {"primitivesAsString": "true", "prefersDecimal": "true", "allowTrailingComma": "true"},
    ),
    (
        "corrupt_column_name",
        b'{bad\n{"a": "ok"}\n',
        {"columnNameOfCorruptRecord": "_corrupt_record"},
    ),
]

REFUSED = [
    ({"encoding": "UTF-16LE"}, "lineSep option must be specified"),
    ({"encoding": "UTF-16", "lineSep": "\n"}, "multiLine"),
    ({"encoding": "NOPE"}, "INVALID_PARAMETER_VALUE.CHARSET"),
    ({"encoding": "utf8"}, "INVALID_PARAMETER_VALUE.CHARSET"),
    ({"lineSep": ""}, "'lineSep' cannot be an empty string"),
]


@pytest.mark.spark
@pytest.mark.parametrize(("name", "data", "options"), CASES, ids=[c[0] for c in CASES])
def test_same_rows_as_read_json(spark, tmp_path, name, data, options):
    path = tmp_path / f"{name}.json"
    path.write_bytes(data)
    expected = [
        tuple(r) for r in spark.read.schema(SCHEMA).options(**options).json(str(path)).collect()
    ]
    actual = [tuple(r.values()) for r in sj.read_ndjson(path, SCHEMA, options=options).to_pylist()]
    assert actual == expected


@pytest.mark.spark
@pytest.mark.parametrize(("options", "message"), REFUSED)
def test_refused_as_spark_refuses(spark, tmp_path, options, message):
    path = tmp_path / "x.json"
    path.write_bytes(b'{"a": 1}\n')
    with pytest.raises(Exception, match="requirement failed|CHARSET|lineSep"):
        spark.read.schema(SCHEMA).options(**options).json(str(path)).collect()
    with pytest.raises(OptionError, match=message.replace("(", r"\(")):
        sj.read_ndjson(path, SCHEMA, options=options)


def test_failfast_names_file_and_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"a": "x"}\r\n\n{"a": "y"}\r{"a": "y", "b": "z"}\n{"a": 1}\n')
    with pytest.raises(MalformedRecordError, match=r"bad.json', line 4\."):
        sj.read_ndjson(path, "a STRING, b BIGINT", options={"mode": "FAILFAST"}, block_size=4)
    path.write_bytes(b'{"a": "x"};;{bad;{"a": 2}')
    with pytest.raises(MalformedRecordError, match=r"bad.json', line 3\."):
        sj.read_ndjson(path, "a STRING", options={"mode": "FAILFAST", "lineSep": ";"})


def test_from_json_keeps_its_own_string_text(tmp_path):
    """decode (and so from_json) re-writes non-string values; the file readers keep the text."""
    data = b'{"a": 1e5}\n{"a": {"p": 1}}\n{"a": 1.50}\n{"a": -Infinity}\n'
    decoded = sj.decode(data, "a STRING").column(0).to_pylist()
    assert decoded == ["100000.0", '{"p":1}', "1.5", '"-Infinity"']
    path = tmp_path / "a.json"
    path.write_bytes(data)
    read = sj.read_ndjson(path, "a STRING").column(0).to_pylist()
    assert read == ["1e5", '{"p": 1}', "1.50", "-Infinity"]
    with pytest.raises(OptionError, match="DROPMALFORMED"):
        sj.decode(data, "a STRING", options={"mode": "DROPMALFORMED"})


@pytest.mark.parametrize("block_size", [1, 3, 7, 64])
@pytest.mark.parametrize("sep", [";", "||", "\n"])
def test_line_sep_splits_cover_every_record_once(tmp_path, block_size, sep):
    records = [f'{{"a": {i}}}' for i in range(40)]
    path = tmp_path / "s.json"
    path.write_bytes(sep.join(records).encode())
    options = {"lineSep": sep}
    whole = sj.read_ndjson(path, "a INT", options=options).column(0).to_pylist()
    assert whole == list(range(40))
    size = path.stat().st_size
    for step in (5, 11, 64):
        got = []
        for start in range(0, size, step):
            for batch in sj.iter_ndjson(
                path, "a INT", options=options, block_size=block_size, start=start, end=start + step
            ):
                got += batch.column(0).to_pylist()
        assert got == whole, (step, block_size)
