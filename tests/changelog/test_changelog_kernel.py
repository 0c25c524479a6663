"""The in-process changelog kernel (``sliceflow.changelog.aggregate``) against the brute-force
model (``sliceflow.testing.changelog_reference``), with hypothesis; no Spark.

Covered: every aggregate over integers, floats (NaN, -0.0), decimals, strings, dates and
booleans with nulls; one and two key columns with null keys; insert-only input and arbitrary
``+I/-U/+U/-D`` sequences (retractions for absent keys, rows deleted and re-inserted in one
bundle); mini-batch on and off; bundles cut at random sizes; several micro-batches; the local
fold against no fold; the state blob (dump / load by bucket, as the streaming path runs it);
ANSI overflow; bad ops and damaged state blobs as clear errors.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sliceflow import changelog as C
from sliceflow import window as W
from sliceflow._runtime.state_format import open_value, seal
from sliceflow.changelog.plan import build_plan
from sliceflow.changelog.plan import identity as changelog_identity
from sliceflow.testing.changelog_reference import changelog_reference, materialize

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TYPES: dict[str, pa.DataType] = {
    "k": pa.int64(),
    "s": pa.string(),
    "i": pa.int64(),
    "f": pa.float64(),
    "d": pa.decimal128(10, 2),
    "t": pa.string(),
    "day": pa.date32(),
    "b": pa.bool_(),
    "op": pa.string(),
}

VALUE_COLUMNS = ("i", "f", "d", "t", "day", "b")


def _values(col: str) -> st.SearchStrategy[Any]:
    if col == "i":
        return st.one_of(st.integers(-5, 5), st.sampled_from([2**62, -(2**62), 2**63 - 1]))
    if col == "f":
        return st.sampled_from([0.0, -0.0, 1.5, -2.25, math.nan, math.inf, 3.0])
    if col == "d":
        return st.integers(-999, 999).map(lambda n: Decimal(n).scaleb(-2))
    if col == "t":
        return st.sampled_from(["", "a", "b", "ab", "é", "zz"])
    if col == "day":
        return st.integers(0, 4).map(lambda n: dt.date(2026, 11, 20) + dt.timedelta(days=n))
    return st.booleans()


@st.composite
def rows_strategy(draw: Any, *, two_keys: bool, ops: str) -> list[dict[str, Any]]:
    """Rows with keys, every value column (some nulls) and an op.

    ``ops``: ``"insert"`` (no op column values but +I), ``"valid"`` (retract only rows that are
    live for their key: -D of one, or -U/+U pairs) or ``"any"`` (any op in any order).
    """
    n = draw(st.integers(0, 40))
    keys = st.one_of(st.none(), st.integers(0, 3))
    skeys = st.one_of(st.none(), st.sampled_from(["x", "y"]))
    rows: list[dict[str, Any]] = []
    live: dict[tuple, list[dict[str, Any]]] = {}
    for _ in range(n):
        row: dict[str, Any] = {"k": draw(keys), "s": draw(skeys) if two_keys else "x"}
        for col in VALUE_COLUMNS:
            row[col] = draw(st.one_of(st.none(), _values(col)))
        key = (row["k"], row["s"])
        if ops == "any":
            row["op"] = draw(st.sampled_from(["+I", "-U", "+U", "-D", None]))
            rows.append(row)
            continue
        if ops == "valid" and live.get(key) and draw(st.booleans()):
            old = live[key].pop(draw(st.integers(0, len(live[key]) - 1)))
            if draw(st.booleans()):
                rows.append({**old, "op": "-D"})
            else:
                rows.append({**old, "op": "-U"})
                row["op"] = "+U"
                rows.append(row)
                live[key].append(row)
            continue
        row["op"] = "+I"
        rows.append(row)
        live.setdefault(key, []).append(row)
    return rows


def table_of(rows: Sequence[dict[str, Any]]) -> pa.Table:
    return pa.table({c: pa.array([r[c] for r in rows], t) for c, t in TYPES.items()})


def split(rows: list[dict[str, Any]], cuts: list[int]) -> list[list[dict[str, Any]]]:
    """Micro-batches: ``rows`` cut at the given positions."""
    points = sorted({min(c, len(rows)) for c in cuts})
    out, start = [], 0
    for p in [*points, len(rows)]:
        out.append(rows[start:p])
        start = p
    return out


ALL_AGGS = [
    W.count().alias("n"),
    W.count("i").alias("ni"),
    W.sum("i").alias("si"),
    W.avg("i").alias("ai"),
    W.sum("f").alias("sf"),
    W.avg("d").alias("ad"),
    W.sum("d").alias("sd"),
    W.min("f").alias("minf"),
    W.max("t").alias("maxt"),
    W.min("day").alias("minday"),
    W.max("b").alias("maxb"),
    W.count_distinct("t").alias("cdt"),
    W.count_distinct("f").alias("cdf"),
    W.first_value("i").alias("fi"),
    W.last_value("t").alias("lt"),
    W.first_value("d").alias("fd"),
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


def assert_rows_equal(got: list[tuple], want: list[tuple]) -> None:
    assert len(got) == len(want), f"{len(got)} rows, expected {len(want)}:\n{got}\n{want}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert len(g) == len(w) and all(_same(x, y) for x, y in zip(g, w, strict=True)), (
            f"row {i}: {g} != {w}"
        )


def kernel_rows(
    batches: list[list[dict[str, Any]]], by: list[str], aggs: list[Any], **kw: Any
) -> list[tuple]:
    out = C.aggregate([table_of(b) for b in batches], by, aggs, **kw)
    return [tuple(r.values()) for r in out.to_pylist()]


def _normalize_keys(rows: list[tuple], nkeys: int) -> list[tuple]:
    def norm(v: Any) -> Any:
        if isinstance(v, float) and v == 0.0:
            return 0.0
        return v

    return [(r[0], *(norm(v) for v in r[1 : 1 + nkeys]), *r[1 + nkeys :]) for r in rows]


@SETTINGS
@given(
    st.data(),
    st.sampled_from(["insert", "valid", "any"]),
    st.booleans(),
    st.booleans(),
)
def test_changelog_matches_model(data: Any, ops: str, mini_batch: bool, two_keys: bool) -> None:
    rows = data.draw(rows_strategy(two_keys=two_keys, ops=ops))
    cuts = data.draw(st.lists(st.integers(0, 40), max_size=3))
    batches = split(rows, cuts)
    bundle_rows = data.draw(st.sampled_from([1, 2, 3, 7, 5000]))
    by = ["k", "s"] if two_keys else ["k"]
    aggs = data.draw(st.lists(st.sampled_from(ALL_AGGS), min_size=1, max_size=5, unique=True))
    op_col = None if ops == "insert" else "op"
    kw = dict(op_col=op_col, mini_batch=mini_batch, bundle_rows=bundle_rows, ansi=False)
    want = changelog_reference(batches, by, aggs, types=TYPES, **kw)
    got = kernel_rows(batches, by, aggs, fold=False, **kw)
    assert_rows_equal(got, want)
    final = kernel_rows(batches, by, aggs, fold=False, emit="final", **kw)
    want_final = changelog_reference(batches, by, aggs, types=TYPES, emit="final", **kw)
    key = lambda r: tuple((v is not None, str(v)) for v in r[1 : 1 + len(by)])  # noqa: E731
    assert_rows_equal(sorted(final, key=key), sorted(want_final, key=key))


@SETTINGS
@given(st.data(), st.sampled_from(["insert", "valid"]))
def test_fold_changes_nothing_on_valid_changelogs(data: Any, ops: str) -> None:
    """The local fold (per Arrow batch, before the shuffle) gives the same changelog as no
    fold when a micro-batch is one bundle. (Float sums are left out: their rounding depends on
    the order of the additions, as in Spark's and Flink's own two-phase sums.)"""
    rows = data.draw(rows_strategy(two_keys=True, ops=ops))
    batches = split(rows, data.draw(st.lists(st.integers(0, 40), max_size=3)))
    foldable = ["n", "ni", "si", "ai", "ad", "sd"]
    if ops == "insert":
        foldable += ["minf", "maxt", "minday", "maxb", "fi", "lt", "fd"]
    aggs = [a for a in ALL_AGGS if a.name in foldable]
    aggs = data.draw(st.lists(st.sampled_from(aggs), min_size=1, max_size=5, unique=True))
    op_col = None if ops == "insert" else "op"
    kw = dict(op_col=op_col, mini_batch=True, bundle_rows=5000, ansi=False)
    folded = kernel_rows(batches, ["k", "s"], aggs, fold=True, **kw)
    plain = kernel_rows(batches, ["k", "s"], aggs, fold=False, **kw)
    assert_rows_equal(folded, plain)


def _bucketed_run(
    batches: list[list[dict[str, Any]]], by: list[str], aggs: list[Any], buckets: int, **kw: Any
) -> dict[tuple, list[tuple]]:
    """The streaming path in-process: per micro-batch and bucket, load the bucket's blob, apply
    its rows, end the bundle, dump the blob. Returns each key's changes in order."""
    cp = build_plan(table_of([]).schema, by, aggs, buckets=buckets, fold=False, **kw)
    phase = C.GlobalPhase(cp)
    blobs: dict[int, bytes] = {}
    per_key: dict[tuple, list[tuple]] = {}
    for batch in batches:
        deltas = pa.Table.from_batches(
            list(C.encode(cp, table_of(batch).to_batches())), cp.delta_schema
        )
        for bucket in sorted(set(deltas.column("__bucket").to_pylist())):
            phase.reset()
            if bucket in blobs:
                phase.load(blobs.pop(bucket))
            mask = [b == bucket for b in deltas.column("__bucket").to_pylist()]
            out = phase.add(deltas.filter(pa.array(mask)).to_batches()[0])
            out += phase.end_bundle()
            if phase.live_keys():
                blobs[bucket] = phase.dump()
            for r in pa.Table.from_batches(out, cp.output_schema).to_pylist():
                row = tuple(r.values())
                per_key.setdefault(row[1 : 1 + len(by)], []).append(row)
    return per_key


