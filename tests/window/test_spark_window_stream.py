"""Streaming ``window_agg`` in Spark (``local[2]``, file source, one parquet file per
micro-batch): TUMBLE and HOP against Spark's own append-mode ``groupBy(window(...))`` on the
same micro-batches (random streams: out-of-order and late rows, several delays, slides that do
and do not divide the size, offsets), CUMULATE (all and incremental) against the brute-force
model, batch equal to streaming when no row is late (seed 004), restart from a checkpoint into
a file sink against Spark's own query stopped at the same point, and the counters."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F
from support.spark_helpers import collect_tables as collect
from support.spark_helpers import stream_of, write_micro_batches
from support.window_data import OURS, REF, SCHEMA, S, random_stream, spec_of

from sliceflow import window as W
from sliceflow._runtime.state_format import inspect
from sliceflow._runtime.state_log import Head
from sliceflow.spark import window_agg
from sliceflow.spark.window.agg import WindowMetrics
from sliceflow.testing.spark import run_to_end, window_bounds
from sliceflow.testing.window_reference import RefWindow, canonical_rows
from sliceflow.testing.window_stream_reference import same_values, stream_reference
from sliceflow.window.state import watermark_from

pytestmark = pytest.mark.spark


def spark_aggs():
    return [
        F.count(F.lit(1)).alias("n"),
        F.sum("v").alias("s"),
        F.max("v").alias("hi"),
        F.min("f").alias("lo"),
        F.avg("v").alias("a"),
    ]


def rows_by_batch(got: dict[int, pa.Table]) -> dict[int, list[tuple]]:
    return {b: canonical_rows(t, ["k"]) for b, t in got.items() if t.num_rows}


def same_batches(a: dict[int, list[tuple]], b: dict[int, list[tuple]]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(
        len(a[i]) == len(b[i]) and all(same_values(x, y) for x, y in zip(a[i], b[i], strict=True))
        for i in a
    )


def duration(us: int) -> str:
    return f"{us} microseconds"


def spark_window(w: RefWindow):
    slide = w.size if w.kind == "tumble" else w.slide
    return F.window("t", duration(w.size), duration(slide), duration(w.offset))


def spark_own(stream, w: RefWindow):
    return (
        stream.groupBy(spark_window(w), "k")
        .agg(*spark_aggs())
        .select(*window_bounds("window"), "k", "n", "s", "hi", "lo", "a")
    )


WINDOWS = [
    RefWindow("tumble", 10 * S),
    RefWindow("tumble", 7 * S, offset=3 * S),
    RefWindow("hop", 20 * S, 5 * S),
    RefWindow("hop", 10 * S, 4 * S, offset=1 * S),
    RefWindow("hop", 9 * S, 6 * S, offset=2 * S),
]


# Each example runs two streaming queries (tens of seconds): a budget of its own.
@settings(max_examples=5, suppress_health_check=list(HealthCheck))
@given(
    st.integers(0, 10_000),
    st.sampled_from(WINDOWS),
    st.sampled_from([0, 4 * S, 15 * S + 500_000]),
)
def test_tumble_and_hop_equal_spark_streaming(spark, tmp_path_factory, seed, window, delay):
    tmp = tmp_path_factory.mktemp("stream")
    write_micro_batches(str(tmp / "src"), random_stream(seed, 5, 25))
    watermarked = stream_of(spark, str(tmp / "src"), SCHEMA).withWatermark("t", duration(delay))
    metrics = WindowMetrics(spark)
    ours = collect(
        window_agg(watermarked, spec_of(window), ["k"], OURS, buckets=3, metrics=metrics),
        str(tmp / "ck_ours"),
    )
    theirs = collect(spark_own(watermarked, window), str(tmp / "ck_spark"))
    assert same_batches(rows_by_batch(ours), rows_by_batch(theirs))
    assert sum(t.num_rows for t in ours.values()) == metrics.value.get("windows_emitted", 0)


@pytest.mark.parametrize(
    "emit, cache_bytes", [("all", None), ("incremental", None), ("incremental", "0")]
)
def test_cumulate_equals_the_streaming_model(spark, tmp_path, emit, cache_bytes):
    """Against the model, per micro-batch; with spark.sliceflow.state.cacheBytes = 0 every call
    reads its bucket's base and replays its log (bucket layout 2)."""
    window = RefWindow("cumulate", 30 * S, 10 * S, offset=5 * S)
    # The first stream (by seed) that has late rows and null times.
    batches = next(
        b
        for b in (random_stream(seed, 5, 25) for seed in range(100))
        if (r := stream_reference(b, "t", window, ["k"], REF, delay_us=4 * S)).late_pairs
        and r.null_time_rows
    )
    write_micro_batches(str(tmp_path / "src"), batches)
    watermarked = stream_of(spark, str(tmp_path / "src"), SCHEMA).withWatermark("t", "4 seconds")
    metrics = WindowMetrics(spark)
    if cache_bytes is not None:
        spark.conf.set("spark.sliceflow.state.cacheBytes", cache_bytes)
    try:
        out = window_agg(watermarked, spec_of(window), ["k"], OURS, emit=emit, metrics=metrics)
    finally:
        spark.conf.unset("spark.sliceflow.state.cacheBytes")
    ours = rows_by_batch(collect(out, str(tmp_path / "ck")))
    model = stream_reference(batches, "t", window, ["k"], REF, delay_us=4 * S, emit=emit)
    if cache_bytes == "0":
        assert metrics.value["state_log_entries_read"] > 0
        assert metrics.value.get("state_cache_hits", 0) == 0
    expected = {b: canonical_rows(t, ["k"]) for b, t in enumerate(model.batches) if t.num_rows}
    assert same_batches(ours, expected)
    assert metrics.value["late_row_windows"] == model.late_pairs > 0
    assert metrics.value["rows_null_time"] == model.null_time_rows > 0


