#!/usr/bin/env python
"""Empirical probe of Spark's ``from_json`` semantics.

Runs every probe case below through a real local Spark (``local[1]``, session
time zone UTC) and prints ``input -> output`` tables as Markdown.  These tables
are the generated part of ``docs/json-semantics.md``; regenerate with::

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python tools/spark_probe.py \
        --write-doc docs/json-semantics.md

(``--write-doc`` replaces the text between the ``BEGIN GENERATED`` and
``END GENERATED`` markers of that file; without it the tables go to stdout.)

Conventions in the output column:

* ``NULL`` means the *struct itself* is null (``from_json(...).isNull()`` is
  true); ``{a: null}`` is a non-null struct whose field is null.
* Strings are shown JSON-quoted; long strings are shortened to
  ``"prefix…"(len N)``.  In sections marked *hex*, string leaves are shown as
  the hex of their UTF-8 bytes (``0x...``).
* Maps are shown as ``map[(k, v), ...]`` in Spark's internal entry order
  (duplicates are kept by Spark, so a dict would hide them).
* date / timestamp / timestamp_ntz values are rendered with Spark's own
  ``CAST(... AS STRING)`` in UTC (so out-of-range years print as ``+294247-...``).
* A time-only timestamp string resolves to the current date; the date is
  replaced by ``<today>`` so the output is reproducible.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import math
import os
import re
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("TZ", "UTC")

# ---------------------------------------------------------------------------
# probe definitions
# ---------------------------------------------------------------------------

NUMS = [
    "1",
    "-1",
    "-0",
    "-0.0",
    "007",
    "00",
    "1.0",
    "1.5",
    "1e2",
    "1E+2",
    "1.50E3",
    ".5",
    "5.",
    "+1",
    "0x10",
    "1e400",
    "-1e400",
    "127",
    "128",
    "255",
    "256",
    "32768",
    "65535",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "NaN",
    "Infinity",
    "-Infinity",
    "+Infinity",
    "INF",
    '"NaN"',
    '"Infinity"',
    '"-Infinity"',
    '"+Infinity"',
    '"INF"',
    '"+INF"',
    '"-INF"',
    '"inf"',
    '"nan"',
    '"1"',
    '"1.5"',
    '"1,000.5"',
    '""',
    '" 1"',
    "true",
    "null",
    "[1]",
    "{}",
]

TS_STRINGS = [
    "2020-01-02",
    "2020-1-2",
    "2020-01-02T03:04:05",
    "2020-01-02 03:04:05",
    "2020-01-02T03:04",
    "2020-01-02T03",
    "2020-01-02 03:04:05.123456789",
    "2020-01-02T03:04:05.123",
    "2020-01-02T03:04:05.",
    "2020-01-02T03:04:05Z",
    "2020-01-02T03:04:05.5Z",
    "2020-01-02T03:04:05+01:00",
    "2020-01-02T03:04:05+0100",
    "2020-01-02T03:04:05+01",
    "2020-01-02T03:04:05 +01:00",
    "2020-01-02T03:04:05-08:00",
    "2020-01-02T03:04:05UTC",
    "2020-01-02T03:04:05 UTC",
    "2020-01-02T03:04:05Europe/Paris",
    "2020-01-02T03:04:05GMT+1",
    "2020-01-02T03:04:05[Europe/Paris]",
    "2020-01-02Z",
    "2020",
    "2020-01",
    "12345",
    "20200102",
    "2020-001",
    "+10000-01-01",
    "-0001-01-01",
    "9999-12-31T23:59:59.999999",
    "2020-13-01",
    "2020-02-30",
    "2020-01-02T25:00:00",
    "2020-01-02 03:04:05,123",
    "1600000000",
    "1.5",
    " 2020-01-02",
    "2020-01-02 ",
    "",
    "garbage",
    "T03:04:05",
    "03:04:05",
    "12:00",
    "12:34:56+01:00",
    "12",
    "2020/01/02",
    "02/01/2020 03:04",
    "01/02/2020",
]

FMT_STRINGS = [
    "02/01/2020 03:04",
    "31/12/2020 23:59",
    "2/1/2020 3:04",
    "02/01/2020 03:04:05",
    "02/01/2020",
    "01/02/2020",
    "1/2/2020",
    "13/02/2020",
    " 01/02/2020",
    "2020-01-02 03:04:05.123",
    "2020-01-02 03:04:05.1",
    "2020-01-02 03:04:05.1234",
    "2020-01-02 03:04:05",
    "2020-01-02T03:04:05",
    "2020-01-02",
    "garbage",
    "",
]

ESCAPES = [
    r"\n",
    r"\t",
    r"\/",
    r"\b",
    r"\f",
    r"\r",
    r"\"",
    r"\\",
    r"\u00e9",
    r"\u00E9",
    r"\ud83d\ude00",
    r"\ud800",
    r"\udc00",
    r"\ud800x",
    r"\ud83d",
    r"\ude00\ud83d",
    r"\u0000",
    r"\u0001",
    r"\u001f",
    r"\u007f",
    r"\u2028",
    r"\uFFFF",
    r"\'",
    r"\a",
    r"\x41",
    r"\u12",
    r"\U00e9",
    "\t",
    "\x01",
    "\x00",
    "\n",
    "\x7f",
    "\u00e9",
    "\U0001f600",
]

BAD_UTF8 = [
    b"\x80",
    b"\xbf",
    b"\xc0",
    b"\xc0\x80",
    b"\xc1\xbf",
    b"\xc2",
    b"\xc2\x7f",
    b"\xdf\xbf",
    b"\xe0\x80",
    b"\xe0\x9f\xbf",
    b"\xe0\xa0\x80",
    b"\xe0\xa0",
    b"\xe1\x80",
    b"\xed\x9f\xbf",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xed\xa0",
    b"\xed\xa0\x41",
    b"\xef\xbf\xbf",
    b"\xf0\x80\x80\x80",
    b"\xf0\x90\x80",
    b"\xf0\x90\x80\x80",
    b"\xf4\x8f\xbf\xbf",
    b"\xf4\x90\x80\x80",
    b"\xf4\x90",
    b"\xf5",
    b"\xf8\x88\x80\x80\x80",
    b"\xfe",
    b"\xff",
    b"\xc3\x28",
    b"\xe2\x28\xa1",
    b"\xf0\x28\x8c\xbc",
    b"\xf0\x9f\x98",
]


def _deep(n: int, leaf: str = "1") -> str:
    return "[" * n + leaf + "]" * n


def _deepo(n: int) -> str:
    return '{"a":' * n + "1" + "}" * n


# Each section: (title, ddl, options, docs, flags).  flags: {"hex": True} shows
# string leaves as hex; {"note": "..."} adds a sentence under the title.
SECTIONS: list[tuple[str, str, dict, list, dict]] = []


def section(title, ddl, options, docs, **flags):
    SECTIONS.append((title, ddl, options, docs, flags))


_NUM_FIELDS = [
    ("bi", "bigint"),
    ("i", "int"),
    ("si", "smallint"),
    ("ti", "tinyint"),
    ("f", "float"),
    ("d", "double"),
    ("d10", "decimal(10,2)"),
    ("d38", "decimal(38,18)"),
    ("s", "string"),
    ("z", "int"),
]
section(
    "Numbers and other tokens into numeric / string fields. The same value V is put in every "
    'field: `{"bi":V,"i":V,"si":V,"ti":V,"f":V,"d":V,"d10":V,"d38":V,"s":V,"z":1}`; '
    "z=null means the whole record failed (syntax error)",
    ", ".join(f"{n} {t}" for n, t in _NUM_FIELDS),
    {},
    ["{" + ",".join(f'"{n}":{v}' for n, _ in _NUM_FIELDS[:-1]) + ',"z":1}' for v in NUMS],
    wide=True,
    label=lambda d: d.split(":", 2)[1].rsplit(',"i"', 1)[0],
)

section(
    "Float/double rounding (float is rounded directly from the decimal text, not via double)",
    "f float, d double",
    {},
    [
        f'{{"f":{s},"d":{s}}}'
        for s in [
            "0.1",
            "1.00000005960464477539062499",
            "1.00000005960464477539062501",
            "16777217",
            "33554433",
            "9007199254740993",
            "3.4028235e38",
            "3.4028236e38",
            "1.4e-45",
            "7.0e-46",
            "1e-46",
            "144272520.0000000000014427252",
            "7541209.250000000000075412092",
            "4.9e-324",
            "2.4703282292062328e-324",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
        ]
    ],
)

section(
    'Decimal rounding and strings (HALF_UP, overflow -> null, strings via BigDecimal with "," removed)',
    "a decimal(10,2)",
    {},
    [
        f'{{"a":{v}}}'
        for v in [
            "1.005",
            "-1.005",
            "1.004999",
            "12345678.999",
            "99999999.994",
            "99999999.995",
            "123456789",
            "1e-3",
            "0.005",
            "1E+1",
            '"1.5"',
            '"1,000.5"',
            '"1,5"',
            '",,1"',
            '"1e2"',
            '"+1.5"',
            '"1.5 "',
            '" 1.5"',
            '"0x10"',
            '"NaN"',
            '""',
        ]
    ],
)
section(
    "decimal(38,10)",
    "a decimal(38,10)",
    {},
    [
        f'{{"a":{v}}}'
        for v in [
            "12345678901234567890.123456789012345678",
            "1234567890123456789012345678.9",
            "1e27",
            "1e28",
            "0.00000000005",
            "0.000000000049999",
            "-0.00000000005",
        ]
    ],
)

section(
    "Boolean field",
    "a boolean, z int",
    {},
    [
        f'{{"a":{v},"z":1}}'
        for v in [
            "true",
            "false",
            '"true"',
            '"false"',
            "1",
            "0",
            "null",
            "True",
            "TRUE",
            "tru",
            "[true]",
        ]
    ],
)

section(
    "String field given non-string JSON (re-serialised by Jackson, NOT the original text)",
    "a string",
    {},
    [
        f'{{"a":{v}}}'
        for v in [
            "1",
            "-0",
            "1.0",
            "1.5",
            "1e2",
            "1.50E3",
            "-0.0",
            "0.001",
            "1E-5",
            "1e7",
            "12345678.9",
            "1234567.0",
            "2e23",
            "5e-324",
            "1.7976931348623157e308",
            "3.141592653589793238",
            "1.0000000000000000000001",
            "123456789012345678901234567890",
            "1e400",
            "NaN",
            "-Infinity",
            "true",
            "false",
            "null",
            "[]",
            "[ ]",
            "{ }",
            '{ "a" : [1, 2] }',
            "[1e2, -0.0, 1.5]",
            '{"x":1e2}',
            "{'s':'q'}",
            "[true,null,false]",
            '{"k":"a\\u00e9\\n\\"\\/"}',
            '{"k":"\\u00e9\\u001f\\u2028\\ud83d\\ude00"}',
            '{"b":{"c":{"d":[{}]}}}',
            '"\\u00e9"',
            "'single'",
        ]
    ],
)

section(
    "Escapes inside a string field (output shown as UTF-8 hex)",
    "a string",
    {},
    [f'{{"a":"<{e}>"}}' for e in ESCAPES],
    hex=True,
)
section(
    "The same escapes inside an array copied into a string field (re-serialised; hex)",
    "a string",
    {},
    [f'{{"a":["<{e}>"]}}' for e in ESCAPES],
    hex=True,
)

section(
    "Invalid UTF-8 bytes inside a string value (input passed as raw bytes; output hex)",
    "a string",
    {},
    [b'{"a":"<' + s + b'>"}' for s in BAD_UTF8],
    hex=True,
)
section(
    "Invalid UTF-8 elsewhere, with _corrupt_record (hex)",
    "x int, a string, y int, _corrupt_record string",
    {},
    [
        b'{"x":1,"a":"\xff","y":2}',
        b'{"x":1,"q":"\xff","y":2}',
        b'{"x":1,"a":["\xff"],"y":2}',
        b'{"x":1,"\xff":1,"y":2}',
        b'\xff{"x":1}',
        b'{"x":1}\xff',
        b'{"x":1,\xff"y":2}',
        b'\xef\xbb\xbf{"x":1}',
        b'{"x":1,"a":"\xef\xbb\xbf"}',
    ],
    hex=True,
)

section(
    "Dates and timestamps, default formats (same string into all three fields)",
    "t timestamp, d date, n timestamp_ntz",
    {},
    [f'{{"t":"{s}","d":"{s}","n":"{s}"}}' for s in TS_STRINGS]
    + [
        f'{{"t":{v},"d":{v},"n":{v}}}'
        for v in [
            "1600000000",
            "-1",
            "0",
            "1.5",
            "1e3",
            "9223372036854",
            "9223372036855",
            "9223372036854775807",
            "true",
        ]
    ],
)

for _opts in [
    {"timestampFormat": "dd/MM/yyyy HH:mm", "dateFormat": "MM/dd/yyyy"},
    {
        "timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS",
        "dateFormat": "dd/MM/yyyy",
        "timestampNTZFormat": "dd/MM/yyyy HH:mm",
    },
    {"timestampFormat": "yyyy-MM-dd HH:mm:ss[.SSS]", "dateFormat": "yyyy-MM-dd"},
]:
    section(
        "Custom formats " + json.dumps(_opts),
        "t timestamp, d date, n timestamp_ntz",
        _opts,
        [f'{{"t":"{s}","d":"{s}","n":"{s}"}}' for s in FMT_STRINGS]
        + ['{"t":1600000000,"d":1600000000,"n":1600000000}'],
    )

section(
    "Top-level shapes, empty input, null input, trailing garbage, comments",
    "a int",
    {},
    [
        None,
        "",
        "   ",
        " \n\t ",
        "\n",
        "{}",
        '{"a":1}',
        '  {"a":1}  ',
        '{"b":1}',
        '[{"a":1}]',
        '[{"a":1},{"a":2}]',
        "[]",
        "[1]",
        "123",
        '"x"',
        "null",
        "true",
        '{"a":1',
        '{"a":',
        "{",
        "}",
        '{"a":1}}',
        '{"a":1} x',
        '{"a":1}{"a":2}',
        '{"a":1},',
        '{"a":1}\x00',
        '\ufeff{"a":1}',
        "{'a':1}",
        "{a:1}",
        '{"a":1 /* c */}',
        '/* c */{"a":1}',
        '// c\n{"a":1}',
        '# c\n{"a":1}',
        '{"A":1}',
        '{"a":1,}',
        '{"a":1,,"b":2}',
        '{"a" 1}',
        "nul",
        '\u00a0{"a":1}',
        '\x0b{"a":1}',
        '\x0c{"a":1}',
        '\x00{"a":1}',
        '\r\n{"a":1}\r\n',
        '{"\\u0061":1}',
        '{"a":1,"b":[1,2,{"c":"d"}]}',
        '"{\\"a\\":1}"',
    ],
)

section(
    "A corrupt-record field that also appears in the input",
    "a int, _corrupt_record string",
    {},
    [
        '{"a":1,"_corrupt_record":"given"}',
        '{"a":"x","_corrupt_record":"given"}',
        '{"_corrupt_record":{"k":1},"a":2}',
        '{"_corrupt_record":5}',
    ],
)

section(
    "Duplicate keys (struct: last successfully converted value wins; failed duplicates keep the earlier value)",
    "a int, b string, _corrupt_record string",
    {},
    [
        '{"a":1,"a":2}',
        '{"a":"x","a":2}',
        '{"a":2,"a":"x"}',
        '{"a":2,"a":null}',
        '{"a":null,"a":3}',
        '{"a":1,"b":"p","b":{"q":1}}',
    ],
)

section(
    "Arrays, structs and maps: wrong shapes and partial results (PERMISSIVE, with _corrupt_record)",
    "x int, arr array<int>, s struct<p:int,q:string>, m map<string,int>, y int, _corrupt_record string",
    {},
    [
        '{"x":1,"arr":[1,2],"s":{"p":1,"q":"a"},"m":{"k":1},"y":2}',
        '{"x":1,"arr":5,"y":2}',
        '{"x":1,"arr":"5","y":2}',
        '{"x":1,"arr":{"a":1},"y":2}',
        '{"x":1,"arr":[1,"b",3],"y":2}',
        '{"x":1,"arr":[1,null,3],"y":2}',
        '{"x":1,"arr":[1,[2],3],"y":2}',
        '{"x":1,"arr":[1,2.5],"y":2}',
        '{"x":1,"arr":[],"y":2}',
        '{"x":1,"s":[{"p":1}],"y":2}',
        '{"x":1,"s":[],"y":2}',
        '{"x":1,"s":5,"y":2}',
        '{"x":1,"s":{"p":"bad","q":"z"},"y":2}',
        '{"x":1,"s":{"p":1,"q":[1]},"y":2}',
        '{"x":1,"s":{},"y":2}',
        '{"x":1,"s":null,"y":2}',
        '{"x":1,"s":{"p":1,"p":2},"y":2}',
        '{"x":1,"m":{"k":1,"j":"bad","l":3},"y":2}',
        '{"x":1,"m":{"k":1,"k":2},"y":2}',
        '{"x":1,"m":{"k":null},"y":2}',
        '{"x":1,"m":{},"y":2}',
        '{"x":1,"m":[1],"y":2}',
        '{"x":1,"m":{"k":{"z":1}},"y":2}',
        '{"x":1,"m":{"":1},"y":2}',
        '{"x":"bad","arr":[1,2],"s":{"p":1},"m":{"k":1},"y":2}',
        '{"x":1,"arr":[1,2],"s":{"p":1},"m":{"k":1},"y":"bad"}',
    ],
)

section(
    "Array of structs / map of structs: struct elements keep partial values",
    "a array<struct<p:int,q:string>>, m map<string,struct<p:int,q:string>>, _corrupt_record string",
    {},
    [
        '{"a":[{"p":1},{"p":"x","q":"b"},null]}',
        '{"a":[{"p":1},5]}',
        '{"a":[{"p":1},[]]}',
        '{"a":{"p":1,"q":"x"}}',
        '{"a":[[1]]}',
        '{"m":{"k":{"p":"x","q":"s"},"j":{"p":2}}}',
        '{"a":[{"p":1,"q":{"r":1}}]}',
    ],
)

section(
    "Nested partial results two levels deep",
    "a struct<b:struct<c:int,d:int>,e:int>, f int",
    {},
    ['{"a":{"b":{"c":"x","d":1},"e":2},"f":3}', '{"a":{"b":[1],"e":2},"f":3}', '{"a":5,"f":3}'],
)


def _dl(field, n, obj=False):
    inner = (f'{n}x{{"a":' if obj else f"{n}x[") + " 1 " + ("}" if obj else "]") + f"x{n}"
    label = f'{{"x":1,"{field}":{inner},"y":2}}  (max depth {n + 1})'
    return (label, f'{{"x":1,"{field}":{_deepo(n) if obj else _deep(n)},"y":2}}')


section(
    "Deep nesting (Jackson StreamReadConstraints max nesting depth 1000; the root object "
    "is depth 1). `Nx[ 1 ]xN` = N nested arrays",
    "x int, s string, y int, _corrupt_record string",
    {},
    [_dl("u", d) for d in (998, 999, 1000, 5000)]
    + [_dl("s", d) for d in (998, 999, 1000, 1001, 5000)]
    + [_dl("u", d, True) for d in (999, 1000)]
    + [_dl("s", d, True) for d in (999, 1000, 1001)]
    + [(f"top-level {n}x[ 1 ]x{n}", _deep(n)) for n in (1000, 1001)]
    + [(f'top-level {n}x{{"a": 1 }}x{n}', _deepo(n)) for n in (1000, 1001)],
)
section(
    "Deep nesting inside a known array<string> field",
    "x int, s array<string>, y int",
    {},
    [_dl("s", d) for d in (997, 998, 999, 1000, 1001)],
)

for _o in [
    {"allowUnquotedFieldNames": "true"},
    {"allowSingleQuotes": "false"},
    {"allowNumericLeadingZeros": "true"},
    {"allowNonNumericNumbers": "false"},
    {"allowComments": "true"},
    {"allowBackslashEscapingAnyCharacter": "true"},
    {"allowUnquotedControlChars": "true"},
]:
    section(
        "Non-default option " + json.dumps(_o),
        "a string, d double",
        _o,
        [
            '{"a":1}',
            "{a:1}",
            "{'a':1}",
            "{\"a\":'x'}",
            '{"a":007}',
            '{"a":NaN}',
            '{"d":NaN}',
            '{"d":"NaN"}',
            '{"d":"-INF"}',
            '{"a":1 /*c*/}',
            '{"a":1 // c\n}',
            '{"a":"\\q"}',
            '{"a":"<\t>"}',
            '{"a":.5}',
            '{"a":+1}',
        ],
    )

# syntax errors at different places: (placement template, schema)
SYNTAX_ERRORS = {
    "007": "007",
    ".5": ".5",
    "+1": "+1",
    "0x1F": "0x1F",
    "tru": "tru",
    "nan": "nan",
    "1e": "1e",
    "-": "-",
    "raw TAB in string": '"<\t>"',
    "bad escape \\q": '"\\q"',
    "short \\u12x": '"\\u12x"',
    "[1,,2]": "[1,,2]",
    "[1,2,]": "[1,2,]",
    '{"p":1,}': '{"p":1,}',
    "{p:1}": "{p:1}",
    '{"p" 1}': '{"p" 1}',
    "depth 1000 arrays": _deep(1000, ""),
}
PLACEMENTS = {  # short name: (placement template, schema of k)
    "A root k int": ('"k":E', "k int"),
    "B root k string": ('"k":E', "k string"),
    "C root unknown": ('"u":E', "k int"),
    "D arr<int>": ('"k":[0,E,9]', "k array<int>"),
    "E arr<string>": ('"k":[0,E,9]', "k array<string>"),
    "F arr in string": ('"k":[0,E,9]', "k string"),
    "G arr in unknown": ('"u":[0,E,9]', "k int"),
    "H struct<p:int>": ('"k":{"p":E,"q":9}', "k struct<p:int,q:int>"),
    "I struct<p:string>": ('"k":{"p":E,"q":9}', "k struct<p:string,q:int>"),
    "J obj in string": ('"k":{"p":E,"q":9}', "k string"),
    "K unknown subfield": ('"k":{"r":E,"q":9}', "k struct<p:int,q:int>"),
    "L map<string,int>": ('"k":{"p":E,"q":9}', "k map<string,int>"),
}

FAILFAST_DOCS = [
    '{"a":1,"b":"x"}',
    '{"a":"x","b":"y"}',
    '{"a":1,"a":"x"}',
    '{"a":1',
    '[{"a":1}]',
    "123",
    "null",
    "",
    '{"a":1,"b":{"c":007}}',
]

# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------


def make_spark(master: str = "local[1]"):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master)
        .appName("sliceflow-spark-probe")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")  # FAILFAST probes would log task failures
    return spark


_TODAY = datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def _fmt(v) -> str:
    from pyspark.sql import Row

    if v is None:
        return "null"
    if isinstance(v, Row):
        d = v.asDict(recursive=False)
        if set(d) == {"__k", "__v"}:
            return f"({_fmt(d['__k'])}, {_fmt(d['__v'])})"
        return "{" + ", ".join(f"{k}: {_fmt(x)}" for k, x in d.items()) + "}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, (int, decimal.Decimal)):
        return str(v)
    if isinstance(v, str):
        if len(v) > 48:
            return json.dumps(v[:20], ensure_ascii=False)[:-1] + f'…"(len {len(v)})'
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_fmt(k)}: {_fmt(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    return repr(v)


def _display_col(col, dt, hexmode):
    """Spark-side conversion of a parsed value into something printable."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(dt, (T.TimestampType, T.TimestampNTZType, T.DateType)):
        return col.cast("string")
    if isinstance(dt, T.StringType) and hexmode:
        return F.when(col.isNull(), F.lit(None)).otherwise(
            F.concat(F.lit("0x"), F.lower(F.hex(col.cast("binary"))))
        )
    if isinstance(dt, T.StructType):
        return F.when(col.isNull(), F.lit(None)).otherwise(
            F.struct(
                *[_display_col(col[f.name], f.dataType, hexmode).alias(f.name) for f in dt.fields]
            )
        )
    if isinstance(dt, T.ArrayType):
        return F.transform(col, lambda x: _display_col(x, dt.elementType, hexmode))
    if isinstance(dt, T.MapType):
        return F.transform(
            F.map_entries(col),
            lambda e: F.struct(
                e["key"].alias("__k"), _display_col(e["value"], dt.valueType, hexmode).alias("__v")
            ),
        )
    return col