@SETTINGS
@given(st.data(), st.sampled_from(["insert", "valid", "any"]), st.sampled_from([1, 2, 5]))
def test_state_blobs_by_bucket(data: Any, ops: str, buckets: int) -> None:
    """Dumping and loading state by bucket between micro-batches changes no key's changes."""
    rows = data.draw(rows_strategy(two_keys=True, ops=ops))
    batches = split(rows, data.draw(st.lists(st.integers(0, 40), max_size=3)))
    aggs = data.draw(st.lists(st.sampled_from(ALL_AGGS), min_size=1, max_size=6, unique=True))
    kw = dict(op_col=None if ops == "insert" else "op", mini_batch=True, ansi=False)
    got = _bucketed_run(batches, ["k", "s"], aggs, buckets, **kw)
    whole = kernel_rows(batches, ["k", "s"], aggs, fold=False, bundle_rows=5000, **kw)
    want: dict[tuple, list[tuple]] = {}
    for row in whole:
        want.setdefault(row[1:3], []).append(row)
    assert set(got) == set(want)
    for key in want:
        assert_rows_equal(got[key], want[key])


def test_seed_000_two_level_query() -> None:
    """Seed 000's table: inner count_distinct per (day, user_id % 10), outer sum per day."""
    src = pa.table({"user_id": [1, 2, 11], "day": ["2023-12-19"] * 3, "b": [1, 2, 1]})

    def run(batches: list[pa.Table], mini_batch: bool) -> list[str]:
        cp_in = build_plan(
            src.schema,
            ["day", "b"],
            [W.count_distinct("user_id").alias("cnt")],
            mini_batch=mini_batch,
        )
        g_in = C.GlobalPhase(cp_in)
        out: list[str] = []
        g_out = None
        cp_out = None
        for b in batches:
            changes = [c for d in C.encode(cp_in, b.to_batches()) for c in g_in.add(d)]
            changes += g_in.end_bundle()
            inner_t = pa.Table.from_batches(changes, cp_in.output_schema)
            if cp_out is None:
                cp_out = build_plan(
                    inner_t.schema,
                    ["day"],
                    [W.sum("cnt").alias("total")],
                    op_col="op",
                    mini_batch=mini_batch,
                )
                g_out = C.GlobalPhase(cp_out)
            assert g_out is not None
            res = [c for d in C.encode(cp_out, inner_t.to_batches()) for c in g_out.add(d)]
            res += g_out.end_bundle()
            out += [
                f"{r['op']}{r['total']}"
                for r in pa.Table.from_batches(res, cp_out.output_schema).to_pylist()
            ]
        return out

    one_each = [src.slice(i, 1) for i in range(3)]
    assert run(one_each, False) == ["+I1", "-U1", "+U2", "-U2", "+U1", "-U1", "+U3"]
    assert run(one_each, True) == ["+I1", "-U1", "+U2", "-U2", "+U3"]
    assert run([src], True) == ["+I3"]


