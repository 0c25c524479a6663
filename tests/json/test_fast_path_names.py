"""The one-pass reader's key matching and direct writes must give what the reference path gives.

The reader compares the key it expects next with a field name's length and first 8 bytes (then
the rest), and writes BIGINT, STRING and TIMESTAMP values without going through the general
conversion. These documents aim at the edges of that: names of 0-17 bytes, keys that share a
name's first 8 bytes or are one byte longer or shorter, keys out of order, repeated or unknown,
non-ASCII names, and keys at the very end of the input. ``allowNonNumericNumbers=false``
switches the fast path off, so the same documents decoded with and without it compare the two
paths.
"""

from __future__ import annotations

import json
import string

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from sliceflow import json as sj

NAMES = ["", "a", "abcdefg", "abcdefgh", "abcdefghi", "abcdefgh_then_more", "é", "ts", "n"]
SCHEMA = (
    "`` BIGINT, a STRING, abcdefg BIGINT, abcdefgh STRING, abcdefghi BIGINT, "
    "abcdefgh_then_more STRING, `é` BIGINT, ts TIMESTAMP, n INT"
)
# Keys that are not fields but come close to one.
NEAR = ["b", "abcdefgi", "abcdefghj", "abcdefgh_then_mor", "abcdefgh_then_moreX", "abcdefg ", "e"]
REFERENCE = {"allowNonNumericNumbers": "false"}

# Mostly values the one-pass reader takes (a declined document goes to the DOM path whole).
plain = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.text(string.ascii_letters + string.digits + " .:-", max_size=8).map(json.dumps),
    st.sampled_from(["null", '"2026-11-23 00:00:00.000"', '"2026-11-23T12:34:56.123456Z"']),
)
other = st.one_of(
    st.text(max_size=6).map(json.dumps),
    st.sampled_from(["true", "1.5", '"2026-02-30 00:00:00"', "[1]", '{"x": 1}']),
)
values = st.one_of(plain, plain, plain, other)


@st.composite
def documents(draw) -> str:
    keys = draw(st.lists(st.sampled_from(NAMES + NEAR), max_size=12))
    if draw(st.booleans()):
        keys.sort(key=lambda k: NAMES.index(k) if k in NAMES else len(NAMES))  # schema order
    gap = draw(st.sampled_from(["", " "]))
    body = f",{gap}".join(
        f"{json.dumps(k, ensure_ascii=draw(st.booleans()))}:{gap}{draw(values)}" for k in keys
    )
    return "{" + body + "}"


def decoded(docs: list[str], time_zone: str, options: dict[str, str] | None) -> pa.StructArray:
    return sj.decode_to_struct(
        pa.array(docs, pa.string()), SCHEMA, options=options, time_zone=time_zone
    )


@given(
    st.lists(documents(), min_size=1, max_size=20),
    st.sampled_from(["UTC", "+05:30", "America/New_York"]),
)
def test_string_array_fast_equals_reference(docs: list[str], time_zone: str) -> None:
    assert decoded(docs, time_zone, None).equals(decoded(docs, time_zone, REFERENCE))


@given(st.lists(documents(), min_size=1, max_size=20))
def test_ndjson_fast_equals_reference(docs: list[str]) -> None:
    # The last document's keys end the buffer: nothing follows them but the padding.
    data = "\n".join(docs).encode()
    fast = sj.decode(data, SCHEMA)
    reference = sj.decode(data, SCHEMA, options=REFERENCE)
    assert fast.equals(reference)


def test_in_order_keys_match_every_field() -> None:
    doc = (
        '{"":1,"a":"x","abcdefg":2,"abcdefgh":"y","abcdefghi":3,'
        '"abcdefgh_then_more":"z","é":4,"ts":"2026-11-23 00:00:01.500","n":5}'
    )
    row = decoded([doc], "UTC", None).to_pylist()[0]
    assert row["abcdefgh_then_more"] == "z"
    assert [row[k] for k in ("", "abcdefg", "abcdefghi", "é", "n")] == [1, 2, 3, 4, 5]
    assert row["ts"].isoformat() == "2026-11-23T00:00:01.500000+00:00"
    # Each near miss right where its look-alike field is expected next.
    near = [
        '{"a":"x","abcdefgi":1}',
        '{"abcdefg":1,"abcdefgi":"y"}',
        '{"abcdefgh":"y","abcdefghj":2}',
        '{"abcdefghi":3,"abcdefgh_then_mor":"q"}',
        '{"abcdefghi":3,"abcdefgh_then_moreX":"r"}',
        '{"":0,"b":"x"}',
        '{"abcdefgh_then_more":"z","e":4}',
    ]
    rows = decoded(near, "UTC", None).to_pylist()
    assert [row["abcdefgh"] for row in rows] == [None, None, "y", None, None, None, None]
    assert [row["abcdefghi"] for row in rows] == [None, None, None, 3, 3, None, None]
    assert [row["abcdefgh_then_more"] for row in rows] == [None] * 6 + ["z"]
    assert [row["a"] for row in rows] == ["x"] + [None] * 6
    assert [row["é"] for row in rows] == [None] * 7
    assert decoded(near, "UTC", None).equals(decoded(near, "UTC", REFERENCE))
