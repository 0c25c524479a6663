"""The streaming window reference (sliceflow.testing.window_stream_reference) on hand-worked
micro-batch streams (watermark, late rows, the final no-data batch, null times, CUMULATE and
its incremental emission), and hypothesis properties: a stream without late rows emits what the
batch reference computes on the whole input, each (key, window) at most once."""

from __future__ import annotations

import doctest
import math

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sliceflow.testing.window_stream_reference as wsr
from sliceflow.testing.window_reference import (
    RefAgg,
    RefWindow,
    canonical_rows,
    reference_aggregate,
    windows_of,
)
from sliceflow.testing.window_stream_reference import all_rows, same_values, stream_reference

S = 1_000_000  # µs per second
TS = pa.timestamp("us")
SCHEMA = pa.schema([("k", pa.string()), ("t", TS), ("v", pa.int64()), ("f", pa.float64())])
COUNT_SUM = [RefAgg("count", None, "n"), RefAgg("sum", "v", "s")]


def batch(*rows: tuple) -> pa.Table:
    """A micro-batch from ``(key, time in µs or None, v[, f])`` tuples."""
    full = [(*r, None) if len(r) == 3 else r for r in rows]
    cols = list(zip(*full, strict=True)) or [[]] * len(SCHEMA)
    arrays = [pa.array(list(c), f.type) for c, f in zip(cols, SCHEMA, strict=True)]
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def w(start_s: float, end_s: float) -> tuple[int, int, int]:
    """``window_start, window_end, window_time`` of a window given in seconds, as µs."""
    start, end = round(start_s * S), round(end_s * S)
    return (start, end, end - 1)


def per_batch(result: wsr.StreamResult, by: list[str]) -> list[list[tuple]]:
    return [canonical_rows(t, by) for t in result.batches]


# ------------------------------------------------------------------------------------------
# Hand-worked streams


def test_on_time_tumble_stream():
    # tumble 10 s, delay 1 s; watermark after batch b: max time seen - 1 s
    batches = [
        batch(("a", 1 * S, 1), ("b", 2 * S, 10), ("a", 8 * S, 2)),  # wm for batch 1: 7 s
        batch(("a", 12 * S, 3), ("b", 9 * S, 20)),  # 9 s: on time; wm for batch 2: 11 s
        batch(("a", 21 * S, 4), ("b", 15 * S, 30)),  # wm for the no-data batch: 20 s
    ]
    res = stream_reference(
        batches, "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=1 * S
    )
    assert res.watermarks_ms == [None, 7_000, 11_000, 20_000]
    assert per_batch(res, ["k"]) == [
        [],
        [],  # 7 s closes no window
        [(*w(0, 10), "a", 2, 3), (*w(0, 10), "b", 2, 30)],
        [(*w(10, 20), "a", 1, 3), (*w(10, 20), "b", 1, 30)],  # the no-data batch
    ]
    assert (res.late_pairs, res.null_time_rows) == (0, 0)
    expected = reference_aggregate(
        pa.concat_tables(batches), "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM
    )
    for t in res.batches:
        assert t.schema == expected.schema
    assert all_rows(res).num_rows == 4


def test_hop_row_late_for_one_window_on_time_for_the_next():
    # hop size 10 s slide 5 s, delay 0, no keys, count(*)
    batches = [
        batch(("x", 2 * S, 0), ("x", 6 * S, 0)),  # wm for batch 1: 6 s
        batch(("x", 16 * S, 0)),  # late wm None; emits [-5, 5); wm for batch 2: 16 s
        batch(("x", 17 * S, 0)),  # late wm 6 s; emits [0, 10), [5, 15); wm for batch 3: 17 s
        # late wm 16 s: 12 s is late for [5, 15) but on time for [10, 20); 3 s is late for
        # [-5, 5) and [0, 10); 30 s moves the watermark of the no-data batch to 30 s
        batch(("x", 12 * S, 0), ("x", 3 * S, 0), ("x", 30 * S, 0)),
    ]
    count = [RefAgg("count", None, "n")]
    res = stream_reference(batches, "t", RefWindow("hop", 10 * S, 5 * S), [], count, delay_us=0)
    assert res.watermarks_ms == [None, 6_000, 16_000, 17_000, 30_000]
    assert per_batch(res, []) == [
        [],
        [(*w(-5, 5), 1)],
        [(*w(0, 10), 2), (*w(5, 15), 1)],
        [],
        [(*w(10, 20), 3), (*w(15, 25), 2)],  # [10, 20) holds 16 s, 17 s and the late 12 s
    ]
    assert res.late_pairs == 3


