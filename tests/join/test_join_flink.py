"""``sliceflow.join.join`` against Apache Flink 2.3.0's regular streaming join
(``SELECT ... FROM l [LEFT|RIGHT|FULL] JOIN r ON l.k = r.k``) on randomized changelogs of both
sides, next to the brute-force model (``sliceflow.testing.join_reference``).

Optional (marker ``flink``): skipped unless ``.flink-venv`` exists (``scripts/flink_venv.sh``).
All jobs run in one Flink process (support/flink_session.py), at parallelism 1; each side is a
changelog collection of its own (``sources`` of support/flink_reference.py: the views ``l`` and
``r``). Without mini-batch Flink runs its ``StreamingJoinOperator``; with
``table.exec.mini-batch.enabled`` its ``MiniBatchStreamingJoinOperator`` (the plan says
``Join(..., miniBatch=[true])``; :func:`test_flink_runs_the_mini_batch_join` tells them apart by
their output), bundles cut by ``table.exec.mini-batch.size`` rows of both inputs or at the end
of the input.

What is compared, per join type (inner, left, right, full), retracting side (left, right or
both; the other side insert-only), mini-batch setting, and on one or two key columns:

* The final materialization (a multiset of rows: ``+I``/``+U`` add one, ``-U``/``-D`` take one
  back) of Flink's changelog, of sliceflow's (all left rows then all right rows in one
  micro-batch, and the same rows in three micro-batches of random sizes, bundles of
  ``bundle_rows``), and the model's ``materialized()``: the same multiset. Sliceflow's output
  columns are Spark's (the keys once: the left side's for inner and left, the right side's for
  right, ``COALESCE(l.k, r.k)`` for full), and Flink's query selects them in that order.
* Every retraction either changelog emits takes back a row emitted before it (the running
  multiset never goes below zero), and sliceflow ignores no retraction (the inputs are valid).
* Null keys never match on either side (``NULL = NULL`` is not true in SQL): a row with a null
  key comes out null-padded on an outer side and not at all on an inner one, in both.
* Many-to-many keys (few keys, several live rows of each on both sides, equal rows included).

What differs, and is not compared:

* Order: the two Flink sources interleave as the runtime delivers them, so Flink's changelog
  itself (which rows pair when) is not deterministic; sliceflow sees each micro-batch's left
  rows, then its right rows. Within a bundle each emits in an order of its own (sliceflow: a
  key's ``-D`` before its ``+I``).
* Kinds: with mini-batch sliceflow emits ``+I`` and ``-D`` only (one net change per output row
  and bundle); without it, an inner join forwards the input row's kind and an outer join emits
  ``+I``/``-D``. Flink's inner join forwards the kinds of the input rows (with mini-batch, of
  those left after folding its bundle: an ``+I``, ``-U``, ``+U`` of one left row in one bundle
  comes out as the ``+U`` alone); its full join emits ``+I``/``-D``, and its left and right
  joins ``+I``/``-D`` and also ``-U`` (an ``-U`` of the inner side's row, passed on), never
  ``+U``.
* Invalid retractions (a ``-U``/``-D`` of a row that is not live): Flink is given none in the
  randomized cases. Sliceflow ignores one (``retractions_ignored``) and emits nothing for it.
  Flink emits the retraction of the joined rows the row would have made with the other side's
  live rows at that time, rows it never emitted, and keeps going: on an outer side without a
  match, the ``-D`` of a null-padded row never emitted, with and without mini-batch (pinned by
  :func:`test_known_difference_invalid_retraction`: its materialization counts that row -1).
  Seen but not pinned (it depends on the interleaving of the sources): the ``-D`` of a right row
  never inserted, in a left join whose left row ``x`` of that key was padded, emits the ``-D``
  of ``x`` joined with it, and leaves ``x``'s padded row in place when a real right row of the
  key comes (``+I`` of ``x`` joined with it, no ``-D`` of the padded row); in an inner join the
  ``-D`` of a left row never inserted emits its ``-D`` joined with each live right row.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest
from support import flink_session
from support.flink_reference import flink_available

from sliceflow.join import join
from sliceflow.testing.join_reference import JoinModel

pytestmark = [
    pytest.mark.flink,
    pytest.mark.skipif(
        not flink_available(), reason="no .flink-venv (run scripts/flink_venv.sh to create it)"
    ),
]

#: Each column's Flink type and Arrow type; the keys first.
TYPES: dict[str, tuple[str, pa.DataType]] = {
    "k": ("BIGINT", pa.int64()),
    "j": ("STRING", pa.string()),
    "a": ("STRING", pa.string()),
    "n": ("INT", pa.int32()),
    "b": ("STRING", pa.string()),
    "m": ("DOUBLE", pa.float64()),
}
#: Each side's columns other than the keys.
OTHERS = (["a", "n"], ["b", "m"])
HOWS = ("inner", "left", "right", "full")
FLINK_JOIN = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}
RETRACT_OPS = ("-U", "-D")

Change = tuple[Any, ...]  # (op, *values)


def columns(side: int, on: Sequence[str]) -> list[str]:
    return [*on, *OTHERS[side]]


# ------------------------------------------------------------------------------------------
# Random valid changelogs


def random_side(
    rng: random.Random, n: int, side: int, on: Sequence[str], retract: bool
) -> list[list[Any]]:
    """``n`` changes ``[op, *values]`` (``columns(side, on)``) of one side: inserts (``+I``,
    ``+U`` or a null op, some of them copies of a live row), and, if ``retract``, deletes
    (``-D`` or ``-U``) and updates (``-U`` then ``+U``, mostly on the same key) of live rows
    only. Few keys, a null key now and then (at least once)."""
    live: list[list[Any]] = []
    out: list[list[Any]] = []

    def key() -> list[Any]:
        k = None if rng.random() < 0.1 else rng.randrange(3)
        if len(on) == 1:
            return [k]
        return [k, None if rng.random() < 0.1 else rng.choice(["x", "y"])]

    def fresh(keys: list[Any] | None = None) -> list[Any]:
        if side == 0:
            other = [rng.choice(["p", "q", "", None]), rng.choice([1, 2, -7, None])]
        else:
            other = [rng.choice(["u", "v", None]), rng.choice([0.5, -1.25, 3.0, None])]
        return [*(key() if keys is None else keys), *other]

    while len(out) < n:
        r = rng.random()
        if retract and live and r < 0.35:
            old = live.pop(rng.randrange(len(live)))
            if r < 0.15:
                out.append([rng.choice(["-D", "-D", "-U"]), *old])
            else:
                new = fresh(old[: len(on)] if rng.random() < 0.7 else None)
                out += [["-U", *old], ["+U", *new]]
                live.append(new)
        else:
            row = list(rng.choice(live)) if live and r > 0.85 else fresh()
            op = rng.choice(["+I", "+I", "+U", None]) if retract else "+I"
            out.append([op, *row])
            live.append(row)
    if not any(r[1] is None for r in out):  # a null key, inserted (and kept) somewhere
        out.insert(rng.randrange(len(out) + 1), ["+I", None, *fresh()[1:]])
    return out


#: The mini-batch settings: sliceflow's mini_batch and bundle_rows, and Flink's job options.
MODES: dict[str, tuple[bool, int, dict[str, Any]]] = {
    "mb-off": (False, 5000, {"mini_batch": False}),
    "mb-one-bundle": (True, 5000, {"mini_batch": True}),
    "mb-size-5": (True, 5, {"mini_batch": True, "size": 5}),
}
#: (how, join columns, retracting side(s), mode, seed)
CASES = [
    (how, ("k",), retract, mode, seed)
    for how in HOWS
    for retract in ("left", "right", "both")
    for mode in MODES
    for seed in range(1)
] + [(how, ("k", "j"), "both", mode, 0) for how in HOWS for mode in ("mb-off", "mb-size-5")]


def case_id(case: tuple[Any, ...]) -> str:
    how, on, retract, mode, seed = case
    return f"{how}-{'+'.join(on)}-retract_{retract}-{mode}-{seed}"


def case_rows(case: tuple[Any, ...]) -> tuple[list[list[Any]], list[list[Any]]]:
    how, on, retract, mode, seed = case
    rng = random.Random(f"join-flink-{how}-{'+'.join(on)}-{retract}-{seed}")
    left = random_side(rng, 30, 0, on, retract in ("left", "both"))
    right = random_side(rng, 30, 1, on, retract in ("right", "both"))
    return left, right


# ------------------------------------------------------------------------------------------
# Flink


def join_sql(on: Sequence[str], how: str) -> str:
    """Flink's query with the columns of sliceflow's output, in its order."""
    if how == "full":
        keys = [f"COALESCE(l.{c}, r.{c}) AS {c}" for c in on]
    else:
        keys = [f"{'r' if how == 'right' else 'l'}.{c} AS {c}" for c in on]
    others = [f"l.{c}" for c in OTHERS[0]] + [f"r.{c}" for c in OTHERS[1]]
    condition = " AND ".join(f"l.{c} = r.{c}" for c in on)
    return f"SELECT {', '.join(keys + others)} FROM l {FLINK_JOIN[how]} r ON {condition}"


def flink_job(
    left: list[list[Any]], right: list[list[Any]], on: Sequence[str], how: str, **options: Any
) -> dict[str, Any]:
    sources = {}
    for name, side, rows in (("l", 0, left), ("r", 1, right)):
        sources[name] = {
            "columns": [[c, TYPES[c][0]] for c in columns(side, on)],
            "rows": [[op or "+I", *values] for op, *values in rows],
        }
    return {"sources": sources, "sql": join_sql(on, how), **options}


#: Small fixed inputs with a known changelog (the right side holds another key only, so the
#: interleaving of the two sources does not matter): (left rows, right rows, how).
FIXED = {
    # a left row inserted and deleted: without mini-batch its padded row comes and goes; with
    # mini-batch both fold away in the bundle
    "insert-delete": ([["+I", 1, "x", 1], ["-D", 1, "x", 1]], [["+I", 2, "u", 0.5]], "left"),
    # a -D of a left row never inserted (an invalid retraction)
    "invalid-retraction": ([["+I", 1, "x", 1], ["-D", 1, "y", 1]], [["+I", 2, "u", 0.5]], "left"),
}


def flink_jobs() -> dict[Any, dict[str, Any]]:
    jobs: dict[Any, dict[str, Any]] = {}
    for case in CASES:
        how, on, _, mode, _ = case
        left, right = case_rows(case)
        jobs[case_id(case)] = flink_job(left, right, on, how, **MODES[mode][2])
    for name, (left, right, how) in FIXED.items():
        for mode in ("mb-off", "mb-one-bundle"):
            jobs[f"{name}/{mode}"] = flink_job(left, right, ["k"], how, **MODES[mode][2])
    return jobs


@pytest.fixture(scope="module")
def flink_results() -> dict[Any, list[tuple]]:
    return flink_session.results(__name__, flink_jobs)


# ------------------------------------------------------------------------------------------
# sliceflow, the model, the comparison


def table(rows: list[list[Any]], side: int, on: Sequence[str], retract: bool) -> pa.Table:
    names = columns(side, on)
    fields = [pa.field(c, TYPES[c][1]) for c in names]
    if retract:
        names, fields = ["op", *names], [pa.field("op", pa.string()), *fields]
    else:
        rows = [values for _, *values in rows]
    return pa.Table.from_pylist(
        [dict(zip(names, r, strict=True)) for r in rows], schema=pa.schema(fields)
    )


def split(rows: list[list[Any]], rng: random.Random, parts: int) -> list[list[list[Any]]]:
    cuts = sorted(rng.randrange(len(rows) + 1) for _ in range(parts - 1))
    bounds = [0, *cuts, len(rows)]
    return [rows[bounds[i] : bounds[i + 1]] for i in range(parts)]


def ours(
    lefts: list[list[list[Any]]],
    rights: list[list[list[Any]]],
    on: Sequence[str],
    how: str,
    retract: str,
    mini_batch: bool,
    bundle_rows: int,
    stats: dict[str, int],
) -> list[Change]:
    """sliceflow's changelog, micro-batch i being ``lefts[i]`` then ``rights[i]``."""
    left_op, right_op = retract in ("left", "both"), retract in ("right", "both")
    out = join(
        [table(b, 0, on, left_op) for b in lefts],
        [table(b, 1, on, right_op) for b in rights],
        list(on), how,
        left_op_col="op" if left_op else None, right_op_col="op" if right_op else None,
        mini_batch=mini_batch, bundle_rows=bundle_rows, stats=stats,
    )  # fmt: skip
    return [tuple(r.values()) for r in out.to_pylist()]


