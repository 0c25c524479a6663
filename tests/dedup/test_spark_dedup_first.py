"""``deduplicate(keep="first")`` in arrival order on a watermarked stream against Spark's own
``dropDuplicatesWithinWatermark`` on the same stream, micro-batch by micro-batch: keys that come
back before their entry expires (dropped) and after (emitted again), an expiry equal to a later
watermark, late rows, null times, buckets without rows in a micro-batch, and a restart whose
first micro-batch is a no-data one (only the buckets' timers run). Also the payload of a bucket
(format 2) and format 1 read back."""

from __future__ import annotations

import os
import random
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sliceflow.dedup.first_seen import FirstSeenStep
from sliceflow.dedup.plan import build_plan
from sliceflow.spark import DedupMetrics, deduplicate

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("k", pa.int64()), ("ts", pa.timestamp("us")), ("tag", pa.string())])
S = 1_000_000

#: (key, time in s or None) per micro-batch; the watermark delay is 10 s. Expiries are the first
#: row's time + 10 s; a micro-batch's rows are matched before it evicts.
HAND_BATCHES: list[list[tuple[int, float | None]]] = [
    [(1, 0), (2, 100), (3, None), (10, 30)],  # (1, 0): late (at the first watermark, 0)
    [(1, 95), (4, 200), (10, 35)],  # W 90: 10 (expires 40) is still there while rows run
    [
        (1, 195),
        (2, 191),
        (5, 190),
        (6, 189),
        (3, 150),
        (11, 280),
    ],  # W 190: 1 and 2 still there; late: none
    [(2, 300), (7, 250), (5, 120)],  # W 190 (5 at 120: late); 5 expires at 200 >= 190: kept
    [(8, 400), (5, 290)],  # W 290: 5 (expires 200) still there while the rows run
    [(4, 401), (7, 402), (9, 290), (11, 395)],  # W 390; 9 at 290: late; 11 expired at
    # 290, the watermark of the micro-batch before: an expiry equal to the watermark leaves
    [(9, 1000)],
    [(9, 1001), (8, 1002)],
]


def _tables(batches: list[list[tuple[int, float | None]]]) -> list[pa.Table]:
    return [
        pa.Table.from_pylist(
            [
                {"k": k, "ts": None if t is None else round(t * S), "tag": f"b{i}:{j}"}
                for j, (k, t) in enumerate(rows)
            ],
            SCHEMA,
        )
        for i, rows in enumerate(batches)
    ]