def test_materialized_changelog_is_the_final_table() -> None:
    rows = [
        {
            "k": k % 7,
            "s": "x",
            "i": k,
            "f": None,
            "d": None,
            "t": str(k % 3),
            "day": None,
            "b": None,
            "op": "+I",
        }
        for k in range(100)
    ]
    rows += [{**rows[j], "op": "-D"} for j in range(0, 100, 3)]
    batches = split(rows, [30, 60, 110])
    aggs = [W.count().alias("n"), W.max("i").alias("m"), W.count_distinct("t").alias("c")]
    changes = kernel_rows(batches, ["k"], aggs, op_col="op", bundle_rows=4)
    final = kernel_rows(batches, ["k"], aggs, op_col="op", emit="final")
    assert materialize(changes, 1) == {(r[1],): r[1:] for r in final}


def test_state_reads_and_writes_show_the_mini_batch_saving() -> None:
    t = pa.table({"k": [i % 10 for i in range(1000)], "v": list(range(1000))})
    on: dict[str, int] = {}
    off: dict[str, int] = {}
    C.aggregate(t, "k", [W.sum("v")], bundle_rows=5000, fold=False, stats=on)
    C.aggregate(t, "k", [W.sum("v")], mini_batch=False, stats=off)
    assert (on["state_reads"], on["state_writes"]) == (10, 10)
    assert (off["state_reads"], off["state_writes"]) == (1000, 1000)
    assert on["inserts"] == 10 and on["update_afters"] == 0
    assert off["inserts"] == 10 and off["update_afters"] == 990