def test_batch_equals_streaming_without_late_rows(spark, tmp_path):
    """Seed 004: on the same input, with no late row, the stream emits the batch result."""
    window = RefWindow("hop", 20 * S, 5 * S)
    rows = [
        b.sort_by("t") for b in random_stream(3, 4, 30) if b.num_rows
    ]  # in time order per batch
    data = pa.concat_tables(rows).sort_by("t").filter(pa.compute.is_valid(pa.compute.field("t")))
    parts = [data.slice(i, 30) for i in range(0, data.num_rows, 30)]
    sentinel = pa.table(
        [pa.array(["~end"]), pa.array([10_000 * S], SCHEMA.field("t").type), [None], [None]],
        SCHEMA,
    )
    write_micro_batches(str(tmp_path / "src"), [*parts, sentinel])
    watermarked = stream_of(spark, str(tmp_path / "src"), SCHEMA).withWatermark("t", "0 seconds")
    streamed = collect(window_agg(watermarked, spec_of(window), ["k"], OURS), str(tmp_path / "ck"))
    everything = pa.concat_tables([t for t in streamed.values() if t.num_rows])
    got = [r for r in canonical_rows(everything, ["k"]) if r[3] != "~end"]
    # The same files, read as a batch (without the sentinel that moves the watermark).
    batch_df = spark.read.parquet(str(tmp_path / "src")).where("k IS NULL OR k != '~end'")
    batch_rows = canonical_rows(window_agg(batch_df, spec_of(window), ["k"], OURS).toArrow(), ["k"])
    assert len(got) == len(batch_rows) > 0
    diff = [(a, b) for a, b in zip(got, batch_rows, strict=True) if not same_values(a, b)]
    assert not diff, diff[:3]


