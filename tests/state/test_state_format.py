"""The state format of streaming operators (docs/state.md), without Spark: the header's bytes
(little-endian), every way a stored value can be wrong and the error that names it, the plan
identity (tuning knobs out, what changes results in), and the changelog payload's byte order."""

from __future__ import annotations

import struct

import pyarrow as pa
import pytest

from sliceflow import changelog as C
from sliceflow import window as W
from sliceflow._runtime.state_format import (
    FORMAT_VERSION,
    LATER_FIELDS,
    inspect,
    open_value,
    seal,
)
from sliceflow.changelog.plan import build_plan as changelog_plan
from sliceflow.changelog.plan import identity as changelog_identity
from sliceflow.dedup.plan import build_plan as dedup_plan
from sliceflow.dedup.plan import identity as dedup_identity
from sliceflow.topn.plan import build_plan as topn_plan
from sliceflow.topn.plan import identity as topn_identity
from sliceflow.window.plan import build_plan as window_plan
from sliceflow.window.plan import identity as window_identity
from sliceflow.window.state import from_sections, rows_sections, watermark_from, watermark_sections

ID = [("keys", "BIGINT"), ("aggregates", "count(*)"), ("buckets", "4")]
HEADER = struct.Struct("<4sHBBIIQQ")


def test_header_bytes_are_little_endian() -> None:
    value = seal("changelog_agg", ID, [b"abc", b""])
    magic, version, kind, sections, id_len, reserved, payload_len, _ = HEADER.unpack_from(value)
    assert (magic, version, kind, sections, reserved) == (b"SFST", FORMAT_VERSION, 2, 2, 0)
    identity = value[32 : 32 + id_len]
    assert identity[:4] == struct.pack("<I", 3)
    assert identity[4:6] == struct.pack("<H", 4) and identity[6:10] == b"keys"
    payload = value[32 + id_len :]
    assert len(payload) == payload_len == 8 + 3 + 8
    assert payload == struct.pack("<Q", 3) + b"abc" + struct.pack("<Q", 0)
    assert inspect(value) == {
        "operator": "changelog_agg",
        "format_version": FORMAT_VERSION,
        "identity": ID,
        "sections": [b"abc", b""],
    }
    assert open_value("changelog_agg", ID, value, 2) == [b"abc", b""]


def test_every_cut_and_every_flipped_byte_is_refused() -> None:
    value = seal("window_agg", ID, [b"payload" * 3])
    for cut in range(len(value)):
        with pytest.raises(ValueError, match="window_agg state: "):
            open_value("window_agg", ID, value[:cut], 1)
    for i in range(len(value)):
        damaged = value[:i] + bytes([value[i] ^ 0x10]) + value[i + 1 :]
        with pytest.raises(ValueError, match="window_agg state: "):
            open_value("window_agg", ID, damaged, 1)
    with pytest.raises(ValueError, match="bytes after its header"):
        open_value("window_agg", ID, value + b"\0", 1)


@pytest.mark.parametrize(
    ("offset", "fmt", "forged", "message"),
    [
        (4, "<H", 2, r"version 2; this release reads version 1 \(it was written by a newer"),
        (6, "<B", 9, "operator kind 9"),
        (12, "<I", 1, "reserved field is not 0"),
        (16, "<Q", 2**63, "header says"),
        (8, "<I", 2**32 - 1, "header says"),
    ],
)
def test_forged_header_fields_are_named(offset: int, fmt: str, forged: int, message: str) -> None:
    value = bytearray(seal("window_agg", ID, [b"rows"]))
    struct.pack_into(fmt, value, offset, forged)
    with pytest.raises(ValueError, match=message):
        open_value("window_agg", ID, bytes(value), 1)


def test_not_sliceflow_state_and_the_old_changelog_blob() -> None:
    with pytest.raises(ValueError, match="not sliceflow state"):
        open_value("window_agg", ID, b"\x00" * 40, 1)
    old = struct.pack("<IIQQ", 0x4C434653, 1, 1234, 0)  # the blob before the versioned format
    with pytest.raises(ValueError, match="before the versioned state format"):
        open_value("changelog_agg", ID, old, 1)


