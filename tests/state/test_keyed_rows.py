"""``KeyedRows`` (spark/_runtime/keyed_rows.py), the image of row states in bucket layout 2:
random calls of expire / take / put against a model of the rows per key, and every call's
changes replayed on a copy made from the base, with the real key hash and with one that makes
every key collide with others."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sliceflow.spark._runtime import keyed_rows
from sliceflow.spark._runtime.keyed_rows import KeyedRows

SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.int64()), ("t", pa.timestamp("us"))])


def encode(rows: pa.RecordBatch) -> bytes:
    return bytes(rows.serialize().to_pybytes())


def decode(data: bytes) -> pa.RecordBatch:
    return pa.ipc.read_record_batch(pa.py_buffer(data), SCHEMA)


def image() -> KeyedRows:
    return KeyedRows(SCHEMA, ["k"], encode, decode)


def rows_of(triples) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [{"k": k, "v": v, "t": t} for k, v, t in triples], schema=SCHEMA
    )


def content(batch: pa.RecordBatch) -> dict[int, list[tuple[int, int]]]:
    """Rows per key, in order (the order within a key is what the kernels see)."""
    out: dict[int, list[tuple[int, int]]] = {}
    for r in batch.to_pylist():
        out.setdefault(r["k"], []).append((r["v"], r["t"].timestamp() * 1e6 if r["t"] else None))
    return out


calls = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(0, 30)),  # expire below this time (µs)
        st.lists(st.integers(0, 12), max_size=6),  # keys touched
        st.lists(st.tuples(st.integers(0, 9), st.integers(0, 40)), max_size=3),  # rows per key
    ),
    max_size=25,
)


def run(calls_) -> None:
    live = image()
    replica = image()
    replica.load_base(live.base())
    model: dict[int, list[tuple[int, int]]] = {}
    for expiry, touched, new in calls_:
        if expiry is not None:
            dropped = live.expire("t", expiry)
            before = sum(len(v) for v in model.values())
            model = {k: [r for r in v if r[1] >= expiry] for k, v in model.items()}
            model = {k: v for k, v in model.items() if v}
            assert dropped == before - sum(len(v) for v in model.values())
        taken = live.take(rows_of([(k, 0, 0) for k in touched]))
        taken_keys = set(content(taken))
        assert set(touched) & set(model) <= taken_keys
        # The "kernel": each touched key keeps its rows plus the new ones, in order.
        kept = []
        for k in sorted(set(touched) | taken_keys):
            rows = model.get(k, []) + ([(v, t) for v, t in new] if k in touched else [])
            model[k] = rows
            kept += [(k, v, t) for v, t in rows]
        model = {k: v for k, v in model.items() if v}
        live.put(rows_of(kept))
        assert {k: [(v, t) for v, t in r] for k, r in content(live.rows).items()} == {
            k: [(v, float(t)) for v, t in r] for k, r in model.items()
        }
        changes = live.changes()
        if changes is not None:
            replica.apply(changes)
        assert content(replica.rows) == content(live.rows)
        fresh = image()
        fresh.load_base(live.base())
        assert content(fresh.rows) == content(live.rows)


@settings(max_examples=200, deadline=None)
@given(calls)
def test_calls_match_the_model_and_replay(calls_):
    run(calls_)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(calls)
def test_colliding_keys_share_a_group_and_stay_exact(monkeypatch_hashes, calls_):
    run(calls_)


@pytest.fixture
def monkeypatch_hashes(monkeypatch):
    """Four groups in all: most keys share a group with others (the same for every example)."""
    real = keyed_rows.key_hashes
    monkeypatch.setattr(keyed_rows, "key_hashes", lambda rows, by: real(rows, by) & 3)


def test_a_damaged_entry_is_refused():
    live = image()
    with pytest.raises(ValueError, match="damaged"):
        live.apply([b"", b"", b""])
    with pytest.raises(ValueError, match="unknown column"):
        live.apply([b"\x01" + b"\x00" * 8 + b"nope", b"", b""])


def test_calls_out_of_order_are_refused():
    live = image()
    with pytest.raises(RuntimeError, match="after take"):
        live.put(rows_of([]))
    live.take(rows_of([(1, 0, 0)]))
    with pytest.raises(RuntimeError, match="once per call"):
        live.take(rows_of([(1, 0, 0)]))
