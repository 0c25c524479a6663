#!/usr/bin/env python3
"""Generates tests/data/datetime_cases.json, the corpus tests/cpp/test_datetime.cpp checks: what
Spark answers for string -> DATE / TIMESTAMP / TIMESTAMP_NTZ, both through CAST and through
from_json (with and without format options).

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python tools/gen_datetime_cases.py   # ~15 min

Each case is {"kind", "pattern", "input", "expected", "offset_seconds"} plus optional flags:
  kind      cast_date | cast_timestamp | cast_timestamp_ntz            (CAST(s AS ...))
            json_date | json_timestamp | json_timestamp_ntz            (from_json on {"t": s})
            json_date_number | json_timestamp_number | json_timestamp_ntz_number
                                                   (from_json on {"t": <input as a JSON number>})
  pattern   the dateFormat / timestampFormat / timestampNTZFormat option, or null
  expected  days (DATE) or microseconds since the epoch (TIMESTAMP, TIMESTAMP_NTZ), or null
  offset_seconds  the session time zone (a fixed offset) the case ran under
  error     true when Spark failed the whole query (invalid pattern) instead of returning null
  now       true when Spark used the current date (time-only strings); expected is then null
"""

import datetime
import json
import os
import random
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "datetime_cases.json")

spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "1")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("OFF")

TZ_NAMES = {0: "UTC", 19800: "+05:30", -28800: "-08:00", 3600: "+01:00"}
CONV = {
    "date": "unix_date(v)",
    "timestamp": "unix_micros(v)",
    "timestamp_ntz": "unix_micros(cast(v as timestamp))",
}
OPTION = {
    "date": "dateFormat",
    "timestamp": "timestampFormat",
    "timestamp_ntz": "timestampNTZFormat",
}
TODAY = datetime.datetime.now(datetime.timezone.utc).date()
TODAY_DAYS = (TODAY - datetime.date(1970, 1, 1)).days


def spark_eval(kind, pattern, inputs, offset=0):
    """Spark's answers: int, None, or the string "ERROR" when the query fails."""
    spark.conf.set("spark.sql.session.timeZone", TZ_NAMES.get(offset, offset))
    src, typ = kind.split("_", 1)
    number = typ.endswith("_number")
    typ = typ.replace("_number", "")
    df = spark.createDataFrame(list(enumerate(inputs)), "i int, s string")
    if src == "cast":
        v = F.expr(f"try_cast(s as {typ})")
    else:
        if number:
            j = F.concat(F.lit('{"t": '), F.col("s"), F.lit("}"))
        else:
            j = F.to_json(F.struct(F.col("s").alias("t")))
        opts = {} if pattern is None else {OPTION[typ]: pattern}
        v = F.from_json(j, f"t {typ.upper()}", opts).getField("t")
    out = df.select("i", v.alias("v")).select("i", F.expr(CONV[typ]).alias("r"))
    try:
        res = {r[0]: r[1] for r in out.collect()}
        return [res[i] for i in range(len(inputs))]
    except Exception:  # the query failed: find out which inputs make it fail
        if len(inputs) == 1:
            return ["ERROR"]
        if spark_eval(kind, pattern, ["x"], offset) == ["ERROR"]:
            # An invalid pattern: Spark builds the formatter lazily, on the first non-empty
            # string, so every non-empty string fails the query and "" gives null.
            nonempty = [s for s in inputs if s != ""][:3]
            assert all(r == "ERROR" for r in spark_eval(kind, pattern, nonempty[:1], offset))
            return [None if s == "" else "ERROR" for s in inputs]
        half = len(inputs) // 2
        return spark_eval(kind, pattern, inputs[:half], offset) + spark_eval(
            kind, pattern, inputs[half:], offset
        )


cases = []
seen = set()


