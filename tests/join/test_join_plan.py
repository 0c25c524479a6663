"""The join's plan and input errors: each names the argument, column or value at fault."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sliceflow.join import join
from sliceflow.join.plan import build_plan, canonical_how

ORDERS = pa.schema([("op", pa.string()), ("cid", pa.int64()), ("amount", pa.int64())])
CUSTOMERS = pa.schema([("cid", pa.int64()), ("name", pa.string())])


@pytest.mark.parametrize(
    ("spelling", "how"),
    [("inner", "inner"), ("LEFT_OUTER", "left"), ("leftouter", "left"), ("right_outer", "right"),
     ("outer", "full"), ("full_outer", "full"), ("fullouter", "full")],
)  # fmt: skip
def test_spark_spellings(spelling: str, how: str) -> None:
    assert canonical_how(spelling) == how


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"how": "semi"}, ValueError, "how='semi' is not supported on changelogs"),
        ({"how": "sideways"}, ValueError, "unknown how 'sideways'"),
        ({"how": 3}, TypeError, "how must be a str"),
        ({"on": "nope"}, ValueError, "nope"),
        ({"on": []}, ValueError, "at least one column in on"),
        ({"on": ["cid", "cid"]}, ValueError, "names a column twice"),
        ({"left_op_col": "cid"}, ValueError, "cannot also be a join column"),
        ({"left_op_col": "amount"}, ValueError, "amount"),
        ({"bundle_rows": 0}, ValueError, "bundle_rows"),
        ({"mini_batch": 1}, TypeError, "mini_batch must be a bool"),
    ],
)
def test_plan_errors(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    args: dict[str, object] = {"on": "cid", "left_op_col": "op", **kwargs}
    on = args.pop("on")
    with pytest.raises(error, match=message):
        build_plan(ORDERS, CUSTOMERS, on, **args)  # type: ignore[arg-type]


def test_clashing_column() -> None:
    with pytest.raises(ValueError, match="column 'name' is on both sides and not in on"):
        build_plan(CUSTOMERS, CUSTOMERS, "cid")


def test_key_types_differ() -> None:
    other = pa.schema([("cid", pa.string()), ("city", pa.string())])
    with pytest.raises(ValueError, match="'cid' is BIGINT on the left and STRING on the right"):
        build_plan(ORDERS, other, "cid", left_op_col="op")


def test_invalid_op_value_is_named() -> None:
    orders = pa.table({"op": ["+I", "+X"], "cid": [1, 2], "amount": [1, 2]})
    customers = pa.table({"cid": [1], "name": ["ann"]})
    with pytest.raises(ValueError, match=r"'\+X'") as info:
        join(orders, customers, "cid", left_op_col="op")
    assert "op" in str(info.value)


def test_retraction_of_a_row_never_added_is_ignored_and_counted() -> None:
    orders = pa.table({"op": ["-D", "+I", "-U"], "cid": [1, 1, 1], "amount": [5, 6, 7]})
    customers = pa.table({"cid": [1], "name": ["ann"]})
    stats: dict[str, int] = {}
    out = join(orders, customers, "cid", left_op_col="op", stats=stats)
    assert [tuple(r.values()) for r in out.to_pylist()] == [("+I", 1, 6, "ann")]
    assert stats["retractions_ignored"] == 2
    assert stats["retractions_in"] == 2


def test_null_keys_never_match() -> None:
    left = pa.table({"k": [None, 1], "a": ["x", "y"]})
    right = pa.table({"k": [None, 1], "b": [10, 20]})
    stats: dict[str, int] = {}
    out = join(left, right, "k", "full", stats=stats)
    rows = sorted((tuple(r.values()) for r in out.to_pylist()), key=str)
    assert rows == sorted(
        [("+I", None, "x", None), ("+I", None, None, 10), ("+I", 1, "y", 20)], key=str
    )
    join(left, right, "k", "inner", stats=stats)
    assert stats["rows_null_key"] == 2


def test_micro_batch_counts_must_agree() -> None:
    t = pa.table({"cid": [1], "name": ["ann"]})
    o = pa.table({"op": ["+I"], "cid": [1], "amount": [1]})
    with pytest.raises(ValueError, match="1 left micro-batch"):
        join([o], [t, t], "cid", left_op_col="op")
