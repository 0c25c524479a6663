"""A streaming join's bucket image (``sliceflow.spark.join.streaming.JoinImage``): a log
entry replayed on a copy gives the same rows as the image that wrote it, a base reloads both
sides, and damaged or forged sections are refused with an error (never a crash or wrong rows).
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sliceflow.join.plan import build_plan
from sliceflow.join.step import JoinState, JoinStep
from sliceflow.spark.join.streaming import JoinImage

LEFT = pa.schema([("op", pa.string()), ("k", pa.int64()), ("a", pa.string())])
RIGHT = pa.schema([("k", pa.int64()), ("b", pa.int64())])
JP = build_plan(LEFT, RIGHT, "k", "full", left_op_col="op")


def _call(image: JoinImage, left: list[dict], right: list[dict]) -> pa.RecordBatch:
    step = JoinStep(JP)
    lb = pa.RecordBatch.from_pylist(left, schema=LEFT)
    rb = pa.RecordBatch.from_pylist(right, schema=RIGHT)
    touched = pa.concat_batches([lb.select(["k"]), rb.select(["k"])])
    left, right = image.take(touched)
    out, state = step.run(JoinState(left, right), [(0, lb), (1, rb)])
    image.put(state.left, state.right)
    return out


def _rows(image: JoinImage) -> tuple[list[dict], list[dict]]:
    return (
        sorted(image.sides[0].rows.to_pylist(), key=repr),
        sorted(image.sides[1].rows.to_pylist(), key=repr),
    )


def test_log_entries_and_base_replay_both_sides() -> None:
    image, replica = JoinImage(JP), JoinImage(JP)
    _call(
        image, [{"op": "+I", "k": 1, "a": "x"}, {"op": "+I", "k": 2, "a": "y"}], [{"k": 1, "b": 5}]
    )
    replica.apply(image.changes() or [])
    _call(image, [{"op": "-D", "k": 1, "a": "x"}], [{"k": 3, "b": 7}])
    entry = image.changes()
    assert entry is not None and len(entry) == 6
    replica.apply(entry)
    assert _rows(replica) == _rows(image)
    assert _rows(image) == ([{"k": 2, "a": "y"}], [{"k": 1, "b": 5}, {"k": 3, "b": 7}])
    reloaded = JoinImage(JP)
    reloaded.load_base(image.base())
    assert _rows(reloaded) == _rows(image)
    assert image.changes() is None and not image.empty()


@given(sections=st.lists(st.binary(max_size=64), min_size=6, max_size=6))
def test_forged_log_entry_is_refused(sections: list[bytes]) -> None:
    image = JoinImage(JP)
    _call(image, [{"op": "+I", "k": 1, "a": "x"}], [{"k": 1, "b": 5}])
    with pytest.raises((ValueError, pa.ArrowInvalid)):
        image.apply(sections)
