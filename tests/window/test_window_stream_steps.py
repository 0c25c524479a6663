"""Streaming windows without Spark: the per-bucket step (sliceflow.window.state.advance) run
micro-batch by micro-batch against the brute-force streaming model, on random streams
(out-of-order rows, late rows, null times, several delays, slides that do and do not divide
the size, offsets, several buckets), plus the state it carries."""

from __future__ import annotations

import datetime as dt
import math

import pyarrow as pa
import pytest
import test_window_stream_reference as reference_tests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sliceflow import window as W
from sliceflow.testing.window_reference import RefAgg, RefWindow, canonical_rows
from sliceflow.testing.window_stream_reference import same_values, stream_reference
from sliceflow.window.plan import build_plan
from sliceflow.window.state import BucketState, advance, read_table, write_table

S = 1_000_000
TS = pa.timestamp("us")
SCHEMA = pa.schema([("k", pa.string()), ("t", TS), ("v", pa.int64()), ("f", pa.float64())])

WINDOWS = [
    RefWindow("tumble", 10 * S),
    RefWindow("tumble", 7 * S, offset=3 * S),
    RefWindow("hop", 10 * S, 5 * S),
    RefWindow("hop", 10 * S, 4 * S, offset=1 * S),
    RefWindow("hop", 9 * S, 6 * S),
    RefWindow("cumulate", 9 * S, 3 * S),
    RefWindow("cumulate", 8 * S, 2 * S, offset=5 * S),
]
AGGS = [*reference_tests.AGGS, RefAgg("count_distinct", "v", "dv")]


def spec_of(w: RefWindow) -> W.WindowSpec:
    us = dt.timedelta(microseconds=1)
    offset = w.offset * us
    if w.kind == "tumble":
        return W.tumble("t", w.size * us, offset)
    if w.kind == "hop":
        return W.hop("t", w.size * us, w.slide * us, offset)
    return W.cumulate("t", w.slide * us, w.size * us, offset)


def agg_specs(aggs: list[RefAgg]) -> list[W.AggSpec]:
    fns = {
        "count": W.count,
        "sum": W.sum,
        "avg": W.avg,
        "min": W.min,
        "max": W.max,
        "count_distinct": W.count_distinct,
        "first_value": W.first_value,
        "last_value": W.last_value,
    }
    return [(fns[a.fn](a.column) if a.column else W.count()).alias(a.name) for a in aggs]


def batch(rows: list[tuple]) -> pa.Table:
    cols = list(zip(*rows, strict=True)) if rows else [[], [], [], []]
    return pa.table([pa.array(list(c), f.type) for c, f in zip(cols, SCHEMA, strict=True)], SCHEMA)


def last_window_end(slice_start: int, w: RefWindow) -> int:
    if w.kind == "cumulate":
        return slice_start - (slice_start - w.offset) % w.size + w.size
    slide = w.size if w.kind == "tumble" else w.slide
    return slice_start - (slice_start - w.offset) % slide + w.size


def run_steps(stream, window, aggs, delay, emit, buckets):
    """Each micro-batch of the model, run through `advance` per bucket (a key's bucket: its
    position in a fixed list), with the model's watermarks. Returns per batch the emitted
    rows, the counters and the states after each batch."""
    model = stream_reference(stream, "t", window, ["k"], aggs, delay_us=delay, emit=emit)
    wp = build_plan(SCHEMA, spec_of(window), ["k"], agg_specs(aggs))
    keys = ["a", "b", "c", None]
    states: list[BucketState | None] = [None] * buckets
    stats: dict[str, int] = {}
    per_batch, carried = [], []
    for b, wm in enumerate(model.watermarks_ms):
        rows = stream[b] if b < len(stream) else SCHEMA.empty_table()
        bucket_of = pa.array([keys.index(k) % buckets for k in rows.column("k").to_pylist()])
        out = []
        for i in range(buckets):
            mine = rows.filter(pa.compute.equal(bucket_of, i)) if rows.num_rows else rows
            fired, states[i] = advance(wp, emit, states[i], wm or 0, mine.to_batches(), stats)
            # The state survives a round trip through bytes (what the state store keeps).
            states[i] = BucketState(
                states[i].watermark_ms,
                read_table(write_table(states[i].partials), wp.partial_schema),
                states[i].emitted,
            )
            out.append(fired)
        per_batch.append(pa.concat_tables(out))
        carried.append([s.partials for s in states if s is not None])
    return model, per_batch, stats, carried


def same_rows(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b, strict=True))


