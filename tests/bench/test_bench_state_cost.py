"""Smoke run of ``bench/bench_state_cost.py`` at tiny sizes: it runs end to end in its own
process, its report has one complete table per operator (Spark, the floor and sliceflow per
state size, state bytes written and read, bucket opens), every query's micro-batches are in the
JSON, and bench/README.md has the blocks ``--write-readme`` rewrites. The numbers themselves
are not checked (tiny sizes, shared machine)."""

from __future__ import annotations

import json
import os

import pytest
from support import ROOT, run_script
from test_bench_window_stream import tables

SCRIPT = os.path.join(ROOT, "bench", "bench_state_cost.py")
README = os.path.join(ROOT, "bench", "README.md")
PARTS = ("changelog", "topn", "dedup")


@pytest.mark.spark
@pytest.mark.timeout(400)
def test_quick_report_structure(tmp_path):
    out_json = tmp_path / "results.json"
    args = ["--quick", "--keys", "3000", "--batches", "3", "--data-dir", str(tmp_path / "data")]
    stdout, _ = run_script(SCRIPT, [*args, "--json", str(out_json)], timeout=380)
    assert stdout.startswith("Run ") and "`" in stdout.splitlines()[0]  # the command
    assert "Machine: " in stdout and "Load average" in stdout
    found = tables(stdout)
    assert len(found) == len(PARTS)
    for operator, table in zip(PARTS, found, strict=True):
        header, *rows = table
        assert header[0] == "keys in state" and len(rows) == 1
        row = dict(zip(header, rows[0], strict=True))
        assert row["keys in state"] == "3,000"
        assert float(row["Spark s"]) > 0 and float(row["floor s"]) > 0
        assert float(row["sliceflow s"]) > 0
        # Touched keys change state in every micro-batch: written bytes, a head read at least.
        assert int(row["state bytes written / micro-batch"].replace(",", "")) > 0
        assert int(row["state bytes read / micro-batch"].replace(",", "")) > 0
        opens = [int(n) for n in row["bucket opens hit/catch-up/cold"].split("/")]
        assert sum(opens) > 0, operator
        assert f"**{operator}**" in stdout
    with open(out_json, encoding="utf-8") as f:
        results = json.load(f)
    for operator in PARTS:
        for part in ("spark", "empty", "sliceflow"):
            assert len(results[f"{operator}/3000/{part}"]["times"]) == 4  # the fill and 3
    with open(README, encoding="utf-8") as f:
        readme = f.read()
    for block in ("state-cost", "state-cost-10m", "state-cost-whole"):
        assert f"<!-- results:{block}:start -->" in readme
        assert f"<!-- results:{block}:end -->" in readme