def model_rows(
    left: list[list[Any]], right: list[list[Any]], on: Sequence[str], how: str
) -> Counter[tuple[Any, ...]]:
    """The model's join of both sides' live rows."""
    model = JoinModel(list(on), OTHERS[0], OTHERS[1], how=how, left_op_col="op", right_op_col="op")
    model.micro_batch(
        [dict(zip(["op", *columns(0, on)], r, strict=True)) for r in left],
        [dict(zip(["op", *columns(1, on)], r, strict=True)) for r in right],
    )
    assert model.ignored == 0
    return Counter(tuple(r.values()) for r in model.materialized())


def materialize(changes: Sequence[Change]) -> Counter[tuple[Any, ...]]:
    """The multiset ``changes`` materializes to; asserts that no change takes back a row that
    is not there."""
    rows: Counter[tuple[Any, ...]] = Counter()
    for i, (op, *values) in enumerate(changes):
        row = tuple(values)
        if op in RETRACT_OPS:
            assert rows[row] > 0, f"change {i} ({op} {row}) takes back a row never emitted"
            rows[row] -= 1
        else:
            assert op in ("+I", "+U"), op
            rows[row] += 1
    return +rows


def kinds(changes: Sequence[Change]) -> set[str]:
    return {c[0] for c in changes}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_flink(flink_results: dict[Any, list[tuple]], case: tuple[Any, ...]) -> None:
    how, on, retract, mode, seed = case
    mini_batch, bundle_rows, _ = MODES[mode]
    left, right = case_rows(case)
    expected = model_rows(left, right, on, how)
    flink = flink_results[case_id(case)]
    assert materialize(flink) == expected
    rng = random.Random(case_id(case))
    for parts in (1, 3):
        stats: dict[str, int] = {}
        got = ours(
            split(left, rng, parts), split(right, rng, parts), on, how, retract,
            mini_batch, bundle_rows, stats,
        )  # fmt: skip
        assert materialize(got) == expected, f"{parts} micro-batch(es)"
        assert stats["retractions_ignored"] == 0
        if mini_batch or how != "inner":
            assert kinds(got) <= {"+I", "-D"}
    if how == "full":
        assert kinds(flink) <= {"+I", "-D"}
    elif how != "inner":  # a -U of the inner side's row passes on, a +U comes out as +I
        assert kinds(flink) <= {"+I", "-D", "-U"}