def _docs_df(spark, docs):
    from pyspark.sql import functions as F

    docs = [_doc(d) for d in docs]
    rows = [
        (i, d.encode("utf-8", "surrogatepass") if isinstance(d, str) else d)
        for i, d in enumerate(docs)
    ]
    return spark.createDataFrame(rows, "i int, b binary").select(
        "i", F.col("b").cast("string").alias("value")
    )


_VISIBLE_NON_ASCII = re.compile(r"[\u0080-\u00a0\u2028\u2029\ufeff\ud800-\udfff]")


def _show_input(d) -> str:
    """Input text as typed: backslashes are literal; raw control characters are shown
    as <0x09>, invisible non-ASCII as <U+FEFF>; bytes inputs as a Python bytes literal."""
    if d is None:
        return "None (SQL NULL)"
    if d == "":
        return "(empty string)"
    if isinstance(d, tuple):  # (label, doc)
        return d[0]
    if isinstance(d, bytes):
        s = repr(d)
    else:
        s = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"<0x{ord(m.group()):02x}>", d)
        s = _VISIBLE_NON_ASCII.sub(lambda m: f"<U+{ord(m.group()):04X}>", s)
    if len(s) > 80:
        s = s[:40] + f"…(len {len(d)})"
    return s


def _doc(d):
    return d[1] if isinstance(d, tuple) else d


