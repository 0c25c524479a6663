"""The join kernel (``sliceflow.join``, ``cpp/join/``) on Arrow, micro-batch by micro-batch,
against the brute-force model (``sliceflow.testing.join_reference``) on randomized changelogs:
every join type, retractions on either side, null keys, many-to-many keys, with and without
mini-batch, bundles of every size."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.join_data import random_changelog

from sliceflow.join import join
from sliceflow.join.plan import build_plan
from sliceflow.join.step import JoinStep
from sliceflow.testing.join_reference import JoinModel, brute_join, materialize_changes

LEFT = pa.schema([("k", pa.int64()), ("j", pa.string()), ("a", pa.string()), ("op", pa.string())])
RIGHT = pa.schema([("k", pa.int64()), ("j", pa.string()), ("b", pa.int64()), ("op", pa.string())])
#: The right side when only ``k`` is joined on: its ``j`` renamed, as a user would.
RIGHT_J2 = pa.schema(
    [("k", pa.int64()), ("j2", pa.string()), ("b", pa.int64()), ("op", pa.string())]
)


def random_side(rng: random.Random, n: int, side: int, keys: int) -> list[dict[str, Any]]:
    """One side's changelog: keys from a few values and null, ``j`` mostly ``"x"``."""

    def fresh() -> dict[str, Any]:
        k = rng.choice([None, *range(keys)])
        j = rng.choice(["x", "y", None]) if rng.random() < 0.2 else "x"
        other = rng.choice(["p", "q", None]) if side == 0 else rng.choice([1, 2, None])
        return {"k": k, "j": j, ("a" if side == 0 else "b"): other}

    return random_changelog(rng, n, fresh, ["k", "j"])


def split(rows: list[dict[str, Any]], rng: random.Random, parts: int) -> list[list[Any]]:
    cuts = sorted(rng.randrange(len(rows) + 1) for _ in range(parts - 1))
    bounds = [0, *cuts, len(rows)]
    return [rows[bounds[i] : bounds[i + 1]] for i in range(parts)]


def run_both(
    lefts: list[list[dict[str, Any]]],
    rights: list[list[dict[str, Any]]],
    on: list[str],
    how: str,
    *,
    left_op: bool,
    right_op: bool,
    mini_batch: bool,
    bundle_rows: int,
) -> tuple[list[list[tuple[str, dict[str, Any]]]], list[list[tuple[str, dict[str, Any]]]], Any]:
    """The kernel's and the model's changes per micro-batch, and the model."""
    right_schema = RIGHT if "j" in on else RIGHT_J2
    ls = LEFT if left_op else LEFT.remove(3)
    rs = right_schema if right_op else right_schema.remove(3)

    def strip(rows: list[dict[str, Any]], keep_op: bool) -> list[dict[str, Any]]:
        return [r if keep_op else {k: v for k, v in r.items() if k != "op"} for r in rows]

    lefts = [strip(b, left_op) for b in lefts]
    rights = [strip(b, right_op) for b in rights]
    model = JoinModel(
        on,
        [c for c in ls.names if c not in on and c != "op"],
        [c for c in rs.names if c not in on and c != "op"],
        how=how,
        left_op_col="op" if left_op else None,
        right_op_col="op" if right_op else None,
        mini_batch=mini_batch,
        bundle_rows=bundle_rows,
    )
    expected = [model.micro_batch(lb, rb) for lb, rb in zip(lefts, rights, strict=True)]
    jp = build_plan(
        ls, rs, on, how,
        left_op_col="op" if left_op else None, right_op_col="op" if right_op else None,
        mini_batch=mini_batch, bundle_rows=bundle_rows,
    )  # fmt: skip
    step = JoinStep(jp)
    state = step.empty_state()
    stats: dict[str, int] = {}
    got: list[list[tuple[str, dict[str, Any]]]] = []
    outputs = []
    for lb, rb in zip(lefts, rights, strict=True):
        inputs = [(0, pa.RecordBatch.from_pylist(lb, schema=ls)),
                  (1, pa.RecordBatch.from_pylist(rb, schema=rs))]  # fmt: skip
        out, state = step.run(state, inputs, stats)
        outputs.append(out)
        got.append([(r.pop("op"), r) for r in out.to_pylist()])
    # the in-process entry point runs the same steps
    whole = join(
        [pa.Table.from_pylist(b, schema=ls) for b in lefts],
        [pa.Table.from_pylist(b, schema=rs) for b in rights],
        on, how,
        left_op_col="op" if left_op else None, right_op_col="op" if right_op else None,
        mini_batch=mini_batch, bundle_rows=bundle_rows,
    )  # fmt: skip
    assert whole.equals(pa.Table.from_batches(outputs, step.output_schema))
    assert stats["retractions_ignored"] == model.ignored
    return got, expected, model


