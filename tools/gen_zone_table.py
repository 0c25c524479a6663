#!/usr/bin/env python3
"""Generates cpp/json/datetime/zone_ids.inc: the region ids java.time knows, each with the TZif
file of this machine that holds java.time's rules for it.

    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python tools/gen_zone_table.py          # rewrite
    PYSPARK_PYTHON=.venv/bin/python .venv/bin/python tools/gen_zone_table.py --check  # compare

Inputs: the ids and transitions come from java.time.ZoneId of the JVM that runs Spark (started
here through pyspark, local[1]); the files from /usr/share/zoneinfo (Debian's tzdata, with
zone1970.tab naming the canonical zones). Rerun it when the JDK's tzdb version changes (the
version is written into the file's first line); --check exits 1 if the committed file differs.

Spark resolves zone ids with the JDK's tzdb (IANA "main" data, where e.g. Africa/Bamako is a
link to Africa/Abidjan); Debian's /usr/share/zoneinfo is built with "backzone", which gives
such links their own pre-1970 history. For every id whose TZif file disagrees with java.time,
the table names a canonical zone (from zone1970.tab) whose file agrees, and the C++ side reads
that file instead; "" marks ids with no file at all (the SystemV zones, built in code).
Cost: starts a JVM and walks every transition of every zone up to 2100 (about a minute).
"""

import datetime
import os
import struct
import sys

from generated_file import ROOT, with_spark_jvm, write_or_check

OUT = os.path.join(ROOT, "cpp", "json", "datetime", "zone_ids.inc")


def days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def is_leap(y):
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