def _md(s: str) -> str:
    s = s.replace("|", "\\|").replace("`", "'").replace("\n", " ⏎ ")
    return f"`{s}`" if s else ""


def run_section(spark, ddl, options, docs, hexmode=False, raw=False):
    from pyspark.sql import functions as F
    from pyspark.sql.types import _parse_datatype_string

    st = _parse_datatype_string(ddl)
    df = _docs_df(spark, docs)
    parsed = df.select("i", F.from_json("value", ddl, options).alias("j"))
    out = (
        parsed.select(
            "i", _display_col(F.col("j"), st, hexmode).alias("j"), F.col("j").isNull().alias("n")
        )
        .orderBy("i")
        .collect()
    )
    res = []
    if raw:
        return [(d, None if r.n else r.j) for d, r in zip(docs, out, strict=False)]
    for d, r in zip(docs, out, strict=False):
        o = "NULL" if r.n else _fmt(r.j)
        o = o.replace(_TODAY, "<today>")
        res.append((d, o))
    return res


def run_syntax_matrix(spark):
    from pyspark.sql import functions as F

    table = {}
    for pname, (tmpl, ddl) in PLACEMENTS.items():
        docs = ['{{"x":1,{},"y":2}}'.format(tmpl.replace("E", e)) for e in SYNTAX_ERRORS.values()]
        schema = f"x int, {ddl}, y int, _corrupt_record string"
        out = (
            _docs_df(spark, docs)
            .select("i", F.from_json("value", schema).alias("j"))
            .orderBy("i")
            .collect()
        )
        for ename, r in zip(SYNTAX_ERRORS, out, strict=False):
            o = r.j
            kept = [
                f"{n}={_fmt(getattr(o, n))}" for n in ("x", "k", "y") if getattr(o, n) is not None
            ]
            table[(pname, ename)] = (" ".join(kept) or "-") + (
                "" if o._corrupt_record is not None else " (no CR!)"
            )
    return table