def _write(folder: str, tables: list[pa.Table], first: int = 0) -> None:
    os.makedirs(folder, exist_ok=True)
    for i, t in enumerate(tables, start=first):
        path = os.path.join(folder, f"part-{i:04d}.parquet")
        pq.write_table(t, path)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def _run(spark, folder: str, checkpoint: str, ours: bool, buckets: int, metrics=None):
    """Per micro-batch id: the sorted tags emitted; and the watermark of each micro-batch."""
    spark_schema = spark.createDataFrame(SCHEMA.empty_table()).schema
    src = (
        spark.readStream.schema(spark_schema)
        .option("maxFilesPerTrigger", 1)
        .parquet(folder)
        .withWatermark("ts", "10 seconds")
    )
    if ours:
        out = deduplicate(src, ["k"], keep="first", buckets=buckets, metrics=metrics)
    else:
        out = src.dropDuplicatesWithinWatermark(["k"])
    got: dict[int, list[str]] = {}

    def each(batch_df, batch_id: int) -> None:
        got[batch_id] = sorted(r["tag"] for r in batch_df.collect())

    query = (
        out.writeStream.outputMode("append")
        .option("checkpointLocation", checkpoint)
        .foreachBatch(each)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    marks = {p.batchId: p.eventTime.get("watermark") for p in query.recentProgress}
    return got, marks


def _compare(spark, tmp_path, tables: list[pa.Table], cut: int, buckets: int) -> dict[str, Any]:
    """Both queries over ``tables`` in two runs (the first ``cut`` files, then the rest): the
    outputs of every micro-batch, which must be equal."""
    runs: dict[bool, tuple[dict[int, list[str]], dict[int, Any]]] = {}
    metrics = DedupMetrics(spark)
    for ours in (False, True):
        name = "ours" if ours else "spark"
        folder = str(tmp_path / f"src-{name}")
        _write(folder, tables[:cut])
        got, marks = _run(spark, folder, str(tmp_path / f"ck-{name}"), ours, buckets, metrics)
        _write(folder, tables[cut:], first=cut)
        more, more_marks = _run(spark, folder, str(tmp_path / f"ck-{name}"), ours, buckets, metrics)
        runs[ours] = ({**got, **more}, {**marks, **more_marks})
    spark_out, spark_marks = runs[False]
    ours_out, ours_marks = runs[True]
    assert ours_marks == spark_marks  # the same micro-batches, no-data ones included
    assert ours_out == spark_out
    return dict(metrics.value)


def test_hand_made_stream_matches_drop_duplicates_within_watermark(spark, tmp_path):
    counters = _compare(spark, tmp_path, _tables(HAND_BATCHES), cut=4, buckets=3)
    assert counters["rows_late"] >= 3 and counters["keys_expired"] >= 5


def test_random_stream_matches_drop_duplicates_within_watermark(spark, tmp_path):
    rng = random.Random(7)
    batches = []
    for i in range(8):
        base = 40 * i
        batches.append(
            [
                (rng.randrange(12), None if rng.random() < 0.05 else base + rng.uniform(-50, 40))
                for _ in range(25)
            ]
        )
    counters = _compare(spark, tmp_path, _tables(batches), cut=3, buckets=4)
    assert counters["keys_expired"] > 0 and counters["rows_late"] > 0


def test_payload_round_trip_and_format_1():
    dp = build_plan(SCHEMA, ["k"], keep="first")
    step = FirstSeenStep(dp, "ts", delay_ms=10_000)
    rows = _tables([[(1, 5), (2, None), (1, 6), (3, 50)]])[0].to_batches()[0]
    out, payload = step.run(None, rows, watermark_ms=0)
    assert out.column("tag").to_pylist() == ["b0:0", "b0:1", "b0:3"]
    assert payload[:4] == b"SFDF" and step.live_keys == 3
    # The next micro-batch at watermark 14 s: keys 1 and 2 (null time: expires at 10 s) are
    # still there while the rows run; then 2 leaves (10 s <= 14 s), 1 (15 s) stays.
    again = _tables([[(1, 20), (2, 30), (4, 13)]])[0].to_batches()[0]
    out, payload = step.run(payload, again, watermark_ms=14_000)
    assert out.column("tag").to_pylist() == ["b0:2"]  # 1 and 2 still there; 4 at 13 s new
    # The state has run at 14 s now (the bound a next step of the same state takes).
    assert step.previous_watermark == 14_000 and step.live_keys == 3  # 2 left, 4 came
    # Format 1: the key columns and first times as one Arrow IPC batch.
    legacy = pa.record_batch(
        {"k": pa.array([1, 7], pa.int64()), "ts": pa.array([5 * S, 60 * S], pa.timestamp("us"))}
    )
    out, _ = step.run(legacy.serialize().to_pybytes(), again, watermark_ms=14_000)
    # Late bound of a format 1 state: this micro-batch's watermark (13 s is late).
    assert out.column("tag").to_pylist() == ["b0:1"]
    assert step.previous_watermark == 14_000
    with pytest.raises(ValueError, match="neither an Arrow IPC message nor"):
        step.load(b"junk")
    with pytest.raises(ValueError, match="cut short"):
        step.load(payload[:-3])
    untimed = FirstSeenStep(dp)
    with pytest.raises(ValueError, match="written with a watermark"):
        untimed.load(payload)


@pytest.mark.parametrize("timed", [True, False])
def test_a_replica_of_the_log_holds_the_same_entries(timed):
    """Bucket layout 2 (FirstSeenImage): before every step, a replica made from the base and
    the log entries so far (each a step's key and time columns and watermark, replayed) emits
    the same rows as the image that ran every step; a re-base halfway."""
    from sliceflow.spark.dedup.first_seen import FirstSeenImage

    dp = build_plan(SCHEMA, ["k"], keep="first")

    def image() -> FirstSeenImage:
        return FirstSeenImage(FirstSeenStep(dp, "ts" if timed else None, 10_000), timed)

    rng = random.Random(3)
    live = image()
    base: list[bytes] | None = None
    log: list[list[bytes]] = []
    for i in range(12):
        batch = [
            (rng.randrange(15), None if rng.random() < 0.1 else 6 * i + rng.uniform(-8, 8))
            for _ in range(10)
        ]
        rows = _tables([batch])[0].to_batches()[0]
        watermark = max(0, (6 * i - 10) * 1000)
        replica = image()
        if base is not None:
            replica.load_base(base)
        for changes in log:
            replica.apply(changes)
        assert replica.step.previous_watermark == live.step.previous_watermark, i
        assert replica.advance(rows, watermark, {}).equals(live.advance(rows, watermark, {})), i
        if i == 5:
            base, log = live.base(), []
        else:
            changes = live.changes()
            assert changes is not None
            log.append(changes)
    assert live.empty() == (not timed and live.step.live_keys == 0)