def add(kind, pattern, inputs, offset=0, max_values=None, max_nulls=None):
    """Asks Spark about `inputs`; keeps at most max_values non-null and max_nulls null answers
    (a deterministic sample) so that the corpus stays a reasonable size."""
    todo = []
    for s in inputs:
        key = (kind, pattern, s, offset)
        if key not in seen:
            seen.add(key)
            todo.append(s)
    if not todo:
        return
    answers = list(zip(todo, spark_eval(kind, pattern, todo, offset), strict=True))
    if max_values is not None or max_nulls is not None:
        sample = random.Random(f"{kind}|{pattern}|{offset}")
        values = [a for a in answers if a[1] is not None and a[1] != "ERROR"]
        others = [a for a in answers if a[1] is None or a[1] == "ERROR"]
        if max_values is not None and len(values) > max_values:
            values = values[:8] + sample.sample(values[8:], max_values - 8)
        if max_nulls is not None and len(others) > max_nulls:
            others = others[:4] + sample.sample(others[4:], max_nulls - 4)
        keep = {id(a) for a in values + others}
        for a in answers:
            if id(a) not in keep:  # may still be added (whole) later, e.g. as a doc example
                seen.discard((kind, pattern, a[0], offset))
        answers = [a for a in answers if id(a) in keep]
    for s, r in answers:
        case = {"kind": kind, "pattern": pattern, "input": s, "expected": r}
        if isinstance(offset, str):
            case["session_zone"] = offset
        elif offset:
            case["offset_seconds"] = offset
        if r == "ERROR":
            case["expected"] = None
            case["error"] = True
        elif (
            r is not None
            and kind in ("cast_timestamp", "json_timestamp")
            and pattern is None
            and abs(r // 86_400_000_000 - TODAY_DAYS) <= 2
            and str(TODAY.year) not in s
        ):
            case["expected"] = None
            case["now"] = True
        cases.append(case)


# ---------------------------------------------------------------------------------------------
# CAST-style strings (also from_json without a format)
# ---------------------------------------------------------------------------------------------
DATES = [
    "",
    " ",
    "2020",
    "2020-1",
    "2020-01",
    "2020-1-2",
    "2020-01-02",
    "2020-01-2",
    "20-01-02",
    "020-01-02",
    "0020-01-02",
    "2020-01-02 ",
    " 2020-01-02",
    "\t2020-01-02\n",
    "\x00 2020-01-02\x7f",
    "\x1f2020-01-02\x1f",
    "\u00a02020-01-02",
    "2020-01-02\u3000",
    "2020-01-02T",
    "2020-01-02 T",
    "2020-01-02Tgarbage",
    "2020-01-02 garbage",
    "2020-01-02garbage",
    "2020-01-02-",
    "2020-01-",
    "2020-",
    "-2020",
    "+2020",
    "--2020",
    "+-2020",
    "2020/01/02",
    "2020.01.02",
    "2020-001-02",
    "2020-01-002",
    "2020-13-01",
    "2020-00-01",
    "2020-01-00",
    "2020-02-29",
    "2019-02-29",
    "2020-02-30",
    "2020-04-31",
    "1900-02-29",
    "2000-02-29",
    "0000-01-01",
    "0001-01-01",
    "-0001-01-01",
    "-0000-01-01",
    "+0000-01-01",
    "1582-10-10",
    "1582-10-04",
    "1582-10-15",
    "9999-12-31",
    "10000-01-01",
    "+10000-01-01",
    "-10000-01-01",
    "123456-01-01",
    "+123456-01-01",
    "1234567-01-01",
    "-1234567-01-01",
    "5881580-07-11",
    "5881580-07-12",
    "-5877641-06-23",
    "-5877641-06-22",
    "12345678-01-01",
    "294247-01-10",
    "294247-01-11",
    "-290308-12-21",
    "-290308-12-22",
    "999999-12-31",
    "-999999-01-01",
    "2020-1-2 ",
    "2020-1-2T",
    "2020 ",
    "2020-01 ",
    "2020 01",
    "2020-01T",
    "2020T",
    "18000",
    "123",
    "-5",
    "+7",
    "0",
    "12345678",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "1e3",
    "0x10",
    "\uff11\uff12\uff13",
    "\u0661\u0662\u0663",
    "\u06f1\u06f2\u06f3",
    "+\uff11\uff12\uff13",
    "\U0001d7cf\U0001d7d0",
    "-12345678",
    "-99999999",
    "-100000000",
    "-1000000000",
    "-2147483647",
    "99999999",
    "-800000",
    "-0",
    "+",
    "-",
    "T",
    "2020-01-02\u00e9",
]
TIMES = [
    " 03",
    " 03:04",
    " 03:04:05",
    "T03:04:05",
    " 3:4:5",
    " 003:04:05",
    " 03:04:5",
    " 24:00:00",
    " 23:59:60",
    " 23:60:00",
    " 03:04:05.",
    " 03:04:05.1",
    " 03:04:05.12",
    " 03:04:05.123",
    " 03:04:05.123456",
    " 03:04:05.1234567",
    " 03:04:05.123456789",
    " 03:04:05.123456789012345",
    "T03:04:05.000001",
    " 03:04:05 ",
    "T03",
    "T3",
    " 03:",
    " 03:04:",
    " 03:04:05:06",
    " 03:04:05.1.2",
    "T03:04:05.-1",
    " 03:04:05  ",
    "  03:04:05",
    "T 03:04:05",
    " 03-04-05",
]
ZONES = [
    "Z",
    "z",
    " Z",
    "Z ",
    "UTC",
    " UTC",
    "utc",
    "GMT",
    "GMT+1",
    "GMT+01",
    "GMT+0100",
    "GMT+01:00",
    "GMT+1:00",
    "GMT+1:0",
    "GMT+01:0",
    "GMT-5",
    "GMT+01:00:30",
    "GMT+0",
    "GMT0",
    "UTC0",
    "UTC+5",
    "UTC-05:30",
    "UT",
    "UT+3",
    "UT-3:30",
    "+01",
    "+1",
    "+01:00",
    "+1:00",
    "+01:0",
    "+0100",
    "+010000",
    "+01:00:00",
    "+01:00:30",
    "-18:00",
    "+18:00",
    "+18:01",
    "-18:01",
    "+19",
    "+24:00",
    "+01:60",
    "+5:5",
    "+123",
    "+1:2:3",
    " +01:00",
    "-0130",
    "America/Los_Angeles",
    " America/Los_Angeles",
    "america/los_angeles",
    "PST",
    "EST",
    "MST",
    "HST",
    "CST",
    "IST",
    "CET",
    "EET",
    "Europe/Paris",
    "Asia/Kolkata",
    "Asia/Kathmandu",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Etc/GMT+5",
    "Etc/GMT-14",
    "SystemV/EST5",
    "Zulu",
    "UCT",
    "Universal",
    "Europe/London",
    "Africa/Casablanca",
    "Asia/Tehran",
    "US/Pacific",
    "Etc/Unknown",
    "X",
    "[UTC]",
    "+01:00[Europe/Paris]",
    "Z+01:00",
    "GMTx",
    "UTCx",
]

base = list(DATES)
rng = random.Random(20240601)
for t in TIMES:
    base.append("2020-01-02" + t)
    base.append("-0044-03-15" + t)
for z in ZONES:
    base.append("2020-01-02 03:04:05" + z)
    base.append("2020-07-02T03:04:05.123456" + z)
    base.append("2020-01-02 03:04:05 " + z)
for d in ["2020-1-2", "+12345-06-07", "1969-12-31", "0001-01-01"]:
    for t in rng.sample(TIMES, 6):
        for z in rng.sample(ZONES, 3) + [""]:
            base.append(d + t + z)
base += [
    "2020-01-02T03:04:05GMT",
    "2020-01-02T03:04:05GMT+01:00",
    "2020-01-02GMT",
    "GMT2020-01-02",
    "2020-GMT01-02",
    "2020-01-02 03:04:05 GMTGMT",
    "2020-01-02 03:04:05 GGMTMT",
    "2020-01-02 03:04:05GMT-08:00",
    "2020-01-02T03:04:05.5GMT",
    "GMT 2020-01-02",
    "2020-01-02 GMT",
    "GMT18000",
    "18000GMT",
    "1GMT23",
    # time only: Spark uses the current date
    "T12:34",
    "T12:34:56",
    "12:34",
    "12:34:56",
    "12:34:56.789",
    "T12",
    "T",
    "12:",
    "1:2:3",
    ":12",
    "-12:34",
    "+12:34",
    " T12:34",
    "T12:34Z",
    "12:34:56 UTC",
    "T24:00",
    # limits of a 64-bit microsecond count
    "+294247-01-10T04:00:54.775807Z",
    "+294247-01-10T04:00:54.775808Z",
    "-290308-12-21T19:59:05.224192Z",
    "-290308-12-21T19:59:05.224191Z",
    "294247-01-10 04:00:54.775807",
    "294247-01-10 04:00:54.775808",
    "-290308-12-21 19:59:05.224192",
    "-290308-12-21 19:59:05.224191",
    "-290308-12-21 19:59:05",
    "-290308-12-21 19:59:04.999999",
    "294247-01-10T05:00:54.775807+01:00",
    "294247-01-10T04:00:54.775807-00:01",
    # DST gaps and overlaps, far past and far future rules
    "2020-03-08 02:30:00 America/Los_Angeles",
    "2020-03-08 01:59:59 America/Los_Angeles",
    "2020-03-08 03:00:00 America/Los_Angeles",
    "2020-11-01 01:30:00 America/Los_Angeles",
    "2020-11-01 00:59:59 America/Los_Angeles",
    "2020-11-01 02:00:00 America/Los_Angeles",
    "2100-03-14 02:30:00 America/Los_Angeles",
    "2100-11-07 01:30:00 America/Los_Angeles",
    "2100-07-01 12:00:00 America/Los_Angeles",
    "30000-07-01 12:00:00 America/Los_Angeles",
    "-30000-07-01 12:00:00 America/Los_Angeles",
    "1800-01-01 00:00:00 America/Los_Angeles",
    "1883-11-18 12:07:01 America/Los_Angeles",
    "1883-11-18 11:59:59 America/Los_Angeles",
    "2020-04-05 02:30:00 Australia/Sydney",
    "2020-10-04 02:30:00 Australia/Sydney",
    "2020-04-05 01:45:00 Australia/Lord_Howe",
    "2020-10-04 02:15:00 Australia/Lord_Howe",
    "2011-12-30 12:00:00 Pacific/Apia",
    "2011-12-29 23:59:59 Pacific/Apia",
    "2020-06-01 12:00:00 Europe/Dublin",
    "2020-12-01 12:00:00 Europe/Dublin",
    "2050-06-01 12:00:00 Africa/Casablanca",
    "2087-06-01 12:00:00 Africa/Casablanca",
    "2100-06-01 12:00:00 Africa/Casablanca",
    "2012-06-01 12:00:00 Europe/Moscow",
    "1945-06-01 12:00:00 Asia/Kolkata",
    "2038-01-19 03:14:08 Europe/Paris",
    "2039-03-27 02:30:00 Europe/Paris",
    "2039-10-30 02:30:00 Europe/Paris",
    "9999-12-31 23:59:59.999999 Pacific/Kiritimati",
    "2300-10-01 02:30:00 America/Santiago",
    "2020-01-02 03:04:05 Europe/Kyiv",
    "2020-01-02 03:04:05 Europe/Kiev",
]
# The parsers used when no format option is set: the CAST functions and from_json's defaults.
DEFAULT_PARSER_KINDS = (
    "cast_date",
    "cast_timestamp",
    "cast_timestamp_ntz",
    "json_date",
    "json_timestamp",
    "json_timestamp_ntz",
)
for kind in DEFAULT_PARSER_KINDS:
    add(kind, None, base)
with_time = [b for b in base if ":" in b]
for offset in (19800, -28800):
    add("cast_timestamp", None, with_time, offset)
    add("json_timestamp", None, with_time, offset)
# Region session zones: values without a zone follow the region's daylight-saving rules.
LOCAL_TIMES = [
    "2020-03-08 02:30:00",
    "2020-03-08 01:59:59",
    "2020-03-08 03:00:00",
    "2020-11-01 01:30:00",
    "2020-11-01 00:59:59",
    "2020-11-01 02:00:00",
    "2100-03-14 02:30:00",
    "2100-11-07 01:30:00",
    "2100-07-01 12:00:00",
    "1850-01-01 00:00:00",
    "1883-11-18 12:00:00",
    "2020-04-05 01:45:00",
    "2020-10-04 02:15:00",
    "2020-07-01",
    "2020-01-01",
    "+30000-07-01 12:00:00",
    "2020-07-01T12:00Z",
    "2020-07-01 12:00:00 UTC",
    "2020-07-01 12:00:00 Europe/Paris",
]
for zone in ("America/Los_Angeles", "Australia/Lord_Howe", "Europe/London", "Asia/Kolkata"):
    add("cast_timestamp", None, LOCAL_TIMES + with_time[:40], zone)
    add("json_timestamp", None, LOCAL_TIMES, zone)
    add("json_timestamp", "yyyy-MM-dd HH:mm:ss", LOCAL_TIMES, zone)
    add(
        "json_timestamp",
        "yyyy-MM-dd'T'HH:mm[:ss][XXX]",
        [t.replace(" ", "T") for t in LOCAL_TIMES],
        zone,
    )

# Every region id the JVM knows, at a few instants (checks the TZif reader against java.time).
zone_ids = sorted(spark._jvm.java.time.ZoneId.getAvailableZoneIds())
zone_inputs = []
for zid in zone_ids:
    for when in (
        "1850-01-01 00:00:00",
        "1950-06-15 12:00:00",
        "2020-07-01 12:00:00",
        "2200-01-15 08:30:00",
    ):
        zone_inputs.append(f"{when} {zid}")
add("cast_timestamp", None, zone_inputs)

# JSON numbers
numbers = [
    "1600000000",
    "-1",
    "0",
    "1.5",
    "1e3",
    "-0",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "9223372036854",
    "9223372036855",
    "-9223372036855",
    "18000",
    "123456789012",
    "1.0",
    "-1.5e2",
]
for kind in ("json_timestamp_number", "json_date_number", "json_timestamp_ntz_number"):
    add(kind, None, numbers)

# ---------------------------------------------------------------------------------------------
# Patterns
# ---------------------------------------------------------------------------------------------
PATTERNS = [
    "dd/MM/yyyy HH:mm",
    "yyyy-MM-dd HH:mm:ss.SSS",
    "MM/dd/yyyy",
    "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
    "yyyyMMddHHmmss",
    "EEE, dd MMM yyyy HH:mm:ss Z",
    "yyyy-MM-dd",
    "yyyy-MM-dd HH:mm:ss",
    "yyyy-MM-dd'T'HH:mm:ss[.SSS][XXX]",
    "yyyy-MM-dd HH:mm:ss.SSSSSS",
    "yyyy-MM-dd HH:mm:ss.SSSSSSSSS",
    "dd MMM yyyy",
    "dd MMMM yyyy",
    "MMM d, yyyy h:mm a",
    "hh:mm a",
    "HH:mm",
    "yyyy",
    "yy-MM-dd",
    "yyMMdd",
    "yyyyDDD",
    "yyyy-DDD",
    "D",
    "yyyy-MM",
    "yyyy-MM-dd HH:mm:ss Z",
    "yyyy-MM-dd HH:mm:ss z",
    "yyyy-MM-dd HH:mm:ss VV",
    "yyyy-MM-dd HH:mm:ss x",
    "yyyy-MM-dd HH:mmxx",
    "yyyy-MM-dd HH:mmxxx",
    "yyyy-MM-dd HH:mmX",
    "yyyy-MM-dd HH:mmXX",
    "yyyy-MM-dd HH:mmXXXX",
    "yyyy-MM-dd HH:mmXXXXX",
    "yyyy-MM-dd HH:mm ZZZZ",
    "yyyy-MM-dd HH:mm ZZZZZ",
    "yyyy-MM-dd HH:mm O",
    "yyyy-MM-dd HH:mm OOOO",
    "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
    "yyyyMMdd",
    "yyyyMMddHHmmssSSS",
    "HHmmssS",
    "ssS",
    "d/M/y",
    "y",
    "yyyyy-MM-dd",
    "yyyyyy-MM-dd HH:mm:ss.SSSSSS",
    "uuuu-MM-dd",
    "yyyy-ww",
    "yyyy-MM-dd G",
    "yyyy-MM-dd'T'HH:mm:ss''",
    "'Date:' yyyy-MM-dd",
    "[yyyy-MM-dd][dd/MM/yyyy]",
    "yyyy-MM-dd[ HH:mm[:ss]]",
    "kk:mm",
    "KK:mm a",
    "H:m:s",
    "yyyy-MM-dd HH:mm:ss.S",
    "yyyy-MM-dd HH:mm:ss.SS",
    "yyyyMMdd'T'HHmmss.SSSZ",
    "MMMM",
    "MMM",
    "a",
    "hh",
    "yyyy-MM-dd hh",
    "yyyy-MM-dd HH:mm:ss.SSS 'UTC'",
    "yyyy-MM-dd HH:mm:ss.SSSSSSSSSS",
    "HH:mm:ss.SSS",
    "yyyy-MM-dd HHmm",
    "yyyy/MM/dd HH:mm:ss",
    "MM-dd-yyyy HH:mm",
    "dd.MM.yyyy",
    "LLL yyyy",
    "LLLL yyyy",
    "yyyy-MM-dd HH:mm:ss.SSSXXX",
    "yyyy-MM-dd'T'HH:mm:ssXXX",
    "yyyy-MM-dd HH:mm:ss XXX",
    "yyyy-MM-dd HH ss",
    "yyyy-MM-dd HH SSS",
    "yyyy-MM-dd mm",
    "yyyy-MM-dd a",
    "yyyy-MM-dd HH a",
    "yyyy-MM-dd hh:mm:ss a",
    "MM/dd",
    "dd",
    "yyyy-MM-dd HH:mm:ss.SSS[XXX]",
    "yyyy-MM-dd'T'HH:mm[:ss][.SSS]",
    "yyyy-MM-dd HH:mm:ssXXX'['VV']'",
    "'T'HH:mm",
    "yyyy-MM-dd HH:mm:ss.[SSS]",
    "yyyyMMddHH",
    "yyyy-M-d",
    "y-M-d H:m:s.S",
    "yyyyMMddHHmmssSSSSSS",
    "HHmmss",
    "yyyy-MM-dd D",
    "D yyyy",
    "yyyy-MM-dd''HH",
    "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'",
    "yyyy MMM dd HH:mm:ss.SSS zzz",
    "yyyy-MM-dd HH:mm:ss.SSS VV",
    "yyyy]",
    "yyyy-MM-dd'",
    "yyyy{",
    "yyyy-MM-dd HH:mm:ss.SSSSSSSSSSSS",
    "yyyy-MM-dd-HH",
    "yyyy-MM-dd [HH]",
    "[HH:mm ]yyyy",
    "yyyy-MM-dd HH:mm:ss.SSSS",
    "dd-MMM-yy",
    "yyyy-MM-dd'T'HH:mm:ss.SSSSSSZZZZZ",
    "yyyy-MM-dd HH:mm:ss 'GMT'X",
    "yyyy-MM-dd HH:mm k",
    "yyyy-MM-dd'T'HH:mm:ss.SX",
]

# Reference instants (UTC microseconds) formatted with each pattern, under several session zones.
REF = [
    "2020-01-02 03:04:05.123456",
    "1999-12-31 23:59:59.999999",
    "2000-02-29 12:00:00",
    "1970-01-01 00:00:00",
    "1969-12-31 23:59:59.5",
    "0001-01-01 00:00:00",
    "9999-12-31 23:59:59.999",
    "2024-07-04 13:45:00.01",
    "1582-10-10 10:10:10",
    "2038-01-19 03:14:07",
    "1900-03-01 00:00:01",
    "2021-11-07 08:30:00",
    "2016-12-31 12:00:00.000001",
    "2023-06-15 00:00:00.000000",
]


def formatted(pattern):
    out = []
    for tz in ("UTC", "+05:30", "-08:00", "America/Los_Angeles"):
        spark.conf.set("spark.sql.session.timeZone", tz)
        df = spark.createDataFrame([(r,) for r in REF], "r string")
        try:
            rows = df.select(F.date_format(F.to_timestamp("r"), pattern)).collect()
        except Exception:
            return out
        out += [r[0] for r in rows if r[0] is not None]
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    return out


MUTATION_CHARS = "0123456789 -:./+TZzaApPmM'\t"


def mutate(s, rng):
    out = [s.lower(), s.upper(), s + "x", s + " ", " " + s, s[:-1], s[1:], s + "0", "0" + s]
    for _ in range(6):
        if not s:
            break
        t = list(s)
        op = rng.randrange(3)
        i = rng.randrange(len(t))
        if op == 0:
            t[i] = rng.choice(MUTATION_CHARS)
        elif op == 1:
            t.insert(i, rng.choice(MUTATION_CHARS))
        else:
            del t[i]
        out.append("".join(t))
    return out


EXTRA = [
    "",
    "2020-01-02",
    "2020-01-02 03:04:05",
    "2020-01-02T03:04:05.123+01:00",
    "02/01/2020 03:04",
    "01/02/2020",
    "20200102030405",
    "Thu, 02 Jan 2020 03:04:05 +0000",
    "2020-01-02 03:04:05.123",
    "2020-01-02 03:04:05.",
    "2020-01-02 03:04:05.1",
    "2020-01-02 03:04:05.1234567890",
    "2020-01-02T03:04:05Z",
    "2020-01-02T03:04:05.1Z",
    "2020-01-02T03:04:05.Z",
    "+2020-01-02",
    "+12020-01-02",
    "12020-01-02",
    "-2020-01-02",
    "-0000-01-01",
    "2020-1-2",
    "2020-02-30",
    "2020-366",
    "2019-366",
    "2020366",
    "2019366",
    "366",
    "367",
    "0",
    "12",
    "13",
    "24",
    "00",
    "12:00 AM",
    "12:00 PM",
    "00:30 am",
    "13:00 PM",
    "01:00 pm",
    "PM",
    "pm",
    "AM",
    "Jan 2, 2020 3:04 PM",
    "JAN 2, 2020 3:04 pm",
    "Sept 2, 2020 3:04 PM",
    "02 Sep 2020",
    "02 September 2020",
    "02 sept 2020",
    "May",
    "may",
    "MAY",
    "January",
    "jan",
    "2020 Jan",
    "Jan 2020",
    "January 2020",
    "20-01-02",
    "99-12-31",
    "00-01-01",
    "2020-01-02 03:04:05 +0100",
    "2020-01-02 03:04:05 -0130",
    "2020-01-02 03:04:05 +01:00",
    "2020-01-02 03:04:05 Z",
    "2020-01-02 03:04:05 UTC",
    "2020-01-02 03:04:05 GMT+01:00",
    "2020-01-02 03:04:05 America/Los_Angeles",
    "2020-01-02 03:04:05 america/los_angeles",
    "2020-01-02 03:04:05 PST",
    "2020-01-02 03:04:05 +25:00",
    "2020-01-02 03:04:05 +19:00",
    "2020-01-02 03:04:05 GMT+19:00",
    "2020-01-02 03:04+01",
    "2020-01-02 03:04+0100",
    "2020-01-02 03:04+01:00",
    "2020-01-02 03:04+010000",
    "2020-01-02 03:04+01:00:00",
    "2020-01-02 03:04Z",
    "2020-01-02 03:04z",
    "2020-01-02 03:04+00",
    "2020-01-02 03:04 GMT",
    "2020-01-02 03:04 GMT+8",
    "2020-01-02 03:04 GMT+08:00",
    "2020-01-02 03:04 GMT+08:00:30",
    "2020-01-02 03:04 GMT+8:30",
    "2020-01-02 03:04 GMT-08",
    "2020-01-02 03:04 GMT+",
    "2020-01-02 03:04 GMT+08:",
    "2020-01-02 03:04 GMT+0",
    "2020-01-02 03:04 UTC",
    "2020-01-02 03:04 +0000",
    "2020-01-02 03:04+0030",
    "+294247-01-10 04:00:54.775807",
    "+294247-01-10 04:00:54.775808",
    "-290308-12-21 19:59:05.224192",
    "-290308-12-21 19:59:05.224191",
    "+999999-12-31 23:59:59.999999",
    "1",
    "12345",
    "123456",
    "1234567",
    "20201301",
    "20200230",
    "2020010203040",
    "202001020304051",
    "2020010203040512",
    "20200102030405123",
    "20200102030405123456",
    "2020-01-02 24:00",
    "2020-01-02 23:60",
    "24:00",
    "23:59",
    "00:00",
    "123",
    "1234",
    "5",
    "05",
    "12 30",
    "2020-01-02 12",
    "2020-01-02 13",
    "2020-01-02 00",
    "2020-01-02 PM",
    "2020-01-02 13 PM",
    "2020-01-02 13 AM",
    "2020-01-02 12 AM",
    "2020-01-02 05:06:07 PM",
    "2020-01-02 12:06:07 AM",
    "2020-01-02 00:06:07 AM",
    "2020-01-02 03 07",
    "2020-01-02 03 123",
    "2020-01-02 59",
    "2020-01-02 60",
    "02/01/2020",
    "Date: 2020-01-02",
    "date: 2020-01-02",
    "DATE:2020-01-02",
    "2020-01-02T03:04:05'",
    "2020-01-02'03",
    "2020-01-02 03:04:05 07",
    "2020-01-02T03:04",
    "2020-01-02T03:04:05",
    "2020-01-02T03:04:05.123",
    "2020-01-02T03:04:05.1234",
    "T03:04",
    "t03:04",
    "2020-01-02 03:04:05+01:00[Europe/Paris]",
    "2020-01-02 03:04:05Z[UTC]",
    "2020-01-02 03:04:05.123 Europe/Paris",
    "2020-01-02 03:04:05.123 UTC",
    "2020-01-02 03:04:05.123 Z",
    "2020 Jan 02 03:04:05.123 PST",
    "2020 Jan 02 03:04:05.123 UTC",
    "2020 Jan 02 03:04:05.123 GMT+1",
    "2020 Jan 02 03:04:05.123 America/New_York",
    "2020 Jan 02 03:04:05.123 Z",
    "2020-01-02-03",
    "2020-01-02 03",
    "2020-01-02 ",
    "03:04 2020",
    "2020-01-02 24",
    "2020-01-02 k",
    "2020-01-02 03:04:05.1+01:00",
    "2020-01-02T03:04:05.1-01",
    "02-Jan-20",
    "02-JAN-99",
    "2020-01-02T03:04:05.123456+0100",
    "2020-01-02T03:04:05.123456+01:00",
    "2020-01-02T03:04:05.123456Z",
    "2020-01-02T03:04:05.123456+01:00:30",
    "2020-01-02 03:04:05 GMT+01",
    "2020-01-02 03:04:05 GMT+0100",
]

PATTERNS += [
    "GGGG yyyy-MM-dd",
    "[G ]yyyy-MM-dd",
    "yy G",
    "y G",
    "yyyy-MM-dd HH:mm:ss zzzz",
    "yyyy-MM-dd HH:mm:ss.SSS z",
    "yyyy SSS\n",
    "yyyy'T'SSSSSSSSSS",
    "yyyy b",
    "yyyy EEEE b",
    "yyyy-MM-dd XXXXXX",
    "yyyy-MM-dd SSSSSSSSSS XXXX",
    "yyyy''",
    "'yyyy",
    "",
    "dd MMM yyyy GGGG",
]
EXTRA += [
    "2020-01-02 AD",
    "2020-01-02 BC",
    "0001-01-01 BC",
    "0000-01-01 AD",
    "2020-01-02 ad",
    "Anno Domini 2020-01-02",
    "Before Christ 0044-03-15",
    "AD 2020-01-02",
    "2020-01-02",
    "20 AD",
    "20 BC",
    "2020 AD",
    "2020 bc",
    "02 Jan 2020 Anno Domini",
    "2020-01-02 03:04:05 Pacific Standard Time",
    "2020-01-02 03:04:05 Coordinated Universal Time",
    "2020-01-02 03:04:05.123 EST",
    "2020-01-02 03:04:05.123 CET",
    "2020-01-02 03:04:05.123 Z",
    "2020-01-02 03:04:05.123 UTC",
    "2020-01-02 03:04:05.123 GMT+01:00",
    "2020-01-02 03:04:05.123 +01:00",
    "2020-01-02 03:04:05.123 America/New_York",
    "2020-01-02 03:04:05.123 Etc/GMT+5",
    "2020-01-02 03:04:05.123 UT-3",
]

for pattern in PATTERNS:
    gen = formatted(pattern)
    mrng = random.Random(pattern)
    inputs = list(dict.fromkeys(gen))
    for s in list(inputs)[:10]:
        inputs += mutate(s, mrng)
    inputs = list(dict.fromkeys(inputs + EXTRA))
    add("json_timestamp", pattern, inputs, max_values=70, max_nulls=40)
    add("json_date", pattern, inputs, max_values=30, max_nulls=20)
    add("json_timestamp_ntz", pattern, inputs, max_values=30, max_nulls=20)
    if any(c in pattern for c in "XxZOzV") or pattern in (
        "yyyy-MM-dd HH:mm:ss",
        "dd/MM/yyyy HH:mm",
    ):
        add("json_timestamp", pattern, inputs, 19800, max_values=30, max_nulls=10)

# The examples quoted in docs/json-datetime.md (kept whole, never sampled).
DEFAULT_EXAMPLES = [
    "2020-1-2",
    "2020",
    "2020-01-02 garbage",
    "  2020-01-02  ",
    "2020-01-02T03:04:05.123456789Z",
    "2020-01-02 03:04:05+01:00",
    "2020-01-02T03:04:05 UTC",
    "18000",
    "2020-01-02GMT",
    "2020-01-02T03:04:05GMT+01:00",
    "",
    "123",
    "12345678",
    "-2147483648",
    "\uff11\uff12\uff13",
    "T12:34:56",
    "12:34",
    "2020-01-02 03:04:05 PST",
    "2020-01-02 03:04:05 utc",
    "2020-01-02 03:04:05 America/Los_Angeles",
    "+10000-01-01",
    "10000-01-01",
    "2020-01-02T",
    "2020-01-02 24:00:00",
    "2020-01-02 03:04:05.",
    "2020-01-02 3:4:5",
    "2020-01-02T03:04:05+1:0",
    "2020-01-02T03:04:05 +01:00:30",
    "2020-01-02T03:04:05Z[UTC]",
    "+294247-01-10T04:00:54.775807Z",
    "+294247-01-10T04:00:54.775808Z",
    "2020-01-02T03:04Z",
    "2020-01-02Z",
    "2020-01-02T25:99",
    "1600000000",
    "2020-01-02\x002020",
    "-290308-12-21 19:59:05.224192",
]
for kind in DEFAULT_PARSER_KINDS:
    add(kind, None, DEFAULT_EXAMPLES)
T = "2020-01-02 03:04:05"
DOC_EXAMPLES = [
    (
        "json_timestamp",
        "yyyy-MM-dd HH:mm:ss.SSS",
        [T + ".1", T + ".12", T + ".123", T + ".1234", T + ".", T, " " + T + ".123", T + ".123 "],
    ),
    ("json_timestamp", "yyyy-MM-dd HH:mm:ss[.SSS]", [T, T + ".5"]),
    ("json_timestamp", "yyyy", ["2020", "+2020", "12020", "+12020", "-2020", "-0000", "202"]),
    ("json_timestamp", "yyyy-MM-dd", ["2020-1-2", "2020-02-30", "2020-01-02T00:00"]),
    ("json_timestamp", "yy-MM-dd", ["99-12-31", "70-01-01", "1999-12-31"]),
    (
        "json_timestamp",
        "dd/MM/yyyy HH:mm",
        ["02/01/2020 03:04", "2/1/2020 3:04", "02/01/2020 03:04:05", "02/01/2020 24:00"],
    ),
    ("json_date", "MM/dd/yyyy", ["01/02/2020", "1/2/2020", "2020-01-02"]),
    (
        "json_timestamp",
        "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
        [
            "2020-01-02T03:04:05.123+01:00",
            "2020-01-02T03:04:05.123Z",
            "2020-01-02T03:04:05.123z",
            "2020-01-02T03:04:05.123+0100",
            "2020-01-02T03:04:05.123+01",
            "2020-01-02T03:04:05+01:00",
            "2020-01-02T03:04:05.123+19:00",
            "2020-01-02T03:04:05.123+24:00",
        ],
    ),
    ("json_timestamp", "yyyyMMddHHmmss", ["20200102030405", "2020010203040", "+202001020304051"]),
    ("json_timestamp", "yyyyMMddHHmmssSSS", ["20200102030405123"]),
    ("json_timestamp", "EEE, dd MMM yyyy HH:mm:ss Z", ["Thu, 02 Jan 2020 03:04:05 +0000", ""]),
    ("json_timestamp_ntz", "EEE, dd MMM yyyy HH:mm:ss Z", ["Thu, 02 Jan 2020 03:04:05 +0000"]),
    (
        "json_timestamp",
        "dd MMM yyyy",
        ["02 Jan 2020", "02 jan 2020", "02 JAN 2020", "02 Sept 2020", "02 September 2020"],
    ),
    ("json_timestamp", "dd MMMM yyyy", ["02 January 2020", "02 Jan 2020"]),
    ("json_timestamp", "hh:mm a", ["12:30 AM", "12:30 PM", "00:30 AM", "01:30 pm", "13:30 PM"]),
    ("json_timestamp", "hh:mm", ["12:30", "01:30", "13:30"]),
    ("json_timestamp", "HH:mm", ["03:04", "24:00"]),
    (
        "json_timestamp",
        "yyyy-MM-dd HH:mm:ss z",
        [
            T + " UTC",
            T + " PST",
            T + " America/Los_Angeles",
            T + " GMT+01:00",
            T + " +01:00",
            T + " Z",
        ],
    ),
    (
        "json_timestamp",
        "yyyy-MM-dd HH:mm:ss VV",
        [T + " Europe/Paris", T + " europe/paris", T + " UTC", T + " +01:00"],
    ),
    ("json_timestamp", "yyyyDDD", ["2020366", "2019366"]),
    ("json_timestamp", "yyyy-MM-dd G", ["2020-01-02 AD", "2020-01-02 BC", "0001-01-01 BC"]),
    ("json_timestamp", "[G ]yyyy-MM-dd", ["2020-01-02", "AD 2020-01-02"]),
    ("json_timestamp", "yyyy-MM-dd HH ss", ["2020-01-02 03 07"]),
    ("json_timestamp", "yyyy-MM-dd HH a", ["2020-01-02 13 PM", "2020-01-02 13 AM"]),
    (
        "json_timestamp_ntz",
        "yyyy-MM-dd'T'HH:mm:ss[XXX]",
        ["2020-01-02T03:04:05", "2020-01-02T03:04:05+01:00"],
    ),
    ("json_date", "yyyy-MM-dd HH:mm:ss XXX", [T + " +19:00", T + " +01:00"]),
    ("json_timestamp", "uuuu-MM-dd", ["2020-01-02"]),
    ("json_timestamp", "kk:mm", ["24:00", "00:00"]),
    ("json_timestamp", "KK:mm a", ["11:00 PM", "12:00 PM"]),
    ("json_timestamp", "MM/dd", ["01/02"]),
    ("json_timestamp", "yyyy-MM-dd HH:mmxx", ["2020-01-02 03:04+0000", "2020-01-02 03:04+0100"]),
    ("json_timestamp", "yyyy-MM-dd HH:mm O", ["2020-01-02 03:04 GMT+1", "2020-01-02 03:04 GMT"]),
    ("json_timestamp", "yyyy-MM-dd HH:mm OOOO", ["2020-01-02 03:04 GMT+01:00"]),
    (
        "json_timestamp",
        "yyyy-MM-dd HH:mm ZZZZZ",
        ["2020-01-02 03:04 +01:00:00", "2020-01-02 03:04 Z"],
    ),
    ("json_timestamp", "yyyy-MM-dd HH:mm:ss XXX", [T + " +23:00", T + " +24:00", T + " +18:00"]),
    (
        "json_timestamp",
        "yyyyyy-MM-dd HH:mm:ss.SSSSSS",
        ["-290308-12-21 19:59:05.224192", "294247-01-10 04:00:54.775807"],
    ),
    ("json_timestamp", "yyyy-MM-dd'", ["2020-01-02"]),
]
for kind, pattern, inputs in DOC_EXAMPLES:
    add(kind, pattern, inputs)
for zone in ("America/Los_Angeles",):
    add("json_timestamp", None, ["2020-03-08 02:30:00", "2020-11-01 01:30:00"], zone)

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w", encoding="utf-8") as f:
    f.write("[\n")
    for i, c in enumerate(cases):
        f.write(json.dumps(c, ensure_ascii=False))
        f.write(",\n" if i + 1 < len(cases) else "\n")
    f.write("]\n")
n_err = sum(1 for c in cases if c.get("error"))
n_now = sum(1 for c in cases if c.get("now"))
print(f"wrote {len(cases)} cases ({n_err} query errors, {n_now} current-date cases) to {OUT}")