def _err_text(e: BaseException) -> str:
    s = str(e)
    m = re.search(r"\[[A-Z_.]+\].*?SQLSTATE: \w+", s, re.S)
    return (m.group(0) if m else s.splitlines()[0]).strip()


def run_failfast(spark):
    from pyspark.sql import functions as F

    out = []
    for d in FAILFAST_DOCS:
        df = _docs_df(spark, [d])
        try:
            r = df.select(
                F.from_json("value", "a int, b string", {"mode": "FAILFAST"}).alias("j")
            ).collect()[0]
            out.append((d, "ok: " + ("NULL" if r.j is None else _fmt(r.j))))
        except Exception as e:  # noqa: BLE001
            out.append((d, "ERROR " + _err_text(e)))
    try:
        _docs_df(spark, ['{"a":1}']).select(
            F.from_json("value", "a int", {"mode": "DROPMALFORMED"})
        ).collect()
        out.append(('{"a":1} with mode=DROPMALFORMED', "ok"))
    except Exception as e:  # noqa: BLE001
        out.append(('{"a":1} with mode=DROPMALFORMED', "ERROR " + _err_text(e)))
    try:
        _docs_df(spark, ['{"a":1}']).select(
            F.from_json(
                "value",
                "a int, _corrupt_record int",
                {"columnNameOfCorruptRecord": "_corrupt_record"},
            )
        ).collect()
        out.append(("_corrupt_record declared INT", "ok"))
    except Exception as e:  # noqa: BLE001
        out.append(("_corrupt_record declared INT", "ERROR " + _err_text(e)))
    return out