def test_restart_from_checkpoint_equals_spark(spark, tmp_path):
    window = RefWindow("hop", 30 * S, 10 * S)
    batches = random_stream(11, 6, 30)
    write_micro_batches(str(tmp_path / "src"), batches[:3])

    def run(name: str) -> None:
        stream = stream_of(spark, str(tmp_path / "src"), SCHEMA).withWatermark("t", "5 seconds")
        # Every write a new base (bucket layout 2 without a log), so that the base values read
        # below are the buckets' whole state.
        spark.conf.set("spark.sliceflow.state.logShare", "0")
        try:
            df = (
                window_agg(stream, spec_of(window), ["k"], OURS)
                if name == "ours"
                else spark_own(stream, window)
            )
        finally:
            spark.conf.unset("spark.sliceflow.state.logShare")
        run_to_end(df, str(tmp_path / f"ck_{name}"), path=str(tmp_path / f"sink_{name}"))

    run("ours")
    run("spark")
    first = spark.read.parquet(str(tmp_path / "sink_ours")).count()
    write_micro_batches(str(tmp_path / "src"), batches[3:], first=3)
    run("ours")
    run("spark")
    ours = canonical_rows(spark.read.parquet(str(tmp_path / "sink_ours")).toArrow(), ["k"])
    theirs = canonical_rows(spark.read.parquet(str(tmp_path / "sink_spark")).toArrow(), ["k"])
    assert 0 < first < len(ours)
    assert len({(r[0], r[3]) for r in ours}) == len(ours)  # nothing doubled
    assert len(ours) == len(theirs)
    assert all(same_values(a, b) for a, b in zip(ours, theirs, strict=True))

    # Expired slices left the state: what is carried is what windows after the watermark need.
    def state_of(name: str) -> list:
        reader = spark.read.format("statestore").option("stateVarName", name)
        return [r["value"] for r in reader.load(str(tmp_path / "ck_ours")).collect()]

    # Each value is a sealed state value (docs/state.md): its payload sections.
    def sections(value) -> list[bytes]:
        return inspect(bytes(value["blob"]))["sections"]

    heads = [Head.decode(sections(v)[0]) for v in state_of("sliceflow_window_bucket_rows_head")]
    assert heads and all(h.log_entries == 0 for h in heads)
    watermarks = [watermark_from(sections(v)) for v in state_of("sliceflow_window_bucket")]
    model = stream_reference(batches, "t", window, ["k"], REF, delay_us=5 * S)
    assert watermarks and set(watermarks) == {model.watermarks_ms[-1]}
    carried = 0
    for value in state_of("sliceflow_window_bucket_rows"):
        blob = sections(value)[0]  # the partial rows
        if blob:
            t = pa.ipc.open_stream(blob).read_all()
            last_end = [s - s % (10 * S) + 30 * S for s in t.column("__slice").to_pylist()]
            assert min(last_end) > watermarks[0] * 1000
            carried += t.num_rows
    assert carried > 0


def test_restart_with_another_aggregation_is_refused(spark, tmp_path):
    write_micro_batches(str(tmp_path / "src"), random_stream(5, 2, 20))

    def run(aggs) -> None:
        stream = stream_of(spark, str(tmp_path / "src"), SCHEMA).withWatermark("t", "5 seconds")
        df = window_agg(stream, W.tumble("t", "10 seconds"), ["k"], aggs, buckets=2)
        run_to_end(df, str(tmp_path / "ck"), path=str(tmp_path / "sink"))

    run([W.count().alias("n")])
    write_micro_batches(str(tmp_path / "src"), random_stream(6, 1, 20), first=2)
    changed = (
        r"aggregates: count\(\*\) in the checkpoint, now count\(\*\), max\(BIGINT\); "
        r"input columns: by `k`; time `t`; arguments \* in the checkpoint, now by `k`; time `t`; "
        r"arguments \*, `v`"
    )
    with pytest.raises(StreamingQueryException, match=f"different query \\({changed}\\)"):
        run([W.count().alias("n"), W.max("v").alias("m")])


def test_a_bucket_firing_more_windows_than_one_output_batch(spark, tmp_path):
    """One bucket fires 70,000 windows at once (the kernel hands them over in batches of at
    most 65,536 rows): every one reaches the sink."""
    keys = 70_000
    first = pa.table(
        [
            pa.array([f"k{i}" for i in range(keys)]),
            pa.array([1 * S] * keys, SCHEMA.field("t").type),
            pa.array(range(keys), pa.int64()),
            pa.array([0.5] * keys),
        ],
        SCHEMA,
    )
    later = first.slice(0, 1).set_column(1, "t", pa.array([100 * S], SCHEMA.field("t").type))
    write_micro_batches(str(tmp_path / "src"), [first, later])
    stream = stream_of(spark, str(tmp_path / "src"), SCHEMA).withWatermark("t", "1 second")
    out = window_agg(stream, W.tumble("t", "10 seconds"), ["k"], [W.sum("v").alias("s")], buckets=1)
    got = collect(out, str(tmp_path / "ck"))
    fired = pa.concat_tables([t for t in got.values() if t.num_rows])
    assert fired.num_rows == keys
    assert pa.compute.sum(fired.column("s")).as_py() == keys * (keys - 1) // 2