def test_operator_sections_and_identity_mismatches() -> None:
    value = seal("window_agg", ID, [b"a"])
    with pytest.raises(ValueError, match="state of a window_agg, not of a changelog_agg"):
        open_value("changelog_agg", ID, value, 1)
    with pytest.raises(ValueError, match="1 sections, expected 2"):
        open_value("window_agg", ID, value, 2)
    now = [("keys", "STRING"), ("aggregates", "count(*)"), ("buckets", "4"), ("ansi", "on")]
    with pytest.raises(ValueError) as e:
        open_value("window_agg", now, value, 1)
    text = str(e.value)
    assert "different query (keys: BIGINT in the checkpoint, now STRING; " in text
    assert "ansi: not in the checkpoint, now on)" in text
    assert "identity covers keys, aggregates, buckets, ansi; tuning options" in text
    with pytest.raises(ValueError, match="buckets: 4 in the checkpoint, no longer part"):
        open_value("window_agg", ID[:2], value, 1)
    with pytest.raises(ValueError, match="unknown operator 'interval_join'"):
        seal("interval_join", ID, [])


def test_a_value_written_before_a_later_field_opens_and_one_with_it_is_checked() -> None:
    """``input columns`` joined the identity after values were written: a checkpoint without
    it restarts (judged on the other fields); one with it must match it."""
    assert LATER_FIELDS == ("input columns",)
    now = [*ID, ("input columns", "by `k`")]
    old = seal("window_agg", ID, [b"a"])
    assert open_value("window_agg", now, old, 1) == [b"a"]
    with pytest.raises(ValueError, match="keys: BIGINT in the checkpoint, now STRING"):
        open_value("window_agg", [("keys", "STRING"), *now[1:]], old, 1)
    new = seal("window_agg", now, [b"b"])
    assert open_value("window_agg", now, new, 1) == [b"b"]
    moved = [*ID, ("input columns", "by `k2`")]
    with pytest.raises(ValueError) as e:
        open_value("window_agg", moved, new, 1)
    assert "(input columns: by `k` in the checkpoint, now by `k2`)" in str(e.value)
    # Only a later field may be missing: another field the value lacks is still a change.
    with pytest.raises(ValueError, match="ansi: not in the checkpoint, now on"):
        open_value("window_agg", [*now, ("ansi", "on")], old, 1)


SCHEMA = pa.schema(
    [("k", pa.large_string()), ("t", pa.timestamp("us", tz="UTC")), ("v", pa.int64())]
)


def test_window_identity_leaves_tuning_out() -> None:
    spec = W.hop("t", "20 seconds", "10 seconds")
    aggs = [W.count(), W.sum("v").alias("s")]
    base = window_identity(window_plan(SCHEMA, spec, ["k"], aggs), "all", 4)
    assert base == [
        ("keys", "STRING"),
        ("aggregates", "count(*), sum(BIGINT)"),
        ("window", "hop(size=20000000us, slide=10000000us, offset=0us)"),
        ("time", "TIMESTAMP"),
        ("emit", "all"),
        ("buckets", "4"),
        ("ansi", "on"),
        ("input columns", "by `k`; time `t`; arguments *, `v`"),
    ]
    tuned = window_plan(SCHEMA, spec, ["k"], aggs, bundle_rows=7, bundle_bytes=1 << 16)
    assert window_identity(tuned, "all", 4) == base
    renamed = window_plan(SCHEMA, spec, ["k"], [W.count().alias("n"), W.sum("v")])
    assert window_identity(renamed, "all", 4) == base  # output names are not the state's
    other_zone = SCHEMA.set(1, pa.field("t", pa.timestamp("us", tz="Asia/Tokyo")))
    assert window_identity(window_plan(other_zone, spec, ["k"], aggs), "all", 4) == base
    changed = {
        "aggregates": window_plan(SCHEMA, spec, ["k"], [W.count(), W.max("v")]),
        "window": window_plan(SCHEMA, W.tumble("t", "20 seconds"), ["k"], aggs),
        "keys": window_plan(SCHEMA, spec, ["v"], [W.count(), W.sum("v")]),
        "ansi": window_plan(SCHEMA, spec, ["k"], aggs, ansi=False),
    }
    moved = SCHEMA.append(pa.field("k2", pa.large_string())).append(pa.field("v2", pa.int64()))
    cases = [({f}, wp) for f, wp in changed.items() if f != "keys"] + [
        ({"keys", "input columns"}, changed["keys"]),
        # A column moved to another of the same type: only the names tell.
        ({"input columns"}, window_plan(moved, spec, ["k2"], aggs)),
        ({"input columns"}, window_plan(moved, spec, ["k"], [W.count(), W.sum("v2")])),
    ]
    for fields, wp in cases:
        now = dict(window_identity(wp, "all", 4))
        diff = {name for name, value in base if now[name] != value}
        assert diff == fields, fields
    assert dict(window_identity(tuned, "all", 5))["buckets"] == "5"