def run_configs(spark):
    keys = [
        "spark.sql.json.enablePartialResults",
        "spark.sql.json.enableExactStringParsing",
        "spark.sql.ansi.enabled",
        "spark.sql.legacy.timeParserPolicy",
        "spark.sql.legacy.json.allowEmptyString.enabled",
        "spark.sql.columnNameOfCorruptRecord",
        "spark.sql.timestampType",
        "spark.sql.caseSensitive",
    ]
    out = []
    for k in keys:
        try:
            out.append((k, spark.conf.get(k)))
        except Exception as e:  # noqa: BLE001
            out.append((k, "ERROR " + _err_text(e)))
    import pyspark

    jvm = spark.sparkContext._jvm
    out.append(("pyspark version", pyspark.__version__))
    out.append(("java.version", jvm.java.lang.System.getProperty("java.version")))
    return out


def run_partial_off(spark):
    spark.conf.set("spark.sql.json.enablePartialResults", "false")
    try:
        return run_section(
            spark,
            "x int, arr array<int>, s struct<p:int,q:string>, y int, _corrupt_record string",
            {},
            [
                '{"x":1,"s":{"p":"bad","q":"z"},"y":2}',
                '{"x":"bad","y":2}',
                '{"x":1,"arr":[1,"b"],"y":2}',
                '{"x":1,"s":{"p":1,"q":[1]},"y":2}',
            ],
        )
    finally:
        spark.conf.set("spark.sql.json.enablePartialResults", "true")