def test_inputs_cover_the_cases() -> None:
    """The randomized inputs have what the comparison is for: null keys on both sides, keys
    with several live rows on both sides, equal live rows, and every input kind."""
    many_to_many = equal_rows = 0
    ops: set[Any] = set()
    for case in CASES:
        left, right = case_rows(case)
        assert any(r[1] is None for r in left) and any(r[1] is None for r in right)
        live = [materialize([(op or "+I", *v) for op, *v in side]) for side in (left, right)]
        per_key = [Counter(row[0] for row in side.elements()) for side in live]
        many_to_many += any(
            per_key[0][k] >= 2 and per_key[1][k] >= 2 for k in per_key[0] if k is not None
        )
        equal_rows += any(n >= 2 for side in live for n in side.values())
        ops |= {r[0] for r in left + right}
    assert many_to_many == len(CASES)
    assert equal_rows >= len(CASES) // 2
    assert ops == {"+I", "+U", "-U", "-D", None}


@pytest.mark.parametrize("mode", ["mb-off", "mb-one-bundle"])
def test_flink_runs_the_mini_batch_join(flink_results: dict[Any, list[tuple]], mode: str) -> None:
    """A left row inserted and deleted in one bundle: the padded row comes and goes without
    mini-batch, and folds away with it, in both."""
    left, right, how = FIXED["insert-delete"]
    mini_batch = MODES[mode][0]
    got = ours([left], [right], ["k"], how, "both", mini_batch, 5000, {})
    flink = flink_results[f"insert-delete/{mode}"]
    assert got == (
        [] if mini_batch else [("+I", 1, "x", 1, None, None), ("-D", 1, "x", 1, None, None)]
    )
    assert flink == got


@pytest.mark.parametrize("mode", ["mb-off", "mb-one-bundle"])
def test_known_difference_invalid_retraction(
    flink_results: dict[Any, list[tuple]], mode: str
) -> None:
    """A ``-D`` of a left row that is not live, in a left join, its key without a right row:
    Flink emits the ``-D`` of its null-padded row, never emitted (its materialization counts
    that row -1); sliceflow ignores the retraction and counts it."""
    left, right, how = FIXED["invalid-retraction"]
    stats: dict[str, int] = {}
    got = ours([left], [right], ["k"], how, "both", MODES[mode][0], 5000, stats)
    assert got == [("+I", 1, "x", 1, None, None)]
    assert stats["retractions_ignored"] == 1
    flink = flink_results[f"invalid-retraction/{mode}"]
    assert sorted(flink) == [("+I", 1, "x", 1, None, None), ("-D", 1, "y", 1, None, None)]