def test_changelog_identity_leaves_tuning_out() -> None:
    schema = pa.schema([("k", pa.int64()), ("s", pa.string()), ("op", pa.string())])
    aggs = [W.count(), W.max("s")]
    base = changelog_identity(changelog_plan(schema, "k", aggs, op_col="op", buckets=4))
    for tuning in ({"bundle_rows": 3}, {"mini_batch": False}, {"fold": False, "fold_rows": 9}):
        cp = changelog_plan(schema, "k", aggs, op_col="op", buckets=4, **tuning)
        assert changelog_identity(cp) == base, tuning
    assert dict(base) == {
        "keys": "BIGINT",
        "aggregates": "count(*), max(STRING)",
        "retractions": "yes",
        "buckets": "4",
        "ansi": "on",
        "input columns": "by `k`; op `op`; arguments *, `s`",
    }
    no_op = dict(changelog_identity(changelog_plan(schema, "k", aggs, buckets=4)))
    assert no_op["retractions"] == "no"
    more = dict(changelog_identity(changelog_plan(schema, "k", aggs, op_col="op", buckets=8)))
    assert more["buckets"] == "8"


def test_changelog_payload_is_little_endian() -> None:
    """count(*) and sum(BIGINT) of one BIGINT key: the payload's bytes, spelled out."""
    t = pa.table({"k": pa.array([7, 7], pa.int64()), "v": pa.array([5, -2], pa.int64())})
    cp = changelog_plan(t.schema, "k", [W.count(), W.sum("v")])
    phase = C.GlobalPhase(cp)
    for deltas in C.encode(cp, t.to_batches()):
        phase.add(deltas)
    phase.end_bundle()
    key = b"\x01" + struct.pack("<q", 7)  # the key codec: a tag byte, then the value
    expected = (
        struct.pack("<Q", 1)  # live keys
        + struct.pack("<I", len(key))
        + key
        + struct.pack("<q", 2)  # the key's row count
        + struct.pack("<q", 2)  # count(*)
        + (3).to_bytes(16, "little", signed=True)  # sum: an int128 ...
        + struct.pack("<q", 2)  # ... and its count of values
    )
    assert phase.dump() == expected


def test_window_payload_round_trip() -> None:
    wp = window_plan(SCHEMA, W.cumulate("t", "10 seconds", "30 seconds"), ["k"], [W.count()])
    assert watermark_from(watermark_sections(-5)) == -5
    assert watermark_sections(1) == [struct.pack("<q", 1)]
    with pytest.raises(ValueError, match="watermark is 3 bytes"):
        watermark_from([b"abc"])
    state = from_sections(None, wp, 42)
    assert state.watermark_ms == 42 and state.partials.num_rows == 0 and state.emitted is None
    again = from_sections(rows_sections(state), wp, 42)
    assert again.partials.schema == wp.partial_schema and again.emitted is None


def test_topn_and_deduplicate_identities_name_their_columns() -> None:
    """A key or order moved to another column of the same type changes ``input columns`` only
    (the types, the order's direction and the payload are the same)."""
    schema = pa.schema(
        [("a", pa.int64()), ("b", pa.int64()), ("t", pa.timestamp("us")), ("u", pa.timestamp("us"))]
    )

    def topn_id(by: str, order: str) -> dict[str, str]:
        return dict(topn_identity(topn_plan(schema, 3, by, [order])))

    base = topn_id("a", "t")
    assert base["input columns"] == "by `a`; order `t`"
    for moved in (topn_id("b", "t"), topn_id("a", "u")):
        diff = {k for k in base if base[k] != moved[k]}
        assert diff <= {"input columns", "order"} and "input columns" in diff, diff

    def dedup_id(by: str, order: str | None, op: str | None = None) -> dict[str, str]:
        s = schema.append(pa.field("op", pa.string())) if op else schema
        dp = dedup_plan(s, by, keep="last", order_by=order, op_col=op)
        return dict(dedup_identity(dp, 4, None))

    base = dedup_id("a", "t")
    assert base["input columns"] == "by `a`; order `t`"
    for moved in (dedup_id("b", "t"), dedup_id("a", "u")):
        assert {k for k in base if base[k] != moved[k]} == {"input columns"}
    assert dedup_id("a", None)["input columns"] == "by `a`"
    assert dedup_id("a", "t", "op")["input columns"] == "by `a`; order `t`; op `op`"