def run_read_json(spark):
    """spark.read.json (the file data source) for comparison: blank lines, CRLF, exact strings."""
    d = tempfile.mkdtemp(prefix="sliceflow-probe-")
    cases = {
        "LF with blank and whitespace-only lines": b'{"a":1}\n\n{"a":2}\n   \n{"a":3}\n',
        "CRLF line endings (+ a blank CRLF line)": b'{"a":1}\r\n{"a":2}\r\n\r\n{"a":3,"s":"x"}\r\n',
        "CR-only line endings": b'{"a":1}\r{"a":2}\r',
        "no final newline": b'{"a":1}\n{"a":2}',
        "UTF-8 BOM at file start": b'\xef\xbb\xbf{"a":1}\n{"a":2}\n',
        "bad lines, top-level arrays, [] and scalar": b'{"a":1}\n{"a":\n{"a":"x"}\n[{"a":4},{"a":5}]\n[]\n123\n',
        "string field given number / object (exact text kept here!)": b'{"a":1,"s":1.50E3}\n{"a":2,"s":{ "k" : [1, 2] }}\n',
    }
    out = []
    for name, data in cases.items():
        p = os.path.join(d, "f.json")
        with open(p, "wb") as fh:
            fh.write(data)
        rows = spark.read.schema("a int, s string, _corrupt_record string").json(p).collect()
        out.append((name, data, [tuple(r) for r in rows]))
        os.remove(p)
    os.rmdir(d)
    return out