def test_late_events_watermark_lags_one_batch():
    # A row of batch 1 is never late (the late events watermark is batch 0's: none), even for
    # a window the eviction watermark of batch 1 closes in that very batch.
    batches = [batch(("a", 20 * S, 1)), batch(("a", 5 * S, 2))]
    res = stream_reference(batches, "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=0)
    assert res.watermarks_ms == [None, 20_000, 20_000]
    assert per_batch(res, ["k"]) == [[], [(*w(0, 10), "a", 1, 2)], []]
    assert res.late_pairs == 0
    # one batch later it is late
    res = stream_reference(
        [*batches[:1], batch(), batches[1]],
        "t",
        RefWindow("tumble", 10 * S),
        ["k"],
        COUNT_SUM,
        delay_us=0,
    )
    assert res.watermarks_ms == [None, 20_000, 20_000, 20_000]
    assert all_rows(res).num_rows == 0
    assert res.late_pairs == 1


def test_final_no_data_batch_emits_the_last_windows():
    batches = [batch(("a", 3 * S, 1), ("a", 14 * S, 2), ("b", 9 * S, 5))]
    res = stream_reference(batches, "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=0)
    assert res.watermarks_ms == [None, 14_000]
    assert len(res.batches) == 2
    assert per_batch(res, ["k"]) == [[], [(*w(0, 10), "a", 1, 1), (*w(0, 10), "b", 1, 5)]]
    # [10, 20) stays open: nothing flushes it
    assert all_rows(res).num_rows == 2


def test_null_times_count_nowhere():
    batches = [
        batch(("a", None, 100), ("z", None, 7)),  # no time: no watermark yet
        batch(("a", 4 * S, 1), ("a", None, 100)),
        batch(("b", 12 * S, 2)),
    ]
    res = stream_reference(batches, "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=0)
    assert res.watermarks_ms == [None, None, 4_000, 12_000]
    assert res.null_time_rows == 3
    assert res.late_pairs == 0
    # "z" only had a null time: it is in no window; "a" counts its one timed row
    assert per_batch(res, ["k"]) == [[], [], [], [(*w(0, 10), "a", 1, 1)]]


def test_watermark_in_whole_milliseconds():
    # Spark keeps the watermark in ms: the max time in µs truncated to ms, minus the delay
    # truncated to ms (not (max time - delay) in µs, then truncated); windows of 500 µs
    rows = [("a", 12_345_100, 1), ("a", 12_344_100, 2), ("a", 12_343_100, 4)]
    tumble = RefWindow("tumble", 500)
    res = stream_reference([batch(*rows)], "t", tumble, ["k"], COUNT_SUM, delay_us=1_500)
    assert res.watermarks_ms == [None, 12_344]  # 12 345 - 1, not 12 343 600 µs // 1000
    # closes the windows ending by 12 344 000 µs
    assert per_batch(res, ["k"]) == [[], [(12_343_000, 12_343_500, 12_343_499, "a", 1, 4)]]
    rows.append(("a", 12_345_999, 8))
    res = stream_reference([batch(*rows)], "t", tumble, ["k"], COUNT_SUM, delay_us=0)
    assert res.watermarks_ms == [None, 12_345]
    # [12 345 000, 12 345 500) stays open: a watermark in µs (12 345 999) would close it
    ends = [r[1] for r in canonical_rows(res.batches[1], ["k"])]
    assert ends == [12_343_500, 12_344_500]


def test_initial_watermark_zero_drops_pre_epoch_windows():
    batches = [batch(("a", -5 * S, 1), ("a", 3 * S, 2))]
    res = stream_reference(batches, "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=0)
    assert res.watermarks_ms == [None, 3_000]
    assert per_batch(res, ["k"]) == [[], [(*w(-10, 0), "a", 1, 1)]]
    assert res.late_pairs == 0
    # the watermark never drops below 0, even when every time is before the epoch
    pre = [batch(("a", -5 * S, 1))]
    res = stream_reference(pre, "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=0)
    assert res.watermarks_ms == [None, 0]
    assert per_batch(res, ["k"]) == [[], [(*w(-10, 0), "a", 1, 1)]]
    # Spark's start: watermark 0 from batch 0 on, so [-10 s, 0) is late at once
    res = stream_reference(
        batches,
        "t",
        RefWindow("tumble", 10 * S),
        ["k"],
        COUNT_SUM,
        delay_us=0,
        initial_watermark_ms=0,
    )
    assert res.watermarks_ms == [0, 3_000]
    assert all_rows(res).num_rows == 0
    assert res.late_pairs == 1


def test_watermark_never_goes_back():
    batches = [batch(("a", 20 * S, 1)), batch(("a", 2 * S, 1)), batch(("a", 21 * S, 1))]
    res = stream_reference(
        batches, "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=5 * S
    )
    assert res.watermarks_ms == [None, 15_000, 15_000, 16_000]
    assert per_batch(res, ["k"]) == [[], [(*w(0, 10), "a", 1, 1)], [], []]


def test_cumulate_emits_a_window_at_a_step_without_rows():
    # cumulate max 9 s step 3 s: "a" has a row in step 1 only, "b" in step 2 only
    batches = [batch(("a", 1 * S, 1), ("b", 4 * S, 5), ("a", 10 * S, 100))]
    res = stream_reference(
        batches, "t", RefWindow("cumulate", 9 * S, 3 * S), ["k"], COUNT_SUM, delay_us=0
    )
    assert res.watermarks_ms == [None, 10_000]
    assert per_batch(res, ["k"]) == [
        [],
        [
            (*w(0, 3), "a", 1, 1),
            (*w(0, 6), "a", 1, 1),  # step 2 added nothing for "a"
            (*w(0, 9), "a", 1, 1),  # nor step 3
            (*w(0, 6), "b", 1, 5),  # "b" has no [0, 3)
            (*w(0, 9), "b", 1, 5),
        ],
    ]


def test_cumulate_incremental_suppresses_unchanged_and_emits_after_a_late_row():
    cumulate, mx = RefWindow("cumulate", 9 * S, 3 * S), [RefAgg("max", "v", "m")]
    batches = [
        batch(("a", 1 * S, 5), ("a", 4 * S, 3)),  # wm for batch 1: 4 s
        batch(("a", 7 * S, 2)),  # emits [0, 3); wm for batch 2: 7 s
        # late wm 4 s: 2 s is late for [0, 3) but counts in [0, 6) and [0, 9), raising their
        # max to 9; 11 s moves the watermark of the no-data batch to 11 s
        batch(("a", 2 * S, 9), ("a", 11 * S, 0)),
    ]
    full = stream_reference(batches, "t", cumulate, ["k"], mx, delay_us=0)
    assert full.watermarks_ms == [None, 4_000, 7_000, 11_000]
    assert full.late_pairs == 1
    assert per_batch(full, ["k"]) == [
        [],
        [(*w(0, 3), "a", 5)],
        [(*w(0, 6), "a", 9)],
        [(*w(0, 9), "a", 9)],  # its count changed (7 s), its max did not
    ]
    inc = stream_reference(batches, "t", cumulate, ["k"], mx, delay_us=0, emit="incremental")
    assert inc.watermarks_ms == full.watermarks_ms
    assert inc.late_pairs == 1
    assert per_batch(inc, ["k"]) == [
        [],
        [(*w(0, 3), "a", 5)],
        [(*w(0, 6), "a", 9)],  # changed by the late row: emitted
        [],  # [0, 9) has the max last emitted: suppressed
    ]


def test_cumulate_incremental_same_value_semantics():
    # NaN == NaN (two NaN objects: the max of [0, 6) is the 4 s row's, the first maximum) and
    # null == null: unchanged; 1.0 → 2.0: changed
    nan = math.nan
    rows = [
        ("n", 4 * S, 0, float("nan")),
        ("n", 1 * S, 0, nan),
        ("n", 5 * S, 0, 1.0),
        ("z", 1 * S, 0, None),
        ("z", 4 * S, 0, None),
        ("c", 1 * S, 0, 1.0),
        ("c", 4 * S, 0, 2.0),
        ("c", 7 * S, 0, 0.0),
    ]
    aggs = [RefAgg("max", "f", "m")]
    cumulate = RefWindow("cumulate", 6 * S, 3 * S)
    inc = stream_reference(
        [batch(*rows)], "t", cumulate, ["k"], aggs, delay_us=0, emit="incremental"
    )
    got = [(r[1] // S, r[3], r[4]) for r in canonical_rows(inc.batches[1], ["k"])]
    assert [g[:2] for g in got] == [(3, "c"), (6, "c"), (3, "n"), (3, "z")]
    assert [g[2] for g in got[:2]] == [1.0, 2.0]
    assert math.isnan(got[2][2]) and got[3][2] is None
    full = stream_reference([batch(*rows)], "t", cumulate, ["k"], aggs, delay_us=0)
    assert full.batches[1].num_rows == 6
    assert same_values([None, nan, -0.0, 1], [None, nan, 0.0, 1.0])
    assert not same_values([None], [0]) and not same_values([1.0], [nan])


def test_record_batches_and_empty_batches():
    t = batch(("a", 1 * S, 1), ("a", 12 * S, 2))
    res = stream_reference(
        [t.to_batches()[0], batch()], "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=0
    )
    assert res.watermarks_ms == [None, 12_000, 12_000]
    assert per_batch(res, ["k"]) == [[], [(*w(0, 10), "a", 1, 1)], []]


def test_validation():
    args = ("t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM)
    with pytest.raises(ValueError, match="emit"):
        stream_reference([batch()], *args, delay_us=0, emit="final")
    with pytest.raises(ValueError, match="cumulate"):
        stream_reference([batch()], *args, delay_us=0, emit="incremental")
    with pytest.raises(ValueError, match="negative"):
        stream_reference([batch()], *args, delay_us=-1)
    with pytest.raises(ValueError, match="at least one"):
        stream_reference([], *args, delay_us=0)
    with pytest.raises(ValueError, match="schema"):
        stream_reference([batch(), batch().drop_columns(["f"])], *args, delay_us=0)


def test_ansi_overflow_raises_on_emission():
    big = batch(("a", 1 * S, (1 << 63) - 1), ("a", 2 * S, 1), ("a", 20 * S, 0))
    with pytest.raises(OverflowError, match="ARITHMETIC_OVERFLOW"):
        stream_reference([big], "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=0)
    res = stream_reference(
        [big], "t", RefWindow("tumble", 10 * S), ["k"], COUNT_SUM, delay_us=0, ansi=False
    )
    assert canonical_rows(res.batches[1], ["k"]) == [(*w(0, 10), "a", 2, -(1 << 63))]


def test_docstring_examples():
    failed, tried = doctest.testmod(wsr)
    assert tried >= 10 and failed == 0


# ------------------------------------------------------------------------------------------
# Properties

WINDOWS = [
    RefWindow("tumble", 10 * S),
    RefWindow("tumble", 7 * S, offset=3 * S),
    RefWindow("hop", 10 * S, 5 * S),
    RefWindow("hop", 10 * S, 4 * S, offset=1 * S),
    RefWindow("cumulate", 9 * S, 3 * S),
    RefWindow("cumulate", 8 * S, 2 * S, offset=5 * S),
]
AGGS = [
    RefAgg("count", None, "n"),
    RefAgg("count", "v", "nv"),
    RefAgg("sum", "v", "s"),
    RefAgg("avg", "v", "a"),
    RefAgg("min", "f", "lo"),
    RefAgg("max", "v", "hi"),
    RefAgg("first_value", "v", "fv"),
    RefAgg("last_value", "f", "lv"),
]
SENTINEL = "~sentinel"
PROPS = settings(suppress_health_check=[HealthCheck.too_slow])

row_st = st.tuples(
    st.sampled_from(["a", "b", None]),
    st.integers(1 * S, 60 * S) | st.sampled_from([1 * S, 30 * S, 30 * S + 999]),
    st.none() | st.integers(-5, 5),
    st.none() | st.sampled_from([-1.5, 0.0, 2.0, math.nan]),
)


def split(rows: list[tuple], cuts: list[int]) -> list[pa.Table]:
    cuts = sorted({c % (len(rows) + 1) for c in cuts})
    bounds = [0, *cuts, len(rows)]
    return [batch(*rows[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


@PROPS
@given(
    st.lists(row_st, min_size=1, max_size=25),
    st.lists(st.integers(0, 30), max_size=4),
    st.sampled_from(WINDOWS),
    st.sampled_from(["big_delay", "in_order"]),
    st.integers(0, 20 * S),
)
def test_no_late_rows_emit_the_batch_result(rows, cuts, window, mode, delay):
    """Without late rows (a delay longer than the time span, or time-ordered batches), the
    emitted rows of all batches are the batch reference's on the concatenated input, once the
    final watermark is past every window (a sentinel row in a last batch moves it there)."""
    if mode == "big_delay":
        times = [r[1] for r in rows]
        delay = max(times) - min(times) + 1 * S + delay
    else:
        rows = sorted(rows, key=lambda r: r[1])
    data = split(rows, cuts)
    sentinel = 60 * S + delay + 20 * S
    stream = [*data, batch((SENTINEL, sentinel, None))]
    res = stream_reference(stream, "t", window, ["k"], AGGS, delay_us=delay)
    assert res.late_pairs == 0
    assert res.null_time_rows == 0
    assert res.watermarks_ms[-1] == sentinel // 1000 - delay // 1000
    got = [r for r in canonical_rows(all_rows(res), ["k"])]
    assert all(r[3] != SENTINEL for r in got)
    expected = reference_aggregate(pa.concat_tables(data), "t", window, ["k"], AGGS)
    assert _same_rows(got, canonical_rows(expected, ["k"]))


def _same_rows(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b, strict=True))


@PROPS
@given(
    st.lists(row_st | st.tuples(st.just("a"), st.none(), st.just(1), st.none()), max_size=25),
    st.lists(st.integers(0, 30), max_size=5),
    st.sampled_from(WINDOWS),
    st.integers(0, 15 * S),
)
def test_any_stream_emits_each_window_once_after_the_watermark(rows, cuts, window, delay):
    """Arbitrary order and delay: a (key, window) is emitted at most once, in a batch whose
    watermark is past its end; counts add up with the late pairs; incremental CUMULATE emits
    the rows of ``emit="all"`` whose values changed since the key's last emitted window."""
    stream = split(rows, cuts)
    count = [RefAgg("count", None, "n"), RefAgg("max", "v", "hi")]
    res = stream_reference(stream, "t", window, ["k"], count, delay_us=delay)
    wms = res.watermarks_ms
    assert len(res.batches) == len(wms) == len(stream) + 1
    assert all(
        a is None or (b is not None and a <= b) for a, b in zip(wms[:-1], wms[1:], strict=True)
    )
    seen: set = set()
    for wm, t in zip(wms, res.batches, strict=True):
        for r in canonical_rows(t, ["k"]):
            assert wm is not None and r[1] <= wm * 1000
            assert (r[3], r[0], r[1]) not in seen
            seen.add((r[3], r[0], r[1]))
    timed = [r for r in rows if r[1] is not None]
    assert res.null_time_rows == len(rows) - len(timed)
    pairs = sum(len(windows_of(r[1], window)) for r in timed)
    emitted = sum(all_rows(res).column("n").to_pylist())
    assert emitted + res.late_pairs <= pairs
    if delay >= 60 * S:  # nothing can be late
        assert res.late_pairs == 0
    if window.kind == "cumulate":
        inc = stream_reference(
            stream, "t", window, ["k"], count, delay_us=delay, emit="incremental"
        )
        last: dict = {}
        for full_t, inc_t in zip(res.batches, inc.batches, strict=True):
            kept = []
            for r in canonical_rows(full_t, ["k"]):
                if not same_values(last.get((r[3], r[0]), ()), r[4:]):
                    last[(r[3], r[0])] = r[4:]
                    kept.append(r)
            assert _same_rows(canonical_rows(inc_t, ["k"]), kept)
