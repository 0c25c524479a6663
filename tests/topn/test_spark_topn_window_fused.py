"""The window Top-N fused into ``window_agg``'s stateful step: ``topn`` on a streaming
``window_agg`` output as returned runs its local top n inside window_agg's emit step (no Python
stage over every window row); on a DataFrame derived from it, as a stage of its own. Both give
the same rows, window by window, in the same micro-batches."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from support.spark_helpers import collect_stream, stream_of, write_micro_batches
from test_spark_topn_stream import BIDS, bid_batches

from sliceflow import window as W
from sliceflow.spark import topn, window_agg

pytestmark = pytest.mark.spark


def _python_stages(df) -> int:
    return str(df._jdf.queryExecution().logical().toString()).count("MapInArrow")


def test_fused_window_topn_equals_the_separate_stage(spark, tmp_path):
    write_micro_batches(str(tmp_path / "src"), bid_batches(5, 4, 200))
    spec = W.hop("ts", size="10 seconds", slide="5 seconds")

    def hot():
        stream = stream_of(spark, str(tmp_path / "src"), BIDS).withWatermark("ts", "4 seconds")
        return window_agg(stream, spec, by=["auction"], aggs=[W.count().alias("bids")])

    order = [F.desc("bids"), "auction"]
    fused = topn(hot(), 2, by=["window_start", "window_end"], order_by=order)
    separate = topn(hot().select("*"), 2, by=["window_start", "window_end"], order_by=order)
    # window_agg's packing step and the final top n; the separate form adds its local top n.
    assert _python_stages(fused) == 2
    assert _python_stages(separate) == 3
    got = collect_stream(fused, str(tmp_path / "ck_fused"))
    want = collect_stream(separate, str(tmp_path / "ck_separate"))
    assert sum(len(rows) for rows in want.values()) > 10
    assert {b: sorted(rows) for b, rows in got.items() if rows} == {
        b: sorted(rows) for b, rows in want.items() if rows
    }