def test_ansi_overflow() -> None:
    t = pa.table({"k": [1, 1], "v": [2**63 - 1, 1]})
    with pytest.raises(OverflowError, match="ARITHMETIC_OVERFLOW"):
        C.aggregate(t, "k", [W.sum("v")])
    out = C.aggregate(t, "k", [W.sum("v").alias("s")], ansi=False)
    assert out.column("s").to_pylist() == [-(2**63)]


def test_bad_op_is_a_clear_error() -> None:
    t = pa.table({"k": [1, 2], "v": [1, 2], "op": ["+I", "UPDATE"]})
    with pytest.raises(
        ValueError,
        match=r"op column 'op' holds 'UPDATE'.*\+I, -U, \+U or -D.*\{k=2, v=2, op='UPDATE'\}",
    ):
        C.aggregate(t, "k", [W.count()], op_col="op")


def test_plan_errors() -> None:
    t = pa.table({"k": [1], "v": [1], "op": ["+I"], "m": pa.array([[1]], pa.list_(pa.int64()))})
    with pytest.raises(ValueError, match="op column 'v' must be a STRING"):
        C.aggregate(t, "k", [W.count()], op_col="v")
    with pytest.raises(ValueError, match="not a column"):
        C.aggregate(t, "nope", [W.count()])
    with pytest.raises(ValueError, match="nested"):
        C.aggregate(t, "m", [W.count()])
    with pytest.raises(ValueError, match="count_distinct never"):
        C.aggregate(t, "k", [W.count_distinct("v")], fold=True)
    with pytest.raises(ValueError, match="over a changelog"):
        C.aggregate(t, "k", [W.max("v")], op_col="op", fold=True)
    with pytest.raises(ValueError, match="duplicate output column"):
        C.aggregate(t, "k", [W.count().alias("op")])
    with pytest.raises(ValueError, match="at least one aggregate"):
        C.aggregate(t, "k", [])
    with pytest.raises(ValueError, match="bundle_rows"):
        C.aggregate(t, "k", [W.count()], bundle_rows=0)
    with pytest.raises(ValueError, match="emit"):
        C.aggregate(t, "k", [W.count()], emit="all")


def test_state_blob_errors() -> None:
    t = pa.table({"k": [1, 2, 3], "v": ["a", "b", "c"]})
    cp = build_plan(t.schema, "k", [W.max("v"), W.count()], op_col=None)
    phase = C.GlobalPhase(cp)
    for d in C.encode(cp, t.to_batches()):
        phase.add(d)
    phase.end_bundle()
    blob = phase.dump()
    # Another aggregation's state is refused by the state header (docs/state.md).
    value = seal("changelog_agg", changelog_identity(cp), [blob])
    other = build_plan(t.schema, "k", [W.min("v"), W.count()])
    changed = r"aggregates: max\(STRING\), count\(\*\) in the checkpoint, now min\(STRING\)"
    with pytest.raises(ValueError, match=f"different query \\({changed}"):
        open_value("changelog_agg", changelog_identity(other), value, 1)
    fresh = C.GlobalPhase(cp)
    for cut in range(len(blob) - 1):
        fresh.reset()
        with pytest.raises(ValueError, match="changelog(_agg)? state"):
            fresh.load(blob[:cut])
    with pytest.raises(ValueError, match="trailing bytes"):
        fresh.reset()
        fresh.load(blob + b"\0")
    fresh.reset()
    fresh.load(blob)
    assert fresh.live_keys() == 3
    with pytest.raises(ValueError, match="appears twice"):
        fresh.load(blob)


def test_final_table_judges_overflow_on_the_final_value_only() -> None:
    """A BIGINT sum that passes 2^63 between bundles and comes back fits: batch (emit="final")
    does not fail; the changelog, which emits the intermediate value, does under ANSI."""
    t = pa.table({"k": [1, 1, 1, 1], "v": [2**63 - 1, 1, 0, -1]})
    kw = dict(bundle_rows=2, fold=False)
    out = C.aggregate(t, "k", [W.sum("v").alias("s")], emit="final", **kw)
    assert out.column("s").to_pylist() == [2**63 - 1]
    with pytest.raises(OverflowError, match="ARITHMETIC_OVERFLOW"):
        C.aggregate(t, "k", [W.sum("v").alias("s")], **kw)