row_st = st.tuples(
    st.sampled_from(["a", "b", "c", None]),
    st.none() | st.integers(1 * S, 60 * S) | st.sampled_from([10 * S, 30 * S - 1]),
    st.none() | st.integers(-5, 5),
    st.none() | st.sampled_from([-1.5, 0.0, 2.0, math.nan]),
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(row_st, max_size=12), min_size=1, max_size=6),
    st.sampled_from(WINDOWS),
    st.sampled_from([0, 1 * S, 3 * S + 500, 12 * S, 90 * S]),
    st.sampled_from([1, 3]),
    st.booleans(),
)
def test_steps_match_the_streaming_model(batches, window, delay, buckets, incremental):
    emit = "incremental" if incremental and window.kind == "cumulate" else "all"
    stream = [batch(rows) for rows in batches]
    model, got, stats, carried = run_steps(stream, window, AGGS, delay, emit, buckets)
    for b, (expected, ours) in enumerate(zip(model.batches, got, strict=True)):
        assert same_rows(canonical_rows(ours, ["k"]), canonical_rows(expected, ["k"])), b
    assert stats.get("late_row_windows", 0) == model.late_pairs
    assert stats.get("rows_null_time", 0) == model.null_time_rows
    # Carried slices: exactly those of counted rows whose last window is still open.
    for b, tables in enumerate(carried):
        wm_us = (model.watermarks_ms[b] or 0) * 1000
        held = set()
        for t in tables:
            for s in t.column("__slice").to_pylist():
                assert last_window_end(s, window) > wm_us
            held |= set(
                zip(t.column("__key").to_pylist(), t.column("__slice").to_pylist(), strict=True)
            )
        open_slices = set()
        for i, rows in enumerate(batches[: b + 1]):
            late_floor = (model.watermarks_ms[i - 1] or 0) * 1000 if i else 0
            for k, t, _, _ in rows:
                if t is None:
                    continue
                slice_len = math.gcd(window.size, window.slide or window.size)
                if window.kind == "cumulate":
                    slice_len = window.slide
                s = t - (t - window.offset) % slice_len
                end = last_window_end(s, window)
                if end > late_floor and end > wm_us:
                    open_slices.add((k, s))
        assert len(held) == len(open_slices), b


def test_a_row_late_for_one_hop_window_counts_in_the_next():
    # hop(10 s, 5 s), delay 10 s: batch 1 runs with watermark 12 s and emits [0, 10); the row at
    # 7 s arrives in batch 2 (late floor 12 s), so it counts in [5, 15) alone.
    stream = [
        batch([("a", 1 * S, 1, None), ("a", 22 * S, 1, None)]),
        batch([("a", 23 * S, 1, None)]),
        batch([("a", 7 * S, 5, None), ("a", 30 * S, 1, None)]),
    ]
    window = RefWindow("hop", 10 * S, 5 * S)
    aggs = [RefAgg("sum", "v", "s")]
    model, got, stats, _ = run_steps(stream, window, aggs, 10 * S, "all", 1)
    assert stats["late_row_windows"] == 1 and stats.get("rows_late", 0) == 0
    rows = [r for t in got for r in canonical_rows(t, ["k"])]
    by_start = {r[0]: r[4] for r in rows if r[0] <= 5 * S}
    assert by_start == {-5 * S: 1, 0: 1, 5 * S: 5}
    assert same_rows(rows, [r for t in model.batches for r in canonical_rows(t, ["k"])])


def test_state_of_another_schema_is_refused():
    wp = build_plan(SCHEMA, W.tumble("t", "10 seconds"), ["k"], [W.count()])
    other = build_plan(SCHEMA, W.tumble("t", "10 seconds"), ["k"], [W.sum("v")])
    _, state = advance(wp, "all", None, 0, [batch([("a", 1 * S, 1, 1.0)]).to_batches()[0]])
    with pytest.raises(ValueError, match="another schema"):
        read_table(write_table(state.partials), other.partial_schema)


def same_table(a: pa.Table, b: pa.Table) -> bool:
    """Equal rows in order (NaN equal to NaN)."""
    return a.schema == b.schema and repr(a.to_pylist()) == repr(b.to_pylist())


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=60, deadline=None)
@given(
    st.lists(st.lists(row_st, max_size=12), min_size=1, max_size=6),
    st.sampled_from(WINDOWS),
    st.sampled_from([0, 3 * S + 500, 12 * S]),
    st.booleans(),
    st.integers(0, 3),
)
def test_a_replica_of_the_log_holds_the_same_state(batches, window, delay, incremental, rebase):
    """Bucket layout 2 (WindowImage): each step's log entry (its folded rows and watermarks),
    replayed on a replica made from an earlier base, gives the state the step left, and the
    windows fired are those of `advance`."""
    from sliceflow.spark.window.streaming import WindowImage

    emit = "incremental" if incremental and window.kind == "cumulate" else "all"
    stream = [batch(rows) for rows in batches]
    model = stream_reference(stream, "t", window, ["k"], AGGS, delay_us=delay, emit=emit)
    wp = build_plan(SCHEMA, spec_of(window), ["k"], agg_specs(AGGS))
    live = WindowImage(wp, emit)
    replica = WindowImage(wp, emit)
    state: BucketState | None = None
    for b, wm in enumerate(model.watermarks_ms):
        rows = stream[b] if b < len(stream) else SCHEMA.empty_table()
        fired, state = advance(wp, emit, state, wm or 0, rows.to_batches(), {})
        if b == 0:
            live.state.watermark_ms = wm or 0
        out = live.step(wm or 0, rows.to_batches(), {})
        assert same_rows(canonical_rows(out, ["k"]), canonical_rows(fired, ["k"]))
        assert same_table(live.state.partials, state.partials)
        if b == rebase:
            replica = WindowImage(wp, emit)
            replica.load_base(live.base())
            # A base holds no watermark: the processor sets the one its own value holds.
            replica.state.watermark_ms = live.state.watermark_ms
        else:
            changes = live.changes()
            if changes is not None:
                replica.apply(changes)
        if b >= rebase:
            assert replica.state.watermark_ms == live.state.watermark_ms
            assert same_table(replica.state.partials, live.state.partials), b
            if emit == "incremental":
                empty = wp.output_schema.empty_table()
                assert same_table(replica.state.emitted or empty, live.state.emitted or empty)
