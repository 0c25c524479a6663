"""Deterministic corpus of JSON documents for differential testing against Spark.

Everything is driven by a seeded ``random.Random``; the same ``(n, seed)`` always
gives the same list (no hypothesis, no global random state, no clock).

Public API
----------
``corpus(n, seed) -> list[str | bytes | None]``
    The documents.  ``None`` is a SQL NULL input row, ``bytes`` are used only for
    documents that contain invalid UTF-8 (everything else is ``str``; a ``str``
    may contain lone surrogates only as JSON escapes, never as raw code points).
``corpus_with_categories(n, seed) -> list[tuple[str, str | bytes | None]]``
    Same documents (same order) with a category label each, for grouping
    mismatches (see ``CATEGORIES``).
``SCHEMAS: dict[str, str]``
    Spark DDL strings.  Every document can be run against every schema (unknown
    fields are just skipped), but each family of documents targets one schema.
``OPTION_SETS: dict[str, dict[str, str]]``
    from_json options.  Use ``ddl_for(schema_name, option_set_name)`` to get the
    DDL; it appends ``_corrupt_record STRING`` for option sets that name a
    corrupt-record column.
``TEST_MATRIX``
    The (schema, option set) pairs worth running.

Things deliberately *not* generated (because Spark's answer depends on the
clock): time-only timestamp strings such as ``"03:04:05"`` or ``"T12:00"``,
which Spark resolves against the current date.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable

Doc = str | bytes | None

# ---------------------------------------------------------------------------
# schemas and options
# ---------------------------------------------------------------------------

NEXMARK_DDL = (
    "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, "
    "dateTime TIMESTAMP, extra STRING"
)

ALL_TYPES_FIELDS = [
    ("b", "BOOLEAN"),
    ("ti", "TINYINT"),
    ("si", "SMALLINT"),
    ("i", "INT"),
    ("bi", "BIGINT"),
    ("f", "FLOAT"),
    ("d", "DOUBLE"),
    ("dc", "DECIMAL(10,2)"),
    ("dc38", "DECIMAL(38,10)"),
    ("s", "STRING"),
    ("dt", "DATE"),
    ("ts", "TIMESTAMP"),
    ("tsntz", "TIMESTAMP_NTZ"),
    ("arr", "ARRAY<INT>"),
    ("arr_st", "ARRAY<STRUCT<x: INT, y: STRING>>"),
    ("st", "STRUCT<a: INT, b: STRING, c: ARRAY<DOUBLE>>"),
    ("m", "MAP<STRING, DOUBLE>"),
]

SCHEMAS: dict[str, str] = {
    "nexmark": NEXMARK_DDL,
    "all_types": ", ".join(f"{n} {t}" for n, t in ALL_TYPES_FIELDS),
    # same field names, everything STRING: exercises Spark's re-serialisation of
    # non-string values (numbers, objects, arrays) into string fields.
    "all_strings": ", ".join(f"{n} STRING" for n, _ in ALL_TYPES_FIELDS),
}

CORRUPT_COLUMN = "_corrupt_record"

OPTION_SETS: dict[str, dict[str, str]] = {
    "default": {},
    "corrupt": {"columnNameOfCorruptRecord": CORRUPT_COLUMN},
    "formats": {
        "timestampFormat": "dd/MM/yyyy HH:mm",
        "dateFormat": "MM/dd/yyyy",
        "timestampNTZFormat": "yyyy-MM-dd HH:mm:ss.SSS",
    },
    "formats_ms": {"timestampFormat": "yyyy-MM-dd HH:mm:ss.SSS", "dateFormat": "dd/MM/yyyy"},
}

TEST_MATRIX: list[tuple[str, str]] = [
    ("nexmark", "default"),
    ("nexmark", "corrupt"),
    ("nexmark", "formats_ms"),
    ("all_types", "default"),
    ("all_types", "corrupt"),
    ("all_types", "formats"),
    ("all_types", "formats_ms"),
    ("all_strings", "default"),
    ("all_strings", "corrupt"),
]


def ddl_for(schema_name: str, option_set: str = "default") -> str:
    """DDL for a schema under an option set (adds the corrupt-record column when needed)."""
    ddl = SCHEMAS[schema_name]
    col = OPTION_SETS[option_set].get("columnNameOfCorruptRecord")
    return f"{ddl}, {col} STRING" if col else ddl


# ---------------------------------------------------------------------------
# a tiny JSON writer that can emit non-standard tokens and duplicate keys
# ---------------------------------------------------------------------------


class Raw(str):
    """Text emitted verbatim (odd numbers, bad tokens, pre-escaped strings)."""


class Obj(list):
    """A JSON object as a list of (key, value) pairs (keeps order and duplicates)."""


def _ws(rng: random.Random, style: str) -> str:
    if style == "compact":
        return ""
    if style == "spaced":
        return " "
    return rng.choice(["", " ", "  ", "\n", "\t", "\r\n", " \n  ", "\n\t"])


def dump(v, rng: random.Random, style: str = "compact", ascii_only: bool = False) -> str:
    """Serialise ``v`` (None/bool/int/float/str/Raw/list/Obj/dict) as JSON text."""
    if isinstance(v, Raw):
        return str(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)  # finite floats only; NaN/Infinity are Raw tokens
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=ascii_only)
    if isinstance(v, dict):
        v = Obj(v.items())
    if isinstance(v, Obj):
        w = lambda: _ws(rng, style)  # noqa: E731
        parts = [
            w()
            + dump(k, rng, style, ascii_only)
            + w()
            + ":"
            + w()
            + dump(x, rng, style, ascii_only)
            + w()
            for k, x in v
        ]
        return "{" + ",".join(parts) + "}" if parts else "{" + w() + "}"
    if isinstance(v, list):
        w = lambda: _ws(rng, style)  # noqa: E731
        parts = [w() + dump(x, rng, style, ascii_only) + w() for x in v]
        return "[" + ",".join(parts) + "]" if parts else "[" + w() + "]"
    raise TypeError(type(v))


# ---------------------------------------------------------------------------
# value pools
# ---------------------------------------------------------------------------

# numbers and number-like tokens; the first group is valid JSON, the second is a
# syntax error for Jackson with the default options.
ODD_NUMBERS_VALID = [
    "-0",
    "-0.0",
    "0.0",
    "1e400",
    "-1e400",
    "1e-400",
    "1E+2",
    "1e2",
    "1.50E3",
    "1.0",
    "1.5",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "123456789012345678901234567890",
    "127",
    "128",
    "-129",
    "255",
    "256",
    "32767",
    "32768",
    "65535",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4.9e-324",
    "2.4703282292062328e-324",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "3.4028235e38",
    "3.4028236e38",
    "1.4e-45",
    "2e23",
    "1e22",
    "1e21",
    "1e7",
    "1e-7",
    "0.001",
    "1E-5",
    "12345678.9",
    "0.1",
    "3.141592653589793238462643",
    "1.0000000000000000000001",
    "16777217",
    "9007199254740993",
    "1.005",
    "99999999.995",
    "144272520.0000000000014427252",
    "NaN",
    "Infinity",
    "-Infinity",
    "+Infinity",
]
ODD_NUMBERS_SYNTAX = [
    "007",
    "00",
    "-01",
    ".5",
    "-.5",
    "5.",
    "+1",
    "0x1F",
    "0X10",
    "1e",
    "1e+",
    "-",
    "--1",
    "1.2.3",
    "INF",
    "-INF",
    "nan",
    "inf",
    "Inf",
    "1_000",
]
NUMBER_STRINGS = [
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
    '"-2"',
    '"1,000.5"',
    '"1,5"',
    '",,1"',
    '"1e2"',
    '"+1.5"',
    '" 1"',
    '"1 "',
    '"0x10"',
    '""',
    '"true"',
]
WRONG_SHAPES = [
    "true",
    "false",
    "null",
    "[]",
    "[1]",
    "[1,2]",
    "{}",
    '{"a":1}',
    '"x"',
    '[{"x":1}]',
    "[[1]]",
    '{"x":[1,{"y":null}]}',
]

# timestamps/dates that the default (non-custom-format) parsers handle in
# interesting ways.  No time-only strings (they depend on the current date).
TS_DEFAULT_STRINGS = [
    "2020-01-02",
    "2020-1-2",
    "2020-01-02T03:04:05",
    "2020-01-02 03:04:05",
    "2020-01-02T03:04",
    "2020-01-02T03",
    "2020-01-02 03:04:05.123456789",
    "2020-01-02 03:04:05.1234567",
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
    "0001-01-01",
    "9999-12-31T23:59:59.999999",
    "2020-13-01",
    "2020-02-30",
    "2020-02-29",
    "2021-02-29",
    "2020-01-02T25:00:00",
    "2020-01-02 03:04:05,123",
    "1600000000",
    "1.5",
    " 2020-01-02",
    "2020-01-02 ",
    "\t2020-01-02\n",
    "",
    "garbage",
    "2020/01/02",
    "02/01/2020 03:04",
    "01/02/2020",
    "1582-10-10",
    "1900-01-01 00:00:00",
    "1969-12-31T23:59:59.999999Z",
    "2038-01-19 03:14:08",
    "294247-01-10 04:00:54",
    "-290308-12-21 19:59:05.224192",
    "2020-06-30T12:00:00-07:00",
    "2020-03-08T02:30:00America/Los_Angeles",
    "2020-01-02T03:04:05+14:00",
    "2020-01-02T03:04:05+18:01",
    "2020-01-02T03:04:05.000000001",
]
TS_NUMBERS = [
    "1600000000",
    "0",
    "-1",
    "1.5",
    "1e3",
    "9223372036854",
    "9223372036855",
    "-9223372036855",
    "9223372036854775807",
    "1600000000000",
]
FORMAT_STRINGS = [  # for the "formats" / "formats_ms" option sets
    "02/01/2020 03:04",
    "31/12/2020 23:59",
    "2/1/2020 3:04",
    "02/01/2020 03:04:05",
    "02/01/2020",
    "01/02/2020",
    "1/2/2020",
    "13/02/2020",
    " 01/02/2020",
    "01/02/2020 ",
    "29/02/2021 10:00",
    "2020-01-02 03:04:05.123",
    "2020-01-02 03:04:05.1",
    "2020-01-02 03:04:05.12",
    "2020-01-02 03:04:05.1234",
    "2020-01-02 03:04:05",
    "2020-01-02T03:04:05",
    "2020-01-02",
    "garbage",
    "",
]

VALID_ESCAPES = [
    "\\n",
    "\\t",
    "\\/",
    "\\b",
    "\\f",
    "\\r",
    '\\"',
    "\\\\",
    "\\u00e9",
    "\\u00E9",
    "\\u0041",
    "\\u0000",
    "\\u0001",
    "\\u001f",
    "\\u007f",
    "\\u0080",
    "\\u2028",
    "\\u2029",
    "\\ufeff",
    "\\uffff",
    "\\ud83d\\ude00",
    "\\uD834\\uDD1E",
    "\\'",
]
LONE_SURROGATES = [
    "\\ud800",
    "\\udbff",
    "\\udc00",
    "\\udfff",
    "\\ud83d",
    "\\ude00",
    "\\ude00\\ud83d",
    "\\ud800\\ud800",
    "\\ud800x",
    "\\ud800\\u0041",
]
BAD_ESCAPES = ["\\a", "\\x41", "\\u12", "\\u12x", "\\U00e9", "\\0", "\\", "\\ "]
UNICODE_SNIPPETS = [
    "é",
    "ß",
    "中文",
    "日本語",
    "😀",
    "𝄞",
    "\u0301",
    "e\u0301",
    "\u2028",
    "\u00a0",
    "\ufeff",
    "\u200b",
    "\uffff",
    "\U0010ffff",
    "Ω≈ç√",
    "\u007f",
]
CONTROL_CHARS = ["\t", "\n", "\r", "\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f"]
BAD_UTF8 = [
    b"\x80",
    b"\xbf",
    b"\xc0",
    b"\xc0\x80",
    b"\xc1\xbf",
    b"\xc2",
    b"\xc2\x7f",
    b"\xe0\x80",
    b"\xe0\x9f\xbf",
    b"\xe0\xa0",
    b"\xe1\x80",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xed\xa0",
    b"\xed\xa0\x41",
    b"\xf0\x80\x80\x80",
    b"\xf0\x90\x80",
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

CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]
WORDS = ["auction", "item", "bid", "apple", "kiwi", "mango", "query", "nexmark", "cell", "phone"]


def _rand_ascii(rng: random.Random, lo: int, hi: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:;!?/"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def _rand_text(rng: random.Random) -> str:
    """A Python str (valid Unicode, no lone surrogates) of mixed content."""
    parts = []
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        if r < 0.6:
            parts.append(_rand_ascii(rng, 0, 12))
        elif r < 0.85:
            parts.append(rng.choice(UNICODE_SNIPPETS))
        else:
            parts.append(rng.choice(["\n", "\t", '"', "\\", "/", "\x01", "\x1f", "\x7f"]))
    return "".join(parts)


def _escaped_string(rng: random.Random, pieces: list[str]) -> Raw:
    """A JSON string literal built from raw-escape pieces and plain text."""
    out = []
    for _ in range(rng.randint(1, 5)):
        out.append(rng.choice(pieces) if rng.random() < 0.6 else _rand_ascii(rng, 0, 4))
    return Raw('"' + "".join(out) + '"')


# ---------------------------------------------------------------------------
# generators of valid values
# ---------------------------------------------------------------------------


def _date(rng: random.Random) -> tuple[int, int, int]:
    y = rng.choice([rng.randint(1900, 2100), rng.randint(1, 9999), 1970, 2000, 2020])
    m = rng.randint(1, 12)
    d = rng.randint(1, 28 if m == 2 else 30)
    return y, m, d


def _ts_default(rng: random.Random) -> str:
    y, mo, d = _date(rng)
    h, mi, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    frac = rng.choice(
        [
            "",
            "." + str(rng.randint(0, 999)).zfill(3),
            "." + str(rng.randint(0, 999999)).zfill(6),
            ".5",
            "." + str(rng.randint(0, 999999999)).zfill(9),
        ]
    )
    sep = rng.choice([" ", "T"])
    zone = rng.choice(["", "", "", "Z", "+01:00", "-08:00", "+0530", " UTC", "+00:00"])
    return f"{y:04d}-{mo:02d}-{d:02d}{sep}{h:02d}:{mi:02d}:{s:02d}{frac}{zone}"


def _ts_ntz(rng: random.Random) -> str:
    y, mo, d = _date(rng)
    h, mi, s = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    frac = rng.choice(
        ["", "." + str(rng.randint(0, 999999)).zfill(6), "." + str(rng.randint(0, 999)).zfill(3)]
    )
    return f"{y:04d}-{mo:02d}-{d:02d}{rng.choice([' ', 'T'])}{h:02d}:{mi:02d}:{s:02d}{frac}"


def _nexmark_datetime(rng: random.Random) -> str:
    # Nexmark generators emit e.g. "2015-07-15 00:00:00.123"
    base = 1436918400 + rng.randint(0, 10 * 365 * 86400)
    import datetime as _dt

    t = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=base, milliseconds=rng.randint(0, 999))
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def _double(rng: random.Random) -> float:
    r = rng.random()
    if r < 0.3:
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 6))
    if r < 0.6:
        return rng.uniform(-1, 1) * 10.0 ** rng.randint(-300, 300)
    if r < 0.8:
        return float(rng.randint(-(10**6), 10**6))
    return rng.choice(
        [
            0.0,
            -0.0,
            0.1,
            0.2,
            0.3,
            1e16,
            1e-5,
            5e-324,
            1.7976931348623157e308,
            123456789.123,
            2.5,
            1e7,
            1e21,
            1e22,
            9007199254740993.0,
        ]
    )


def _float32ish(rng: random.Random) -> float:
    return rng.choice(
        [
            round(rng.uniform(-1e4, 1e4), rng.randint(0, 4)),
            rng.uniform(-1, 1) * 10.0 ** rng.randint(-40, 38),
            float(rng.randint(-1000, 1000)),
        ]
    )


def _decimal(rng: random.Random, int_digits: int, scale: int) -> Raw:
    ip = str(rng.randint(0, 10 ** rng.randint(0, int_digits) - 1))
    fp = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, scale)))
    sign = rng.choice(["", "", "-"])
    return Raw(sign + ip + ("." + fp if fp else ""))


def nexmark_value(rng: random.Random) -> Obj:
    url = (
        "https://www.nexmark.com/"
        + "/".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        + f"/item.htm?query=1&channel_id={rng.randint(0, 1 << 20)}"
    )
    obj = Obj(
        [
            ("auction", rng.randint(1000, 1_100_000)),
            ("bidder", rng.randint(1000, 10_000_000)),
            ("price", rng.randint(1, 100_000_000)),
            (
                "channel",
                rng.choice(CHANNELS) if rng.random() < 0.7 else f"channel-{rng.randint(0, 9999)}",
            ),
            ("url", url),
            ("dateTime", _nexmark_datetime(rng)),
            ("extra", _rand_ascii(rng, 0, 40) if rng.random() < 0.9 else _rand_text(rng)),
        ]
    )
    r = rng.random()
    if r < 0.1:
        rng.shuffle(obj)
    elif r < 0.15:
        obj.append(
            (
                rng.choice(["bid_id", "Auction", "PRICE", "unknown", ""]),
                rng.choice([1, "x", None, [1, 2], {"k": "v"}]),
            )
        )
    return obj


def all_types_value(rng: random.Random, fmt: str | None = None) -> Obj:
    """A valid row for the all_types schema.  ``fmt`` = "formats"/"formats_ms" uses the
    custom timestamp/date formats of that option set."""
    y, mo, d = _date(rng)
    if fmt == "formats":
        h, mi = rng.randint(0, 23), rng.randint(0, 59)
        ts = f"{d:02d}/{mo:02d}/{y:04d} {h:02d}:{mi:02d}"
        dt = f"{mo:02d}/{d:02d}/{y:04d}"
        ntz = _ts_ntz(rng).replace("T", " ")[:19] + "." + str(rng.randint(0, 999)).zfill(3)
    elif fmt == "formats_ms":
        ts = _ts_ntz(rng).replace("T", " ")[:19] + "." + str(rng.randint(0, 999)).zfill(3)
        dt = f"{d:02d}/{mo:02d}/{y:04d}"
        ntz = _ts_ntz(rng)
    else:
        ts = _ts_default(rng) if rng.random() < 0.9 else Raw(str(rng.randint(-(2**31), 2**33)))
        dt = f"{y:04d}-{mo:02d}-{d:02d}"
        ntz = _ts_ntz(rng)
    obj = Obj(
        [
            ("b", rng.choice([True, False])),
            ("ti", rng.randint(-128, 127)),
            ("si", rng.randint(-32768, 32767)),
            ("i", rng.randint(-(2**31), 2**31 - 1)),
            ("bi", rng.randint(-(2**63), 2**63 - 1)),
            ("f", _float32ish(rng)),
            ("d", _double(rng)),
            ("dc", _decimal(rng, 8, 2)),
            ("dc38", _decimal(rng, 28, 10)),
            ("s", _rand_text(rng)),
            ("dt", dt),
            ("ts", ts),
            ("tsntz", ntz),
            (
                "arr",
                [
                    rng.choice([rng.randint(-1000, 1000), None])
                    if rng.random() < 0.1
                    else rng.randint(-(2**31), 2**31 - 1)
                    for _ in range(rng.randint(0, 6))
                ],
            ),
            (
                "arr_st",
                [
                    rng.choice(
                        [
                            None,
                            Obj([("x", rng.randint(-99, 99)), ("y", _rand_ascii(rng, 0, 5))]),
                            Obj([("y", _rand_text(rng))]),
                            Obj([]),
                        ]
                    )
                    if rng.random() < 0.2
                    else Obj([("x", rng.randint(-99, 99)), ("y", _rand_ascii(rng, 0, 8))])
                    for _ in range(rng.randint(0, 4))
                ],
            ),
            (
                "st",
                Obj(
                    [
                        ("a", rng.randint(-(10**6), 10**6)),
                        ("b", _rand_text(rng)),
                        ("c", [_double(rng) for _ in range(rng.randint(0, 4))]),
                    ]
                ),
            ),
            (
                "m",
                Obj(
                    [
                        (_rand_ascii(rng, 0, 6), _double(rng) if rng.random() < 0.9 else None)
                        for _ in range(rng.randint(0, 4))
                    ]
                ),
            ),
        ]
    )
    # drop / null out some fields, shuffle sometimes
    for k in range(len(obj) - 1, -1, -1):
        r = rng.random()
        if r < 0.05:
            del obj[k]
        elif r < 0.08:
            obj[k] = (obj[k][0], None)
    if rng.random() < 0.1:
        rng.shuffle(obj)
    return obj


# values that are wrong or odd for a field of the given family
def _odd_value(rng: random.Random, field: str) -> Raw:
    r = rng.random()
    if field in ("dt", "ts", "tsntz"):
        if r < 0.6:
            return Raw(json.dumps(rng.choice(TS_DEFAULT_STRINGS)))
        if r < 0.75:
            return Raw(json.dumps(rng.choice(FORMAT_STRINGS)))
        if r < 0.9:
            return Raw(rng.choice(TS_NUMBERS))
        return Raw(rng.choice(WRONG_SHAPES))
    if field in ("arr", "arr_st", "st", "m"):
        inner = {
            "arr": [
                '[1,"2",3]',
                "[1,2.5]",
                "[1,null]",
                "[[1]]",
                "[2147483648]",
                "[{}]",
                "[1e2]",
                "[-0]",
                "[true]",
            ],
            "arr_st": [
                '[{"x":"bad","y":"k"}]',
                '[{"x":1},5]',
                '[{"x":1,"y":[1]}]',
                "[[]]",
                '{"x":1,"y":"solo"}',
                '[{"x":1,"x":2,"y":{"z":1e2}}]',
                "[null,{}]",
            ],
            "st": [
                '{"a":"bad","b":"z","c":[1]}',
                '{"a":1,"c":[1,"x"]}',
                '{"a":1,"c":5}',
                '[{"a":1}]',
                '{"b":{"q":[1, 2.50]}}',
                '{"a":1,"a":"x"}',
                '{"c":[NaN,"NaN",1e400]}',
            ],
            "m": [
                '{"k":1,"j":"bad"}',
                '{"k":1,"k":2}',
                '{"k":"NaN","j":"-INF"}',
                '{"":null}',
                '{"k":{"z":1}}',
                '{"k":[1]}',
                '[{"k":1}]',
                '{"k":1e400,"k2":-0.0}',
            ],
        }[field]
        return Raw(rng.choice(inner) if r < 0.7 else rng.choice(WRONG_SHAPES + ODD_NUMBERS_VALID))
    if field == "s":
        return Raw(
            rng.choice(
                ODD_NUMBERS_VALID
                + WRONG_SHAPES
                + NUMBER_STRINGS
                + [
                    '{ "a" : [1, 2] }',
                    "[ 1 , 2.50 , -0.0 ]",
                    "{'q':'single'}",
                    '{"n":{"m":[true,false,null,1e-7]}}',
                ]
            )
        )
    if field == "b":
        return Raw(rng.choice(['"true"', '"false"', "1", "0", "True", "null", "[true]", '""']))
    return Raw(rng.choice(ODD_NUMBERS_VALID + NUMBER_STRINGS + WRONG_SHAPES))


# ---------------------------------------------------------------------------
# document families
# ---------------------------------------------------------------------------


def _style(rng: random.Random) -> str:
    return rng.choices(["compact", "spaced", "random"], [0.7, 0.15, 0.15])[0]


def _doc(rng: random.Random, obj) -> str:
    return dump(obj, rng, _style(rng), ascii_only=rng.random() < 0.2)


def g_nexmark(rng):
    return _doc(rng, nexmark_value(rng))


def g_nexmark_mutated(rng):
    obj = nexmark_value(rng)
    for _ in range(rng.randint(1, 2)):
        k = rng.randrange(len(obj))
        name = obj[k][0]
        if name in ("auction", "bidder", "price"):
            v = _odd_value(rng, "bi")
        elif name == "dateTime":
            v = _odd_value(rng, "ts") if rng.random() < 0.8 else Raw(rng.choice(TS_NUMBERS))
        else:
            v = _odd_value(rng, "s")
        obj[k] = (name, v)
    return _doc(rng, obj)


def g_all_types(rng):
    return _doc(rng, all_types_value(rng))


def g_all_types_mutated(rng):
    obj = all_types_value(rng)
    if not obj:
        return "{}"
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(len(obj))
        obj[k] = (obj[k][0], _odd_value(rng, obj[k][0]))
    return _doc(rng, obj)


def g_formats(rng):
    fmt = rng.choice(["formats", "formats_ms"])
    obj = all_types_value(rng, fmt)
    if rng.random() < 0.4:  # mix in strings of the other formats
        for name in ("ts", "dt", "tsntz"):
            if rng.random() < 0.5:
                obj.append((name, rng.choice(FORMAT_STRINGS + TS_DEFAULT_STRINGS[:20])))
    if rng.random() < 0.3:
        obj.append(("dateTime", rng.choice(FORMAT_STRINGS)))
    return _doc(rng, obj)


def g_odd_numbers(rng):
    """Odd numbers at the top level of all numeric fields (root-level syntax errors too)."""
    tok = rng.choice(ODD_NUMBERS_VALID * 3 + ODD_NUMBERS_SYNTAX + NUMBER_STRINGS)
    fields = rng.sample(
        [
            n
            for n, _ in ALL_TYPES_FIELDS
            if n in ("ti", "si", "i", "bi", "f", "d", "dc", "dc38", "s", "ts", "b")
        ],
        rng.randint(1, 4),
    )
    obj = Obj([(f, Raw(tok)) for f in fields])
    if rng.random() < 0.5:
        obj.insert(0, ("price", Raw(tok)))
    if rng.random() < 0.5:  # odd numbers inside containers (valid JSON only)
        vt = rng.choice(ODD_NUMBERS_VALID)
        where = rng.choice(["arr", "m", "st", "s"])
        text = {
            "arr": f"[{vt}]",
            "m": f'{{"k":{vt}}}',
            "st": f'{{"a":{vt},"c":[{vt}]}}',
            "s": f'[{vt},{{"x":{vt}}}]',
        }[where]
        obj.append((where, Raw(text)))
    return _doc(rng, obj)


def g_escapes(rng):
    obj = Obj([("s", _escaped_string(rng, VALID_ESCAPES)), ("i", rng.randint(0, 9))])
    r = rng.random()
    if r < 0.3:
        obj.append(("st", Raw(f'{{"b":{_escaped_string(rng, VALID_ESCAPES)}}}')))
    elif r < 0.5:  # nested strings are re-serialised into a string field
        obj.append(("channel", Raw(f"[{_escaped_string(rng, VALID_ESCAPES)}]")))
        obj.append(("extra", Raw(f'{{"k":{_escaped_string(rng, VALID_ESCAPES)}}}')))
    elif r < 0.65:  # escaped key names that decode to real field names
        obj.append(
            (
                Raw(rng.choice(['"\\u0073"', '"\\u0069"', '"\\u0061uction"', '"pr\\u0069ce"'])),
                Raw(rng.choice(['"esc-key"', "5"])),
            )
        )
    elif r < 0.75:
        obj.append(("m", Raw(f"{{{_escaped_string(rng, VALID_ESCAPES)}:1.5}}")))
    return _doc(rng, obj)


def g_surrogates(rng):
    s = _escaped_string(rng, LONE_SURROGATES + VALID_ESCAPES[-4:])
    place = rng.choice(["s", "nested", "key", "map", "extra"])
    if place == "s":
        obj = Obj([("s", s), ("i", 1)])
    elif place == "nested":
        obj = Obj([("s", Raw(f"[{s}]")), ("st", Raw(f'{{"b":{s}}}'))])
    elif place == "key":
        obj = Obj([(s, 1), ("i", 2), ("m", Raw(f"{{{s}:1}}"))])
    elif place == "map":
        obj = Obj([("m", Raw(f"{{{s}:2.5}}"))])
    else:
        obj = Obj([("extra", s), ("channel", Raw(f"{{{s}:{s}}}"))])
    return _doc(rng, obj)


def g_bad_escapes(rng):
    bad = _escaped_string(rng, BAD_ESCAPES)
    obj = Obj([("i", 1), (rng.choice(["s", "unknown"]), bad), ("bi", 2)])
    return _doc(rng, obj)


def g_control_chars(rng):
    c = rng.choice(CONTROL_CHARS)
    r = rng.random()
    if r < 0.5:  # raw control char inside a string: syntax error
        obj = Obj([("i", 1), (rng.choice(["s", "extra", "zz"]), Raw(f'"a{c}b"')), ("bi", 2)])
        return _doc(rng, obj)
    if r < 0.8:  # as whitespace between tokens (legal only for \t \n \r)
        return f'{{"i":1,{c}"s":"x"{c}}}'
    return c + '{"i":1}' + c


def g_unicode(rng):
    obj = Obj(
        [
            ("s", "".join(rng.choice(UNICODE_SNIPPETS) for _ in range(rng.randint(1, 6)))),
            (rng.choice(UNICODE_SNIPPETS), 1),
            ("st", Obj([("b", rng.choice(UNICODE_SNIPPETS))])),
            ("extra", Obj([("k", rng.choice(UNICODE_SNIPPETS))])),
        ]
    )
    return _doc(rng, obj)


def g_truncated(rng):
    base = g_all_types(rng) if rng.random() < 0.5 else g_nexmark(rng)
    return base[: rng.randint(0, len(base) - 1)]


def g_trailing(rng):
    base = g_all_types(rng) if rng.random() < 0.5 else g_nexmark(rng)
    return base + rng.choice(
        [
            " x",
            "x",
            "}",
            "]",
            ",",
            " ",
            "\n",
            "\x00",
            "{}",
            '{"i":99}',
            " // c",
            "/* c */",
            "null",
            "\r\n\r\n",
            "}}}",
            " [1]",
            '"',
        ]
    )


def g_deep(rng):
    depth = rng.choice([10, 100, 500, 998, 999, 1000, 1001, 1002, 1500, 5000, 20000])
    kind = rng.choice(["arr", "obj", "mixed"])
    if kind == "arr":
        inner = "[" * depth + rng.choice(["1", "", '"x"', "{}"]) + "]" * depth
    elif kind == "obj":
        inner = '{"a":' * depth + "1" + "}" * depth
    else:
        inner = '[{"a":' * (depth // 2) + "1" + "}]" * (depth // 2)
    where = rng.choice(["unknown", "s", "arr", "st", "m", "top", "extra"])
    if where == "top":
        return inner
    return f'{{"i":1,"{where}":{inner},"bi":2}}'


def g_empty(rng):
    return rng.choice(
        ["", " ", "  ", "\n", "\t", "\r\n", " \t\r\n ", "\u00a0", "\ufeff", "\x00", "\x0b", "\x0c"]
    )


def g_top_level(rng):
    return rng.choice(
        [
            '[{"i":1}]',
            '[{"i":1},{"i":2}]',
            "[]",
            "[ ]",
            "[1]",
            "[null]",
            "123",
            "-1",
            "1.5",
            '"x"',
            '""',
            "null",
            "true",
            "false",
            "{}",
            "{ }",
            '[{"i":1}',
            "nul",
            "tru",
            "NaN",
            "'single'",
            '[{"auction":1,"price":2}]',
            "[[]]",
            '"{\\"i\\":1}"',
            "{}{}",
            "[]{}",
        ]
    )


def g_duplicates(rng):
    base = all_types_value(rng) if rng.random() < 0.6 else nexmark_value(rng)
    for _ in range(rng.randint(1, 3)):
        if not base:
            break
        name, _v = rng.choice(base)
        if rng.random() < 0.5:
            nv = _odd_value(rng, name if name in dict(ALL_TYPES_FIELDS) else "bi")
        else:
            nv = rng.choice([None, 1, "dup", Raw("[]"), Raw("{}")])
        base.insert(rng.randint(0, len(base)), (name, nv))
    return _doc(rng, base)


def g_nulls(rng):
    if rng.random() < 0.3:
        return None
    names = (
        [n for n, _ in ALL_TYPES_FIELDS]
        if rng.random() < 0.5
        else ["auction", "bidder", "price", "channel", "url", "dateTime", "extra"]
    )
    obj = Obj([(n, None) for n in names if rng.random() < 0.7])
    if rng.random() < 0.3:
        obj.append(("arr", Raw("[null,null]")))
        obj.append(("arr_st", Raw("[null,{}]")))
        obj.append(("m", Raw('{"k":null}')))
        obj.append(("st", Raw('{"a":null,"b":null,"c":[null]}')))
    return _doc(rng, obj)


def g_single_quotes(rng):
    return rng.choice(
        [
            "{'i':1,'s':'x'}",
            "{'s':'it\\'s'}",
            "{\"s\":'mixed'}",
            "{'st':{'a':1,'b':'q'}}",
            "{'s':\"dq\"}",
            "{'arr':[1,2]}",
            "{'s':'a\"b'}",
            "{i:1}",
            "{'m':{'k':1.5}}",
            "{'extra':{'k':'v'}}",
        ]
    )


def g_syntax_nested(rng):
    """Syntax errors *inside* a known field's container.  Spark's result depends on how
    Jackson resynchronises after the error (see docs/json-semantics.md, syntax-error
    matrix); kept as a separate category so mismatches can be triaged separately."""
    bad = rng.choice(
        ODD_NUMBERS_SYNTAX
        + ['"a\tb"', '"\\q"', "[1,,2]", "[1,2,]", '{"p":1,}', "{p:1}", '{"p" 1}', "[1 2]"]
    )
    tmpl = rng.choice(
        [
            '"arr":[0,%s,9]',
            '"s":[0,%s,9]',
            '"s":{"p":%s,"q":9}',
            '"st":{"a":%s,"b":"x"}',
            '"st":{"c":[%s]}',
            '"m":{"k":%s,"j":1}',
            '"arr_st":[{"x":%s}]',
            '"extra":{"p":%s}',
            '"unknown":[%s]',
        ]
    )
    return '{"i":1,%s,"bi":2}' % (tmpl % bad)


def g_whitespace(rng):
    obj = all_types_value(rng) if rng.random() < 0.5 else nexmark_value(rng)
    return dump(obj, rng, "random")


def _inject_bad_bytes(rng: random.Random, doc: str) -> bytes:
    data = doc.encode("utf-8")
    bad = rng.choice(BAD_UTF8)
    # positions inside a string literal (just after an opening quote of a value) or anywhere
    quotes = [i for i, ch in enumerate(data) if ch == 0x22]
    if quotes and rng.random() < 0.7:
        pos = rng.choice(quotes) + 1
    else:
        pos = rng.randint(0, len(data))
    return data[:pos] + bad + data[pos:]


def g_invalid_utf8(rng) -> bytes:
    r = rng.random()
    if r < 0.4:
        return _inject_bad_bytes(rng, g_nexmark(rng))
    if r < 0.8:
        return (
            b'{"i":1,"s":"a'
            + rng.choice(BAD_UTF8)
            + b'b","st":{"b":"'
            + rng.choice(BAD_UTF8)
            + b'"},"extra":["'
            + rng.choice(BAD_UTF8)
            + b'"]}'
        )
    return _inject_bad_bytes(rng, g_all_types(rng))


def g_case_and_names(rng):
    return rng.choice(
        [
            '{"Auction":1,"auction":2}',
            '{"AUCTION":1}',
            '{"S":"x","s":"y"}',
            '{"":1,"i":2}',
            '{"i ":1,"i":2}',
            '{" i":1}',
            '{"st":{"A":1,"a":2}}',
            '{"datetime":"2020-01-02"}',
            '{"dateTime":"2020-01-02"}',
            '{"_corrupt_record":"given","i":1}',
            '{"_corrupt_record":{"x":1},"i":"bad"}',
        ]
    )


# (category, weight, generator)
CATEGORIES: list[tuple[str, float, Callable[[random.Random], Doc]]] = [
    ("nexmark", 30.0, g_nexmark),
    ("nexmark_mutated", 6.0, g_nexmark_mutated),
    ("all_types", 14.0, g_all_types),
    ("all_types_mutated", 14.0, g_all_types_mutated),
    ("formats", 5.0, g_formats),
    ("odd_numbers", 5.0, g_odd_numbers),
    ("escapes", 3.0, g_escapes),
    ("surrogates", 1.5, g_surrogates),
    ("bad_escapes", 0.7, g_bad_escapes),
    ("control_chars", 1.0, g_control_chars),
    ("unicode", 1.5, g_unicode),
    ("truncated", 2.0, g_truncated),
    ("trailing", 2.0, g_trailing),
    ("deep", 0.6, g_deep),
    ("empty", 0.7, g_empty),
    ("top_level", 1.5, g_top_level),
    ("duplicates", 2.0, g_duplicates),
    ("nulls", 1.5, g_nulls),
    ("single_quotes", 0.7, g_single_quotes),
    ("whitespace", 1.5, g_whitespace),
    ("invalid_utf8", 1.5, g_invalid_utf8),
    ("case_and_names", 0.5, g_case_and_names),
    ("syntax_nested", 1.0, g_syntax_nested),
]


@functools.lru_cache(maxsize=4)
def corpus_with_categories(n: int = 100_000, seed: int = 0) -> tuple[tuple[str, Doc], ...]:
    """``n`` (category, document) pairs, deterministic in (n, seed).

    The first documents are one of each category (so even small ``n`` covers
    everything); after that categories are drawn by weight. Made once per process for each
    (n, seed) (100,000 documents take about 20 s of Python; every schema and option set of the
    differential tests reads the same corpus), hence a tuple: callers share it.
    """
    rng = random.Random(seed)
    names = [c[0] for c in CATEGORIES]
    weights = [c[1] for c in CATEGORIES]
    gens = {c[0]: c[2] for c in CATEGORIES}
    out: list[tuple[str, Doc]] = []
    for i in range(n):
        cat = names[i] if i < len(names) else rng.choices(names, weights)[0]
        out.append((cat, gens[cat](rng)))
    return tuple(out)


def corpus(n: int = 100_000, seed: int = 0) -> list[Doc]:
    """``n`` JSON documents (str, bytes for invalid UTF-8, or None), deterministic in (n, seed)."""
    return [d for _, d in corpus_with_categories(n, seed)]


if __name__ == "__main__":  # quick look: python tests/support/json_corpus.py [n] [seed]
    import sys
    from collections import Counter

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    docs = corpus_with_categories(n, seed)
    if n <= 200:
        for cat, d in docs:
            print(f"{cat:18s} {d!r:.160}")
    else:
        print(Counter(c for c, _ in docs))
        print(
            "bytes docs:",
            sum(isinstance(d, bytes) for _, d in docs),
            "None:",
            sum(d is None for _, d in docs),
            "total size MB:",
            round(sum(len(d) for _, d in docs if d) / 1e6, 1),
        )
