"""The README's demo (examples/pipeline_demo.py, run by scripts/demo.sh) on a tiny stream: it
prints a line per micro-batch of every query, and sliceflow's results agree with Spark's."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from types import ModuleType

import pytest
from support import ROOT

pytestmark = pytest.mark.spark

DEMO = os.path.join(ROOT, "examples")


def load_demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "pipeline_demo", os.path.join(DEMO, "pipeline_demo.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(180)
def test_pipeline_demo_small(spark, capsys) -> None:
    demo = load_demo()
    start = time.perf_counter()
    # One file of 600 bids, one bid a second: 10 minutes of event time. The bids go into the
    # state in micro-batch 0; the final no-data micro-batch (the watermark moved) fires the
    # windows from that state.
    result = demo.main(600, 1, 1, spark=spark, warm_up=False)
    seconds = time.perf_counter() - start
    out = capsys.readouterr().out

    # Every query ran a micro-batch with data and Spark's final no-data one, each printed.
    assert list(result.runs) == [q.key for q in demo.QUERIES]
    for run in result.runs.values():
        assert [(b.batch_id, b.rows_in) for b in run.batches] == [(0, 600), (1, 0)]
    assert (
        len(re.findall(r"^  batch +\d+: +[\d,]+ rows in +[\d,]+ rows out +[\d,]+ ms$", out, re.M))
        == 10
    )
    assert "Spark has no CUMULATE window" in out

    # Windows fired and agree with Spark's; the changelog's last values with Spark's updates.
    assert result.runs["hop-sf"].rows_out > 0
    assert result.runs["hop-sf"].rows_out == result.runs["hop-spark"].rows_out
    assert result.runs["cumulate-sf"].rows_out > 0
    assert result.hop_equal and result.changelog_equal
    assert "hop results equal Spark's: yes" in out
    assert "changelog's last values equal Spark's running aggregate: yes" in out
    for title in ("hop(1 hour, 1 minute)", "cumulate(1 minute, 1 day)", "changelog"):
        assert f"sliceflow {title}, sample" in out
    assert re.search(r"^hop\(1 h, 1 min\)  sliceflow window_agg +2 .* [\d.]+x$", out, re.M)
    print(f"demo on 600 bids: {seconds:.1f} s")
