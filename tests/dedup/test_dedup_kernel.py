"""The deduplicate kernel (``sliceflow.dedup.step``, ``cpp/dedup/``) on Arrow, micro-batch by
micro-batch, against the plain-Python model on randomized inputs: every keep / order / retraction
/ mini-batch combination, and the plan's errors."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from sliceflow.dedup import deduplicate
from sliceflow.dedup.plan import build_plan
from sliceflow.dedup.step import DedupStep
from sliceflow.testing.dedup_reference import DedupModel

SCHEMA = pa.schema([("k", pa.int64()), ("s", pa.string()), ("t", pa.int32()), ("v", pa.int64())])
OP_SCHEMA = SCHEMA.append(pa.field("op", pa.string()))


def random_rows(rng: random.Random, n: int, keys: int) -> list[dict[str, Any]]:
    return [
        {
            "k": rng.choice([None, *range(keys)]),
            "s": rng.choice(["a", "b", None]),
            "t": rng.choice([None, *range(6)]),
            "v": rng.randrange(4),
        }
        for _ in range(n)
    ]


def random_changelog(rng: random.Random, n: int, keys: int) -> list[dict[str, Any]]:
    """Inserts and retractions of live rows, and a few retractions of rows never inserted."""
    live: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for row in random_rows(rng, n, keys):
        r = rng.random()
        if live and r < 0.35:
            old = live.pop(rng.randrange(len(live)))
            if rng.random() < 0.5:
                out.append({**old, "op": "-D"})
            else:
                out += [{**old, "op": "-U"}, {**row, "k": old["k"], "op": "+U"}]
                live.append({**row, "k": old["k"]})
        elif r < 0.4:
            out.append({**row, "op": "-D"})  # never inserted (most likely)
        else:
            out.append({**row, "op": rng.choice(["+I", None])})
            live.append(row)
    return out


def run_kernel(dp: Any, batches: list[list[dict[str, Any]]], schema: pa.Schema) -> list[Any]:
    """The changes of ``sliceflow.dedup.deduplicate`` (the in-process entry point) for ``dp``'s
    arguments over ``batches``, as the model gives them: ``(op, row)``."""
    stats: dict[str, int] = {}
    out = deduplicate(
        [pa.Table.from_pylist(rows, schema=schema) for rows in batches],
        list(dp.by),
        keep=dp.keep,
        order_by=dp.order_by,
        op_col=dp.op_col,
        mini_batch=dp.plan["mini_batch"],
        bundle_rows=dp.plan["bundle_rows"],
        stats=stats,
    )
    changes: list[Any] = []
    for r in out.to_pylist():
        op = r.pop("op", "+I")
        changes.append((op, r))
    return changes


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("keep", ["first", "last"])
@pytest.mark.parametrize("order_by", [None, "t"])
@pytest.mark.parametrize("retracting", [False, True])
@pytest.mark.parametrize("mini_batch", [True, False])
def test_kernel_matches_model(seed, keep, order_by, retracting, mini_batch):
    rng = random.Random(seed)
    bundle_rows = rng.choice([1, 3, 50])
    make = random_changelog if retracting else random_rows
    batches = [make(rng, rng.randrange(0, 40), 5) for _ in range(4)]
    op_col = "op" if retracting else None
    dp = build_plan(
        OP_SCHEMA if retracting else SCHEMA, ["k"], keep=keep, order_by=order_by,
        op_col=op_col, mini_batch=mini_batch, bundle_rows=bundle_rows,
    )  # fmt: skip
    model = DedupModel(
        ["k"], keep=keep, order_by=order_by, op_col=op_col, mini_batch=mini_batch,
        bundle_rows=bundle_rows,
    )  # fmt: skip
    want = [c for rows in batches for c in model.micro_batch(rows)]
    got = run_kernel(dp, batches, OP_SCHEMA if retracting else SCHEMA)
    assert got == want


def test_counts_state_access_once_per_key_per_bundle():
    dp = build_plan(SCHEMA, ["k"], keep="last", bundle_rows=4)
    step = DedupStep(dp)
    stats: dict[str, int] = {}
    rows = pa.RecordBatch.from_pylist(
        [{"k": k, "s": None, "t": 0, "v": 0} for k in [1, 1, 2, 1, 2, 2, 2, 2]], schema=SCHEMA
    )
    out, state = step.run(step.empty_state(), rows, stats)
    # bundle 1: keys 1 and 2; bundle 2: key 2 alone
    assert stats["state_reads"] == stats["state_writes"] == 3
    assert stats["bundles"] == 2 and state.num_rows == 2


def test_retraction_of_a_row_never_inserted_is_ignored_and_counted():
    dp = build_plan(OP_SCHEMA, ["k"], keep="first", op_col="op")
    step = DedupStep(dp)
    stats: dict[str, int] = {}
    rows = [{"k": 1, "s": "a", "t": 1, "v": 1, "op": "-D"}, {"k": 1, "s": "a", "t": 1, "v": 2}]
    out, _ = step.run(step.empty_state(), pa.RecordBatch.from_pylist(rows, schema=OP_SCHEMA), stats)
    assert stats["retractions_ignored"] == 1
    assert out.to_pylist() == [{"op": "+I", "k": 1, "s": "a", "t": 1, "v": 2}]


def test_bad_op_value_names_the_column():
    dp = build_plan(OP_SCHEMA, ["k"], op_col="op")
    step = DedupStep(dp)
    rows = pa.RecordBatch.from_pylist([{"k": 1, "op": "UPSERT"}], schema=OP_SCHEMA)
    with pytest.raises(ValueError, match=r"holds 'UPSERT', which is not a change kind"):
        step.run(step.empty_state(), rows)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"keep": "latest"}, r"keep must be 'first' or 'last', not 'latest'"),
        ({"order_by": "nope"}, r"order_by column 'nope' is not a column of the input"),
        ({"order_by": "m"}, r"order_by column 'm' has type MAP<STRING, INT>.*cannot be ordered"),
        ({"op_col": "t"}, r"op column 't' must be a STRING column"),
        ({"bundle_rows": 0}, r"bundle_rows must be a positive int"),
    ],
)
def test_plan_errors_name_the_argument(kwargs, message):
    schema = SCHEMA.append(pa.field("m", pa.map_(pa.string(), pa.int32())))
    with pytest.raises(ValueError, match=message):
        build_plan(schema, ["k"], **kwargs)


def test_missing_key_column_is_named():
    with pytest.raises(ValueError, match=r"by column 'id' is not a column"):
        build_plan(SCHEMA, ["id"])


@pytest.mark.parametrize("keep", ["first", "last"])
def test_orders_by_binary_in_unsigned_byte_order(keep):
    """BINARY orders as Spark orders it (unsigned bytes, a prefix first), as in ``topn``."""
    schema = pa.schema([("k", pa.int64()), ("b", pa.binary())])
    rng = random.Random(3)
    values = [None, b"", b"\x00", b"\x00\x01", b"\x7f", b"\x80", b"\xff", b"a", b"ab"]
    batches = [
        [{"k": rng.randrange(3), "b": rng.choice(values)} for _ in range(rng.randrange(1, 30))]
        for _ in range(4)
    ]
    dp = build_plan(schema, ["k"], keep=keep, order_by="b", bundle_rows=7)
    model = DedupModel(["k"], keep=keep, order_by="b", op_col=None, mini_batch=True, bundle_rows=7)
    want = [c for rows in batches for c in model.micro_batch(rows)]
    assert run_kernel(dp, batches, schema) == want
    assert any(op == "-U" for op, _ in want)  # the order changed the kept row at least once


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (pa.field("u", pa.uint32()), r"'u' has type .*: Spark has no unsigned integers"),
        (pa.field("a", pa.list_(pa.int32())), r"'a' has type ARRAY<INT>: ordering by ARRAY"),
        (pa.field("ms", pa.timestamp("ms")), r"'ms' has type .*: timestamps must be in micro"),
    ],
)
def test_order_types_refused_as_topn_refuses_them(column, message):
    from sliceflow.topn.plan import build_plan as topn_plan

    schema = SCHEMA.append(column)
    with pytest.raises(ValueError, match="order_by column " + message):
        build_plan(schema, ["k"], order_by=column.name)
    with pytest.raises(ValueError, match="order_by column " + message):
        topn_plan(schema, 1, ["k"], [column.name])
