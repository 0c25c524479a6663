"""A restart from a checkpoint with a key, time, order or argument column moved to another column
of the same type is refused, for every streaming operator (docs/state.md, ``input columns``).

The plan identity once held the columns' types only: ``topn`` restarted with ``by`` moved to
another BIGINT column resumed on the old state, and its output matched neither query. Each case
here runs the first query to the end of one micro-batch (the checkpoint), then, on a copy of
that checkpoint, the same query with one column moved over a second micro-batch: the query must
fail with the ``input columns`` change named. The unchanged query restarts on its copy and goes
on (the refusal is the moved column's, not the restart's).
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from pyspark.errors import StreamingQueryException
from support.spark_helpers import stream_of, write_micro_batches

from sliceflow import window as W
from sliceflow.spark import changelog_agg, deduplicate, topn, window_agg
from sliceflow.testing.spark import run_to_end

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [
        ("k1", pa.int64()),
        ("k2", pa.int64()),
        ("t1", pa.timestamp("us")),
        ("t2", pa.timestamp("us")),
        ("v1", pa.int64()),
        ("v2", pa.int64()),
    ]
)
T0 = dt.datetime(2026, 11, 28)


def batch(seed: int, start_s: int) -> pa.Table:
    rng = random.Random(seed)
    rows = 40
    return pa.table(
        {
            "k1": [rng.randrange(5) for _ in range(rows)],
            "k2": [rng.randrange(7) for _ in range(rows)],
            "t1": [T0 + dt.timedelta(seconds=start_s + i) for i in range(rows)],
            "t2": [T0 + dt.timedelta(seconds=start_s + rows - i) for i in range(rows)],
            "v1": [rng.randrange(100) for _ in range(rows)],
            "v2": [rng.randrange(100) for _ in range(rows)],
        },
        schema=SCHEMA,
    )


Query = Callable[[Any, dict[str, Any]], Any]


def window_query(stream: Any, c: dict[str, Any]) -> Any:
    timed = stream.withWatermark(c["time"], "5 seconds")
    spec = W.tumble(c["time"], "10 seconds")
    return window_agg(timed, spec, [c["by"]], [W.count(), W.sum(c["arg"]).alias("s")], buckets=2)


def changelog_query(stream: Any, c: dict[str, Any]) -> Any:
    return changelog_agg(stream, [c["by"]], [W.count(), W.sum(c["arg"]).alias("s")], buckets=2)


def topn_query(stream: Any, c: dict[str, Any]) -> Any:
    return topn(stream, 2, by=[c["by"]], order_by=[c["order"]], buckets=2)


def dedup_query(stream: Any, c: dict[str, Any]) -> Any:
    return deduplicate(stream, c["by"], keep="last", order_by=c["order"], buckets=2)


BASE = {"by": "k1", "time": "t1", "arg": "v1", "order": "t1"}
CASES = [
    # (operator, query, the moved column, the refusal's text)
    ("window_agg", window_query, {"by": "k2"}, "by `k1`; time `t1`"),
    ("window_agg", window_query, {"time": "t2"}, "time `t1`"),
    ("window_agg", window_query, {"arg": "v2"}, "arguments *, `v1`"),
    ("changelog_agg", changelog_query, {"by": "k2"}, "by `k1`"),
    ("changelog_agg", changelog_query, {"arg": "v2"}, "arguments *, `v1`"),
    ("topn", topn_query, {"by": "k2"}, "by `k1`"),
    ("topn", topn_query, {"order": "t2"}, "order `t1`"),
    ("deduplicate", dedup_query, {"by": "k2"}, "by `k1`"),
    ("deduplicate", dedup_query, {"order": "t2"}, "order `t1`"),
]


@pytest.fixture(scope="module")
def checkpoints(spark, tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Per operator: its source folder (the first micro-batch, the second added after the run)
    and the checkpoint of the base query over the first."""
    out = {}
    for name, query in {c[0]: c[1] for c in CASES}.items():
        root = tmp_path_factory.mktemp(name)
        src, ck = str(root / "src"), str(root / "ck")
        write_micro_batches(src, [batch(1, 0)])
        run(spark, query, BASE, src, ck)
        write_micro_batches(src, [batch(2, 30)], first=1)
        out[name] = (src, ck)
    return out


def run(spark: Any, query: Query, columns: dict[str, Any], src: str, ck: str) -> None:
    df = query(stream_of(spark, src, SCHEMA), columns)
    run_to_end(df, ck, lambda b, _: b.count())


@pytest.mark.parametrize(
    ("operator", "query", "moved", "before"),
    CASES,
    ids=[f"{c[0]}-{next(iter(c[2]))}" for c in CASES],
)
def test_a_moved_column_is_refused(spark, checkpoints, tmp_path, operator, query, moved, before):
    src, ck = checkpoints[operator]
    copy = str(tmp_path / "ck")
    shutil.copytree(ck, copy)
    with pytest.raises(StreamingQueryException) as caught:
        run(spark, query, {**BASE, **moved}, src, copy)
    text = str(caught.value)
    assert f"{operator} state: the checkpoint holds the state of a different" in text, text
    assert "input columns: " in text and before in text, text
    for column in moved.values():
        assert f"`{column}`" in text.split(" in the checkpoint, now ", 1)[1], text


@pytest.mark.parametrize("operator", sorted({c[0] for c in CASES}))
def test_the_same_columns_restart(spark, checkpoints, tmp_path, operator):
    src, ck = checkpoints[operator]
    copy = str(tmp_path / "ck")
    shutil.copytree(ck, copy)
    query = next(c[1] for c in CASES if c[0] == operator)
    run(spark, query, BASE, src, copy)  # resumes: no refusal
