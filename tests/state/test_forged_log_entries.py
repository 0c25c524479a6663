"""Forged and damaged log entries of bucket layout 2 (docs/state.md) on every operator's image:
applying one either works or fails with a ``ValueError`` (pyarrow's ``ArrowInvalid`` is one),
never a crash or another error, and a real entry cut or flipped anywhere does the same. The
changelog kernel's changes payload is fuzzed in C++ (fuzz/fuzz_changelog.cpp); these images
parse their entries in Python and Arrow."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sliceflow import window as W
from sliceflow.dedup.first_seen import FirstSeenStep
from sliceflow.dedup.plan import build_plan as dedup_plan
from sliceflow.spark._runtime.keyed_rows import KeyedRows
from sliceflow.spark.dedup.first_seen import FirstSeenImage
from sliceflow.spark.window.streaming import WindowImage
from sliceflow.window.plan import build_plan as window_plan

S = 1_000_000
SCHEMA = pa.schema([("k", pa.int64()), ("t", pa.timestamp("us")), ("v", pa.int64())])
ROWS = pa.RecordBatch.from_pylist(
    [{"k": k % 5, "t": dt.datetime(2026, 1, 1, 0, 0, k), "v": k} for k in range(20)],
    schema=SCHEMA,
)


def keyed() -> KeyedRows:
    return KeyedRows(
        SCHEMA,
        ["k"],
        lambda rows: bytes(rows.serialize().to_pybytes()),
        lambda data: pa.ipc.read_record_batch(pa.py_buffer(data), SCHEMA),
    )


def window() -> WindowImage:
    spec = W.tumble("t", dt.timedelta(seconds=10))
    return WindowImage(window_plan(SCHEMA, spec, ["k"], [W.count(), W.sum("v")]), "all")


def first_seen() -> FirstSeenImage:
    return FirstSeenImage(FirstSeenStep(dedup_plan(SCHEMA, ["k"], keep="first"), "t", 0), True)


def real_entry(kind: str) -> list[bytes]:
    """A log entry the image writes for one step over ROWS."""
    if kind == "keyed":
        image = keyed()
        image.expire("t", 3 * S)
        image.put(ROWS) if image.take(ROWS) is not None else None
    elif kind == "window":
        image = window()
        image.step(1_767_225_605_000, [ROWS], {})
    else:
        image = first_seen()
        image.advance(ROWS, 1_767_225_605_000, {})
    changes = image.changes()
    assert changes is not None
    return changes


MAKERS = {"keyed": keyed, "window": window, "first_seen": first_seen}


def apply_or_refuse(kind: str, sections: list[bytes]) -> None:
    image = MAKERS[kind]()
    try:
        image.apply(sections)
    except ValueError:
        return
    # Applied: the state is still usable.
    image.base()
    image.memory_usage()


@pytest.mark.parametrize("kind", sorted(MAKERS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_forged_entries_apply_or_are_refused(kind, data):
    sections = len(real_entry(kind))
    forged = [data.draw(st.binary(max_size=96)) for _ in range(sections)]
    apply_or_refuse(kind, forged)


@pytest.mark.parametrize("kind", sorted(MAKERS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_damaged_entries_apply_or_are_refused(kind, data):
    sections = real_entry(kind)
    i = data.draw(st.integers(0, len(sections) - 1))
    raw = bytearray(sections[i])
    if raw and data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] ^= data.draw(st.integers(1, 255))
    else:
        raw = raw[: data.draw(st.integers(0, len(raw)))]
    sections[i] = bytes(raw)
    apply_or_refuse(kind, sections)
