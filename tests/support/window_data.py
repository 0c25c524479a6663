"""The streams the streaming window_agg Spark tests share: one schema, the aggregations with
their brute-force model's twins, random micro-batches (out-of-order, late and null rows) and
the window spec of a model window."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa

from sliceflow import window as W
from sliceflow.testing.window_reference import RefAgg, RefWindow

S = 1_000_000
SCHEMA = pa.schema(
    [("k", pa.string()), ("t", pa.timestamp("us")), ("v", pa.int64()), ("f", pa.float64())]
)
OURS = [
    W.count().alias("n"),
    W.sum("v").alias("s"),
    W.max("v").alias("hi"),
    W.min("f").alias("lo"),
    W.avg("v").alias("a"),
]
REF = [
    RefAgg("count", None, "n"),
    RefAgg("sum", "v", "s"),
    RefAgg("max", "v", "hi"),
    RefAgg("min", "f", "lo"),
    RefAgg("avg", "v", "a"),
]


def random_stream(seed: int, batches: int, rows: int, span_s: int = 90) -> list[pa.Table]:
    """Micro-batches whose times mostly move forward, with rows arriving out of order and late,
    null times and values, NaN."""
    rng = random.Random(seed)
    out = []
    for b in range(batches):
        base = (b + 1) * span_s * S // batches
        data = []
        for _ in range(rng.randint(0, rows)):
            t = None if rng.random() < 0.05 else max(1, base + rng.randint(-40 * S, 5 * S))
            data.append(
                (
                    rng.choice(["a", "b", "c", None]),
                    t,
                    rng.choice([None, *range(-5, 10)]),
                    rng.choice([None, -1.5, 0.0, 2.5, float("nan")]),
                )
            )
        cols = list(zip(*data, strict=True)) if data else [[]] * 4
        out.append(
            pa.table([pa.array(list(c), f.type) for c, f in zip(cols, SCHEMA, strict=True)], SCHEMA)
        )
    return out


def spec_of(w: RefWindow) -> W.WindowSpec:
    us = dt.timedelta(microseconds=1)
    if w.kind == "tumble":
        return W.tumble("t", w.size * us, w.offset * us)
    if w.kind == "hop":
        return W.hop("t", w.size * us, w.slide * us, w.offset * us)
    return W.cumulate("t", w.slide * us, w.size * us, w.offset * us)