# ---------------------------------------------------------------------------
# markdown output
# ---------------------------------------------------------------------------


def generate(spark) -> str:
    lines = []
    w = lines.append
    w("### Environment and relevant configuration defaults\n")
    w("| key | value |\n|---|---|")
    for k, v in run_configs(spark):
        w(f"| `{k}` | `{v}` |")
    w("")
    for title, ddl, options, docs, flags in SECTIONS:
        w(f"### {title}\n")
        w(
            f"Schema `{ddl}`"
            + (f", options `{json.dumps(options)}`" if options else "")
            + (" (string leaves shown as hex)" if flags.get("hex") else "")
            + "\n"
        )
        if flags.get("wide"):
            fields = [f.split()[0] for f in ddl.split(", ")]
            w(
                "| V | "
                + " | ".join(f"{f} {t}" for f, t in (x.split(" ", 1) for x in ddl.split(", ")))
                + " |\n|---|"
                + "---|" * len(fields)
            )
            for d, o in run_section(spark, ddl, options, docs, flags.get("hex", False), raw=True):
                cells = (
                    ["NULL"] * len(fields) if o is None else [_fmt(getattr(o, f)) for f in fields]
                )
                w(f"| {_md(flags['label'](d))} | " + " | ".join(_md(c) for c in cells) + " |")
            w("")
            continue
        w("| input | from_json result |\n|---|---|")
        for d, o in run_section(spark, ddl, options, docs, flags.get("hex", False)):
            w(f"| {_md(_show_input(d))} | {_md(o)} |")
        w("")
    w("### spark.sql.json.enablePartialResults=false (non-default, for contrast)\n")
    w("| input | from_json result |\n|---|---|")
    for d, o in run_partial_off(spark):
        w(f"| {_md(_show_input(d))} | {_md(o)} |")
    w("")
    w("### Syntax-error matrix\n")
    w(
        'Document `{"x":1,<placement with E replaced by the bad text>,"y":2}`, schema '
        "`x int, k <type>, y int, _corrupt_record string`. A cell lists the fields that are still "
        "non-null (`-` = all null). `_corrupt_record` is set in every cell (a cell would say "
        "`(no CR!)` otherwise). Columns:\n"
    )
    for p, (tmpl, ddl) in PLACEMENTS.items():
        w(f"* **{p[0]}** = `{tmpl}` with `{ddl}`")
    w("")
    table = run_syntax_matrix(spark)
    w("| error E | " + " | ".join(f"{p[0]}" for p in PLACEMENTS) + " |")
    w("|---|" + "---|" * len(PLACEMENTS))
    for n in SYNTAX_ERRORS:
        w(f"| {_md(n)} | " + " | ".join(_md(table[(p, n)]) for p in PLACEMENTS) + " |")
    w("")
    w("### FAILFAST / DROPMALFORMED / bad corrupt-record type (schema `a int, b string`)\n")
    w("| input | result |\n|---|---|")
    for d, o in run_failfast(spark):
        w(f"| {_md(_show_input(d))} | {_md(o)} |")
    w("")
    w(
        "### spark.read.json (file source) for comparison, schema `a int, s string, _corrupt_record string`\n"
    )
    w("| file | bytes | rows |\n|---|---|---|")
    for name, data, rows in run_read_json(spark):
        w(f"| {name} | {_md(repr(data))} | {_md(repr(rows))} |")
    w("")
    return "\n".join(lines)


BEGIN = "<!-- BEGIN GENERATED by tools/spark_probe.py -->"
END = "<!-- END GENERATED -->"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-doc", help="replace the generated block of this markdown file")
    args = ap.parse_args(argv)
    t0 = time.time()
    spark = make_spark()
    text = generate(spark)
    if args.write_doc:
        with open(args.write_doc, encoding="utf-8") as fh:
            doc = fh.read()
        i, j = doc.index(BEGIN), doc.index(END)
        doc = doc[: i + len(BEGIN)] + "\n\n" + text + "\n" + doc[j:]
        with open(args.write_doc, "w", encoding="utf-8") as fh:
            fh.write(doc)
        print(f"wrote {args.write_doc} in {time.time() - t0:.1f}s", file=sys.stderr)
    else:
        print(text)
    spark.stop()


if __name__ == "__main__":
    main()
