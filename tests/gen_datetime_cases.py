#!/usr/bin/env python3
"""Generates tests/data/datetime_cases.json: what Spark answers for string -> DATE / TIMESTAMP /
TIMESTAMP_NTZ, both through CAST and through from_json (with and without format options).

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python tests/gen_datetime_cases.py

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

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "datetime_cases.json")

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
    spark.conf.set("spark.sql.session.timeZone", TZ_NAMES[offset])
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
        return [spark_eval(kind, pattern, [s], offset)[0] for s in inputs]


cases = []
seen = set()


def add(kind, pattern, inputs, offset=0):
    todo = []
    for s in inputs:
        key = (kind, pattern, s, offset)
        if key not in seen:
            seen.add(key)
            todo.append(s)
    if not todo:
        return
    for s, r in zip(todo, spark_eval(kind, pattern, todo, offset), strict=False):
        case = {
            "kind": kind,
            "pattern": pattern,
            "input": s,
            "expected": r,
            "offset_seconds": offset,
        }
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
for kind in (
    "cast_date",
    "cast_timestamp",
    "cast_timestamp_ntz",
    "json_date",
    "json_timestamp",
    "json_timestamp_ntz",
):
    add(kind, None, base)
for offset in (19800, -28800):
    add("cast_timestamp", None, base, offset)
    add("json_timestamp", None, base, offset)

# Every region id the JVM knows, at a few instants (checks the TZif reader against java.time).
zone_ids = sorted(spark._jvm.java.time.ZoneId.getAvailableZoneIds())
zone_inputs = []
for zid in zone_ids:
    for when in (
        "1850-01-01 00:00:00",
        "1950-06-15 12:00:00",
        "2020-07-01 12:00:00",
        "2024-01-15 08:30:00",
        "2200-07-01 12:00:00",
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

for pattern in PATTERNS:
    gen = formatted(pattern)
    mrng = random.Random(pattern)
    inputs = list(dict.fromkeys(gen))
    for s in list(inputs)[:24]:
        inputs += mutate(s, mrng)
    inputs += EXTRA
    inputs = list(dict.fromkeys(inputs))
    add("json_timestamp", pattern, inputs)
    add("json_date", pattern, inputs[: len(inputs) // 2] + EXTRA)
    add("json_timestamp_ntz", pattern, inputs[: len(inputs) // 2] + EXTRA)
    if any(c in pattern for c in "XxZOzV") or pattern in (
        "yyyy-MM-dd HH:mm:ss",
        "dd/MM/yyyy HH:mm",
    ):
        add("json_timestamp", pattern, inputs[:60] + EXTRA[:40], 19800)

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