def check(got: list[Any], expected: list[Any], model: JoinModel) -> None:
    """Per micro-batch: the same net change, and the same changes (each output row once per
    bundle) except for rows a null-padded row cannot be told from (a matched row whose other
    side's columns are all null: a padded row leaving as it arrives is a -D and a +I of the
    same values, where the model sees no change); the running materialization never negative,
    and at the end the join of both sides' live rows."""
    left_cols, right_cols = model.columns

    def plain(changes: list[Any]) -> Counter[Any]:
        return Counter(
            (op, tuple(r.items()))
            for op, r in changes
            if any(r[c] is not None for c in left_cols) or not left_cols
            if any(r[c] is not None for c in right_cols) or not right_cols
        )

    emitted: list[tuple[str, dict[str, Any]]] = []
    for g, e in zip(got, expected, strict=True):
        assert materialize_changes(g) == materialize_changes(e)
        assert plain(g) == plain(e)
        emitted += g
        running = materialize_changes(emitted)
        assert all(n >= 0 for n in running.values()), "a change retracts a row never emitted"
    final = materialize_changes([("+I", r) for r in model.materialized()])
    assert materialize_changes(emitted) == final


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("how", ["inner", "left", "right", "full"])
@pytest.mark.parametrize("retracting", ["none", "left", "right", "both"])
@pytest.mark.parametrize("mini_batch", [True, False])
def test_kernel_matches_model(seed: int, how: str, retracting: str, mini_batch: bool) -> None:
    rng = random.Random(f"{seed}-{how}-{retracting}-{mini_batch}")
    left_op, right_op = retracting in ("left", "both"), retracting in ("right", "both")
    n = rng.choice([20, 60, 150])
    keys = rng.choice([2, 5, 30])
    batches = rng.choice([1, 3, 5])
    left = random_side(rng, n, 0, keys)
    right = random_side(rng, n, 1, keys)
    if not left_op:
        left = [r for r in left if r["op"] not in ("-U", "-D")]
    if not right_op:
        right = [r for r in right if r["op"] not in ("-U", "-D")]
    lefts, rights = split(left, rng, batches), split(right, rng, batches)
    on = ["k", "j"] if seed % 2 else ["k"]
    if on == ["k"]:  # j is then a column of each side: give it another name on one of them
        rights = [[{("j2" if c == "j" else c): v for c, v in r.items()} for r in b] for b in rights]
    bundle_rows = rng.choice([1, 3, 7, 5000])
    got, expected, model = run_both(
        lefts, rights, on, how, left_op=left_op, right_op=right_op,
        mini_batch=mini_batch, bundle_rows=bundle_rows,
    )  # fmt: skip
    check(got, expected, model)


_ROW = st.tuples(
    st.sampled_from(["+I", "-D", "-U", "+U"]),
    st.sampled_from([None, 0, 1, 2]),
    st.sampled_from([None, "p", "q"]),
)


@given(
    left=st.lists(st.lists(_ROW, max_size=8), min_size=1, max_size=4),
    right=st.lists(st.lists(_ROW, max_size=8), min_size=4, max_size=4),
    how=st.sampled_from(["inner", "left", "right", "full"]),
    mini_batch=st.booleans(),
    bundle_rows=st.integers(1, 6),
)
def test_kernel_matches_model_hypothesis(
    left: list[list[Any]],
    right: list[list[Any]],
    how: str,
    mini_batch: bool,
    bundle_rows: int,
) -> None:
    """Any two changelogs on a tiny domain (many equal rows, retractions of rows never added,
    null keys), cut into micro-batches and bundles of any size."""
    right = right[: len(left)]
    lefts = [[{"k": k, "j": "x", "a": v, "op": op} for op, k, v in b] for b in left]
    rights = [
        [{"k": k, "j": "x", "b": None if v is None else len(v), "op": op} for op, k, v in b]
        for b in right
    ]
    got, expected, model = run_both(
        lefts, rights, ["k", "j"], how, left_op=True, right_op=True,
        mini_batch=mini_batch, bundle_rows=bundle_rows,
    )  # fmt: skip
    check(got, expected, model)


@pytest.mark.parametrize("how", ["inner", "left", "right", "full"])
def test_mini_batch_folds_changes(how: str) -> None:
    """A jittery changelog (each row updated back and forth within a bundle) materializes to the
    same join with and without mini-batch, and mini-batch emits and writes far less."""
    rng = random.Random(how)
    right = [{"k": k, "b": 0, "op": "+I"} for k in range(50)]
    left = [{"k": k, "a": "v0", "op": "+I"} for k in range(50)]
    for _ in range(5):
        for k in range(50):
            old, new = f"v{rng.randrange(3)}", f"v{rng.randrange(3)}"
            left += [{"k": k, "a": old, "op": "-U"}, {"k": k, "a": new, "op": "+U"}]
    ls = pa.schema([("k", pa.int64()), ("a", pa.string()), ("op", pa.string())])
    rs = pa.schema([("k", pa.int64()), ("b", pa.int64()), ("op", pa.string())])
    results = {}
    for mb in (True, False):
        stats: dict[str, int] = {}
        out = join(  # the right rows first, then the left ones
            [pa.Table.from_pylist([], schema=ls), pa.Table.from_pylist(left, schema=ls)],
            [pa.Table.from_pylist(right, schema=rs), pa.Table.from_pylist([], schema=rs)],
            "k", how, left_op_col="op", right_op_col="op", mini_batch=mb, stats=stats,
        )  # fmt: skip
        changes = [(r.pop("op"), r) for r in out.to_pylist()]
        results[mb] = (materialize_changes(changes), len(changes), stats["state_writes"])
    assert results[True][0] == results[False][0]
    assert results[True][1] * 2 <= results[False][1]
    assert results[True][2] * 2 <= results[False][2]
    model = JoinModel(["k"], ["a"], ["b"], how=how, left_op_col="op", right_op_col="op")
    model.micro_batch([], right)
    model.micro_batch(left, [])
    assert results[True][0] == materialize_changes([("+I", r) for r in model.materialized()])
    assert brute_join(model.live[0], model.live[1], ["k"], how, ["a"], ["b"]) == (
        model.materialized()
    )