MLEN = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def parse_posix(s):
    import re

    i = 0

    def name():
        nonlocal i
        if s[i] == "<":
            j = s.index(">", i)
            i = j + 1
        else:
            j = i
            while i < len(s) and s[i].isalpha():
                i += 1
            assert i - j >= 3

    def time():
        nonlocal i
        sign = 1
        if s[i] in "+-":
            sign = -1 if s[i] == "-" else 1
            i += 1
        parts = [0, 0, 0]
        for k in range(3):
            if k:
                if i < len(s) and s[i] == ":":
                    i += 1
                else:
                    break
            j = i
            while i < len(s) and s[i].isdigit():
                i += 1
            parts[k] = int(s[j:i])
        return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])

    def rule():
        nonlocal i
        if s[i] == "M":
            i += 1
            m = re.match(r"(\d+)\.(\d+)\.(\d+)", s[i:])
            i += m.end()
            r = ("M", int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif s[i] == "J":
            i += 1
            m = re.match(r"\d+", s[i:])
            i += m.end()
            r = ("J", int(m.group(0)))
        else:
            m = re.match(r"\d+", s[i:])
            i += m.end()
            r = ("N", int(m.group(0)))
        t = 7200
        if i < len(s) and s[i] == "/":
            i += 1
            t = time()
        return r, t

    name()
    std = -time()
    if i == len(s):
        return (std, None)
    name()
    dst = std + 3600
    if s[i] != ",":
        dst = -time()
    i += 1
    start = rule()
    i += 1
    end = rule()
    return (std, dst, start, end)


def rule_day(r, y):
    if r[0] == "J":
        doy = r[1] + (1 if is_leap(y) and r[1] >= 60 else 0)
        return days_from_civil(y, 1, 1) + doy - 1
    if r[0] == "N":
        return days_from_civil(y, 1, 1) + r[1]
    _, m, w, wd = r
    first = days_from_civil(y, m, 1)
    wf = (first + 4) % 7
    d = 1 + (wd - wf) % 7 + (w - 1) * 7
    ln = 29 if (m == 2 and is_leap(y)) else MLEN[m - 1]
    while d > ln:
        d -= 7
    return first + d - 1


def read_tzif(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"TZif"

    def counts(at):
        return struct.unpack(">6l", data[at + 20 : at + 44])

    c = counts(0)
    at = 44
    isut, isstd, leap, timecnt, typecnt, charcnt = c
    at += timecnt * 5 + typecnt * 6 + charcnt + leap * 8 + isstd + isut
    assert data[at : at + 4] == b"TZif"
    c = counts(at)
    at += 44
    isut, isstd, leap, timecnt, typecnt, charcnt = c
    times = struct.unpack(f">{timecnt}q", data[at : at + 8 * timecnt])
    at += 8 * timecnt
    idx = data[at : at + timecnt]
    at += timecnt
    types = [struct.unpack(">lBB", data[at + 6 * k : at + 6 * k + 6]) for k in range(typecnt)]
    at += 6 * typecnt
    at += charcnt + leap * 12 + isstd + isut
    footer = data[at:].split(b"\n")[1].decode()
    init = types[0][0]
    trans = []
    before = init
    for t, k in zip(times, idx, strict=True):
        off = types[k][0]
        if off != before:
            trans.append((t, off))
            before = off
    return init, trans, footer


def effective(init, trans, footer, end):
    """Offset-change list up to `end` (epoch s), continuing with the footer rules."""
    out = [x for x in trans if x[0] <= end]
    p = parse_posix(footer) if footer else None
    if p and p[1] is not None:
        std, dst, (sr, st), (er, et) = p
        last_t = trans[-1][0] if trans else -(10**12)
        cur = trans[-1][1] if trans else init
        y0 = (
            datetime.datetime.utcfromtimestamp(max(last_t, 0)).year - 1
            if last_t > -(10**11)
            else 1900
        )
        for y in range(y0, 2101):
            ts = sorted(
                [
                    (rule_day(sr, y) * 86400 + st - std, dst),
                    (rule_day(er, y) * 86400 + et - dst, std),
                ]
            )
            for t, off in ts:
                if t > last_t and t <= end and off != cur:
                    out.append((t, off))
                    cur = off
    return out


def zone_table(jvm):
    """[(id, file)] for every id java.time knows, sorted; file None = its own, "" = none."""
    zone_id, instant = jvm.java.time.ZoneId, jvm.java.time.Instant
    end = 4102444800  # 2100-01-01

    def java_transitions(zid):
        rules = zone_id.of(zid).getRules()
        first = instant.ofEpochSecond(-(10**10))
        init = rules.getOffset(first).getTotalSeconds()
        out, inst = [], first
        while True:
            tr = rules.nextTransition(inst)
            if tr is None:
                break
            inst = tr.getInstant()
            if inst.getEpochSecond() > end:
                break
            out.append((inst.getEpochSecond(), tr.getOffsetAfter().getTotalSeconds()))
        return init, out

    def system(zid):
        path = "/usr/share/zoneinfo/" + zid
        if not os.path.isfile(path):
            return None
        init, trans, footer = read_tzif(path)
        return init, effective(init, trans, footer, end)

    canonical = set()
    with open("/usr/share/zoneinfo/zone1970.tab") as f:
        for line in f:
            if not line.startswith("#") and line.strip():
                canonical.add(line.split("\t")[2].strip())
    ids = sorted(zone_id.getAvailableZoneIds())
    java = {z: java_transitions(z) for z in ids}
    sysd = {z: system(z) for z in ids}
    good = [z for z in ids if sysd[z] is not None and sysd[z] == java[z]]
    rows = []
    for z in ids:
        if z in good:
            rows.append((z, None))
            continue
        cands = [c for c in good if java[c] == java[z]]
        cands.sort(key=lambda c: (c not in canonical, not c.startswith("Etc/"), c))
        if cands:
            rows.append((z, cands[0]))
        elif sysd[z] is not None:
            print(
                f"// note: {z} differs from java.time (tzdata versions differ); using its own file",
                file=sys.stderr,
            )
            rows.append((z, None))
        else:
            rows.append((z, ""))
    return rows


def render(version, rows):
    """The .inc text: the rows of `const ZoneIdEntry kJavaZoneIds[]` (see zone_id.cpp)."""
    lines = [
        f"// Generated by tools/gen_zone_table.py (JDK tzdb {version}); do not edit, rerun it.",
        "// {java.time zone id, TZif file with java.time's rules: nullptr = the id's own file,",
        '// "" = none on a standard system}, sorted by id.',
    ]
    for z, target in rows:
        t = "nullptr" if target is None else f'"{target}"'
        lines.append(f'{{"{z}", {t}}},')
    return "\n".join(lines) + "\n"


def main():
    def generate(jvm):
        nonlocal version
        version = list(jvm.java.time.zone.ZoneRulesProvider.getVersions("UTC").keySet())[0]
        return render(version, zone_table(jvm))

    version = None
    text = with_spark_jvm(generate)
    write_or_check(OUT, text, f"this machine's tzdata and the JDK's tzdb {version}")


if __name__ == "__main__":
    main()
