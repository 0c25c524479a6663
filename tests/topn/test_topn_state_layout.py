"""The stored rows of a streaming changelog ``topn`` bucket (spark/topn_streaming.py): layout 2
(the payload alone, its encoded columns made again on load) gives the same changelog and the
same retained rows as ranking with the stored encoded columns (layout 1), and layout 1 values
still read. No Spark: the bucket processor's load / rank / store steps on Arrow data."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from sliceflow.spark.topn.streaming import LAYOUT_KEY, dump_retained, load_retained
from sliceflow.topn import Ranking, bucket_ids, encode_rows
from sliceflow.topn.plan import OrderKey, TopNPlan, build_plan

SCHEMA = pa.schema([("k", pa.string()), ("v", pa.float64()), ("s", pa.string()), ("d", pa.int64())])


def _plan(retract: bool) -> TopNPlan:
    schema = pa.schema([*SCHEMA, ("op", pa.string())]) if retract else SCHEMA
    order = [OrderKey("v", descending=True), OrderKey("s", nulls_first=False), "d"]
    return build_plan(
        schema, 3, ["k"], order, op_col="op" if retract else None, bundle_rows=7, buckets=4
    )


def _micro_batches(tp: TopNPlan, seed: int, n: int = 6) -> list[pa.RecordBatch]:
    """Random micro-batches with ties, nulls and NaN; with an op column, deletes of live rows."""
    rng = random.Random(seed)
    live: list[dict] = []
    out = []
    for b in range(n):
        rows = []
        for i in range(40):
            if tp.retract and live and rng.random() < 0.3:
                row = live.pop(rng.randrange(len(live)))
                rows.append({**row, "op": "-D"})
                continue
            v = rng.choice([None, float("nan"), 1.0, 2.0, float(rng.randint(0, 20))])
            s = rng.choice([None, "", "a", "é", str(rng.randint(0, 5))])
            row = {"k": rng.choice(["x", "y", None, "z"]), "v": v, "s": s, "d": b * 100 + i}
            if tp.retract:
                row["op"] = "+I"
                live.append(row)
            rows.append(row)
        out.append(pa.RecordBatch.from_pylist(rows, schema=tp.input_schema))
    return out


def _same(a: pa.Table | pa.RecordBatch, b: pa.Table | pa.RecordBatch) -> bool:
    """Equal schemas and values, NaN equal to NaN (``Table.equals`` says NaN != NaN)."""
    return a.schema.equals(b.schema) and repr(a.to_pylist()) == repr(b.to_pylist())


@pytest.mark.parametrize("retract", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_layout_2_gives_the_changelog_and_retained_rows_of_layout_1(retract, seed):
    tp = _plan(retract)
    stored_1: pa.Table | None = None  # layout 1: the state schema, as ranked
    stored_2: bytes | None = None  # layout 2 through its bytes, as the processor stores it
    for batch in _micro_batches(tp, seed):
        new = encode_rows(tp, batch)[1]
        out_1, stored_1 = Ranking(tp).run(stored_1, [new])
        retained = None if stored_2 is None else load_retained(stored_2, tp)
        out_2, kept = Ranking(tp).run_payload(retained, [new])
        assert _same(out_2, out_1)
        assert _same(kept, stored_1.select(tp.payload_schema.names))
        stored_2 = dump_retained(kept) if kept.num_rows else None
    assert stored_2 is not None


def _layout_1_bytes(tp: TopNPlan, state: pa.Table, compression: str | None) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_stream(sink, state.schema, options=options) as writer:
        writer.write_table(state)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("compression", [None, "zstd"])
@pytest.mark.parametrize("retract", [False, True])
def test_layout_1_values_read_as_their_payload_and_rank_on(compression, retract):
    tp = _plan(retract)
    first, second = _micro_batches(tp, 7, 2)
    _, state = Ranking(tp).run(None, [encode_rows(tp, first)[1]])
    old = _layout_1_bytes(tp, state, compression)
    retained = load_retained(old, tp)
    assert retained.schema.equals(tp.payload_schema)
    assert _same(pa.Table.from_batches([retained]), state.select(tp.payload_schema.names))
    new = encode_rows(tp, second)[1]
    out_1, kept_1 = Ranking(tp).run(state, [new])
    out_2, kept_2 = Ranking(tp).run_payload(retained, [new])
    assert _same(out_2, out_1)
    assert _same(kept_2, kept_1.select(tp.payload_schema.names))


def test_layout_2_is_marked_and_smaller_than_layout_1():
    tp = _plan(False)
    _, state = Ranking(tp).run(None, [encode_rows(tp, b)[1] for b in _micro_batches(tp, 3)])
    payload = state.select(tp.payload_schema.names)
    stored = dump_retained(payload)
    schema = pa.ipc.open_stream(pa.py_buffer(stored)).schema
    assert schema.metadata == {LAYOUT_KEY: b"2"}
    assert len(stored) < len(_layout_1_bytes(tp, state, "zstd"))


def test_an_unknown_layout_or_other_columns_are_refused():
    tp = _plan(False)
    rows = pa.table({"k": ["x"], "v": [1.0], "s": ["a"], "d": [1]}, schema=SCHEMA)
    newer = rows.replace_schema_metadata({LAYOUT_KEY: b"3"})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, newer.schema) as writer:
        writer.write_table(newer)
    with pytest.raises(ValueError, match="layout 3, which this release does not read"):
        load_retained(sink.getvalue().to_pybytes(), tp)
    with pytest.raises(ValueError, match=r"layout 2\) have the columns"):
        load_retained(dump_retained(rows.drop_columns(["d"])), tp)


@pytest.mark.parametrize("retract", [False, True])
@pytest.mark.parametrize("by", [["k"], ["k", "s"], []])
def test_bucket_ids_are_the_buckets_encode_rows_gives(retract, by):
    """The packing step hashes the partition key alone; the bucket call encodes the rows: each
    row must land in the bucket whose state holds its key."""
    schema = pa.schema([*SCHEMA, ("op", pa.string())]) if retract else SCHEMA
    tp = build_plan(schema, 3, by, ["v", "d"], op_col="op" if retract else None, buckets=5)
    for batch in _micro_batches(_plan(retract), 11, 3):
        ids, _ = encode_rows(tp, batch, 5)
        assert ids is not None
        assert bucket_ids(tp, batch, 5).tolist() == ids.tolist()
